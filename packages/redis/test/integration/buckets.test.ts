import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { keyList, shardKeys } from '../../src/keys.js';
import { RedisTimers } from '../../src/redis-timers.js';
import type { FiredTimer, RedisClient } from '../../src/types.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { uniqueNamespace, until } from '../helpers/wait.js';
import { LAYOUT_V1_SCHEDULE } from './fixtures/layout-v1.js';

// The bucketed layout (buckets.ts) on Debian's redis-server with its default configuration:
// the encodings Redis chose, and timers written by the previous layout's own script.

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

/** 60 bytes of JSON, the payload of the memory benchmark. */
const PAYLOAD = { user: 'u-0000000042', kind: 'session-expiry', region: 'e' };

/** Writes a timer with the previous layout's own schedule script. */
function writeV1(client: Redis, namespace: string, id: string, ms: number, payload: string): Promise<unknown> {
  const old = keyList(shardKeys('tickwheel', namespace, 0)).slice(0, 7);
  return client.eval(
    LAYOUT_V1_SCHEDULE,
    7,
    ...old,
    id,
    'in',
    String(ms),
    payload,
    'none',
    '0',
    'replace',
    '3',
    'f100',
    '',
    '',
    '',
  );
}

/** HGET calls the server ran so far (INFO commandstats counts the ones Lua scripts make too). */
async function hgetCalls(client: Redis): Promise<number> {
  return Number(/cmdstat_hget:calls=(\d+)/.exec(await client.info('commandstats'))?.[1] ?? 0);
}

