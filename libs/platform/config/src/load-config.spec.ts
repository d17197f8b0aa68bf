import { z } from 'zod';
import { port } from './common-env';
import { ConfigError, parseConfig } from './load-config';

/**
 * A blank numeric setting (QA: `LEDGER_TICK_MS=` read as 0, "never"; `HTTP_PORT=` as 0, a random
 * port) is refused in the config error's one line, whatever wraps the number; blank strings keep
 * their meaning.
 */
describe('parseConfig: blank numeric settings', () => {
  const schema = z.object({
    TICK_MS: z.coerce.number().int().min(0).default(1_000),
    HTTP_PORT: port,
    LIMIT: z.coerce.number().int().optional(),
    PIPED: z.coerce
      .number()
      .int()
      .transform((n) => n * 2)
      .default(4),
    NETWORKS: z.string().optional(),
  });
  const problem = (env: Record<string, string>) => {
    try {
      parseConfig(schema, { HTTP_PORT: '8080', ...env });
      return undefined;
    } catch (error) {
      return error instanceof ConfigError ? error.message : String(error);
    }
  };

  it.each([
    ['TICK_MS', ''],
    ['TICK_MS', '  '],
    ['HTTP_PORT', ''],
    ['LIMIT', ''],
    ['PIPED', ' '],
  ])('%s=%j is a config error naming it, not 0', (name, value) => {
    expect(problem({ [name]: value })).toBe(
      `config error: ${name} is invalid: empty; give a number, or unset it for its default`,
    );
  });

  it('unset numbers take their defaults; a given 0 stays 0; a blank string stays blank', () => {
    expect(parseConfig(schema, { HTTP_PORT: '8080' })).toEqual({
      TICK_MS: 1_000,
      HTTP_PORT: 8080,
      PIPED: 4,
    });
    expect(parseConfig(schema, { HTTP_PORT: '0', TICK_MS: '0', NETWORKS: '' })).toMatchObject({
      HTTP_PORT: 0,
      TICK_MS: 0,
      NETWORKS: '',
    });
  });
});
