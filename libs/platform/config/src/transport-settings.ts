import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { holdsPlaceholder, PLACEHOLDER_MARK } from './secret-setting';

/**
 * Settings of the transports between the apps: TLS (optionally mutual) of the internal gRPC
 * (billing.v1) and credentials and TLS of NATS. Every one is a file path, as Kubernetes mounts a
 * Secret; every one is optional, and without them everything stays plaintext (local runs). A file
 * is read and its PEM checked when the config loads, and the pairs are checked together
 * (`transportSettingsProblem`, run by `parseConfig`), so a misconfigured app stops at start with
 * one line naming the variable instead of failing its first call. ADR 0506.
 */

type Kind = 'certificate' | 'private key' | 'NATS credentials' | 'NKEY seed';

function read(path: string): string {
  return readFileSync(path, 'utf8');
}

/** Why `text` (read from `path`) does not hold a `kind`, or undefined when it does. */
function pemTextProblem(text: string, path: string, kind: Kind): string | undefined {
  try {
    switch (kind) {
      case 'certificate':
        if (!text.includes('-----BEGIN CERTIFICATE-----'))
          return `holds no PEM certificate (${path})`;
        new X509Certificate(text);
        return undefined;
      case 'private key':
        if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text))
          return `holds no PEM private key (${path})`;
        createPrivateKey(text);
        return undefined;
      case 'NATS credentials':
        if (!text.includes('BEGIN NATS USER JWT') || !text.includes('BEGIN USER NKEY SEED'))
          return `is no NATS .creds file (a user JWT and its NKEY seed) (${path})`;
        return undefined;
      case 'NKEY seed':
        if (!/^\s*SU[A-Z2-7]{50,}\s*$/.test(text))
          return `holds no NKEY user seed (one line starting with SU) (${path})`;
        return undefined;
    }
  } catch (error) {
    return `holds an unreadable ${kind} (${path}: ${(error as Error).message})`;
  }
}

/** Why the file at `path` does not hold a `kind`, or undefined when it does. */
export function pemFileProblem(path: string, kind: Kind): string | undefined {
  let text: string;
  try {
    text = read(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    return `cannot be read (${path}: ${code})`;
  }
  return pemTextProblem(text, path, kind);
}

/** Whether the key is that of the certificate (the first of a chain). */
function keyMatches(certPem: string, keyPem: string): boolean {
  return new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem));
}

/** A certificate and its key as PEM text, with the paths they were read from. */
export interface TlsPemFiles {
  ca?: { path: string; text: string };
  cert?: { path: string; text: string };
  key?: { path: string; text: string };
}

/**
 * Why a set of TLS files read together does not make a usable identity, or undefined: each file
 * of its kind, the key that of the certificate. The same checks as at start (`pemFileProblem`,
 * the pairs of `transportSettingsProblem`), for files read again later: a renewed certificate is
 * taken only when this passes (`@meridian/platform-grpc` TlsFilesProvider, ADR 0506).
 */
export function tlsPemProblem(files: TlsPemFiles): string | undefined {
  if (Boolean(files.cert) !== Boolean(files.key))
    return 'a certificate and its key must be given together';
  for (const [label, kind, file] of [
    ['the CA', 'certificate', files.ca],
    ['the certificate', 'certificate', files.cert],
    ['the key', 'private key', files.key],
  ] as const) {
    const problem = file ? pemTextProblem(file.text, file.path, kind) : undefined;
    if (problem) return `${label} ${problem}`;
  }
  if (!files.cert || !files.key) return undefined;
  return keyMatches(files.cert.text, files.key.text)
    ? undefined
    : `the key (${files.key.path}) is not the key of the certificate (${files.cert.path})`;
}

