import { invitationPendingError } from './invitation-pending';

describe('invitationPendingError', () => {
  it("says the pending invitation's end as the table does, the ISO in details (QA L7)", () => {
    const expiresAt = new Date('2026-12-10T08:02:22.507Z');
    const error = invitationPendingError(null, { id: 'inv-1', expiresAt });
    expect(error.message).toBe(
      'this email already has a pending invitation to sign up (until 2026-12-10 08:02 UTC); ' +
        'revoke it to send a new link',
    );
    expect(error.details).toEqual({
      invitation: { id: 'inv-1', expires_at: '2026-12-10T08:02:22.507Z' },
      fields: {
        email:
          'already invited (until 2026-12-10 08:02 UTC): revoke that invitation below to send a ' +
          'new link',
      },
    });
    expect(invitationPendingError('acct-1', undefined).message).toBe(
      'this email already has a pending invitation to this account; revoke it to send a new link',
    );
  });
});
