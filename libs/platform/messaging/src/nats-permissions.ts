import {
  deploymentConsumers,
  KvBuckets,
  Subjects,
  type ConsumerDeclaration,
  type KvBucketDeclaration,
  type StreamName,
} from '@meridian/contracts';
import { NatsNamespace } from './nats-namespace';

/**
 * Who holds what on the bus (ADR 0507): one NATS user per app, and one for the one-shot
 * provisioning command, each allowed only the subjects its code publishes to and subscribes
 * to. This table is the single source: `natsAuthorizationConfig` renders the nats-server
 * `authorization` block from it (deploy/nats/authorization.conf, kept equal by its test), and
 * the permissions test connects as each user and runs the app's NATS operations against it.
 *
 * Everything is derived from `@meridian/contracts` (subjects, streams, durables, buckets) and
 * the namespace rules (`NatsNamespace`), so a new consumer or subject there changes the
 * rendered block, and the test that compares it fails until the file is rendered again.
 */

/** A NATS user of the deployment: an app, or the provisioning command (stream admin). */
export type NatsRole =
  | 'billing-ledger'
  | 'rpc-gateway'
  | 'chain-indexer'
  | 'webhook-matcher'
  | 'delivery-worker'
  | 'audit-api'
  | 'provision';

export const natsRoles: readonly NatsRole[] = [
  'billing-ledger',
  'rpc-gateway',
  'chain-indexer',
  'webhook-matcher',
  'delivery-worker',
  'audit-api',
  'provision',
];

export interface NatsPermissions {
  /** Subjects the user may publish to (JetStream API requests, acks and KV puts included). */
  publish: string[];
  /** Subjects the user may subscribe to (its own inboxes, core request subjects). */
  subscribe: string[];
  /** May answer requests it received (publish to their reply subjects, once, for 2 min). */
  allowResponses: boolean;
}

/** What the rendered permissions depend on: the deployment's prefix and replica counts. */
export interface NatsDeployment {
  /** NATS_PREFIX ('' in deploy/). */
  prefix: string;
  /** webhook-matcher replicas (MATCHER_PARTITIONS of the provisioning Job). */
  matcherPartitions: number;
  /** delivery-worker replicas (DELIVERY_PARTITIONS). */
  deliveryPartitions: number;
}

/**
 * The connection names that log in as each user (NatsClient's `name`: SERVICE of the app, and
 * the reseal CronJob's). Each connection's replies come to its own inbox prefix
 * (`natsInboxPrefix(name)`), so a user subscribes to its own replies and no one else's.
 */
export const natsClientsOf: Readonly<Record<Exclude<NatsRole, 'provision'>, readonly string[]>> = {
  'billing-ledger': ['billing-ledger'],
  'rpc-gateway': ['rpc-gateway'],
  'chain-indexer': ['chain-indexer'],
  'webhook-matcher': ['webhook-matcher', 'webhook-matcher-reseal'],
  'delivery-worker': ['delivery-worker'],
  'audit-api': ['audit-api'],
};

/**
 * The inbox prefix of a connection (nats.js `inboxPrefix`): `_INBOX_<name>`, its characters
 * outside a subject token's safe set replaced. Not `_INBOX`, which stays the provisioning
 * command's (it connects through plain nats.js, tools/messaging/provision.ts).
 */
