import { webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type X509 = typeof import('@peculiar/x509');
let loaded: Promise<X509> | undefined;

/** Loaded on first use, so tests without TLS do not pay for it (nor for its Reflect polyfill). */
function x509Lib(): Promise<X509> {
  loaded ??= (async () => {
    await import('reflect-metadata'); // tsyringe, under @peculiar/x509, needs it
    const lib = await import('@peculiar/x509');
    lib.cryptoProvider.set(webcrypto as unknown as Parameters<typeof lib.cryptoProvider.set>[0]);
    return lib;
  })();
  return loaded;
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

/** A certificate and its key, as PEM text and as files. */
export interface TestIdentity {
  cert: string;
  key: string;
  certFile: string;
  keyFile: string;
}

export interface TestCa {
  cert: string;
  certFile: string;
  /** Issues a certificate for `names` (DNS names and IP addresses), for server and client use. */
  issue(commonName: string, names?: string[]): Promise<TestIdentity>;
}

/**
 * A private PKI for TLS tests, in a temporary directory (node:crypto cannot sign X.509, so
 * @peculiar/x509 does): `ca()` makes a CA whose `issue` signs leaf certificates. ECDSA P-256.
 */
export class TestPki {
  readonly dir = mkdtempSync(join(tmpdir(), 'meridian-pki-'));
  private serial = 1;

  /** A file in the PKI's directory with the given text (a creds file, a broken PEM). */
  file(name: string, text: string): string {
    const path = join(this.dir, name);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  }

  async ca(name = 'meridian test CA'): Promise<TestCa> {
    const x509 = await x509Lib();
    const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
    const now = Date.now();
    const caCert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: this.nextSerial(),
      name: `CN=${name}`,
      notBefore: new Date(now - DAY_MS),
      notAfter: new Date(now + DAY_MS),
      keys,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    const cert = caCert.toString('pem');
    const slug = name.replace(/[^a-z0-9]+/gi, '-');
    return {
      cert,
      certFile: this.file(`${slug}.crt`, cert),
      issue: async (commonName, names = ['localhost', '127.0.0.1']) => {
        const leafKeys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
        const leaf = await x509.X509CertificateGenerator.create({
          serialNumber: this.nextSerial(),
          subject: `CN=${commonName}`,
          issuer: caCert.subject,
          notBefore: new Date(now - DAY_MS),
          notAfter: new Date(now + DAY_MS),
          signingKey: keys.privateKey,
          publicKey: leafKeys.publicKey,
          signingAlgorithm: ALG,
          extensions: [
            new x509.BasicConstraintsExtension(false, undefined, true),
            new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
            new x509.ExtendedKeyUsageExtension([
              x509.ExtendedKeyUsage.serverAuth,
              x509.ExtendedKeyUsage.clientAuth,
            ]),
            new x509.SubjectAlternativeNameExtension(
              names.map((value) =>
                /^[\d.]+$|:/.test(value) ? { type: 'ip', value } : { type: 'dns', value },
              ),
            ),
            await x509.AuthorityKeyIdentifierExtension.create(caCert),
          ],
        });
        const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', leafKeys.privateKey);
        const key = x509.PemConverter.encode(pkcs8, 'PRIVATE KEY');
        const certPem = leaf.toString('pem');
        const leafSlug = `${slug}-${commonName.replace(/[^a-z0-9]+/gi, '-')}-${this.serial}`;
        return {
          cert: certPem,
          key,
          certFile: this.file(`${leafSlug}.crt`, certPem),
          keyFile: this.file(`${leafSlug}.key`, key),
        };
      },
    };
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private nextSerial(): string {
    return (this.serial++).toString(16).padStart(2, '0');
  }
}
