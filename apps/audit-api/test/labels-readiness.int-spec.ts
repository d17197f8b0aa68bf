import { createAppDataSource } from '@meridian/platform-db';
import { provisionMessaging } from '@meridian/platform-messaging';
import { deleteNatsNamespace, FakeClock, testNatsUrl, uniqueNatsPrefix } from '@meridian/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/db/data-source';
import { loadLabelPacks } from '../src/labels/label-loader';
import { LABEL_PACKS } from '../src/labels/packs';
import { LABELS_DIR, startAuditApp, type AuditTestApp } from './support/audit-app';
import { InTestCredentialSource } from './support/in-test-credentials';

/**
 * Without label packs a sanctioned or mixer address answers clean with no error, so /readyz
 * answers 503 naming the packs that are missing until the loader has run (README "Label packs").
 */
describe('audit-api /readyz: the label packs', () => {
  let audit: AuditTestApp;
  let db: DataSource;
  // Its own NATS namespace: readiness also needs the revoked-credentials bucket, which must not
  // depend on what another run left on the shared server.
  const natsUrl = testNatsUrl();
  const natsPrefix = uniqueNatsPrefix();

  beforeAll(async () => {
    const nc = await connect({ servers: natsUrl });
    await provisionMessaging(await jetstreamManager(nc), natsPrefix);
    await nc.close();
    audit = await startAuditApp(
      { NATS_URL: natsUrl, NATS_PREFIX: natsPrefix },
      { credentials: new InTestCredentialSource(), clock: new FakeClock(new Date()) },
      { labels: false },
    );
    db = createAppDataSource(dataSourceOptions(audit.db.url));
    await db.initialize();
  }, 90_000);

  afterAll(async () => {
    await db?.destroy();
    await audit?.close();
    await deleteNatsNamespace(natsUrl, natsPrefix);
  });

  const readyz = async () => {
    const response = await audit.app.inject({ method: 'GET', url: '/readyz' });
    return {
      status: response.statusCode,
      body: response.json() as { failing?: string[]; checks: Record<string, string> },
    };
  };
  const names = LABEL_PACKS.map((pack) => pack.name);

  /**
   * /readyz once every check but the label packs passes: the app's other dependencies (the
   * revoked-credentials KV watch) may still be starting on a loaded machine, and this file is
   * about the packs only.
   */
  const readyzOnceOthersPass = async () => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const answer = await readyz();
      const others = Object.entries(answer.body.checks).filter(([name]) => name !== 'labels');
      if (others.every(([, state]) => state === 'ok') || Date.now() > deadline) return answer;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it('is 503 naming every pack while none is loaded, ready once the loader ran', async () => {
    const empty = await readyzOnceOthersPass();
    expect(empty.status).toBe(503);
    expect(empty.body.failing).toEqual(['labels']);
    expect(empty.body.checks['labels']).toBe(
      `label packs not loaded: ${names.join(', ')} ` +
        '(run apps/audit-api/src/labels/load-labels.ts against this database)',
    );

    await loadLabelPacks(db, LABELS_DIR, LABEL_PACKS);
    const loaded = await readyz();
    expect(loaded).toEqual({
      status: 200,
      body: {
        status: 'ready',
        checks: expect.objectContaining({ labels: 'ok' }),
        version: expect.any(String),
        commit: expect.any(String),
      },
    });
  });

  it('names the one pack a partial load left out', async () => {
    await db.query('DELETE FROM audit.labels WHERE pack = $1', ['ofac-eth-ultrasoundmoney']);
    const partial = await readyz();
    expect(partial.status).toBe(503);
    expect(partial.body.failing).toEqual(['labels']);
    expect(partial.body.checks['labels']).toMatch(
      /^label packs not loaded: ofac-eth-ultrasoundmoney \(run /,
    );
    await loadLabelPacks(db, LABELS_DIR, LABEL_PACKS);
    expect((await readyz()).status).toBe(200);
  });
});