export function natsInboxPrefix(connectionName: string): string {
  return `_INBOX_${connectionName.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/** The permissions of one user, for a deployment. */
export function natsPermissionsOf(role: NatsRole, deployment: NatsDeployment): NatsPermissions {
  const grant = new Grant(new NatsNamespace(deployment.prefix));
  const durables = deploymentConsumers({
    matcher: deployment.matcherPartitions,
    delivery: deployment.deliveryPartitions,
  });
  const owned = (owner: string) => durables.filter((c) => c.owner === owner);
  switch (role) {
    case 'provision':
      // Streams, durables and buckets are created, updated and deleted only here.
      grant.publish('$JS.API.>');
      grant.subscribe('_INBOX.>');
      break;
    case 'billing-ledger':
      for (const consumer of owned('billing-ledger')) grant.consume(consumer);
      grant.produce(
        Subjects.billing.balanceChanged.all,
        Subjects.billing.planChanged.all,
        Subjects.billing.topUpCleared.all,
        Subjects.billing.credentialRevoked.all,
      );
      grant.writeKv(KvBuckets.balanceState);
      grant.writeKv(KvBuckets.revokedCredentials);
      // The replicas' liveness requests and answers (PartitionTakeover, ADR 0105 step 3).
      grant.produce(Subjects.control.ledgerPartitionAlive.all);
      grant.listen(Subjects.control.ledgerPartitionAlive.all);
      // UnreadUsage: the BILLING stream's subjects and the last message of an unread one.
      grant.api('$JS.API.INFO');
      grant.readStream('BILLING');
      break;
    case 'rpc-gateway':
      grant.produceUsage();
      grant.readKv(KvBuckets.balanceState);
      grant.readKv(KvBuckets.revokedCredentials);
      break;
    case 'chain-indexer':
      grant.produce(Subjects.chain.block.all, Subjects.chain.removed.all);
      grant.writeKv(KvBuckets.indexerLeases);
      break;
    case 'webhook-matcher':
      for (const consumer of owned('webhook-matcher')) grant.consume(consumer);
      grant.produce(Subjects.webhook.deliveryJob.all);
      grant.writeKv(KvBuckets.webhookStatus);
      grant.readKv(KvBuckets.revokedCredentials);
      break;
    case 'delivery-worker':
      for (const consumer of owned('delivery-worker')) grant.consume(consumer);
      grant.produce(Subjects.webhook.deliveryHealth.all);
      grant.produceUsage();
      grant.readKv(KvBuckets.webhookStatus);
      grant.readKv(KvBuckets.balanceState);
      break;
    case 'audit-api':
      grant.readKv(KvBuckets.revokedCredentials);
      break;
  }
  if (role !== 'provision') for (const name of natsClientsOf[role]) grant.inbox(name);
  return grant.permissions(role === 'billing-ledger');
}

/** The env variable holding a user's password in the rendered block. */
export function natsPasswordVariable(role: NatsRole): string {
  return `MERIDIAN_NATS_${role.toUpperCase().replace(/-/g, '_')}_PASSWORD`;
}

/**
 * The nats-server `authorization` block for a deployment: one user per role, its password
 * from an environment variable of the server (`natsPasswordVariable`), its permissions from
 * `natsPermissionsOf`. A connection of no listed user is refused.
 */
export function natsAuthorizationConfig(deployment: NatsDeployment): string {
  const lines = [
    '# Rendered from libs/platform/messaging/src/nats-permissions.ts (ADR 0507); do not edit.',
    `# NATS_PREFIX=${deployment.prefix} MATCHER_PARTITIONS=${deployment.matcherPartitions}` +
      ` DELIVERY_PARTITIONS=${deployment.deliveryPartitions}`,
    '# Render again: deploy/nats/render-authorization.ts (deploy/README.md, "NATS permissions").',
    'authorization {',
    '  users: [',
  ];
  for (const role of natsRoles) {
    const permissions = natsPermissionsOf(role, deployment);
    lines.push('    {');
    lines.push(`      user: ${quote(role)}`);
    lines.push(`      password: $${natsPasswordVariable(role)}`);
    lines.push('      permissions: {');
    lines.push(...list('publish', permissions.publish));
    lines.push(...list('subscribe', permissions.subscribe));
    if (permissions.allowResponses) lines.push('        allow_responses: true');
    lines.push('      }');
    lines.push('    }');
  }
  lines.push('  ]', '}', '');
  return lines.join('\n');
}

function list(kind: 'publish' | 'subscribe', subjects: readonly string[]): string[] {
  return [
    `        ${kind}: {`,
    '          allow: [',
    ...subjects.map((s) => `            ${quote(s)}`),
    '          ]',
    '        }',
  ];
}

