import { keccak256, parseAbi, type Address, type Hex, type PublicClient } from 'viem';
import { EIP1167_PREFIX, EIP1967_BEACON_SLOT, EIP1967_IMPLEMENTATION_SLOT } from './bytecode';

const BEACON_ABI = parseAbi(['function implementation() view returns (address)']);

export interface ProxyFacts {
  readonly isProxy: boolean;
  /** Where the calls go: the EIP-1967 implementation, the beacon's, or an EIP-1167 clone's target. */
  readonly implementation: Address | null;
}

const slotAddress = (slot: Hex | undefined): Address | null =>
  slot && BigInt(slot) !== 0n ? (`0x${slot.slice(-40)}` as Address) : null;

/** Reads the proxy standards a token may follow (EIP-1967 implementation or beacon, EIP-1167). */
export async function readProxy(
  client: PublicClient,
  token: Address,
  code: Hex,
): Promise<ProxyFacts> {
  const [implSlot, beaconSlot] = await Promise.all([
    client.getStorageAt({ address: token, slot: EIP1967_IMPLEMENTATION_SLOT }),
    client.getStorageAt({ address: token, slot: EIP1967_BEACON_SLOT }),
  ]);
  const beacon = slotAddress(beaconSlot);
  const fromBeacon = beacon
    ? await client
        .readContract({ address: beacon, abi: BEACON_ABI, functionName: 'implementation' })
        .catch(() => null)
    : null;
  const minimalProxy = code.toLowerCase().startsWith(EIP1167_PREFIX)
    ? (`0x${code.slice(22, 62)}` as Address)
    : null;
  const implementation = slotAddress(implSlot) ?? fromBeacon ?? minimalProxy;
  return { isProxy: implementation !== null || beacon !== null, implementation };
}

/**
 * What a token's verdict depends on: its own code and, behind a proxy, the implementation's code.
 * An upgrade (a new implementation, or new code at the same one) changes it.
 */
export async function codeVersion(
  client: PublicClient,
  token: Address,
  code: Hex,
): Promise<string> {
  const own = keccak256(code);
  if (code === '0x') return own;
  const { implementation } = await readProxy(client, token, code);
  if (!implementation) return own;
  const implCode = (await client.getCode({ address: implementation })) ?? '0x';
  return `${own}:${implementation.toLowerCase()}:${keccak256(implCode)}`;
}
