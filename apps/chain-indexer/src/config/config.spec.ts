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

describe('HISTORY_BLOCKS', () => {
  const env = {
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/indexer',
    HTTP_PORT: '8080',
    NETWORKS: 'eth-mainnet',
    UPSTREAMS: JSON.stringify({ 'eth-mainnet': ['http://127.0.0.1:8545'] }),
  };

  it('keeps 2048 block hashes by default, at most 8192 (one removal lists them all)', () => {
    expect(parseConfig(configSchema, env).HISTORY_BLOCKS).toBe(2048);
    expect(parseConfig(configSchema, { ...env, HISTORY_BLOCKS: '8192' }).HISTORY_BLOCKS).toBe(8192);
    expect(() => parseConfig(configSchema, { ...env, HISTORY_BLOCKS: '8193' })).toThrow(
      /HISTORY_BLOCKS/,
    );
  });
});
