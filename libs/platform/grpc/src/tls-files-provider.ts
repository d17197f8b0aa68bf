import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import type { experimental } from '@grpc/grpc-js';
import { tlsPemProblem, type TlsPemFiles } from '@meridian/platform-config';

/** The first read of the TLS files, and each later read that found them changed. */
export interface TlsReloadEvent {
  /**
   * `initial`: the files read at start; `loaded`: changed files, served from now on;
   * `rejected`: changed files refused, the last good ones stay.
   */
  outcome: 'initial' | 'loaded' | 'rejected';
  /** The files read (certificate, key, CA: those that are set). */
  files: string[];
  /** Why the changed files were refused (`rejected`). */
  problem?: string;
  /** The certificate served after this read (the new one, or the last good one). */
  certificate?: ServedCertificate;
}

export interface ServedCertificate {
  serialNumber: string;
  subject: string;
  /** The end of its validity (ISO 8601). */
  notAfter: string;
}

export type TlsReloadListener = (event: TlsReloadEvent) => void;

export interface TlsFiles {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

interface Material {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

type Listener<T> = (update: T | null) => void;

/**
 * A grpc-js `CertificateProvider` over TLS files (a certificate and key, a CA) that reads them
 * again every `refreshIntervalMs` while a server or channel uses it, so a certificate renewed in
 * place (cert-manager rewriting a mounted Secret) is served without a restart. Unlike grpc-js's
 * own FileWatcherCertificateProvider, a changed set is checked first (each file of its kind, the
 * key that of the certificate, a TLS context Node accepts): a broken or half-written one is
 * refused and the last good one kept, so a bad renewal never takes a server down or a client
 * off the air; the next read tries again. The first read is synchronous and throws (start-up;
 * the config check has read the same files already). ADR 0506.
 */
export class TlsFilesProvider implements experimental.CertificateProvider {
  private material: Material;
  private readonly caListeners = new Set<Listener<experimental.CaCertificateUpdate>>();
  private readonly identityListeners = new Set<Listener<experimental.IdentityCertificateUpdate>>();
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;
  private readonly readOne: (path: string) => Promise<Buffer>;

  constructor(
    private readonly files: TlsFiles,
    private readonly options: {
      refreshIntervalMs: number;
      onReload?: TlsReloadListener;
      /** How a file is read on refresh (tests interleave a renewal); `fs.readFile` by default. */
      readFile?: (path: string) => Promise<Buffer>;
    },
  ) {
    if (!files.caFile && !files.certFile)
      throw new Error('TLS files: neither a CA nor a certificate');
    this.readOne = options.readFile ?? ((path) => readFile(path));
    const material: Material = {
      ca: files.caFile ? readFileSync(files.caFile) : undefined,
      cert: files.certFile ? readFileSync(files.certFile) : undefined,
      key: files.keyFile ? readFileSync(files.keyFile) : undefined,
    };
    const problem = this.problemOf(material);
    if (problem) throw new Error(`TLS files: ${problem}`);
    this.material = material;
    this.report({ outcome: 'initial', files: this.paths() });
  }

  /** The certificate served now (none for a CA-only client). */
  get certificate(): ServedCertificate | undefined {
    return this.material.cert ? describe(this.material.cert) : undefined;
  }

  /** Reads the files now (the timer does this every interval); at most one read at a time. */
  refresh(): Promise<void> {
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    return this.reading;
  }

  addCaCertificateListener(listener: Listener<experimental.CaCertificateUpdate>): void {
    this.caListeners.add(listener);
    this.watch();
    // Asynchronously, as grpc-js's own providers do: a server registers its watcher after this.
    process.nextTick(listener, this.caUpdate());
  }

  removeCaCertificateListener(listener: Listener<experimental.CaCertificateUpdate>): void {
    this.caListeners.delete(listener);
    this.unwatch();
  }

