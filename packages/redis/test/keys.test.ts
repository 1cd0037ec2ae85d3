import { describe, expect, it } from 'vitest';
import { keyList, shardKeys, shardOf, wakeChannel } from '../src/keys.js';

describe('keys', () => {
  describe('shardKeys', () => {
    it('puts every key of a shard under one hash tag', () => {
      const keys = shardKeys('tickwheel', 'buffs', 3);
      for (const key of Object.values(keys)) expect(key).toMatch(/^tickwheel:\{buffs:3\}:/);
      expect(new Set(Object.values(keys)).size).toBe(9);
      expect(keyList(keys)).toEqual([
        keys.due,
        keys.lease,
        keys.timers,
        keys.seq,
        keys.failed,
        keys.reasons,
        keys.claims,
        keys.index,
        keys.buckets,
      ]);
    });
  });

  describe('bucket keys', () => {
    it("are the buckets key with its last letter replaced, so they share the shard's hash tag", () => {
      const keys = shardKeys('tickwheel', 'buffs', 3);
      // buckets.ts's Lua: string.sub(KEYS[9], 1, -2) .. 'r' .. bucket
      expect(`${keys.buckets.slice(0, -1)}r17`).toBe('tickwheel:{buffs:3}:r17');
    });
  });

  describe('shardOf', () => {
    it('is stable and spreads ids over the shards', () => {
      expect(shardOf('anything', 1)).toBe(0);
      expect(shardOf('user:42', 16)).toBe(shardOf('user:42', 16));
      const counts = new Array<number>(8).fill(0);
      for (let i = 0; i < 8_000; i++) counts[shardOf(`timer:${i}`, 8)]++;
      for (const count of counts) expect(count).toBeGreaterThan(800);
    });
  });

  describe('wakeChannel', () => {
    it('names one channel per namespace', () => {
      expect(wakeChannel('tickwheel', 'buffs')).toBe('tickwheel:{buffs}:wake');
    });
  });
});
