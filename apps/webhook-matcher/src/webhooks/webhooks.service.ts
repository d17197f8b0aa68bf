import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { deliveryJobId, Events, type DeliveryJob } from '@meridian/contracts';
import { DeliveryRoutes } from '../delivery-jobs/delivery-routes';
import { DomainError, quoteInput } from '@meridian/errors';
import { checkWebhookWrite, addressesOfWebhook } from '@meridian/plans';
import { JetStreamPublisher } from '@meridian/platform-messaging';
import { LOGGER } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { Clock } from '@meridian/time';
import {
  checkTargetUrl,
  DEFAULT_CONFIRM_DEPTH,
  MAX_PREVIOUS_SECRETS,
  normalizeFilter,
  PHASES,
  planRotation,
  refusalWithoutPlan,
  refusedAt,
  transition,
  webhookNotFound,
  type NormalizedFilter,
  type PreviousSecret,
} from '@meridian/webhooks';
import { DataSource, type EntityManager } from 'typeorm';
import { AccountWrites } from '../accounts/account-writes';
import { AccountsRepository } from '../accounts/accounts.repository';
import { AddressListsRepository } from '../address-lists/address-lists.repository';
import {
  CREDENTIAL_SOURCE,
  type AccountFacts,
  type CredentialSource,
} from '../auth/credential-source';
import { CLOCK } from '../common/clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { newId } from '../http/ids';
import { checkIfMatch, type IfMatch } from '../http/if-match';
import { idempotentCreate } from '../idempotency/create-idempotency';
import { recordChange } from '../status/change-log';
import { StatusHistoryRepository } from '../status/status-history.repository';
import { StatusPublisher } from '../status/status-publisher.service';
import { planRequiredOf, StatusService, webhookCapsOf } from '../status/status.service';
import { chainAndNetwork, checkNetworkServed, servedWebhookNetworks } from './networks';
import { requestFingerprint } from '@meridian/platform-http';
import { newSigningSecret } from './secrets';
import { previousSecretsOf } from './previous-secrets';
import type { NetworkKey } from '@meridian/networks';
import type { CreateWebhookBody, PatchWebhookBody } from './webhook.schemas';
import {
  WebhooksRepository,
  type PatchedWebhookFields,
  type WebhookRow,
} from './webhooks.repository';
import { patchChangesWebhook } from './webhook-patch';
import { WebhookSecrets } from './webhook-secrets';
import { TestDeliveriesRepository } from './test-deliveries.repository';
import {
  testDeliveryLimits,
  testDeliveryRefusal,
  type TestDeliveryLimits,
} from './test-delivery-limits';

/**
 * The operation of a create's Idempotency-Key fingerprint: the webhook the body asks for, as
 * validated and normalised (addresses lower case, the filter as stored, chain derived, defaults
 * of `confirm_depth` and `phases` filled in, phases in delivery order, the target URL as the
 * WHATWG parser writes it), so two spellings of one create are one request.
 */
const CREATE_FINGERPRINT = 'create-webhook:normalised';
/** Keys stored before it hold the fingerprint of the body as zod parsed it, under this name. */
const LEGACY_CREATE_FINGERPRINT = 'create-webhook';

@Injectable()
export class WebhooksService {
  /** Seals under WEBHOOK_SECRETS_KEY, opens under it or a previous key (ADR 0424). */
  private readonly secrets: WebhookSecrets;
  /** The configured test-delivery limits (TEST_DELIVERY_WEBHOOK_PER_MINUTE, …_ACCOUNT_PER_HOUR). */
  private readonly testLimits: TestDeliveryLimits;
  private readonly testSends: TestDeliveriesRepository;
  /** The networks webhooks are accepted on: those the deployment indexes (NETWORKS). */
  private readonly networks: NetworkKey[];

  constructor(
    private readonly dataSource: DataSource,
    private readonly writes: AccountWrites,
    private readonly webhooks: WebhooksRepository,
    private readonly lists: AddressListsRepository,
    private readonly accounts: AccountsRepository,
    private readonly history: StatusHistoryRepository,
    private readonly status: StatusService,
    private readonly publisher: StatusPublisher,
    private readonly jobs: JetStreamPublisher,
    @Inject(CREDENTIAL_SOURCE) private readonly credentials: CredentialSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly routes: DeliveryRoutes,
    @Inject(LOGGER) logger: Logger,
    registry: Registry,
  ) {
    this.secrets = new WebhookSecrets(config, logger, registry);
    this.networks = servedWebhookNetworks(config.NETWORKS);
    this.testLimits = testDeliveryLimits(config);
    this.testSends = new TestDeliveriesRepository(this.testLimits);
  }

