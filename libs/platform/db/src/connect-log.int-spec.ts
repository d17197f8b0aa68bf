import { appWithDatabase } from './connect-log.fixture';

/**
 * Against the real Postgres: a DATABASE_URL naming a database that does not exist logs the
 * server's own words, `database "…" does not exist` (3D000), once, without the password.
 */
describe('DbModule on a database that does not exist', () => {
  it('logs the cause once, with its code, and no password', async () => {
    const password = 'never-logged-Pa55';
    const name = `no_such_db_${process.pid}`;
    const { app, lines, readiness } = await appWithDatabase(
      `postgres://postgres:${password}@127.0.0.1:5432/${name}`,
    );
    try {
      for (let i = 0; i < 3; i += 1)
        expect((await readiness.report()).checks['postgres']).toContain(
          `database "${name}" does not exist`,
        );
      const failures = lines.filter((line) =>
        String(line['msg']).startsWith('Postgres connection failed'),
      );
      expect(failures).toEqual([
        expect.objectContaining({
          msg: expect.stringContaining(`database "${name}" does not exist (3D000)`),
          cause: { message: `database "${name}" does not exist`, code: '3D000' },
        }),
      ]);
      expect(JSON.stringify(lines)).not.toContain(password);
    } finally {
      await app.close();
    }
  });
});
