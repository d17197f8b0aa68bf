import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { refusedAddressReason, type AddressPolicy } from '@meridian/webhooks';

/** Resolves a host name to every address it has (injectable: tests name a fake resolver). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );

/** The resolved (or literal) address is private or reserved: a failed attempt that says why. */
export class RefusedAddressError extends Error {
  readonly code = 'EREFUSED_ADDRESS';

  constructor(
    readonly hostname: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(`${hostname} resolves to ${address} (${reason}); refused`);
    this.name = 'RefusedAddressError';
  }
}

/** The first refused address of `addresses`, judged by the one rule of @meridian/webhooks. */
export function firstRefused(
  addresses: readonly string[],
  policy: AddressPolicy,
): { address: string; reason: string } | undefined {
  for (const address of addresses) {
    const reason = refusedAddressReason(address, policy);
    if (reason !== null) return { address, reason };
  }
  return undefined;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for net/tls.connect (undici passes its `connect` options through): resolves the
 * name once, refuses the connection if ANY address is private or reserved (a name with one
 * public and one private address is a rebinding tool), and hands the socket exactly the
 * addresses it checked, so there is no second lookup a rebinding DNS could answer differently.
 */
export function guardedLookup(policy: AddressPolicy, resolver: Resolver = systemResolver) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    resolver(hostname).then(
      (addresses) => {
        if (addresses.length === 0) {
          const error: NodeJS.ErrnoException = new Error(`${hostname}: no address`);
          error.code = 'ENOTFOUND';
          callback(error, '');
          return;
        }
        const refused = firstRefused(
          addresses.map((a) => a.address),
          policy,
        );
        if (refused) {
          callback(new RefusedAddressError(hostname, refused.address, refused.reason), '');
          return;
        }
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}

/** Literal IPs never reach `lookup` (net.connect skips it), so they are judged before sending. */
export function refusedLiteral(
  hostname: string,
  policy: AddressPolicy,
): RefusedAddressError | null {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(bare) === 0) return null;
  const reason = refusedAddressReason(bare, policy);
  return reason === null ? null : new RefusedAddressError(hostname, bare, reason);
}
