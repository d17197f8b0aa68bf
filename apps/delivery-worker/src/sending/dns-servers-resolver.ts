import type { LookupAddress } from 'node:dns';
import { Resolver as DnsResolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Resolver } from './guarded-lookup';

/** How long one DNS query may take, and how often it is tried, before the lookup fails. */
const QUERY_TIMEOUT_MS = 2_000;
const QUERY_TRIES = 2;

/**
 * DELIVERY_DNS_SERVERS: `ip` or `ip:port` (IPv6 in brackets with a port), comma-separated.
 * The servers the worker asks for target names instead of the system's resolver; undefined for
 * an empty list, an error message for a malformed entry.
 */
export function parseDnsServers(text: string): string[] | undefined {
  const servers = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const server of servers) {
    const bracketed = /^\[([^\]]+)\]:(\d{1,5})$/.exec(server);
    const withPort = /^([^:]+):(\d{1,5})$/.exec(server);
    const ok = bracketed
      ? isIP(bracketed[1]!) === 6 && Number(bracketed[2]) <= 65_535
      : withPort
        ? isIP(withPort[1]!) === 4 && Number(withPort[2]) <= 65_535
        : isIP(server) !== 0;
    if (!ok) throw new Error(`"${server}" is not an IP address with an optional port`);
  }
  return servers.length === 0 ? undefined : servers;
}

/**
 * Resolves target names through the given DNS servers only (not /etc/hosts, not the system's
 * resolver): A and AAAA asked at once, every address of both returned, so the SSRF rule judges
 * them all (guardedLookup). A name with neither fails as a DNS error (`dns` class): ENOTFOUND
 * when the servers say it does not exist or has no address, EAI_AGAIN when they cannot be asked.
 */
export function dnsServersResolver(servers: readonly string[]): Resolver {
  const dns = new DnsResolver({ timeout: QUERY_TIMEOUT_MS, tries: QUERY_TRIES });
  dns.setServers([...servers]);
  return async (hostname) => {
    const [v4, v6] = await Promise.allSettled([dns.resolve4(hostname), dns.resolve6(hostname)]);
    const addresses: LookupAddress[] = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (addresses.length > 0) return addresses;
    const codes = [v4, v6].map((result) =>
      result.status === 'rejected' ? String((result.reason as NodeJS.ErrnoException).code) : '',
    );
    const absent = codes.every((code) => code === 'ENOTFOUND' || code === 'ENODATA' || code === '');
    const code = absent ? 'ENOTFOUND' : 'EAI_AGAIN';
    throw Object.assign(new Error(`DNS ${code} ${hostname} (${codes.join(', ')})`), {
      code,
      hostname,
    });
  };
}
