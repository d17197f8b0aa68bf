/**
 * Whether a statement failed on a value of its data: Postgres's SQLSTATE class 22 (data
 * exception: a time or number it cannot store). The same items fail the same way on every
 * attempt, unlike a lost connection, a conflict or a deadlock (a batch's failure, not an
 * item's). Reads the SQLSTATE on the error (TypeORM's QueryFailedError copies it) or on the
 * driver error it wraps.
 */
export function isDataException(error: unknown): boolean {
  const code = sqlState(error) ?? sqlState((error as { driverError?: unknown })?.driverError);
  return code !== undefined && code.startsWith('22');
}

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** Node's codes for a server certificate the client refused (tls.connect's verify errors). */
const UNTRUSTED_CERTIFICATE = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
]);

/**
 * A connection to Postgres failed for TLS: the server's certificate refused (not of the CA in
 * DATABASE_URL's `sslrootcert`, expired, of another name), TLS asked of a server without it, or
 * a server that takes only TLS asked without. The message starts with "Postgres TLS:", says
 * which, and keeps the driver's own words; `cause` is the driver's error.
 */
export class PostgresTlsError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(`Postgres TLS: ${message}`, options);
    this.name = 'PostgresTlsError';
  }
}

/**
 * The error a failed connection attempt is reported with: a PostgresTlsError naming what to fix
 * for a TLS failure (node-postgres and Node say "self-signed certificate in certificate chain"
 * or "The server does not support SSL connections"), else the error itself.
 */
export function postgresConnectError(error: unknown): unknown {
  // Not `instanceof Error`: errors of Node's own modules may come from another realm (Jest).
  const message = (error as { message?: unknown } | null)?.message;
  if (typeof message !== 'string' || error instanceof PostgresTlsError) return error;
  const code = (error as { code?: unknown }).code;
  const said = `${message}${typeof code === 'string' ? ` (${code})` : ''}`;
  if (typeof code === 'string' && UNTRUSTED_CERTIFICATE.has(code))
    return new PostgresTlsError(
      `the server's certificate is not trusted: ${said}; DATABASE_URL's sslrootcert must be the CA that signed it`,
      { cause: error },
    );
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return new PostgresTlsError(
      `the server's certificate is not for the host in DATABASE_URL: ${said}`,
      { cause: error },
    );
  if (message === 'The server does not support SSL connections')
    return new PostgresTlsError(
      `DATABASE_URL's sslmode asks for TLS, the server does not offer it: ${said}`,
      { cause: error },
    );
  // pg_hba.conf with `hostssl` lines only: "no pg_hba.conf entry for host …, no encryption".
  if (code === '28000' && /no encryption/.test(message))
    return new PostgresTlsError(
      `the server takes only TLS connections, DATABASE_URL asks for none (sslmode): ${said}`,
      { cause: error },
    );
  return error;
}

/** Connects a data source; a failure for TLS rejects with a PostgresTlsError saying what to fix. */
export async function initializeDataSource<D extends { initialize(): Promise<unknown> }>(
  dataSource: D,
): Promise<D> {
  try {
    await dataSource.initialize();
    return dataSource;
  } catch (error) {
    throw postgresConnectError(error);
  }
}
