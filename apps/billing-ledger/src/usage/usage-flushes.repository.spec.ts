import { newId } from '../credentials/secrets';
import { HOURLY_SHARDS, hourlyShardOf } from './usage-flushes.repository';

describe('hourlyShardOf', () => {
  it('answers the same shard for the same id, always within 0 … HOURLY_SHARDS - 1', () => {
    for (let i = 0; i < 1_000; i++) {
      const id = newId('acc');
      const shard = hourlyShardOf(id);
      expect(Number.isInteger(shard)).toBe(true);
      expect(shard).toBeGreaterThanOrEqual(0);
      expect(shard).toBeLessThan(HOURLY_SHARDS);
      expect(hourlyShardOf(`${id}`)).toBe(shard);
    }
  });

  it("spreads account ids evenly: each shard's fold takes about 1/HOURLY_SHARDS of the accounts", () => {
    const counts = new Array<number>(HOURLY_SHARDS).fill(0);
    const accounts = 16_000;
    for (let i = 0; i < accounts; i++) counts[hourlyShardOf(newId('acc'))]! += 1;
    const even = accounts / HOURLY_SHARDS;
    for (const n of counts) {
      expect(n).toBeGreaterThan(even * 0.9);
      expect(n).toBeLessThan(even * 1.1);
    }
  });

  it('spreads ids that differ only in their last characters (sequential ids) too', () => {
    const counts = new Array<number>(HOURLY_SHARDS).fill(0);
    for (let i = 0; i < 8_000; i++)
      counts[hourlyShardOf(`acc_${i.toString(16).padStart(24, '0')}`)]! += 1;
    for (const n of counts) expect(n).toBeGreaterThan(800);
  });
});
