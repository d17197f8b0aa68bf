import { DomainError } from '@meridian/errors';
import { parseAuditChainCode, type AuditChain } from '@meridian/networks';
import { parseAddress, type ParsedAddress } from './address';
import { invalidField } from './audit-errors';

export interface AuditTarget {
  readonly chain: AuditChain;
  readonly address: ParsedAddress;
}

/**
 * Validates `{network, <field>}`. Order of checks: body is an object, network present and a
 * string, network known, address present and a string, address well-formed for that chain.
 */
export function parseAuditRequest(
  body: unknown,
  addressField: 'address' | 'contract_address',
): AuditTarget {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new DomainError('malformed_body', 'invalid', 'the body must be a JSON object');
  }
  const record = body as Record<string, unknown>;
  const network = record['network'];
  if (network === undefined || network === null || network === '')
    throw invalidField('missing_network', 'network is required', 'network');
  if (typeof network !== 'string')
    throw invalidField('invalid_network', 'network must be a string', 'network');
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
  return { chain, address: parseAddress(address, chain.addressFormat, addressField) };
}
