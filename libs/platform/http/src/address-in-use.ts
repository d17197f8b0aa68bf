import { createServer } from 'node:net';
import type { Logger } from 'pino';

/**
 * A listener's address is held by another process (node's EADDRINUSE). Its message is the one
 * line an operator needs: the setting, its value and the address, e.g.
 * `HTTP_PORT 7601: address 0.0.0.0:7601 is already in use`.
 */
export class AddressInUseError extends Error {
  readonly code = 'EADDRINUSE';
  constructor(
    readonly setting: string,
    readonly host: string,
    readonly port: number,
  ) {
    super(`${setting} ${port}: address ${host}:${port} is already in use`);
    this.name = 'AddressInUseError';
  }
}

/** Node's and fastify's default when no host is given. */
const DEFAULT_HOST = '0.0.0.0';

/**
 * Refuses, with AddressInUseError, a port another process listens on, before anything binds it:
 * node:net, Nest and grpc-js each log their own lines and a stack trace for a port in use (QA),
 * so the listeners ask here first. Port 0 (any free port) is never in use.
 */
export async function refuseAddressInUse(
  setting: string,
  port: number,
  host: string = DEFAULT_HOST,
): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new AddressInUseError(setting, host, port) : error),
    );
    // Not exclusive: in a cluster worker the primary holds the port for every worker (the gateway),
    // and a probe through it shares that handle instead of finding the port taken.
    probe.listen({ port, host }, () => probe.close(() => resolve()));
  });
}

/**
 * A start that failed for an address in use ends the process with the one fatal line (exit 1),
 * no stack trace; any other failure is thrown on. A node EADDRINUSE that got past the probe (a
 * race) is named by `setting` the same way.
 */
export function exitOnAddressInUse(
  error: unknown,
  logger: Logger,
  setting: string,
  port: number,
  host: string = DEFAULT_HOST,
): never {
  const inUse =
    error instanceof AddressInUseError
      ? error
      : (error as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE'
        ? new AddressInUseError(setting, host, port)
        : undefined;
  if (!inUse) throw error;
  // The code stays in the line: harnesses (startAppProcess) start again on a new port on it.
  logger.fatal(
    { code: inUse.code, setting: inUse.setting, address: `${inUse.host}:${inUse.port}` },
    inUse.message,
  );
  process.exit(1);
}

/**
 * Ends the process with the one fatal line when the address is in use, before anything starts:
 * for a process that does not listen itself (the gateway's primary, whose workers would each
 * exit on a taken port and be replaced for ever).
 */
export async function exitIfAddressInUse(
  logger: Logger,
  setting: string,
  port: number,
  host: string = DEFAULT_HOST,
): Promise<void> {
  try {
    await refuseAddressInUse(setting, port, host);
  } catch (error) {
    exitOnAddressInUse(error, logger, setting, port, host);
  }
}
