import { DomainError } from '@meridian/errors';
import { parseAuditChainCode, type AuditChain } from '@meridian/networks';
import { parseBody, parseQuery } from '@meridian/platform-http';
import { z } from 'zod';
import { parseAddress, type ParsedAddress } from './address';
import { invalidField } from './audit-errors';
import { noQuerySchema, rugPullRequestSchema, walletRequestSchema } from './audit-request.schemas';

/** What a product route reads from the request: the JSON body and the query parameters. */
export interface AuditRequest {
  readonly body: unknown;
  readonly query: unknown;
}

export interface AuditTarget {
  readonly chain: AuditChain;
  readonly address: ParsedAddress;
}

/**
 * The fields each body may have, from its (strict) schema, every value let through: the values
 * are checked below, each problem with its own code.
 */
const knownFields = (schema: z.ZodObject) =>
  z.strictObject(
    Object.fromEntries(Object.keys(schema.shape).map((key) => [key, z.unknown().optional()])),
  );
const FIELDS = {
  address: knownFields(walletRequestSchema),
  contract_address: knownFields(rugPullRequestSchema),
};

/** The audit routes take no query parameters (`GET /v1/quota` included). */
export function refuseQuery(query: unknown): void {
  parseQuery(noQuerySchema, query);
}

/**
 * Validates `{network, <field>}` and an empty query. Order of checks: body is an object, network
 * present and a string, network known, address present and a string, address well-formed for
 * that chain; then no unknown field (`malformed_body`, as billing-ledger and webhook-matcher say
 * it: `body: unknown field "x"`) and no query parameter (`invalid_query`). Last, so a body
 * refused before these two checks existed keeps its code (`{network, address}` sent to the rug
 * pull checker is still `missing_contract_address`); only what used to be taken is refused.
 */
export function parseAuditRequest(
  request: AuditRequest,
  addressField: 'address' | 'contract_address',
): AuditTarget {
  const body = request.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new DomainError('malformed_body', 'invalid', 'the body must be a JSON object');
  }
  const record = body as Record<string, unknown>;
  const network = record['network'];
  if (network === undefined || network === null || network === '')
    throw invalidField('missing_network', 'network is required', 'network');
  if (typeof network !== 'string')
    throw invalidField('invalid_network', 'network must be a string', 'network');
  // Refused, not trimmed, as whitespace around the address is (README "Addresses").
  if (network !== network.trim())
    throw invalidField(
      'invalid_network',
      'network must not have leading or trailing whitespace',
      'network',
    );
  const chain = parseAuditChainCode(network);
  if (!chain)
    throw invalidField(
      'unknown_network',
      `network ${JSON.stringify(network.slice(0, 32))} is not a supported chain code`,
      'network',
    );
  const address = record[addressField];
  if (address === undefined || address === null || address === '') {
    throw invalidField(`missing_${addressField}`, `${addressField} is required`, addressField);
  }
  if (typeof address !== 'string')
    throw invalidField(`invalid_${addressField}`, `${addressField} must be a string`, addressField);
  const parsed = parseAddress(address, chain.addressFormat, addressField);
  parseBody(FIELDS[addressField], body);
  refuseQuery(request.query);
  return { chain, address: parsed };
}