  /** 201 + the webhook and its secret (shown once; a repeated Idempotency-Key answers the first). */
  async create(
    accountId: string,
    body: CreateWebhookBody,
    idempotencyKey: string | null,
  ): Promise<{ row: WebhookRow; secret: string; replayed: boolean }> {
    const { chain, network } = chainAndNetwork(body.chain, body.network, this.networks);
    const filter = normalizeFilter(body);
    const targetUrl = checkTargetUrl(body.target_url, {
      allowLoopback: this.config.WEBHOOK_ALLOW_LOOPBACK_TARGETS,
    });
    const phases = body.phases ?? [...PHASES];
    const confirmDepth = body.confirm_depth ?? DEFAULT_CONFIRM_DEPTH;
    // After the filter's checks: the fingerprint's canonical JSON recurses over a bounded body.
    // The body as validated and normalised, defaults filled in (README "Idempotency-Key").
    const requestHash =
      idempotencyKey === null
        ? null
        : requestFingerprint(CREATE_FINGERPRINT, {
            name: body.name ?? null,
            chain,
            network,
            trigger_type: body.trigger_type,
            filters: filter.filters,
            addresses: filter.addresses,
            list_refs: filter.listRefs,
            confirm_depth: confirmDepth,
            phases: PHASES.filter((p) => phases.includes(p)),
            target_url: targetUrl,
          });
    const fresh = await this.credentials.accountFacts(accountId);
    const secret = newSigningSecret();
    const result = await this.writes.transaction(accountId, async (m) => {
      const facts = await this.accounts.lockWith(m, fresh);
      if (idempotencyKey !== null) {
        // One rule for every create with a key (create-idempotency.ts). A key stored before the
        // normalised fingerprint holds the raw body's (LEGACY_…): that exact body still matches
        // it; keys stored before any fingerprint (null) replay as before.
        const { replay } = idempotentCreate(
          await this.webhooks.findByIdempotencyKey(m, accountId, idempotencyKey),
          [requestHash!, requestFingerprint(LEGACY_CREATE_FINGERPRINT, body)],
          'webhook',
        );
        if (replay?.status === 'deleted') throw idempotencyKeyOfDeletedWebhook();
        // A replay answers the key's webhook as it is now and the secret that signs now (after
        // a rotation, the rotated one): README "Idempotency-Key".
        if (replay)
          return {
            row: replay,
            secret: this.secrets.open(replay.id, replay.secret_sealed),
            replayed: true,
          };
      }
      await this.checkCaps(m, facts, filter, null);
      const created = transition(null, 'create', {
        planRequired: planRequiredOf(facts),
        planFit: { fits: true },
      });
      if (created.kind !== 'change') throw (created as { error: DomainError }).error;
      const now = this.clock.now();
      const row = await this.webhooks.insert(m, {
        id: newId('wh'),
        accountId,
        name: body.name ?? null,
        status: created.to,
        chain,
        network,
        triggerType: body.trigger_type,
        filters: filter.filters,
        addresses: filter.addresses,
        listRefs: filter.listRefs,
        tree: filter.tree,
        inlineAddresses: filter.inlineAddresses,
        referencedLists: filter.referencedLists,
        confirmDepth,
        phases,
        targetUrl,
        secretSealed: this.secrets.seal(secret),
        idempotencyKey,
        idempotencyRequestHash: requestHash,
        now,
      });
      await this.history.record(m, {
        webhookId: row.id,
        accountId,
        from: null,
        to: row.status,
        trigger: 'create',
        actor: 'owner',
        dropReason: null,
        at: now,
      });
      await recordChange(m, { accountId, webhookId: row.id });
      return { row, secret, replayed: false };
    });
    if (!result.replayed) await this.publisher.publish([result.row.id]);
    return result;
  }

  /**
   * Plan caps for a create (current = null) or an update: team without a plan first (403), then
   * the counting rules of @meridian/plans (409), then the lists must be the account's (400).
   */
  private async checkCaps(
    m: EntityManager,
    facts: AccountFacts,
    filter: NormalizedFilter,
    current: WebhookRow | null,
  ): Promise<void> {
    const planRequired = planRequiredOf(facts);
    if (current === null && planRequired)
      throw transitionError(transition(null, 'create', { planRequired: true }));
    const counted = await this.webhooks.counted(m, facts.accountId);
    const sizes = await this.lists.sizes(m, facts.accountId);
    const previous = current ? counted.find((w) => w.id === current.id) : undefined;
    // The caps first (spec limits rule 6: a request over a limit is a 409 with its cap_ code,
    // also when it names lists that do not exist; a list unknown here counts 0 addresses, so
    // no cap is reached through one), then the lists must be the account's.
    try {
      checkWebhookWrite(webhookCapsOf(facts), {
        candidate: {
          id: current?.id ?? '(new)',
          inlineAddresses: filter.inlineAddresses,
          // Every reference: a list in two leaves counts twice (no de-duplication, like `counted`).
          listRefs: filter.listReferences,
        },
        others: counted.filter((w) => w.id !== current?.id),
        lists: sizes,
        isNew: current === null,
        previousAddresses: previous ? addressesOfWebhook(previous, sizes) : undefined,
      });
    } catch (error) {
      // An update a cap refuses on a team without a plan: the missing plan is the cause (403).
      throw refusalWithoutPlan(planRequired, error);
    }
    const unknown = filter.referencedLists.find((l) => !sizes.has(l));
    if (unknown !== undefined)
      throw new DomainError(
        'unknown_address_list',
        'invalid',
        `no address list ${quoteInput(unknown)} in this account`,
        { details: { ...refusedAt('body.list_refs'), list_id: unknown } },
      );
  }

