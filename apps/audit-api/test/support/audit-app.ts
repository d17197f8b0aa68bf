import { join } from 'node:path';
import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createHttpApp } from '@meridian/platform-http';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pino, { type Logger } from 'pino';
import { AppModule, type AuditOverrides } from '../../src/app.module';
import { configSchema, type AppConfig } from '../../src/config/config';
import { dataSourceOptions, SCHEMA } from '../../src/db/data-source';
import { loadLabelPacks } from '../../src/labels/label-loader';
import type { LabelCategory, LabelPack } from '../../src/labels/label.types';
import { LABEL_PACKS } from '../../src/labels/packs';

export const LABELS_DIR = join(__dirname, '../../../../data/labels');

export interface AuditTestApp {
  readonly app: NestFastifyApplication;
  readonly db: TestDatabase;
  post(
    path: string,
    body: unknown,
    key?: string,
  ): Promise<{ status: number; body: Record<string, unknown>; headers: Record<string, unknown> }>;
  close(): Promise<void>;
}

/**
 * audit-api in-process (fastify inject, no port) on a fresh database with migrations and every
 * label pack loaded (`labels: false`: none, as a deployment that never ran the loader); `logger`:
 * where its log lines go (none by default).
 */
export async function startAuditApp(
  env: Record<string, string>,
  overrides: AuditOverrides,
  options: { labels?: boolean; logger?: Logger } = {},
): Promise<AuditTestApp> {
  const db = await createTestDatabase({ prefix: 'audit_api' });
  const dataSource = createAppDataSource(dataSourceOptions(db.url));
  await dataSource.initialize();
  await runMigrations(dataSource, SCHEMA);
  if (options.labels !== false) await loadLabelPacks(dataSource, LABELS_DIR, LABEL_PACKS);
  await dataSource.destroy();
  const config: AppConfig = configSchema.parse({
    HTTP_PORT: '0',
    DATABASE_URL: db.url,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const logger = options.logger ?? pino({ level: 'silent' });
  const app = await createHttpApp(AppModule.forRoot(config, logger, overrides), { logger });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return {
    app,
    db,
    async post(path, body, key) {
      const response = await app.inject({
        method: 'POST',
        url: path,
        headers: {
          'content-type': 'application/json',
          ...(key ? { authorization: `Bearer ${key}` } : {}),
        },
        payload: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return {
        status: response.statusCode,
        body: response.json() as Record<string, unknown>,
        headers: response.headers,
      };
    },
    async close() {
      await app.close();
      await db.drop();
    },
  };
}

/**
 * Loads one more label pack (`qa-reload`) holding one ETH label into the app's database, as an
 * operator's run of the loader does while the app serves: what a cached verdict must see.
 */
export async function loadOneLabel(
  audit: AuditTestApp,
  label: { address: string; category: LabelCategory; name: string },
): Promise<void> {
  const pack: LabelPack = {
    name: 'qa-reload',
    dir: 'qa-reload',
    license: 'test',
    load: () =>
      Promise.resolve([
        {
          pack: 'qa-reload',
          chain: 'ETH',
          ...label,
          url: null,
          sourceDate: '2026-03-05',
          extra: null,
        },
      ]),
  };
  const dataSource = createAppDataSource(dataSourceOptions(audit.db.url));
  await dataSource.initialize();
  try {
    await loadLabelPacks(dataSource, '', [pack]);
  } finally {
    await dataSource.destroy();
  }
}
