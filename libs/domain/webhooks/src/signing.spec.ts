import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { signatureHeaders, signedHeaders, signingKeyOf, verifyXSignature } from './signing';

function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

describe('delivery signing', () => {
  const body = JSON.stringify({ eventId: 'ev_1', confirmed: false, removed: false });
  const t = 1_767_225_600;

  it('verifies with the standardwebhooks package', () => {
    const secret = newSecret();
    const headers = signatureHeaders({
      secrets: [secret],
      messageId: 'wh_1:ev_1:unconfirmed',
      timestampSeconds: Math.floor(Date.now() / 1000),
      body,
    });
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('verifies with either secret during a rotation (standardwebhooks)', () => {
    const current = newSecret();
    const previous = newSecret();
    const headers = signatureHeaders({
      secrets: [current, previous],
      messageId: 'm1',
      timestampSeconds: Math.floor(Date.now() / 1000),
      body,
    });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(current).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(previous).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
  });

  it('writes X-Signature as t=,v1= with HMAC-SHA256(secret, "<t>." + body) in hex (hand-written check)', () => {
    const secret = newSecret();
    const headers = signatureHeaders({
      secrets: [secret],
      messageId: 'm1',
      timestampSeconds: t,
      body,
    });
    const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    expect(headers['x-signature']).toBe(`t=${t},v1=${expected}`);
  });

  it('writes two v1 during a rotation, current first', () => {
    const [a, b] = [newSecret(), newSecret()];
    const header = signatureHeaders({
      secrets: [a, b],
      messageId: 'm1',
      timestampSeconds: t,
      body,
    })['x-signature'];
    const v1 = header.split(',').filter((p) => p.startsWith('v1='));
    expect(v1).toEqual([
      `v1=${createHmac('sha256', a).update(`${t}.${body}`).digest('hex')}`,
      `v1=${createHmac('sha256', b).update(`${t}.${body}`).digest('hex')}`,
    ]);
    expect(verifyXSignature(header, body, b, t)).toBe(true);
  });

  it('a tampered body, a wrong secret or a stale timestamp fails the check', () => {
    const secret = newSecret();
    const header = signatureHeaders({
      secrets: [secret],
      messageId: 'm1',
      timestampSeconds: t,
      body,
    })['x-signature'];
    expect(verifyXSignature(header, body, secret, t + 300)).toBe(true);
    expect(verifyXSignature(header, `${body} `, secret, t)).toBe(false);
    expect(verifyXSignature(header, body, newSecret(), t)).toBe(false);
    expect(verifyXSignature(header, body, secret, t + 301)).toBe(false);
    expect(verifyXSignature('t=abc,v1=00', body, secret, t)).toBe(false);
  });

  it('refuses to sign without a secret', () => {
    expect(() =>
      signatureHeaders({ secrets: [], messageId: 'm', timestampSeconds: t, body }),
    ).toThrow();
  });

  it('signs the same with keys derived once and the body as bytes (non-ASCII body, rotation)', () => {
    const [a, b] = [newSecret(), newSecret()];
    const text = JSON.stringify({ eventId: 'ev_ü', note: 'Grüße ✓' });
    const headers = signedHeaders(
      [signingKeyOf(a), signingKeyOf(b)],
      'm1',
      t,
      Buffer.from(text, 'utf8'),
    );
    expect(headers).toEqual(
      signatureHeaders({ secrets: [a, b], messageId: 'm1', timestampSeconds: t, body: text }),
    );
    expect(verifyXSignature(headers['x-signature'], text, b, t)).toBe(true);
    const now = Math.floor(Date.now() / 1000);
    const fresh = signedHeaders([signingKeyOf(a)], 'm1', now, Buffer.from(text, 'utf8'));
    expect(new Webhook(a).verify(text, fresh)).toEqual(JSON.parse(text));
  });
});