/** A file setting; empty is unset (a ConfigMap key left blank). */
const file = (kind: Kind) =>
  z
    .string()
    .superRefine((path, ctx) => {
      const problem = path ? pemFileProblem(path, kind) : undefined;
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .transform((path) => path || undefined)
    .optional();

function userinfoOf(value: string): { user: string; pass: string } {
  try {
    const url = new URL(value);
    return { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) };
  } catch {
    return { user: '', pass: '' };
  }
}

/** A PEM certificate file, checked at start (unset or empty: none). */
export const certificateFile = file('certificate');
/** A PEM private key file, checked at start; `transportSettingsProblem` pairs it. */
export const privateKeyFile = file('private key');

export const transportEnv = {
  /**
   * The private CA of the internal gRPC: a client verifies billing-ledger's certificate with it
   * (and turns TLS on when it is set); billing-ledger verifies client certificates with it
   * (GRPC_TLS_CLIENT_AUTH=require).
   */
  GRPC_TLS_CA_FILE: file('certificate'),
  /** This app's certificate: billing-ledger's server certificate, a client's certificate. */
  GRPC_TLS_CERT_FILE: file('certificate'),
  GRPC_TLS_KEY_FILE: file('private key'),
  /** billing-ledger: `require` refuses a client without a certificate of GRPC_TLS_CA_FILE. */
  GRPC_TLS_CLIENT_AUTH: z.enum(['none', 'require']).default('none'),
  /** A client: the name billing-ledger's certificate carries, when not the host it dials. */
  GRPC_TLS_SERVER_NAME: z
    .string()
    .transform((name) => name || undefined)
    .optional(),
  /**
   * How often the gRPC TLS files (GRPC_TLS_*, and rpc-gateway's PUBLIC_GRPC_TLS_*) are read
   * again: a renewed certificate, key or CA is taken without a restart; a broken one is refused
   * and the last good one kept (ADR 0506). cert-manager renews at 2/3 of a lifetime of weeks,
   * so an hour is plenty.
   */
  GRPC_TLS_REFRESH_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3_600),
  /** A `.creds` file (user JWT + NKEY seed, decentralised auth); or NATS_NKEY_SEED_FILE. */
  NATS_CREDS_FILE: file('NATS credentials'),
  /** A file holding an NKEY user seed (`SU…`). */
  NATS_NKEY_SEED_FILE: file('NKEY seed'),
  /** The CA NATS's certificate is verified with; turns TLS on (required), as `tls://` does. */
  NATS_TLS_CA_FILE: file('certificate'),
  /** A client certificate, when NATS verifies clients (`verify: true`). */
  NATS_TLS_CERT_FILE: file('certificate'),
  NATS_TLS_KEY_FILE: file('private key'),
};

/** A NATS_URL whose password (or token: a user alone) is a placeholder is refused. */
export const natsUrlCredentialsAreReal = (value: string) => {
  const { user, pass } = userinfoOf(value);
  return !holdsPlaceholder(pass || user);
};
export const natsUrlPlaceholderMessage = `its password or token holds the placeholder ${PLACEHOLDER_MARK}; set a secret of your own`;

type TransportConfig = Partial<Record<keyof typeof transportEnv, string>> & { NATS_URL?: string };

export interface SettingProblem {
  variable: string;
  problem: string;
}

/** `<X>_TLS_CERT_FILE` and `<X>_TLS_KEY_FILE`: both or neither, the key of that certificate. */
function pairProblem(config: Record<string, unknown>, certVar: string): SettingProblem | undefined {
  const keyVar = certVar.replace(/_CERT_FILE$/, '_KEY_FILE');
  const cert = config[certVar] as string | undefined;
  const key = config[keyVar] as string | undefined;
  if (cert && !key) return { variable: keyVar, problem: `is required: ${certVar} is set` };
  if (key && !cert) return { variable: certVar, problem: `is required: ${keyVar} is set` };
  if (!cert || !key) return undefined;
  let matches: boolean;
  try {
    matches = keyMatches(read(cert), read(key));
  } catch (error) {
    return { variable: certVar, problem: `is invalid: ${(error as Error).message}` };
  }
  return matches
    ? undefined
    : { variable: keyVar, problem: `is invalid: not the key of ${certVar}'s certificate` };
}

