import { decodeEventLog, erc1155Abi, erc20Abi, erc721Abi, type Hex } from 'viem';
import {
  APPROVAL_TOPIC,
  TRANSFER_BATCH_TOPIC,
  TRANSFER_SINGLE_TOPIC,
  TRANSFER_TOPIC,
  type Activity,
} from './block-activities';
import type { TriggerType } from './filter-model';

export type EventPhase = 'unconfirmed' | 'confirmed' | 'removed';

/** The delivered body (the contracts' EventBodySchema describes the same shape). */
export interface EventBody {
  webhookId: string;
  eventId: string;
  type: TriggerType;
  network: string;
  confirmed: boolean;
  removed: boolean;
  block: { number: string; hash: string; timestamp: string };
  raw: Record<string, unknown>;
  decoded?: Record<string, unknown>;
}

const hex = (value: bigint | number): string => `0x${value.toString(16)}`;
const lower = (address: string): string => address.toLowerCase();

type Decoded = Record<string, unknown>;

function decodeWith(abi: readonly unknown[], topics: readonly string[], data: string) {
  return decodeEventLog({
    abi: abi as typeof erc20Abi,
    topics: topics as [Hex, ...Hex[]],
    data: data as Hex,
  }).args as unknown as Record<string, unknown>;
}

/**
 * `decoded` of COMPAT for the token events everyone watches, through viem's ABI decoding:
 * ERC-20 Transfer/Approval (3 topics), ERC-721 Transfer (4 topics), ERC-1155
 * TransferSingle/TransferBatch. Amounts and ids are hex strings like every number of the
 * payload. A log that merely shares a topic but does not decode (wrong data length) has none.
 */
export function decodeTokenLog(topics: readonly string[], data: string): Decoded | undefined {
  const t0 = topics[0];
  try {
    if (t0 === TRANSFER_TOPIC && topics.length === 3) {
      const a = decodeWith(erc20Abi, topics, data);
      return {
        standard: 'erc20',
        event: 'Transfer',
        from: lower(a.from as string),
        to: lower(a.to as string),
        value: hex(a.value as bigint),
      };
    }
    if (t0 === TRANSFER_TOPIC && topics.length === 4) {
      const a = decodeWith(erc721Abi, topics, data);
      return {
        standard: 'erc721',
        event: 'Transfer',
        from: lower(a.from as string),
        to: lower(a.to as string),
        tokenId: hex(a.tokenId as bigint),
      };
    }
    if (t0 === APPROVAL_TOPIC && topics.length === 3) {
      const a = decodeWith(erc20Abi, topics, data);
      return {
        standard: 'erc20',
        event: 'Approval',
        owner: lower(a.owner as string),
        spender: lower(a.spender as string),
        value: hex(a.value as bigint),
      };
    }
    if (t0 === TRANSFER_SINGLE_TOPIC && topics.length === 4) {
      const a = decodeWith(erc1155Abi, topics, data);
      return {
        standard: 'erc1155',
        event: 'TransferSingle',
        operator: lower(a.operator as string),
        from: lower(a.from as string),
        to: lower(a.to as string),
        id: hex(a.id as bigint),
        value: hex(a.value as bigint),
      };
    }
    if (t0 === TRANSFER_BATCH_TOPIC && topics.length === 4) {
      const a = decodeWith(erc1155Abi, topics, data);
      return {
        standard: 'erc1155',
        event: 'TransferBatch',
        operator: lower(a.operator as string),
        from: lower(a.from as string),
        to: lower(a.to as string),
        ids: (a.ids as readonly bigint[]).map(hex),
        values: (a.values as readonly bigint[]).map(hex),
      };
    }
  } catch {
    return undefined;
  }
  return undefined;
}

export interface PayloadInput {
  readonly webhookId: string;
  readonly eventId: string;
  readonly type: TriggerType;
  readonly network: string;
  readonly phase: EventPhase;
  readonly block: { readonly number: number; readonly hash: string; readonly timestamp: number };
  readonly activity: Activity;
}

/** The body POSTed to the customer, exactly as COMPAT "Webhook delivery" (numbers hex). */
export function buildPayload(input: PayloadInput): EventBody {
  const { activity } = input;
  // A log whose data the indexer left out (`omitted`, chain-indexer README "Blocks on the
  // stream") is not decoded: its `0x` would decode as something it is not.
  const decoded =
    activity.kind === 'log' && activity.raw['omitted'] === undefined
      ? decodeTokenLog(activity.topics, String(activity.raw['data'] ?? '0x'))
      : undefined;
  return {
    webhookId: input.webhookId,
    eventId: input.eventId,
    type: input.type,
    network: input.network,
    confirmed: input.phase === 'confirmed',
    removed: input.phase === 'removed',
    block: {
      number: hex(input.block.number),
      hash: input.block.hash.toLowerCase(),
      timestamp: hex(input.block.timestamp),
    },
    raw: activity.raw,
    ...(decoded ? { decoded } : {}),
  };
}

/** The same event in another phase (confirmed, removed): only the two flags change. */
export function payloadInPhase(body: EventBody, phase: EventPhase): EventBody {
  return { ...body, confirmed: phase === 'confirmed', removed: phase === 'removed' };
}
