import { z } from 'zod';
import { WALLET_FORENSIC_COUNTERS } from '../scoring/forensic-fields';

/**
 * The wire contract of the three products (spec "Address audit result", COMPAT "Address audit"),
 * strict: an extra or missing member fails. Used by the schema tests and the benchmark.
 */
/**
 * A time as `Date.toISOString()` writes it (UTC, milliseconds): `format: date-time` plus its
 * pattern in `/openapi.json`, as billing-ledger's and webhook-matcher's times (`z.iso.datetime`).
 */
export const isoMs = z.iso.datetime({ precision: 3 }).describe('ISO 8601 time, UTC');
/**
 * Ours, beside the spec's fields: true when the verdict was served from the cache without the
 * reads that say whether it still holds, because the network's node did not answer them (it may
 * be out of date; `lastChecked` says when it was computed). False for a verdict computed now or
 * reused with its version confirmed (README "Verdict cache").
 */
export const staleSchema = z
  .boolean()
  .describe(
    "true: served from the cache because the network's node did not answer the reads that " +
      'confirm it still holds (lastChecked says when it was computed); false otherwise',
  );
const counter = z.string().regex(/^(0|[1-9]\d*)$/);
const probability = z.string().regex(/^(0\.\d{10}|1\.0000000000)$/);

export const sanctionRecordSchema = z.strictObject({
  id: z.number().int(),
  trustscore_id: z.number().int(),
  category: z.string().nullable(),
  name: z.string().nullable(),
  description: z.string().nullable(),
  url: z.string().nullable(),
  isSanctioned: z.boolean(),
  createdAt: isoMs,
  updatedAt: isoMs,
});

export const walletForensicDetailsSchema = z.strictObject({
  ...Object.fromEntries(WALLET_FORENSIC_COUNTERS.map((name) => [name, counter])),
  data_source: z.string(),
} as Record<string, z.ZodString>);

const walletCheckShape = {
  message: z.literal('Success'),
  walletAddress: z.string(),
  status: z.enum(['Fraud', 'Not Fraud', 'New Address']),
  probabilityFraud: probability,
  token: z.string().nullable(),
  chain: z.string(),
  lastChecked: isoMs,
  stale: staleSchema,
  forensic_details: walletForensicDetailsSchema,
  checked_times: z.number().int().min(1),
  createdAt: isoMs,
  updatedAt: isoMs,
  sanctionData: z.array(sanctionRecordSchema).min(1),
};

export const walletCheckResponseSchema = z.strictObject({ data: z.strictObject(walletCheckShape) });

export const walletAuditResponseSchema = z.strictObject({
  data: z.strictObject({
    ...walletCheckShape,
    categories: z.array(z.string()),
    riskProfile: z.enum(['Low', 'Medium', 'High']),
    experience: z.string(),
    protocols: z.array(z.string()),
    userDetails: z.strictObject({
      wallet_age_days: z.number().int().min(0).nullable(),
      total_balance_usd: z.number().nullable(),
      /** null: no node was read for the network (unknown, not 0). */
      transaction_count: z.number().int().min(0).nullable(),
    }),
    riskCapability: z.string(),
    recommendation: z.string(),
  }),
});

const flag = z.union([z.literal(0), z.literal(1)]);

export const rugPullResponseSchema = z.strictObject({
  data: z.strictObject({
    message: z.literal('Success'),
    contractAddress: z.string(),
    chain: z.string(),
    contractCreatorAddress: z.string().nullable(),
    contractCreationTime: isoMs.nullable(),
    status: z.enum(['Fraud', 'Not Fraud']),
    probabilityFraud: probability,
    risk_score: z.number().int().min(0).max(100),
    risk_status: z.enum(['Low Risk', 'Medium Risk', 'High Risk']),
    risk_indicators: z.strictObject({
      // null: not measured (no pool, and nothing the holders' own transfers showed; ADR 0303).
      is_honeypot: flag.nullable(),
      cannot_sell_all: flag.nullable(),
      cannot_buy: flag.nullable(),
      is_mintable: flag,
      buy_tax: z.number().min(0).max(1).nullable(),
      sell_tax: z.number().min(0).max(1).nullable(),
      transfer_tax: z.number().min(0).max(1).nullable(),
      hidden_owner: flag,
      can_take_back_ownership: flag,
      owner_change_balance: flag,
      transfer_pausable: flag,
      slippage_modifiable: flag,
      is_blacklisted: flag,
      is_proxy: flag,
      selfdestruct: flag,
      external_call: flag,
      owner_renounced: flag,
      /** null: no DEX router is known for the network, so whether a pool exists is unknown. */
      has_liquidity_pool: flag.nullable(),
      owner_can_block_sells: flag,
      max_sell_tax_by_owner: z.number().min(0).max(1).nullable(),
      hidden_power: flag,
      /** The creator made another token this checker found to be a honeypot (GoPlus' name). */
      honeypot_with_same_creator: flag,
    }),
    centralization_risk: z.strictObject({
      score: z.number().int().min(0).max(100),
      status: z.enum(['Low', 'Medium', 'High']),
    }),
    forensic_details: z.strictObject({
      owner: flag,
      privilege_withdraw: flag,
      withdraw_missing: flag,
      blacklist: flag,
      selfdestruct: flag,
      is_proxy: flag,
      approval_abuse: flag,
    }),
    checked_times: z.number().int().min(1),
    lastChecked: isoMs,
    stale: staleSchema,
    createdAt: isoMs,
    updatedAt: isoMs,
  }),
});

/** `GET /v1/quota`: today's use of the daily check quota. */
export const quotaResponseSchema = z.strictObject({
  limit: z.number().int().min(0),
  used: z.number().int().min(0),
  resets_at: isoMs,
});

export const errorResponseSchema = z.object({
  error: z.string(),
  message: z.string(),
  request_id: z.string(),
});
