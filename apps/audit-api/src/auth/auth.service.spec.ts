import { DomainError } from '@meridian/errors';
import { InTestCredentialSource } from '../../test/support/in-test-credentials';
import { AuthService } from './auth.service';

/** Which 401 a request gets: absent → missing_api_key; sent but no usable Bearer key → invalid. */
describe('AuthService 401 codes (QA F5: a key that was sent is not missing)', () => {
  const auth = new AuthService(new InTestCredentialSource().add('mrd_good', { planId: 'free' }));
  const refusal = async (header: string | undefined) => {
    try {
      await auth.authenticate(header);
    } catch (error) {
      if (error instanceof DomainError) return [error.code, error.kind, error.message];
      throw error;
    }
    return 'accepted';
  };

  it.each([
    ['no header', undefined, 'missing_api_key'],
    ['an empty header', '', 'missing_api_key'],
    ['an unknown Bearer key', 'Bearer mrd_unknown', 'invalid_api_key'],
  ])('%s → %s', async (_name, header, code) => {
    expect((await refusal(header))[0]).toBe(code);
  });

  it.each([
    ['Basic credentials', 'Basic dXNlcjpwYXNz'],
    ['a Bearer key over 512 characters', `Bearer ${'k'.repeat(513)}`],
    ['a Bearer value of two words', 'Bearer mrd_good extra'],
    ['a key without a scheme', 'mrd_good'],
  ])('%s → invalid_api_key, saying the scheme must be Bearer', async (_name, header) => {
    expect(await refusal(header)).toEqual([
      'invalid_api_key',
      'unauthenticated',
      'the Authorization scheme must be Bearer: send Authorization: Bearer <API_KEY> ' +
        '(one key of at most 512 characters)',
    ]);
  });

  it('a known key with the audit scope is accepted', async () => {
    await expect(auth.authenticate('Bearer mrd_good')).resolves.toMatchObject({
      keyId: 'key_mrd_good',
    });
  });
});
