/**
 * Several worker processes (the built package, forked) on a real redis-server: every timer
 * fires, none twice without crashes; a worker killed with SIGKILL while holding claimed timers
 * loses none of them; a redis-server killed and restarted with AOF (fsync always) loses none.
 */
import { describe, expect, inject, it } from 'vitest';
import { RedisTimers } from '../../src/redis-timers.js';
import { useRedisResources } from '../helpers/cleanup.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { sleep, uniqueNamespace, until } from '../helpers/wait.js';
import { forkWorker, type WorkerProcess } from '../helpers/workers.js';

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Schedules `count` timers `timer-<i>` due `baseMs + (i % spreadMs)` from now, 1 000 at a time. */
async function scheduleMany(timers: RedisTimers, count: number, baseMs: number, spreadMs: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `timer-${i}`);
  for (let from = 0; from < count; from += 1_000) {
    await Promise.all(
      ids
        .slice(from, from + 1_000)
        .map((id, k) => timers.schedule(id, baseMs + ((from + k) % spreadMs), { n: from + k })),
    );
  }
  return ids;
}

function firedIds(workers: WorkerProcess[]): string[] {
  return workers.flatMap((w) => w.fired.map(([id]) => id));
}

describe('RedisTimers across processes', () => {
  const { client, servers } = useRedisResources();

  it('fires 10 000 timers across 3 worker processes, each exactly once', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueNamespace('multi');
    const workers = [0, 1, 2].map(() => forkWorker({ url, namespace, leaseMs: 30_000, shards: 4 }));
    await Promise.all(workers.map((w) => w.ready));
    const timers = new RedisTimers({ redis: client(url), namespace, shards: 4 });
    const ids = await scheduleMany(timers, 10_000, 300, 1_500);
    await until(() => firedIds(workers).length >= 10_000, '10 000 timers fired', 45_000);
    await sleep(200);
    const all = workers.flatMap((w) => w.fired);
    const lateness = all.map(([, , late]) => late);
    console.log(
      `10 000 timers, 3 workers: per worker ${workers.map((w) => w.fired.length).join('/')}, lateness p50 ${percentile(lateness, 50)} ms, p99 ${percentile(lateness, 99)} ms, max ${Math.max(...lateness)} ms`,
    );
    expect(all).toHaveLength(10_000);
    expect(new Set(firedIds(workers))).toEqual(new Set(ids));
    expect(all.every(([, attempts]) => attempts === 1)).toBe(true);
    expect(Math.min(...lateness)).toBeGreaterThanOrEqual(0);
    expect(workers.every((w) => w.fired.length > 0)).toBe(true);
    await Promise.all(workers.map((w) => w.stop()));
  });

  it('fires every timer a SIGKILLed worker held, once its lease expires', async () => {
    const url = inject('redisUrl');
    const namespace = uniqueNamespace('kill');
    const victim = forkWorker({ url, namespace, leaseMs: 1_000, mode: 'hang', concurrency: 50 });
    await victim.ready;
    const timers = new RedisTimers({ redis: client(url), namespace });
    const ids = await scheduleMany(timers, 500, 100, 400);
    await until(() => victim.fired.length >= 50, 'the victim to hold 50 claimed timers');
    const held = victim.fired.map(([id]) => id);
    await victim.kill();
    const survivors = [forkWorker({ url, namespace, leaseMs: 1_000 }), forkWorker({ url, namespace, leaseMs: 1_000 })];
    await Promise.all(survivors.map((w) => w.ready));
    await until(() => new Set(firedIds(survivors)).size === 500, 'every timer fired by the survivors', 20_000);
    await sleep(200);
    const bySurvivors = survivors.flatMap((w) => w.fired);
    expect(new Set(firedIds(survivors))).toEqual(new Set(ids));
    expect(bySurvivors).toHaveLength(500); // no crash among them: none twice
    const attempts = new Map(bySurvivors.map(([id, n]) => [id, n]));
    for (const id of held) expect(attempts.get(id)).toBe(1); // a stall: redelivered on the same attempt
    expect(await timers.get(held[0])).toBeUndefined();
    await Promise.all(survivors.map((w) => w.stop()));
  });

  it('loses no timer when redis-server is killed and restarted with AOF (appendfsync always)', async () => {
    const server = await startRedisServer({ appendOnly: true });
    servers.push(server);
    const namespace = uniqueNamespace('aof');
    const timers = new RedisTimers({ redis: client(server.url), namespace, shards: 2 });
    const ids = await scheduleMany(timers, 2_000, 1_500, 2_000);

    // Crash with nothing running: everything acknowledged is on disk.
    await server.kill();
    await server.restart();
    const check = client(server.url);
    // Each shard's `buckets` hash counts its timers (buckets.ts).
    const count = async (shard: number) => Number((await check.hget(`tickwheel:{${namespace}:${shard}}:b`, 'c')) ?? 0);
    const pending = async () => (await count(0)) + (await count(1));
    await until(async () => (await pending()) === 2_000, 'the 2 000 timers back from the AOF');

    // Crash again while a worker is firing them.
    const worker = forkWorker({ url: server.url, namespace, leaseMs: 1_000, shards: 2, pollIntervalMs: 500 });
    await worker.ready;
    await until(() => worker.fired.length >= 300, 'some timers fired', 20_000);
    await server.kill();
    await sleep(300);
    await server.restart();
    await until(
      () => new Set(worker.fired.map(([id]) => id)).size === 2_000,
      'every timer fired after the restart',
      30_000,
    );
    expect(new Set(worker.fired.map(([id]) => id))).toEqual(new Set(ids));
    const redelivered = worker.fired.length - 2_000;
    console.log(
      `AOF restart: ${worker.fired.length} deliveries for 2 000 timers (${redelivered} redelivered after the crash)`,
    );
    await until(async () => (await pending()) === 0, 'every timer acked');
    await worker.stop();
  });
});
