import { AUDIT_CHAIN_CODES } from '@meridian/networks';
import { z } from 'zod';

/**
 * The request bodies as zod, for `/openapi.json`. `parseAuditRequest` keeps its own checks (they
 * give each problem its own code and check addresses per chain) and takes its list of known fields
 * from these schemas (strict: another field is 400 `malformed_body`); audit-request.schemas.spec.ts
 * proves every body these schemas refuse, the parser refuses too.
 */
const network = z
  .string()
  .min(1)
  .describe(`chain code, any case: ${AUDIT_CHAIN_CODES.join(', ')} (BSC for BNB)`);

export const walletRequestSchema = z.strictObject({
  network,
  address: z.string().min(1).describe('the wallet, in the chain’s own format'),
});

export const rugPullRequestSchema = z.strictObject({
  network,
  contract_address: z.string().min(1).describe('the token contract (EVM chains)'),
});

/** The audit routes take no query parameters: any is 400 `invalid_query` naming it. */
export const noQuerySchema = z.strictObject({});