/** The sslmode values node-postgres (pg-connection-string 2) knows. */
const SSL_MODES = ['disable', 'no-verify', 'prefer', 'require', 'verify-ca', 'verify-full'];

/**
 * The TLS parameters of a DATABASE_URL, which node-postgres reads itself (at each new
 * connection): `sslmode` one it knows, and the files of `sslrootcert`, `sslcert`, `sslkey`
 * readable PEM of their kind, the key that of the certificate. Checked at start, as the other
 * TLS files are, instead of at the first connection (deploy/README.md, "Transport security").
 */
export function databaseUrlTlsProblem(value: string): string | undefined {
  let params: URLSearchParams;
  try {
    params = new URL(value).searchParams;
  } catch {
    return undefined; // the URL itself is DATABASE_URL's own check
  }
  const mode = params.get('sslmode');
  if (mode !== null && !SSL_MODES.includes(mode))
    return `sslmode=${mode} is none of ${SSL_MODES.join(', ')}`;
  for (const [param, kind] of [
    ['sslrootcert', 'certificate'],
    ['sslcert', 'certificate'],
    ['sslkey', 'private key'],
  ] as const) {
    const path = params.get(param);
    const problem = path ? pemFileProblem(path, kind) : undefined;
    if (problem) return `its ${param} ${problem}`;
  }
  const cert = params.get('sslcert');
  const key = params.get('sslkey');
  if (Boolean(cert) !== Boolean(key))
    return `its ${cert ? 'sslcert' : 'sslkey'} is given without its ${cert ? 'sslkey' : 'sslcert'}`;
  if (cert && key && !keyMatches(read(cert), read(key)))
    return `its sslkey is not the key of its sslcert's certificate`;
  return undefined;
}

/**
 * What no single variable can say: a certificate without its key, or a key of another
 * certificate (every `<X>_TLS_CERT_FILE` / `<X>_TLS_KEY_FILE` pair of the config); TLS files of
 * a Redis (`<X>_REDIS_TLS_*_FILE`) without a `rediss://` `<X>_REDIS_URL`; DATABASE_URL's TLS
 * parameters (`databaseUrlTlsProblem`); client
 * authentication without a CA; two NATS identities at once. Undefined for a config without
 * these settings (apps that do not read them).
 */
export function transportSettingsProblem(config: object): SettingProblem | undefined {
  const c = config as TransportConfig;
  const all = config as Record<string, unknown>;
  const pairs = new Set(
    Object.keys(all)
      .filter((name) => /_TLS_(CERT|KEY)_FILE$/.test(name))
      .map((name) => name.replace(/_KEY_FILE$/, '_CERT_FILE')),
  );
  for (const certVar of [...pairs].sort()) {
    const problem = pairProblem(all, certVar);
    if (problem) return problem;
  }
  if (typeof all['DATABASE_URL'] === 'string') {
    const problem = databaseUrlTlsProblem(all['DATABASE_URL']);
    if (problem) return { variable: 'DATABASE_URL', problem: `is invalid: ${problem}` };
  }
  const redisTls = Object.keys(all)
    .filter((name) => /_REDIS_TLS_(CA|CERT|KEY)_FILE$/.test(name) && all[name])
    .sort();
  for (const variable of redisTls) {
    const urlVar = variable.replace(/_TLS_(CA|CERT|KEY)_FILE$/, '_URL');
    const url = all[urlVar];
    if (typeof url !== 'string' || !url.startsWith('rediss://'))
      return {
        variable: urlVar,
        problem: `is invalid: not a rediss:// URL while ${variable} is set`,
      };
  }
  if (c.GRPC_TLS_CLIENT_AUTH === 'require')
    for (const variable of ['GRPC_TLS_CA_FILE', 'GRPC_TLS_CERT_FILE'] as const)
      if (!c[variable]) return { variable, problem: 'is required: GRPC_TLS_CLIENT_AUTH=require' };
  if (c.NATS_CREDS_FILE && c.NATS_NKEY_SEED_FILE)
    return {
      variable: 'NATS_NKEY_SEED_FILE',
      problem: 'is invalid: NATS_CREDS_FILE is set too (one NATS identity)',
    };
  if ((c.NATS_CREDS_FILE || c.NATS_NKEY_SEED_FILE) && c.NATS_URL) {
    const { user } = userinfoOf(c.NATS_URL);
    if (user)
      return {
        variable: 'NATS_URL',
        problem: `is invalid: carries a user or token while ${c.NATS_CREDS_FILE ? 'NATS_CREDS_FILE' : 'NATS_NKEY_SEED_FILE'} is set (one NATS identity)`,
      };
  }
  return undefined;
}

