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
