import { parseConfig } from '@meridian/platform-config';
import { configSchema } from './config';

describe('WINDOW_BLOCKS', () => {
  const env = {
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/indexer',
    HTTP_PORT: '8080',
    NETWORKS: 'eth-mainnet,polygon-mainnet',
    UPSTREAMS: JSON.stringify({
      'eth-mainnet': ['http://127.0.0.1:8545'],
      'polygon-mainnet': ['http://127.0.0.1:8546'],
    }),
  };

  it('unset: each network keeps its own reorg window (@meridian/networks)', () => {
    expect(parseConfig(configSchema, env).WINDOW_BLOCKS).toBeUndefined();
  });

  it('may lower it (97 at least), never raise it above a followed network window', () => {
    expect(parseConfig(configSchema, { ...env, WINDOW_BLOCKS: '97' }).WINDOW_BLOCKS).toBe(97);
    expect(() => parseConfig(configSchema, { ...env, WINDOW_BLOCKS: '200' })).toThrow(
      /WINDOW_BLOCKS.*above the reorg window of "eth-mainnet" \(128 blocks\)/s,
    );
    expect(() => parseConfig(configSchema, { ...env, WINDOW_BLOCKS: '96' })).toThrow(
      /WINDOW_BLOCKS/,
    );
  });
});
