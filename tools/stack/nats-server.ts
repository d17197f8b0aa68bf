import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** nats-server from PATH (Debian installs it in /usr/sbin, which a non-root PATH may lack). */
export function findNatsServer(): string | undefined {
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const dir of dirs) {
    const candidate = join(dir, 'nats-server');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