  async get(accountId: string, id: string): Promise<WebhookRow> {
    const row = await this.webhooks.find(this.dataSource.manager, accountId, id);
    if (!row) throw webhookNotFound();
    return row;
  }

  async page(accountId: string, limit: number, cursor: string | undefined) {
    const rows = await this.webhooks.page(
      this.dataSource.manager,
      accountId,
      limit + 1,
      cursor ?? null,
    );
    const items = rows.slice(0, limit);
    return { items, nextCursor: rows.length > limit ? items.at(-1)!.seq : null };
  }

  /**
   * `ifMatch` (the If-Match header; null: none, last write wins) is checked under the webhook's
   * row lock, in the transaction that writes it: 412 `version_mismatch` unless it names the
   * version the change applies to (ADR 0404).
   */
  async patch(
    accountId: string,
    id: string,
    body: PatchWebhookBody,
    ifMatch: IfMatch | null = null,
  ): Promise<WebhookRow> {
    const fresh = await this.credentials.accountFacts(accountId);
    const { row, changed } = await this.writes.transaction(accountId, async (m) => {
      const facts = await this.accounts.lockWith(m, fresh);
      const current = await this.webhooks.find(m, accountId, id, true);
      if (!current) throw webhookNotFound();
      checkIfMatch(ifMatch, current.version);
      for (const field of ['chain', 'network', 'trigger_type'] as const) {
        const given = body[field];
        if (given !== undefined && given !== current[field])
          throw new DomainError(
            'immutable_field',
            'invalid',
            `${field} cannot be changed; create a new webhook`,
            { details: refusedAt(`body.${field}`) },
          );
      }
      // A webhook made before the deployment stopped indexing its network: updating it is
      // refused like a create (it would still never fire); pause, delete and rotate still work.
      checkNetworkServed(current.network, this.networks);
      const filterTouched =
        body.filters !== undefined || body.addresses !== undefined || body.list_refs !== undefined;
      const filter = normalizeFilter({
        filters: body.filters !== undefined ? body.filters : current.filters,
        addresses: body.addresses !== undefined ? body.addresses : current.addresses,
        list_refs: body.list_refs !== undefined ? body.list_refs : current.list_refs,
        trigger_type: current.trigger_type,
      });
      if (filterTouched) await this.checkCaps(m, facts, filter, current);
      const targetUrl =
        body.target_url !== undefined
          ? checkTargetUrl(body.target_url, {
              allowLoopback: this.config.WEBHOOK_ALLOW_LOOPBACK_TARGETS,
            })
          : current.target_url;
      const fields: PatchedWebhookFields = {
        name: body.name !== undefined ? body.name : current.name,
        filters: filter.filters,
        addresses: filter.addresses,
        listRefs: filter.listRefs,
        tree: filter.tree,
        inlineAddresses: filter.inlineAddresses,
        confirmDepth: body.confirm_depth ?? current.confirm_depth,
        phases: body.phases ?? current.phases,
        targetUrl,
      };
      // A PATCH that changes no stored field writes nothing: version, ETag and updated_at stay,
      // no change-feed row, nothing to publish (README "Webhook versions"; address lists' rule).
      // After If-Match and the body's checks: a stale tag is 412 and a bad body 4xx all the same.
      if (!patchChangesWebhook(current, fields)) return { row: current, changed: false };
      const updated = await this.webhooks.update(m, id, { ...fields, now: this.clock.now() });
      if (filterTouched) await this.webhooks.setListRefs(m, id, filter.referencedLists);
      await recordChange(m, { accountId, webhookId: id });
      return { row: updated, changed: true };
    });
    if (changed) await this.publisher.publish([row.id]);
    return row;
  }

