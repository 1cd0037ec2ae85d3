import RedisMock from 'ioredis-mock';
import { afterAll, describe, expect, it } from 'vitest';
import { keyList, shardKeys, wakeChannel, type KeyList } from '../src/keys.js';
import { defineScripts, type ScriptCommands } from '../src/scripts.js';
import type { RedisClient } from '../src/types.js';
import { uniqueNamespace } from './helpers/wait.js';

// The Lua scripts run by ioredis-mock's Lua (fengari), with the time passed in as the last ARGV
// (`timeSource: 'local'`), so every due time and lease below is exact. The same scripts run on
// real Redis in test/integration (redis-timers.test.ts, cluster.test.ts).

const client = defineScripts(new RedisMock() as unknown as RedisClient);
const subscriber = new RedisMock() as unknown as RedisClient;
afterAll(async () => {
  await subscriber.quit();
  await client.quit();
});

interface Shard {
  keys: KeyList;
  channel: string;
  /** Every wake-up message published for this namespace. */
  wakes: string[];
}

async function shard(): Promise<Shard> {
  const namespace = uniqueNamespace('scripts');
  const channel = wakeChannel('tickwheel', namespace);
  const wakes: string[] = [];
  await subscriber.subscribe(channel);
  subscriber.on('message', (from: string, message: string) => {
    if (from === channel) wakes.push(message);
  });
  return { keys: keyList(shardKeys('tickwheel', namespace, 0)), channel, wakes };
}

/** schedule(id, due in ms at `now`) with 3 attempts and a fixed 1 s backoff unless told otherwise. */
function schedule(s: Shard, id: string, ms: number, now: number, extra: { payload?: string; ifExists?: string } = {}) {
  const { payload = '{"n":1}', ifExists = 'replace' } = extra;
  return client.tickwheelSchedule(
    ...s.keys,
    id,
    'in',
    String(ms),
    payload,
    s.channel,
    '0',
    ifExists,
    '3',
    'f1000',
    String(now),
  );
}