/** The internal gRPC's TLS files of an app's config (`@meridian/platform-grpc` `GrpcTls`). */
export interface GrpcTlsFiles {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  requireClientCert: boolean;
  serverName?: string;
  /** How often the files are read again (GRPC_TLS_REFRESH_SECONDS). */
  refreshIntervalMs: number;
}

export function grpcTlsOf(config: {
  GRPC_TLS_CA_FILE?: string;
  GRPC_TLS_CERT_FILE?: string;
  GRPC_TLS_KEY_FILE?: string;
  GRPC_TLS_CLIENT_AUTH?: 'none' | 'require';
  GRPC_TLS_SERVER_NAME?: string;
  GRPC_TLS_REFRESH_SECONDS: number;
}): GrpcTlsFiles {
  return {
    caFile: config.GRPC_TLS_CA_FILE,
    certFile: config.GRPC_TLS_CERT_FILE,
    keyFile: config.GRPC_TLS_KEY_FILE,
    requireClientCert: config.GRPC_TLS_CLIENT_AUTH === 'require',
    serverName: config.GRPC_TLS_SERVER_NAME,
    refreshIntervalMs: config.GRPC_TLS_REFRESH_SECONDS * 1_000,
  };
}

/** NATS connection settings of an app's config (`@meridian/platform-messaging` NatsClient). */
export interface NatsConnectionSettings {
  url: string;
  credsFile?: string;
  nkeySeedFile?: string;
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

export function natsSettingsOf(config: {
  NATS_URL: string;
  NATS_CREDS_FILE?: string;
  NATS_NKEY_SEED_FILE?: string;
  NATS_TLS_CA_FILE?: string;
  NATS_TLS_CERT_FILE?: string;
  NATS_TLS_KEY_FILE?: string;
}): NatsConnectionSettings {
  const tlsFiles = {
    caFile: config.NATS_TLS_CA_FILE,
    certFile: config.NATS_TLS_CERT_FILE,
    keyFile: config.NATS_TLS_KEY_FILE,
  };
  const anyTlsFile = Object.values(tlsFiles).some(Boolean);
  return {
    url: config.NATS_URL,
    credsFile: config.NATS_CREDS_FILE,
    nkeySeedFile: config.NATS_NKEY_SEED_FILE,
    tls: anyTlsFile ? tlsFiles : undefined,
  };
}

/** A host name, an IPv4 address or a bracketed IPv6 address, then a port (1–65535). */
const HOST_PORT =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$/;

/**
 * A gRPC target as @grpc/grpc-js dials it (`createGrpcClient`'s address): `host:port`, or the
 * same after `dns:` / `dns:///`. A URL (`http://host:port/path`) is refused at start: grpc-js
 * takes it for a DNS name that never resolves, and every call failed as "access token check
 * unavailable" on a gateway that looked ready (QA M4). Every app that dials billing-ledger
 * reads BILLING_GRPC_URL through it.
 */
export const grpcTargetSetting = z.string().refine(
  (value) => {
    const port = HOST_PORT.exec(value.replace(/^dns:(?:\/\/\/)?/, ''))?.[1];
    return port !== undefined && Number(port) >= 1 && Number(port) <= 65_535;
  },
  { message: 'must be host:port (or dns:///host:port): no scheme such as http://, no path' },
);