  async rotateSecret(
    accountId: string,
    id: string,
    expirePrevious: boolean,
  ): Promise<{ row: WebhookRow; secret: string }> {
    const secret = newSigningSecret();
    const row = await this.writes.transaction(accountId, async (m) => {
      await this.accounts.lock(m, accountId);
      const current = await this.webhooks.find(m, accountId, id, true);
      if (!current) throw webhookNotFound();
      const now = this.clock.now();
      const plan = planRotation(
        current.secret_sealed,
        previousSecretsOf(current),
        now,
        expirePrevious,
      );
      if (!plan.ok) throw tooManyPreviousSecrets(plan.live, plan.nextRotationAt);
      const updated = await this.webhooks.rotateSecret(
        m,
        id,
        this.secrets.seal(secret),
        plan.previous,
        now,
      );
      await recordChange(m, { accountId, webhookId: id });
      return updated;
    });
    await this.publisher.publish([row.id]);
    return { row, secret };
  }

  /**
   * A test delivery: free, only while active (spec), a fresh eventId each time, and at most
   * the configured limits of them per webhook and per account, counted in Postgres across the
   * replicas (429 `rate_limited` with Retry-After; ADR 0431 amendment).
   */
  async sendTest(accountId: string, id: string): Promise<{ eventId: string }> {
    const now = this.clock.now();
    const eventId = `test_${randomBytes(12).toString('hex')}`;
    // A turn of its own, not the account's: tests lock their advisory lock, not the account row,
    // so a queue of them never holds up a delete (ADR 0405).
    await this.writes.testDelivery(accountId, async (m) => {
      await this.testSends.lockAccount(m, accountId, now);
      // Read under the webhook's row lock, in the transaction that queues the test: a delete or
      // pause committed first wins (404 / 409, nothing queued), one coming after waits for this
      // commit (QQ: the status was read before the lock, and a test of a webhook deleted
      // meanwhile was 202 and sent).
      const row = await this.webhooks.find(m, accountId, id, true);
      if (!row) throw webhookNotFound();
      if (row.status !== 'active')
        throw new DomainError(
          'webhook_not_active',
          'conflict',
          `test deliveries are sent only while active (now ${row.status})`,
        );
      const refusal = testDeliveryRefusal(
        this.testLimits,
        await this.testSends.recent(m, row.id, accountId, now),
        now,
      );
      if (refusal) throw refusal;
      await this.testSends.record(m, { eventId, webhookId: row.id, accountId, at: now });
      // The worker reads target and secrets from the KV entry: make sure it holds this version.
      // Through `m`: this transaction holds the account's lock, and the tests waiting on it may
      // hold every other pooled connection.
      await this.publisher.publish([row.id], m);
      // Inside the transaction: a job NATS did not take leaves no row counting against the limit.
      await this.jobs.publish(Events.deliveryJob, this.testJob(row, accountId, eventId, now));
    });
    return { eventId };
  }

  private testJob(row: WebhookRow, accountId: string, eventId: string, now: Date): DeliveryJob {
    return {
      id: deliveryJobId(row.id, eventId, 'unconfirmed'),
      webhookId: row.id,
      accountId,
      eventId,
      phase: 'unconfirmed',
      test: true,
      attempt: 1,
      payload: {
        webhookId: row.id,
        eventId,
        type: row.trigger_type as DeliveryJob['payload']['type'],
        network: row.network,
        confirmed: false,
        removed: false,
        block: {
          number: '0x0',
          hash: `0x${'0'.repeat(64)}`,
          timestamp: `0x${Math.floor(now.getTime() / 1000).toString(16)}`,
        },
        raw: { test: true },
      },
      createdAt: now.toISOString(),
      route: this.routes.of(row.id, row.target_url),
    };
  }
}

/** README "Idempotency-Key": a replay never answers 201 with a deleted webhook, nor makes a second. */
const idempotencyKeyOfDeletedWebhook = () =>
  new DomainError(
    'idempotency_key_reused',
    'conflict',
    'the webhook created with this Idempotency-Key has been deleted; send a new key to create another',
  );

function transitionError(result: ReturnType<typeof transition>): DomainError {
  if (result.kind === 'refused') return result.error;
  return new DomainError('internal', 'internal');
}

/**
 * 409: the rotation would make more previous secrets sign than MAX_PREVIOUS_SECRETS. Refused
 * rather than ending one early: each one's expiry was promised when its rotation answered.
 */
function tooManyPreviousSecrets(
  live: readonly PreviousSecret[],
  nextRotationAt: Date,
): DomainError {
  return new DomainError(
    'too_many_previous_secrets',
    'conflict',
    `${live.length} previous secrets still sign (at most ${MAX_PREVIOUS_SECRETS}); rotate ` +
      `again after ${nextRotationAt.toISOString()}, or with expire_previous: true to end them all now`,
    {
      details: {
        previous_secrets_expire_at: live.map((s) => s.expiresAt.toISOString()),
        next_rotation_at: nextRotationAt.toISOString(),
      },
    },
  );
}
