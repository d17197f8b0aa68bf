import { X509Certificate } from 'node:crypto';
import { TlsFilesProvider, type TlsReloadEvent } from '@meridian/platform-grpc';
import { TestPki, type TestIdentity } from '../test-pki';

/**
 * A refresh whose reads straddle a renewal (the certificate already the new one, the key still
 * the old one) must not report the set refused: a second read decides (ADR 0506). The reads are
 * served from a script, the renewal interleaved between them as kubelet's link swap can be.
 */

let pki: TestPki;
let a: TestIdentity;
let b: TestIdentity;

beforeAll(async () => {
  pki = new TestPki();
  const ca = await pki.ca();
  a = await ca.issue('billing-ledger');
  b = await ca.issue('billing-ledger');
});

afterAll(() => pki.remove());

const serialOf = (pem: string) => new X509Certificate(pem).serialNumber;

/** A provider over A's files whose refresh reads always find `set`. */
function provider(set: { cert: string; key: string }) {
  const events: TlsReloadEvent[] = [];
  const p = new TlsFilesProvider(
    { certFile: a.certFile, keyFile: a.keyFile },
    {
      refreshIntervalMs: 60_000,
      onReload: (event) => events.push(event),
      readFile: async (path) => Buffer.from(path === a.certFile ? set.cert : set.key),
    },
  );
  return { events, provider: p };
}

describe('TlsFilesProvider: a refresh across a renewal', () => {
  it('reads again when a set fails its checks and takes the renewal once the files agree', async () => {
    const readsOf: { cert: string; key: string }[] = [];
    const events: TlsReloadEvent[] = [];
    let call = 0;
    // Calls 1–2: the first read (new certificate, old key); calls 3–4: the second read (both new).
    const p = new TlsFilesProvider(
      { certFile: a.certFile, keyFile: a.keyFile },
      {
        refreshIntervalMs: 60_000,
        onReload: (event) => events.push(event),
        readFile: async (path) => {
          call += 1;
          const set = call <= 2 ? { cert: b.cert, key: a.key } : { cert: b.cert, key: b.key };
          readsOf.push(set);
          return Buffer.from(path === a.certFile ? set.cert : set.key);
        },
      },
    );

    await p.refresh();
    // The straddled set was read differently the second time: nothing reported, A still served.
    expect(events.map((e) => e.outcome)).toEqual(['initial']);
    expect(p.certificate?.serialNumber).toBe(serialOf(a.cert));

    await p.refresh();
    expect(events.map((e) => e.outcome)).toEqual(['initial', 'loaded']);
    expect(p.certificate?.serialNumber).toBe(serialOf(b.cert));
    expect(readsOf.length).toBe(6);
  });

  it('refuses a set that fails its checks on both reads, keeping the last good one', async () => {
    const mismatched = provider({ cert: b.cert, key: a.key });
    await mismatched.provider.refresh();
    expect(mismatched.events.map((e) => e.outcome)).toEqual(['initial', 'rejected']);
    expect(mismatched.events[1]?.problem).toMatch(/is not the key of the certificate/);
    expect(mismatched.provider.certificate?.serialNumber).toBe(serialOf(a.cert));
  });

  it('takes a good renewal on its first read', async () => {
    const renewed = provider({ cert: b.cert, key: b.key });
    await renewed.provider.refresh();
    expect(renewed.events.map((e) => e.outcome)).toEqual(['initial', 'loaded']);
    expect(renewed.provider.certificate?.serialNumber).toBe(serialOf(b.cert));
  });
});
