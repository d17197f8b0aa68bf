import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * A server binary from PATH (nats-server, redis-server). Debian installs them in /usr/sbin or
 * /usr/bin, and a non-root PATH may lack the sbin directories.
 */
export function findServerBinary(name: string): string | undefined {
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const dir of dirs) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