function quote(value: string): string {
  return JSON.stringify(value);
}

/** Collects one user's subjects, prefixed as NatsNamespace does, without repeats. */
class Grant {
  private readonly pub = new Set<string>();
  private readonly sub = new Set<string>();

  constructor(private readonly ns: NatsNamespace) {}

  publish(subject: string): void {
    this.pub.add(subject);
  }

  subscribe(subject: string): void {
    this.sub.add(subject);
  }

  /** A JetStream API subject, as is ($JS.API.* names are already prefixed where needed). */
  api(subject: string): void {
    this.pub.add(subject);
  }

  /** Stream subjects the user publishes to (JetStream publish: PubAck to its inbox). */
  produce(...subjects: string[]): void {
    for (const s of subjects) this.pub.add(this.ns.subject(s));
  }

  /** Core subjects the user subscribes to (request/reply between its replicas). */
  listen(...subjects: string[]): void {
    for (const s of subjects) this.sub.add(this.ns.subject(s));
  }

  /**
   * Usage parts (ADR 0103, 0105): v2 on the usage partitions, v1 while a release that reads
   * only v1 is deployed (USAGE_FLUSH_VERSION=1). Both producers share these subjects.
   */
  produceUsage(): void {
    this.produce(Subjects.billing.usageFlushedV2.all, Subjects.billing.usageFlushed.all);
  }

  /**
   * A durable pull consumer (ConsumerRunner): its info, its pulls, acks / naks / terms of its
   * messages, and the dead letters it parks.
   */
  consume(consumer: ConsumerDeclaration): void {
    const stream = this.ns.stream(consumer.stream);
    const durable = this.ns.consumer(consumer.durable);
    this.api(`$JS.API.CONSUMER.INFO.${stream}.${durable}`);
    this.api(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${durable}`);
    this.api(`$JS.ACK.${stream}.${durable}.>`);
    this.produce(consumer.deadLetterSubject);
  }

  /**
   * Reading a stream's info and messages without a consumer: the message API, and the direct
   * get nats.js takes instead where the stream allows it (`allow_direct`).
   */
  readStream(name: StreamName): void {
    this.streamReads(this.ns.stream(name));
  }

  private streamReads(stream: string): void {
    this.api(`$JS.API.STREAM.INFO.${stream}`);
    this.api(`$JS.API.STREAM.MSG.GET.${stream}`);
    this.api(`$JS.API.DIRECT.GET.${stream}`);
    this.api(`$JS.API.DIRECT.GET.${stream}.>`);
  }

  /**
   * Reading a KV bucket (Kvm.open, status, get, keys, KvMirror's watch): the bucket stream's
   * info and messages, and the named ordered consumers `watch` and `keys` create on it (their
   * info when they are checked or reset, and the flow control answers of the push consumer a
   * watch is: a large snapshot stalls without them). A consumer on a KV stream only reads it.
   */
  readKv(bucket: KvBucketDeclaration): void {
    const stream = `KV_${this.ns.bucket(bucket.name)}`;
    this.streamReads(stream);
    this.api(`$JS.API.CONSUMER.CREATE.${stream}.>`);
    this.api(`$JS.API.CONSUMER.INFO.${stream}.*`);
    this.api(`$JS.FC.${stream}.>`);
  }

  /** Reading and writing a KV bucket (put, create, update, delete: publishes on `$KV.<bucket>.`). */
  writeKv(bucket: KvBucketDeclaration): void {
    this.readKv(bucket);
    this.api(`$KV.${this.ns.bucket(bucket.name)}.>`);
  }

  /** The replies of one connection (PubAcks, pulled messages, KV watches, requests). */
  inbox(connectionName: string): void {
    this.sub.add(`${natsInboxPrefix(connectionName)}.>`);
  }

  permissions(allowResponses: boolean): NatsPermissions {
    return { publish: [...this.pub], subscribe: [...this.sub], allowResponses };
  }
}
