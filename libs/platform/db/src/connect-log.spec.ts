import { createServer, type AddressInfo } from 'node:net';
import { connectCauseOf, redactDatabaseUrl } from './connect-log';
import { appWithDatabase } from './connect-log.fixture';

const PASSWORD = 's3cret-Pa55word';

/** A port on 127.0.0.1 with nothing listening (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('DbModule logs why Postgres cannot be reached', () => {
  it('a port with nothing listening: ECONNREFUSED named once, readiness still 503, no password', async () => {
    const port = await closedPort();
    const url = `postgres://app:${PASSWORD}@127.0.0.1:${port}/things?sslpassword=${PASSWORD}`;
    const { app, lines, readiness } = await appWithDatabase(url);
    try {
      for (let i = 0; i < 3; i += 1) {
        const report = await readiness.report();
        expect(report.ready).toBe(false);
        expect(report.checks['postgres']).toContain('ECONNREFUSED');
      }
      const failures = lines.filter((line) =>
        String(line['msg']).startsWith('Postgres connection failed'),
      );
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatchObject({
        level: 40,
        msg: expect.stringContaining(`connect ECONNREFUSED 127.0.0.1:${port} (ECONNREFUSED)`),
        cause: { code: 'ECONNREFUSED' },
        database: `postgres://app@127.0.0.1:${port}/things`,
      });
      expect(JSON.stringify(lines)).not.toContain(PASSWORD);
    } finally {
      await app.close();
    }
  });
});

describe('connectCauseOf', () => {
  it('an AggregateError (a host name with two addresses) is named by its errors', () => {
    const inner = [
      new Error('connect ECONNREFUSED ::1:1'),
      new Error('connect ECONNREFUSED 127.0.0.1:1'),
    ];
    const error = Object.assign(new AggregateError(inner, ''), { code: 'ECONNREFUSED' });
    expect(connectCauseOf(error, 'postgres://localhost:1/x')).toEqual({
      message: 'connect ECONNREFUSED ::1:1; connect ECONNREFUSED 127.0.0.1:1',
      code: 'ECONNREFUSED',
    });
  });

  it('takes the password out of a message quoting it, and URLs down to their origin', () => {
    const url = `postgres://u:${encodeURIComponent('p@ss/word')}@h:5432/db`;
    const cause = connectCauseOf(
      new Error(`bad p@ss/word near postgres://u:p%40ss%2Fword@h:5432/db`),
      url,
    );
    expect(cause.message).not.toContain('p@ss/word');
    expect(cause.message).not.toContain('p%40ss%2Fword');
  });

  it('redactDatabaseUrl keeps user, host, port and database only', () => {
    expect(redactDatabaseUrl(`postgres://me:${PASSWORD}@db.example:6432/app?sslmode=require`)).toBe(
      'postgres://me@db.example:6432/app',
    );
  });
});
