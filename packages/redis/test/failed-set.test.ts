import RedisMock from 'ioredis-mock';
import { describe, expect, it } from 'vitest';
import { listFailed, purgeFailed, retryFailed } from '../src/failed-set.js';
import { keyList } from '../src/keys.js';
import { resolveOptions } from '../src/options.js';
import { RETRY_SAFE, ShardCalls } from '../src/shard-calls.js';
import type { RedisClient } from '../src/types.js';
import { uniqueNamespace } from './helpers/wait.js';

/** A two-shard namespace whose timers `ids` failed for good (one attempt each), in that order. */
async function withFailed(ids: string[]): Promise<ShardCalls> {
  const redis = new RedisMock() as unknown as RedisClient;
  const calls = new ShardCalls(
    resolveOptions({ redis, namespace: uniqueNamespace('failed'), shards: 2, timeSource: 'local' }),
  );
  // The scripts straight on the client, each write a call of the instance's log, at exact times.
  const write = (command: 'tickwheelSchedule' | 'tickwheelFail', index: number, args: string[], at: string) => {
    const call = calls.log.open(index);
    const client = calls.client as unknown as Record<string, (...a: string[]) => Promise<unknown>>;
    return client[command](...keyList(calls.keys[index]), call.key, ...args, ...call.args, '', at);
  };
  for (const [i, id] of ids.entries()) {
    const { index, keys } = calls.shardOf(id);
    const at = String(1_000 + i);
    const args = [id, 'at', '0', JSON.stringify({ id }), calls.channel, String(index), 'replace', '1', '', ''];
    await write('tickwheelSchedule', index, args, at);
    const claim = await calls.run<string[]>(
      'tickwheelClaim',
      keys,
      ['1', '1000', 'w', String(i + 1), String(i), '1', at],
      'claim',
      RETRY_SAFE.other,
    );
    await write('tickwheelFail', index, [id, claim[5], '0', `broke ${id}`, calls.channel, String(index)], at);
  }
  return calls;
}

const IDS = ['a', 'b', 'c', 'd', 'e'];

describe('failed-set', () => {
  describe('#listFailed', () => {
    it('lists the failed timers of every shard with payload, attempts, time and reason', async () => {
      const calls = await withFailed(IDS);
      const failed = await listFailed<{ id: string }>(calls, 100);
      expect(failed.map((f) => f.id).sort()).toEqual(IDS);
      const a = failed.find((f) => f.id === 'a')!;
      expect(a).toEqual({ id: 'a', payload: { id: 'a' }, dueAt: 0, attempts: 1, failedAt: 1_000, reason: 'broke a' });
    });

    it('stops at the limit, and refuses a bad one with the kit’s error', async () => {
      const calls = await withFailed(IDS);
      expect(await listFailed(calls, 2)).toHaveLength(2);
      await expect(listFailed(calls, 0)).rejects.toThrow(
        new RangeError('@tickwheel/redis: limit must be an integer >= 1, got 0'),
      );
    });
  });

  describe('#retryFailed', () => {
    it('moves one failed timer back, or every one of the namespace', async () => {
      const calls = await withFailed(IDS);
      expect(await retryFailed(calls, 'a')).toBe(1);
      expect(await retryFailed(calls, 'a')).toBe(0);
      expect(await retryFailed(calls, undefined)).toBe(4);
      expect(await listFailed(calls, 100)).toEqual([]);
    });
  });

  describe('#purgeFailed', () => {
    it('deletes one failed timer, or every one, for good', async () => {
      const calls = await withFailed(IDS);
      expect(await purgeFailed(calls, 'e')).toBe(1);
      expect(await purgeFailed(calls, undefined)).toBe(4);
      const gone = await calls.run('tickwheelGet', calls.shardOf('a').keys, ['a'], 'get', RETRY_SAFE.other, false);
      expect(gone).toBe('');
    });

    it('checks the id before anything is sent', async () => {
      const calls = await withFailed([]);
      await expect(purgeFailed(calls, '')).rejects.toThrow(
        new TypeError('@tickwheel/redis: id must be a non-empty string, got ""'),
      );
    });
  });
});
