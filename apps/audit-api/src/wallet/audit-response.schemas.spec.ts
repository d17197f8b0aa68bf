import { z } from 'zod';
import type { SanctionRecord } from '../records/address-records.repository';
import { NO_CHAIN_FLAGS, forensicFlags } from '../scoring/forensic-flags';
import {
  rugPullResponseSchema,
  sanctionRecordSchema,
  walletAuditResponseSchema,
  walletCheckResponseSchema,
  walletForensicDetailsSchema,
} from './audit-response.schemas';
import type { WalletAssessment } from './wallet-assessor.service';
import { walletAuditData, walletCheckData, type CheckedRecord } from './wallet-responses';

// Copied from spec/service-spec.md "Address audit result (wallet audit)" and COMPAT "Address audit".
const SPEC_RESULT_FIELDS = [
  'message',
  'walletAddress',
  'status',
  'probabilityFraud',
  'token',
  'chain',
  'lastChecked',
  'forensic_details',
  'checked_times',
  'createdAt',
  'updatedAt',
  'sanctionData',
];
const SPEC_FORENSIC_MEMBERS = [
  'cybercrime',
  'money_laundering',
  'number_of_malicious_contracts_created',
  'gas_abuse',
  'financial_crime',
  'darkweb_transactions',
  'reinit',
  'phishing_activities',
  'fake_kyc',
  'blacklist_doubt',
  'fake_standard_interface',
  'data_source',
  'stealing_attack',
  'blackmail_activities',
  'sanctioned',
  'malicious_mining_activities',
  'mixer',
  'fake_token',
  'honeypot_related_address',
];
const SPEC_SANCTION_FIELDS = [
  'id',
  'trustscore_id',
  'category',
  'name',
  'description',
  'url',
  'isSanctioned',
  'createdAt',
  'updatedAt',
];
const COMPAT_AUDIT_EXTRA = [
  'categories',
  'riskProfile',
  'experience',
  'protocols',
  'userDetails',
  'riskCapability',
  'recommendation',
];
// Ours, in every product's answer (README "Verdict cache"): a verdict served while the node did
// not answer says so.
const OUR_FIELDS = ['stale'];
const COMPAT_USER_DETAILS = ['wallet_age_days', 'total_balance_usd', 'transaction_count'];
const COMPAT_RUG_FIELDS = [
  'contractAddress',
  'contractCreatorAddress',
  'contractCreationTime',
  'status',
  'probabilityFraud',
  'risk_score',
  'risk_status',
  'risk_indicators',
  'forensic_details',
];
const COMPAT_RUG_INDICATORS = [
  'is_honeypot',
  'cannot_sell_all',
  'cannot_buy',
  'is_mintable',
  'buy_tax',
  'sell_tax',
  'hidden_owner',
  'can_take_back_ownership',
  'owner_change_balance',
  'transfer_pausable',
  'slippage_modifiable',
  'is_blacklisted',
  'is_proxy',
  'selfdestruct',
];
const COMPAT_RUG_FORENSICS = [
  'owner',
  'privilege_withdraw',
  'withdraw_missing',
  'blacklist',
  'selfdestruct',
  'is_proxy',
  'approval_abuse',
];

const keysOf = (schema: z.ZodObject) => Object.keys(schema.shape).sort();
const dataOf = (schema: z.ZodObject) => schema.shape['data'] as z.ZodObject;

