/**
 * Rows of an `UPDATE … RETURNING`: TypeORM's postgres driver answers UPDATE and DELETE with
 * `[rows, affectedCount]` but INSERT and SELECT with the rows alone.
 */
export function returning<T>(result: unknown): T[] {
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  )
    return result[0] as T[];
  return result as T[];
}
