import {
  allEvents,
  deploymentConsumers,
  subjectMatches,
  type ConsumerDeclaration,
} from '@meridian/contracts';
import {
  natsAuthorizationConfig,
  natsClientsOf,
  natsInboxPrefix,
  natsPasswordVariable,
  natsPermissionsOf,
  natsRoles,
  type NatsDeployment,
  type NatsRole,
} from './nats-permissions';
import { NatsNamespace } from './nats-namespace';

const deployment: NatsDeployment = { prefix: 'acme', matcherPartitions: 3, deliveryPartitions: 2 };
const ns = new NatsNamespace(deployment.prefix);
const apps = natsRoles.filter((r): r is Exclude<NatsRole, 'provision'> => r !== 'provision');
const publishers = (subject: string) =>
  apps.filter((role) =>
    natsPermissionsOf(role, deployment).publish.some((allowed) => subjectMatches(subject, allowed)),
  );

describe('natsPermissionsOf', () => {
  it('gives every durable of the deployment to exactly its owner', () => {
    const durables: ConsumerDeclaration[] = deploymentConsumers({ matcher: 3, delivery: 2 });
    for (const consumer of durables) {
      const pull = `$JS.API.CONSUMER.MSG.NEXT.${ns.stream(consumer.stream)}.${ns.consumer(consumer.durable)}`;
      expect([consumer.durable, publishers(pull)]).toEqual([consumer.durable, [consumer.owner]]);
    }
  });

  it('lets exactly the producing apps publish each event (usage: both producers)', () => {
    const producers: Record<string, string[]> = {
      'chain.block.canonical.v1': ['chain-indexer'],
      'chain.block.removed.v1': ['chain-indexer'],
      'webhook.delivery.requested.v1': ['webhook-matcher'],
      'webhook.delivery.attempted.v1': ['delivery-worker'],
      'billing.usage.recorded.v1': [],
      'billing.usage.flushed.v1': ['rpc-gateway', 'delivery-worker'],
      'billing.usage.flushed.v2': ['rpc-gateway', 'delivery-worker'],
      'billing.balance.changed.v1': ['billing-ledger'],
      'billing.plan.changed.v1': ['billing-ledger'],
      'billing.credential.revoked.v1': ['billing-ledger'],
      'billing.topup.cleared.v1': ['billing-ledger'],
    };
    expect(allEvents.map((e) => e.type).sort()).toEqual(Object.keys(producers).sort());
    for (const event of allEvents)
      expect([event.type, publishers(ns.subject(`${event.type}.x`))]).toEqual([
        event.type,
        producers[event.type],
      ]);
  });

  it('prefixes every subject and name with NATS_PREFIX', () => {
    for (const role of apps) {
      const { publish, subscribe } = natsPermissionsOf(role, deployment);
      for (const subject of [...publish, ...subscribe])
        expect(subject).toMatch(
          /^(acme\.|\$JS\.API\.INFO$|\$JS\.[A-Z.]+(KV_)?acme_|\$KV\.acme_|_INBOX_)/,
        );
    }
  });

  it("subscribes an app to its own connections' inboxes and nothing else of another app", () => {
    expect(natsPermissionsOf('webhook-matcher', deployment).subscribe).toEqual([
      '_INBOX_webhook-matcher.>',
      '_INBOX_webhook-matcher-reseal.>',
    ]);
    expect(natsPermissionsOf('rpc-gateway', deployment).subscribe).toEqual([
      '_INBOX_rpc-gateway.>',
    ]);
    expect(natsPermissionsOf('billing-ledger', deployment)).toMatchObject({
      subscribe: ['acme.control.ledger.partition.v1.*', '_INBOX_billing-ledger.>'],
      allowResponses: true,
    });
    for (const role of apps.filter((r) => r !== 'billing-ledger'))
      expect(natsPermissionsOf(role, deployment).allowResponses).toBe(false);
  });

  it('keeps stream admin to the provisioning user', () => {
    expect(natsPermissionsOf('provision', deployment)).toEqual({
      publish: ['$JS.API.>'],
      subscribe: ['_INBOX.>'],
      allowResponses: false,
    });
    for (const role of apps)
      for (const subject of natsPermissionsOf(role, deployment).publish)
        expect(subject).not.toMatch(
          /\$JS\.API\.(>|STREAM\.(CREATE|UPDATE|DELETE|PURGE)|CONSUMER\.DELETE)/,
        );
  });
});

describe('natsInboxPrefix', () => {
  it('is the connection name as one subject token', () => {
    expect(natsInboxPrefix('billing-ledger')).toBe('_INBOX_billing-ledger');
    expect(natsInboxPrefix('a.b *>c')).toBe('_INBOX_a_b___c');
    for (const names of Object.values(natsClientsOf))
      for (const name of names) expect(natsInboxPrefix(name)).toBe(`_INBOX_${name}`);
  });
});

describe('natsAuthorizationConfig', () => {
  const rendered = natsAuthorizationConfig(deployment);

  it('names every user with its password variable and its permissions', () => {
    for (const role of natsRoles) {
      expect(rendered).toContain(`user: "${role}"`);
      expect(rendered).toContain(`password: $${natsPasswordVariable(role)}`);
    }
    expect(natsPasswordVariable('webhook-matcher')).toBe('MERIDIAN_NATS_WEBHOOK_MATCHER_PASSWORD');
    expect(rendered.match(/allow_responses: true/g)).toHaveLength(1);
  });

  it('says what it was rendered for', () => {
    expect(rendered).toContain('NATS_PREFIX=acme MATCHER_PARTITIONS=3 DELIVERY_PARTITIONS=2');
  });
});