const claim = (s: Shard, limit: number, leaseMs: number, now: number) =>
  client.tickwheelClaim(...s.keys, String(limit), String(leaseMs), String(now));

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('scripts', () => {
  describe('defineScripts', () => {
    it('adds every command once, and is idempotent on a client that has them', () => {
      const names: (keyof ScriptCommands)[] = [
        'tickwheelSchedule',
        'tickwheelReschedule',
        'tickwheelCancel',
        'tickwheelGet',
        'tickwheelClaim',
        'tickwheelAck',
        'tickwheelExtend',
        'tickwheelFail',
        'tickwheelListFailed',
        'tickwheelRetryFailed',
        'tickwheelPurgeFailed',
      ];
      for (const name of names) expect(typeof client[name], name).toBe('function');
      const defined: string[] = [];
      const fake = { defineCommand: (name: string) => defined.push(name), tickwheelGet: () => undefined };
      defineScripts(fake);
      expect(defined).toHaveLength(names.length - 1);
      expect(defined).not.toContain('tickwheelGet');
    });
  });

  describe('SCHEDULE', () => {
    it('files a timer due at now + ms with a fresh token, and wakes the workers when it is the earliest', async () => {
      const s = await shard();
      expect(await schedule(s, 'a', 500, 10_000)).toEqual(['10500', '1', '1']);
      expect(await schedule(s, 'b', 900, 10_000)).toEqual(['10900', '2', '1']);
      expect(await schedule(s, 'c', 100, 10_000)).toEqual(['10100', '3', '1']);
      await flush();
      expect(s.wakes).toEqual(['0:10500', '0:10100']); // b was not the earliest: no message
      expect(await client.zscore(s.keys[0], 'a')).toBe('10500');
      expect(await client.hget(s.keys[2], 'a')).toBe('1:10500:0:3:f1000:{"n":1}');
    });

    it('takes an absolute due time with mode "at"', async () => {
      const s = await shard();
      const reply = await client.tickwheelSchedule(
        ...s.keys,
        'a',
        'at',
        '123456',
        '',
        s.channel,
        '0',
        'replace',
        '0',
        '',
        '1',
      );
      expect(reply).toEqual(['123456', '1', '1']);
    });

    it('replaces an existing timer (new token, due time and payload), or keeps it with ifExists keep', async () => {
      const s = await shard();
      await schedule(s, 'a', 500, 0);
      expect(await schedule(s, 'a', 50, 0, { ifExists: 'keep', payload: '"other"' })).toEqual(['500', '1', '0']);
      expect(await schedule(s, 'a', 50, 0, { payload: '"new"' })).toEqual(['50', '2', '1']);
      expect(await client.hget(s.keys[2], 'a')).toBe('2:50:0:3:f1000:"new"');
      expect(await client.zcard(s.keys[0])).toBe(1);
    });
  });

  describe('GET, RESCHEDULE and CANCEL', () => {
    it('reads a timer’s record and where it is; reschedules it with attempts reset; cancels it', async () => {
      const s = await shard();
      expect(await client.tickwheelGet(...s.keys, 'a')).toBe('');
      await schedule(s, 'a', 500, 0);
      expect(await client.tickwheelGet(...s.keys, 'a')).toEqual(['1:500:0:3:f1000:{"n":1}', '500', '', '', '']);
      expect(await client.tickwheelReschedule(...s.keys, 'a', 'in', '2000', s.channel, '0', '100')).toBe('2100');
      expect(await client.tickwheelReschedule(...s.keys, 'none', 'in', '2000', s.channel, '0', '100')).toBe('');
      const [record, due] = (await client.tickwheelGet(...s.keys, 'a')) as string[];
      expect([record, due]).toEqual(['2:2100:0:3:f1000:{"n":1}', '2100']);
      expect(await client.tickwheelCancel(...s.keys, 'a')).toBe(1);
      expect(await client.tickwheelCancel(...s.keys, 'a')).toBe(0);
      expect(await client.tickwheelGet(...s.keys, 'a')).toBe('');
    });
  });

  describe('CLAIM', () => {
    it('claims due timers under a lease with a new token and one more attempt, and reports what comes next', async () => {
      const s = await shard();
      await schedule(s, 'a', 100, 0, { payload: '{"x":"a:b"}' });
      await schedule(s, 'b', 300, 0);
      expect(await claim(s, 10, 1_000, 99)).toEqual(['99', '100', '', '1099']);
      expect(await claim(s, 10, 1_000, 200)).toEqual([
        '200',
        '300',
        '1200',
        '1200',
        'a',
        '3',
        '100',
        '1',
        '3',
        'f1000',
        '{"x":"a:b"}',
      ]);
      expect(await client.zscore(s.keys[1], 'a')).toBe('1200');
      expect(await client.zscore(s.keys[0], 'a')).toBeNull();
    });

    it('takes expired leases first, up to the limit', async () => {
      const s = await shard();
      await schedule(s, 'a', 0, 0);
      await claim(s, 10, 100, 0);
      await schedule(s, 'b', 0, 0);
      const reply = await claim(s, 1, 100, 150);
      expect(reply.slice(4, 8)).toEqual(['a', '4', '0', '2']); // a again (lease expired), attempt 2; b waits
      expect(reply[1]).toBe('0');
    });

    it('moves a timer whose lease expired on its last attempt to the failed set, with the reason', async () => {
      const s = await shard();
      await client.tickwheelSchedule(...s.keys, 'a', 'in', '0', '', s.channel, '0', 'replace', '1', '', '0');
      await claim(s, 10, 100, 0);
      expect(await claim(s, 10, 100, 500)).toEqual(['500', '', '', '600']);
      expect(await client.zscore(s.keys[4], 'a')).toBe('500');
      expect(await client.hget(s.keys[5], 'a')).toMatch(/^lease expired on attempt 1 of 1/);
    });
  });

  describe('ACK, EXTEND and FAIL (fenced by the claim’s token)', () => {
    it('acks a claimed timer under its token only, and refuses a stale one', async () => {
      const s = await shard();
      await schedule(s, 'a', 0, 0);
      const [, , , , , token] = await claim(s, 10, 100, 0);
      expect(await client.tickwheelAck(...s.keys, 'a', String(Number(token) - 1))).toEqual(['a']);
      expect(await client.tickwheelAck(...s.keys, 'a', token)).toEqual([]);
      expect(await client.hget(s.keys[2], 'a')).toBeNull();
      expect(await client.tickwheelAck(...s.keys, 'a', token)).toEqual(['a']);
    });

    it('extends a lease while it is held, and refuses once the token changed', async () => {
      const s = await shard();
      await schedule(s, 'a', 0, 0);
      const [, , , , , token] = await claim(s, 10, 100, 0);
      expect(await client.tickwheelExtend(...s.keys, 'a', token, '500', '50')).toBe('550');
      expect(await client.zscore(s.keys[1], 'a')).toBe('550');
      await claim(s, 10, 100, 600); // the lease passed: claimed again, new token
      expect(await client.tickwheelExtend(...s.keys, 'a', token, '500', '650')).toBe('');
    });

    it('puts a failed attempt back after the delay, and fails it for good on its last attempt', async () => {
      const s = await shard();
      await client.tickwheelSchedule(...s.keys, 'a', 'in', '0', '', s.channel, '0', 'replace', '2', 'f1000', '0');
      let [, , , , , token] = await claim(s, 10, 100, 0);
      expect(await client.tickwheelFail(...s.keys, 'a', token, '1000', 'boom', s.channel, '0', '10')).toBe('1010');
      expect(await client.hget(s.keys[5], 'a')).toBe('boom');
      expect(await client.tickwheelFail(...s.keys, 'a', token, '1000', 'again', s.channel, '0', '20')).toBe('');
      [, , , , , token] = await claim(s, 10, 100, 1010);
      expect(await client.tickwheelFail(...s.keys, 'a', token, '1000', 'boom 2', s.channel, '0', '1020')).toBe(
        'failed',
      );
      expect(await client.zscore(s.keys[4], 'a')).toBe('1020');
    });
  });

  describe('LIST_FAILED, RETRY_FAILED and PURGE_FAILED', () => {
    async function failed(s: Shard, ids: string[]): Promise<void> {
      for (const [i, id] of ids.entries()) {
        await client.tickwheelSchedule(...s.keys, id, 'in', '0', `"${id}"`, s.channel, '0', 'replace', '1', '', '0');
        const [, , , , , token] = await claim(s, 1, 100, i);
        await client.tickwheelFail(...s.keys, id, token, '0', `reason ${id}`, s.channel, '0', String(100 + i));
      }
    }

    it('lists failed timers oldest first with their record and reason, a page at a time', async () => {
      const s = await shard();
      await failed(s, ['a', 'b', 'c']);
      const page = await client.tickwheelListFailed(...s.keys, '1', '2');
      expect(page).toEqual([
        'b',
        '101',
        expect.stringMatching(/^\d+:0:1:1::"b"$/),
        'reason b',
        'c',
        '102',
        expect.any(String),
        'reason c',
      ]);
    });

    it('retries one or all failed timers, due now with zero attempts, and purges them', async () => {
      const s = await shard();
      await failed(s, ['a', 'b', 'c']);
      expect(await client.tickwheelRetryFailed(...s.keys, 'a', '10', s.channel, '0', '5000')).toBe(1);
      expect(await client.zscore(s.keys[0], 'a')).toBe('5000');
      expect(await client.hget(s.keys[2], 'a')).toMatch(/^\d+:0:0:1::"a"$/);
      expect(await client.hget(s.keys[5], 'a')).toBeNull();
      expect(await client.tickwheelRetryFailed(...s.keys, 'a', '10', s.channel, '0', '5000')).toBe(0);
      expect(await client.tickwheelPurgeFailed(...s.keys, 'b', '10')).toBe(1);
      expect(await client.tickwheelPurgeFailed(...s.keys, '', '10')).toBe(1);
      expect(await client.zcard(s.keys[4])).toBe(0);
      expect(await client.hget(s.keys[2], 'c')).toBeNull();
      expect(await client.hget(s.keys[2], 'a')).not.toBeNull();
    });
  });
});