  addIdentityCertificateListener(listener: Listener<experimental.IdentityCertificateUpdate>): void {
    this.identityListeners.add(listener);
    this.watch();
    process.nextTick(listener, this.identityUpdate());
  }

  removeIdentityCertificateListener(
    listener: Listener<experimental.IdentityCertificateUpdate>,
  ): void {
    this.identityListeners.delete(listener);
    this.unwatch();
  }

  private watch(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.refresh(), this.options.refreshIntervalMs);
    this.timer.unref();
  }

  private unwatch(): void {
    if (this.caListeners.size > 0 || this.identityListeners.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async read(): Promise<void> {
    const paths = this.paths();
    let next: Material;
    let problem: string | undefined;
    try {
      next = await this.readFiles();
      if (same(next, this.material)) return;
      problem = this.problemOf(next);
      // Files read one by one can straddle a renewal (kubelet swaps a Secret's `..data` link
      // between two of the reads): a set that fails its checks counts only if a second read
      // finds the same bytes. Read differently, the files are changing; the next tick decides.
      if (problem && !same(await this.readFiles(), next)) return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      const path = (error as NodeJS.ErrnoException).path ?? '';
      this.report({
        outcome: 'rejected',
        files: paths,
        problem: `cannot be read (${path}: ${code})`,
      });
      return;
    }
    if (problem) {
      this.report({ outcome: 'rejected', files: paths, problem });
      return;
    }
    this.material = next;
    this.report({ outcome: 'loaded', files: paths });
    const ca = this.caUpdate();
    const identity = this.identityUpdate();
    if (ca) for (const listener of this.caListeners) listener(ca);
    if (identity) for (const listener of this.identityListeners) listener(identity);
  }

  private async readFiles(): Promise<Material> {
    const [cert, key, ca] = await Promise.all(
      [this.files.certFile, this.files.keyFile, this.files.caFile].map((path) =>
        path ? this.readOne(path) : Promise.resolve(undefined),
      ),
    );
    return { cert, key, ca };
  }

  private paths(): string[] {
    return [this.files.certFile, this.files.keyFile, this.files.caFile].filter(
      (path): path is string => Boolean(path),
    );
  }

  /** The checks of the start-up config, then Node's own: would a TLS context take these? */
  private problemOf(material: Material): string | undefined {
    const entry = (path: string | undefined, buffer: Buffer | undefined) =>
      path && buffer ? { path, text: buffer.toString('utf8') } : undefined;
    const files: TlsPemFiles = {
      ca: entry(this.files.caFile, material.ca),
      cert: entry(this.files.certFile, material.cert),
      key: entry(this.files.keyFile, material.key),
    };
    const problem = tlsPemProblem(files);
    if (problem) return problem;
    try {
      createSecureContext({ ca: material.ca, cert: material.cert, key: material.key });
      return undefined;
    } catch (error) {
      return `not usable for TLS: ${(error as Error).message}`;
    }
  }

  private report(event: Omit<TlsReloadEvent, 'certificate'>): void {
    this.options.onReload?.({ ...event, certificate: this.certificate });
  }

  private caUpdate(): experimental.CaCertificateUpdate | null {
    return this.material.ca ? { caCertificate: this.material.ca } : null;
  }

  private identityUpdate(): experimental.IdentityCertificateUpdate | null {
    const { cert, key } = this.material;
    return cert && key ? { certificate: cert, privateKey: key } : null;
  }
}

function same(a: Material, b: Material): boolean {
  const eq = (x?: Buffer, y?: Buffer) => (x && y ? x.equals(y) : x === y);
  return eq(a.ca, b.ca) && eq(a.cert, b.cert) && eq(a.key, b.key);
}

function describe(pem: Buffer): ServedCertificate {
  const cert = new X509Certificate(pem);
  return {
    serialNumber: cert.serialNumber,
    subject: cert.subject,
    notAfter: new Date(cert.validTo).toISOString(),
  };
}