describe('audit response schemas match the spec tables and COMPAT', () => {
  it('wallet check: exactly the spec fields (and ours), forensic members and sanction record fields', () => {
    expect(keysOf(dataOf(walletCheckResponseSchema))).toEqual(
      [...SPEC_RESULT_FIELDS, ...OUR_FIELDS].sort(),
    );
    expect(keysOf(walletForensicDetailsSchema)).toEqual([...SPEC_FORENSIC_MEMBERS].sort());
    expect(keysOf(sanctionRecordSchema)).toEqual([...SPEC_SANCTION_FIELDS].sort());
  });

  it('wallet audit: the check plus the behavioural fields', () => {
    const data = dataOf(walletAuditResponseSchema);
    expect(keysOf(data)).toEqual(
      [...SPEC_RESULT_FIELDS, ...OUR_FIELDS, ...COMPAT_AUDIT_EXTRA].sort(),
    );
    expect(keysOf(data.shape['userDetails'] as z.ZodObject)).toEqual(
      [...COMPAT_USER_DETAILS].sort(),
    );
  });

  it('rug pull: every COMPAT field, indicator and forensic member (plus documented extras)', () => {
    const data = dataOf(rugPullResponseSchema);
    expect(keysOf(data)).toEqual(expect.arrayContaining([...COMPAT_RUG_FIELDS, ...OUR_FIELDS]));
    expect(keysOf(data.shape['risk_indicators'] as z.ZodObject)).toEqual(
      expect.arrayContaining(COMPAT_RUG_INDICATORS),
    );
    expect(keysOf(data.shape['forensic_details'] as z.ZodObject)).toEqual(
      [...COMPAT_RUG_FORENSICS].sort(),
    );
  });

  it.each([
    ['counter as a number', { cybercrime: 0 }],
    ['counter as "true"', { cybercrime: 'true' }],
    ['data_source missing', { data_source: undefined }],
    ['extra member', { extra: '0' }],
  ])('rejects forensic_details with %s', (_name, patch) => {
    const valid = Object.fromEntries(
      SPEC_FORENSIC_MEMBERS.map((m) => [m, m === 'data_source' ? '' : '0']),
    );
    expect(walletForensicDetailsSchema.safeParse({ ...valid, ...patch }).success).toBe(false);
  });

  const at = new Date('2026-03-02T08:00:00.000Z');
  const record: CheckedRecord = {
    id: 7,
    chain: 'ETH',
    address: '0xa',
    checkedTimes: 3,
    createdAt: at,
    updatedAt: at,
    lastChecked: at,
    computedAt: at,
    stale: false,
  };
  const sanction: SanctionRecord = {
    id: 1,
    trustscoreId: 7,
    category: null,
    name: null,
    description: null,
    url: null,
    isSanctioned: false,
    createdAt: at,
    updatedAt: at,
  };
  const forensic = forensicFlags([], NO_CHAIN_FLAGS);
  const assessment: WalletAssessment = {
    status: 'Not Fraud',
    probability: 0.0412,
    counts: forensic.counts,
    sources: forensic.sources,
    token: null,
    sanctions: [],
    features: {
      isContract: false,
      txCount: 5,
      transferCount: 1,
      ageDays: 40,
      flaggedCounterparties: 0,
      counterparties: 1,
      contractsCreated: 0,
    },
    chainRead: true,
    balanceWei: '0',
    protocols: [],
  };

  it('the builders produce schema-valid bodies with the exact types (strings for counters and probability, ms timestamps)', () => {
    const check = walletCheckResponseSchema.parse({
      data: walletCheckData('0xA', 'ETH', assessment, record, [sanction]),
    }).data;
    expect(check.probabilityFraud).toBe('0.0412000000');
    expect(check.lastChecked).toBe('2026-03-02T08:00:00.000Z');
    expect(check.sanctionData[0]).toEqual({
      id: 1,
      trustscore_id: 7,
      category: null,
      name: null,
      description: null,
      url: null,
      isSanctioned: false,
      createdAt: '2026-03-02T08:00:00.000Z',
      updatedAt: '2026-03-02T08:00:00.000Z',
    });
    const audit = walletAuditResponseSchema.parse({
      data: walletAuditData('0xA', 'ETH', assessment, record, [sanction]),
    }).data;
    expect(audit.userDetails).toEqual({
      wallet_age_days: 40,
      total_balance_usd: null,
      transaction_count: 5,
    });
    expect([audit.riskProfile, audit.experience]).toEqual(['Low', 'Beginner']);
  });

  it('an address that only received: transaction_count 0 (sent), not New, no "no history" claim', () => {
    const receivedOnly: WalletAssessment = {
      ...assessment,
      features: {
        ...assessment.features,
        txCount: 0,
        transferCount: 0,
        ageDays: null,
        counterparties: 0,
        holdsBalance: true,
      },
      balanceWei: '3412000000000000000',
    };
    const audit = walletAuditResponseSchema.parse({
      data: walletAuditData('0xA', 'ETH', receivedOnly, record, [sanction]),
    }).data;
    expect(audit.userDetails.transaction_count).toBe(0);
    expect(audit.experience).toBe('Beginner');
    expect(audit.recommendation).toBe(
      'No known risk; the address has received value but has not sent a transaction yet.',
    );
  });

  it('without chain evidence (no node for the network): transaction_count null, capability Limited', () => {
    const labelsOnly: WalletAssessment = {
      ...assessment,
      features: { ...assessment.features, txCount: 0, transferCount: 0, ageDays: null },
      chainRead: false,
      balanceWei: null,
    };
    const audit = walletAuditResponseSchema.parse({
      data: walletAuditData('0xA', 'AMOY', labelsOnly, record, [sanction]),
    }).data;
    expect(audit.userDetails.transaction_count).toBeNull();
    expect([audit.experience, audit.riskCapability]).toEqual(['Unknown', 'Limited']);
    expect(audit.recommendation).toBe(
      'No known risk in the label packs; no chain evidence was read for this network.',
    );
    // With evidence read the same low score is Full.
    expect(walletAuditData('0xA', 'ETH', assessment, record, [sanction]).riskCapability).toBe(
      'Full',
    );
  });
});