describe('buckets', () => {
  it('keeps the timers of a shard in listpack-encoded buckets, a 60-byte payload included', async () => {
    const namespace = uniqueNamespace('listpack');
    const timers = new RedisTimers({ redis: redis as RedisClient, namespace });
    const due = Date.now() + 3_600_000;
    for (let i = 0; i < 3_000; i += 500)
      await Promise.all(Array.from({ length: 500 }, (_, k) => timers.schedule(`t${i + k}`, { at: due }, PAYLOAD)));
    const keys = shardKeys('tickwheel', namespace, 0);
    expect(await redis.hget(keys.buckets, 'c')).toBe('3000');
    const buckets = await redis.keys(`${keys.buckets.slice(0, -1)}[rpd]*`);
    expect(buckets.length).toBeGreaterThan(3 * 60); // 3 000 timers, about 32 a bucket
    const encodings = new Set(await Promise.all(buckets.map((k) => redis.object('ENCODING', k))));
    expect([...encodings]).toEqual(['listpack']);
    expect(await redis.object('ENCODING', keys.index)).toBe('listpack');
    expect(await timers.get('t2999')).toMatchObject({ payload: PAYLOAD, dueAt: due, state: 'scheduled' });
  });

  it('hands out the timers of one claim in due order, across the buckets the claim took them from', async () => {
    const namespace = uniqueNamespace('order');
    const timers = new RedisTimers<unknown>({ redis: redis as RedisClient, namespace, batchSize: 500 });
    const base = Number((await redis.time())[0]) * 1_000 + 1_500;
    // 300 timers over about 10 buckets, due 1 ms apart in an order unrelated to their ids' buckets;
    // all are due when the first claim comes, so it takes them in one reply.
    const dueOf = (i: number) => base + ((i * 7) % 300);
    await Promise.all(Array.from({ length: 300 }, (_, i) => timers.schedule(`t${i}`, { at: dueOf(i) })));
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const fired: FiredTimer[] = [];
    await timers.start((timer) => {
      fired.push(timer);
      return Promise.resolve();
    });
    try {
      await until(() => fired.length >= 300, 'the 300 timers', 15_000);
      const dues = fired.map((t) => t.dueAt);
      expect(dues).toEqual([...dues].sort((a, b) => a - b));
      expect(new Set(fired.map((t) => t.id)).size).toBe(300);
    } finally {
      await timers.stop();
    }
  });

  it('reads and then migrates the timers the previous layout wrote, and fires each once', async () => {
    const namespace = uniqueNamespace('migrate');
    const keys = shardKeys('tickwheel', namespace, 0);
    const now = Number((await redis.time())[0]) * 1_000;
    const writeOld = (id: string, ms: number, payload: string) => writeV1(redis, namespace, id, ms, payload);
    for (let i = 0; i < 200; i++) await writeOld(`old${i}`, 300 + i, JSON.stringify({ i }));
    await writeOld('far', 3_600_000, '"far"');
    expect(await redis.hlen(keys.timers)).toBe(201);

    const timers = new RedisTimers<unknown>({ redis: redis as RedisClient, namespace, pollIntervalMs: 200 });
    // Read in place: get moves nothing.
    expect(await timers.get('far')).toMatchObject({ payload: 'far', attempts: 0, maxAttempts: 3, state: 'scheduled' });
    expect((await timers.get('far'))?.dueAt).toBeGreaterThanOrEqual(now + 3_600_000);
    expect(await redis.hlen(keys.timers)).toBe(201);
    // A write moves the timer it touches; the old layout's due time stays.
    const farDue = (await timers.get('far'))?.dueAt;
    expect(await timers.schedule('far', 10, undefined, { ifExists: 'keep' })).toBe(farDue);
    expect(await timers.cancel('old7')).toBe(true);
    expect(await redis.hlen(keys.timers)).toBe(199);

    const fired: FiredTimer[] = [];
    await timers.start((timer) => {
      fired.push(timer);
      return Promise.resolve();
    });
    try {
      await until(() => fired.length >= 199, 'the 199 old timers due soon', 15_000);
      const ids = fired.map((t) => t.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).not.toContain('old7');
      expect(fired.find((t) => t.id === 'old42')).toMatchObject({ payload: { i: 42 }, attempts: 1 });
      await until(async () => (await redis.hget(keys.buckets, 'c')) === '1', 'the acks');
      expect([await redis.exists(keys.timers), await redis.exists(keys.due)]).toEqual([0, 0]);
    } finally {
      await timers.stop();
    }
  });

  it('looks ids up in the previous layout only on a shard that still has its records', async () => {
    // Its own server, so that its command counts are this test's alone.
    const server = await startRedisServer();
    const own = new Redis(server.url);
    try {
      /** HGETs of 100 schedules, then of firing them: one claim of all 100, and their acks. */
      const run = async (namespace: string): Promise<{ scheduling: number; firing: number }> => {
        const timers = new RedisTimers<unknown>({ redis: own as RedisClient, namespace, batchSize: 100 });
        const before = await hgetCalls(own);
        // All due at one instant, passed before the worker starts: its first claim takes them all.
        const due = Number((await own.time())[0]) * 1_000 + 1_000;
        for (let i = 0; i < 100; i++) await timers.schedule(`t${i}`, { at: due });
        const scheduled = await hgetCalls(own);
        await until(async () => Number((await own.time())[0]) * 1_000 > due, 'the due time', 5_000);
        let fired = 0;
        await timers.start(() => {
          fired++;
        });
        try {
          await until(() => fired >= 100, 'the 100 timers', 15_000);
          const count = shardKeys('tickwheel', namespace, 0).buckets;
          await until(async () => (await own.hget(count, 'c')) === '0', 'their acks');
        } finally {
          await timers.stop();
        }
        return { scheduling: scheduled - before, firing: (await hgetCalls(own)) - scheduled };
      };
      const fresh = await run(uniqueNamespace('no-old'));
      const withOld = uniqueNamespace('with-old');
      // An old failed timer: a record in the old hash and no old due time, so no claim moves it.
      const oldKeys = shardKeys('tickwheel', withOld, 0);
      await writeV1(own, withOld, 'old-failed', 3_600_000, '"failed"');
      await own.zrem(oldKeys.due, 'old-failed');
      await own.zadd(oldKeys.failed, Date.now(), 'old-failed');
      const mixed = await run(withOld);
      // One lookup per id written, and per id acked, while old records remain; none without them.
      expect(mixed.scheduling - fresh.scheduling).toBe(100);
      expect(mixed.firing - fresh.firing).toBeGreaterThanOrEqual(90);
      // The old record is still there, and still migrates when touched.
      const timers = new RedisTimers<unknown>({ redis: own as RedisClient, namespace: withOld });
      expect(await timers.get('old-failed')).toMatchObject({ payload: 'failed', state: 'failed' });
      expect(await timers.purgeFailed('old-failed')).toBe(1);
      expect(await own.exists(oldKeys.timers)).toBe(0);
    } finally {
      own.disconnect();
      await server.stop();
    }
  });
});
