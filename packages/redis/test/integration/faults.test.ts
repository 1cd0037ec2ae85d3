/**
 * Faults on a real redis-server, with worker processes (the built package, forked): a worker
 * SIGSTOPped across its lease and SIGCONTed (the fence), a poisoned handler (the failed set),
 * and schedule() calls made while redis-server is down (the failover budget). The SIGKILLed
 * worker and the AOF restart are in multi-process.test.ts.
 */
import { describe, expect, inject, it } from 'vitest';
import { RedisTimers } from '../../src/redis-timers.js';
import { useRedisResources } from '../helpers/cleanup.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { sleep, uniqueNamespace, until } from '../helpers/wait.js';
import { forkWorker, type Start, type WorkerProcess } from '../helpers/workers.js';

describe('RedisTimers under faults', () => {
  const { client, servers } = useRedisResources();

  it(
    'a worker SIGSTOPped across its lease starts no handler after its lease, and its stale acks are refused',
    { timeout: 30_000 },
    async () => {
      const url = inject('redisUrl');
      const namespace = uniqueNamespace('sigstop');
      const leaseMs = 400;
      const paused = forkWorker({ url, namespace, leaseMs, mode: 'slow', handlerMs: 250, pollIntervalMs: 200 });
      const other = forkWorker({ url, namespace, leaseMs, mode: 'slow', handlerMs: 5, pollIntervalMs: 200 });
      await Promise.all([paused.ready, other.ready]);
      const timers = new RedisTimers({ redis: client(url), namespace });
      const ids = Array.from({ length: 300 }, (_, i) => `s${i}`);
      await Promise.all(ids.map((id, i) => timers.schedule(id, 200 + i * 5)));
      // Stop it while it holds running handlers; they finish only after their lease has passed.
      await until(() => paused.fired.length >= 5, 'the paused worker to start handlers');
      paused.signal('SIGSTOP');
      await sleep(leaseMs * 3);
      paused.signal('SIGCONT');
      const all = (): Start[] => [...paused.fired, ...other.fired];
      await until(
        async () =>
          new Set(all().map(([id]) => id)).size === ids.length && (await timers.get(ids.at(-1)!)) === undefined,
        'every timer fired and acked',
        20_000,
      );
      await until(() => paused.stale.some(([, stage]) => stage === 'ack'), 'the refused ack to be reported');
      // No handler started after its lease (Redis TIME and Date.now() share this machine's clock).
      for (const [, , , , leaseExpiresAt, startedAt] of all()) expect(startedAt).toBeLessThan(leaseExpiresAt);
      const refused = paused.stale.filter(([, stage]) => stage === 'ack').map(([id]) => id);
      // Each refused ack belongs to a timer the other worker fired again, under a newer token.
      for (const id of refused) {
        const mine = paused.fired.find(([x]) => x === id)!;
        const theirs = other.fired.find(([x]) => x === id);
        expect(theirs, `${id} taken over`).toBeDefined();
        expect(BigInt(theirs![3])).toBeGreaterThan(BigInt(mine[3]));
      }
      console.log(
        `SIGSTOP ${leaseMs * 3} ms: ${refused.length} stale acks refused, ${paused.stale.filter(([, s]) => s === 'start').length} claims dropped unstarted, ${all().length} deliveries for ${ids.length} timers`,
      );
      const left = async () => (await Promise.all(ids.map((id) => timers.get(id)))).filter((t) => t !== undefined);
      await until(async () => (await left()).length === 0, 'every timer acked by its last holder');
    },
  );

  it(
    'a poisoned handler reaches the failed set after its attempts, with its error, and can be retried or purged',
    { timeout: 20_000 },
    async () => {
      const url = inject('redisUrl');
      const namespace = uniqueNamespace('poison');
      const worker = forkWorker({ url, namespace, leaseMs: 5_000, mode: 'fail' });
      await worker.ready;
      // The retry policy is the scheduler's: it travels with the timer to whichever worker runs it.
      const timers = new RedisTimers({
        redis: client(url),
        namespace,
        attempts: 3,
        backoff: { type: 'exponential', delayMs: 20 },
      });
      await timers.schedule('poison', 0, { dose: 1 });
      await timers.schedule('other', 0, undefined, { attempts: 1 });
      await until(async () => (await timers.listFailed()).length === 2, 'both in the failed set', 10_000);
      await sleep(100);
      expect(worker.fired.filter(([id]) => id === 'poison').map(([, attempts]) => attempts)).toEqual([1, 2, 3]);
      expect(worker.failed.filter(([id]) => id === 'poison')).toEqual([
        ['poison', 1],
        ['poison', 2],
        ['poison', 3],
      ]);
      const failed = await timers.listFailed();
      expect(failed.find((f) => f.id === 'poison')).toMatchObject({
        payload: { dose: 1 },
        attempts: 3,
        reason: 'Error: poisoned poison',
      });
      expect(failed.find((f) => f.id === 'other')).toMatchObject({ attempts: 1 });
      expect(await timers.purgeFailed('other')).toBe(1);
      expect(await timers.retryFailed()).toBe(1);
      await until(
        () => worker.fired.filter(([id]) => id === 'poison').length === 6,
        'three more attempts after the retry',
        10_000,
      );
      await until(async () => (await timers.get('poison'))?.state === 'failed', 'the failed set again');
    },
  );

  it(
    'schedule() and cancel() called while redis-server restarts wait for it within the budget (none rejected)',
    { timeout: 30_000 },
    async () => {
      const server = await startRedisServer({ appendOnly: true });
      servers.push(server);
      const namespace = uniqueNamespace('restart');
      const timers = new RedisTimers({ redis: client(server.url), namespace });
      await timers.schedule('doomed', 60_000);
      const worker: WorkerProcess = forkWorker({ url: server.url, namespace, leaseMs: 2_000, pollIntervalMs: 500 });
      await worker.ready;
      await server.kill();
      const calls = [
        ...Array.from({ length: 50 }, (_, i) => timers.schedule(`r${i}`, 100, { i })),
        timers.cancel('doomed'),
      ];
      const settled = Promise.allSettled(calls);
      await sleep(700);
      const restartedAt = Date.now();
      await server.restart();
      const results = await settled;
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      expect(results.at(-1)).toEqual({ status: 'fulfilled', value: true });
      await until(
        () => new Set(worker.fired.map(([id]) => id)).size === 50,
        'the 50 timers scheduled during the outage',
        15_000,
      );
      console.log(
        `restart: all 51 calls made while redis-server was down resolved; last timer fired ${Date.now() - restartedAt} ms after the restart began`,
      );
      expect(await timers.get('doomed')).toBeUndefined();
      await worker.stop();
    },
  );
  it(
    'a schedule() try abandoned by the budget loop that reaches Redis later changes nothing, even after a newer cancel',
    { timeout: 15_000 },
    async () => {
      const redis = client(inject('redisUrl'));
      const timers = new RedisTimers({ redis, namespace: uniqueNamespace('late'), failoverBudgetMs: 5_000 });
      const target = redis as unknown as Record<string, (...args: string[]) => Promise<unknown>>;
      const real = target.tickwheelSchedule.bind(redis);
      let held: string[] | undefined;
      // The first try is stuck in a queue (as during a failover); the retry after 2 s goes through.
      target.tickwheelSchedule = (...args) =>
        held === undefined ? ((held = args), new Promise(() => undefined)) : real(...args);
      const dueAt = await timers.schedule('x', 60_000, 'v1');
      expect((await timers.get('x'))?.dueAt).toBe(dueAt);
      expect(await timers.cancel('x')).toBe(true);
      // The stuck try reaches Redis now, after its call resolved and a newer cancel: refused.
      await expect(real(...held!)).rejects.toThrow(/TICKWHEEL_LATE/);
      expect(await timers.get('x')).toBeUndefined();
    },
  );
});
