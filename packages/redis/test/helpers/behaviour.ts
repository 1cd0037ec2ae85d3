/**
 * The behaviour RedisTimers must have on every backend. test/redis-timers.test.ts runs it on
 * ioredis-mock, test/integration/redis-timers.test.ts on a real redis-server: same assertions.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RedisTimers } from '../../src/redis-timers.js';
import type { FiredTimer, RedisClient, RedisTimersOptions } from '../../src/types.js';
import { sleep, uniqueNamespace, until } from './wait.js';

type Payload = Record<string, unknown> | number | string | undefined;

export function describeRedisTimers(
  backend: string,
  makeClient: () => RedisClient,
  base: Partial<RedisTimersOptions> = {},
): void {
  describe(`RedisTimers on ${backend}`, () => {
    const clients: RedisClient[] = [];
    const instances: RedisTimers<Payload>[] = [];

    function client(): RedisClient {
      const c = makeClient();
      clients.push(c);
      return c;
    }

    function timers(options: Partial<RedisTimersOptions> & { namespace: string }): RedisTimers<Payload> {
      const t = new RedisTimers<Payload>({ redis: client(), leaseMs: 5_000, ...base, ...options });
      instances.push(t);
      return t;
    }

    /** Starts a worker that records what it fires. */
    async function worker(
      t: RedisTimers<Payload>,
      handler?: (timer: FiredTimer<Payload>) => unknown,
    ): Promise<FiredTimer<Payload>[]> {
      const fired: FiredTimer<Payload>[] = [];
      await t.start(async (timer) => {
        fired.push({ ...timer, firedAt: Date.now() } as FiredTimer<Payload>);
        if (handler) await handler(timer);
      });
      return fired;
    }

    afterEach(async () => {
      await Promise.all(instances.splice(0).map((t) => t.stop()));
      for (const c of clients.splice(0)) c.disconnect();
    });

    describe('#schedule', () => {
      it('stores the timer with a due time read from the server clock', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        const before = Date.now();
        const dueAt = await t.schedule('a', 1_000, { x: 1 });
        expect(dueAt).toBeGreaterThanOrEqual(before + 1_000 - 5);
        expect(dueAt).toBeLessThanOrEqual(Date.now() + 1_000 + 5);
        expect(await t.get('a')).toEqual({
          id: 'a',
          payload: { x: 1 },
          dueAt,
          attempts: 0,
          maxAttempts: 3,
          state: 'scheduled',
          nextAttemptAt: dueAt,
          leaseExpiresAt: undefined,
          failedAt: undefined,
          lastError: undefined,
        });
      });

      it('stores any JSON payload unchanged, colons and non-ASCII text included', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        const payload = { text: 'a:b:c ✓ 日本 🎉', nested: [{ x: null, y: -1.5e-7, z: '' }], quote: '"\\\n' };
        await t.schedule('a:b', 0, payload);
        expect((await t.get('a:b'))?.payload).toEqual(payload);
        const fired = await worker(t);
        await until(() => fired.length === 1, 'the timer');
        expect(fired[0].payload).toEqual(payload);
      });

      it('accepts an absolute time with { at }, as epoch ms or a Date', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        const at = Date.now() + 60_000;
        expect(await t.schedule('a', { at })).toBe(at);
        expect(await t.schedule('b', { at: new Date(at + 0.5) })).toBe(at);
        expect((await t.get('b'))?.dueAt).toBe(at);
      });

      it('replaces a timer scheduled again under the same id', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        await t.schedule('a', 60_000, 'first');
        await t.schedule('a', 20, 'second');
        const fired = await worker(t);
        await until(() => fired.length === 1, 'the replaced timer');
        await sleep(100);
        expect(fired.map((f) => [f.id, f.payload, f.attempts])).toEqual([['a', 'second', 1]]);
        expect(await t.get('a')).toBeUndefined();
      });

      it('rejects bad input, naming it, before anything is written', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        const cyclic: Record<string, unknown> = { a: 1 };
        cyclic['self'] = cyclic;
        await expect(t.schedule('', 10)).rejects.toThrow(
          new TypeError('@tickwheel/redis: id must be a non-empty string, got ""'),
        );
        await expect(t.schedule(5 as unknown as string, 10)).rejects.toThrow(TypeError);
        await expect(t.schedule('a', -5)).rejects.toThrow(
          new RangeError('@tickwheel/redis: delayMs must be a finite number of ms >= 0, got -5'),
        );
        await expect(t.schedule('a', Number.NaN)).rejects.toThrow(RangeError);
        await expect(t.schedule('a', '10' as unknown as number)).rejects.toThrow(TypeError);
        await expect(t.schedule('a', { at: new Date(Number.NaN) })).rejects.toThrow(/delayMs\.at must be a valid Date/);
        await expect(t.schedule('a', 10, { f: () => 1 })).rejects.toThrow(
          /^@tickwheel\/redis: payload\.f is a function \(function f\)$/,
        );
        await expect(t.schedule('a', 10, { list: [1, { n: Number.NaN }] })).rejects.toThrow(
          /^@tickwheel\/redis: payload\.list\[1\]\.n is NaN, which JSON turns into null$/,
        );
        await expect(t.schedule('a', 10, { big: 10n })).rejects.toThrow(/payload\.big is a bigint/);
        await expect(t.schedule('a', 10, { u: undefined })).rejects.toThrow(/payload\.u .*undefined/);
        await expect(t.schedule('a', 10, cyclic)).rejects.toThrow(/payload\.self refers back to itself \(a cycle\)/);
        await expect(t.schedule('a', 10, { when: new Date() })).rejects.toThrow(/payload\.when .*Date/);
        await expect(t.schedule('a', 1e300)).rejects.toThrow(/delayMs must be at most 8640000000000000/);
        await expect(t.schedule('a', { at: -1 })).rejects.toThrow(
          new RangeError('@tickwheel/redis: delayMs.at must be a finite number of ms >= 0, got -1'),
        );
        await expect(t.reschedule('a', -1)).rejects.toThrow(RangeError);
        expect(await t.get('a')).toBeUndefined();
        expect(await t.cancel('a')).toBe(false);
      });
    });

    describe('#cancel', () => {
      it('returns true for a pending timer, which then never fires', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        await t.schedule('a', 30);
        await t.schedule('b', 30);
        expect(await t.cancel('a')).toBe(true);
        expect(await t.cancel('a')).toBe(false);
        const fired = await worker(t);
        await until(() => fired.length === 1, 'the timer left');
        await sleep(60);
        expect(fired.map((f) => f.id)).toEqual(['b']);
      });

      it('returns false for an id that was never scheduled', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        expect(await t.cancel('nope')).toBe(false);
      });
    });

    describe('#reschedule', () => {
      it('moves a timer, keeping its payload', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        await t.schedule('a', 60_000, { keep: true });
        const before = Date.now();
        const dueAt = await t.reschedule('a', 30);
        expect(dueAt).toBeGreaterThanOrEqual(before + 30 - 5);
        const fired = await worker(t);
        await until(() => fired.length === 1, 'the rescheduled timer');
        expect(fired[0]).toMatchObject({ id: 'a', payload: { keep: true }, dueAt, attempts: 1 });
      });

      it('returns undefined and creates nothing for an unknown id', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        expect(await t.reschedule('nope', 10)).toBeUndefined();
        expect(await t.get('nope')).toBeUndefined();
      });
    });

    describe('#get', () => {
      it('reports a claimed timer with its attempts and lease expiry', async () => {
        const t = timers({ namespace: uniqueNamespace(), leaseMs: 60_000 });
        let release!: () => void;
        const released = new Promise<void>((resolve) => (release = resolve));
        const dueAt = await t.schedule('a', 0, 'p');
        const fired = await worker(t, () => released);
        await until(() => fired.length === 1, 'the claim');
        const info = await t.get('a');
        expect(info).toMatchObject({ id: 'a', payload: 'p', dueAt, attempts: 1, state: 'claimed' });
        expect(info!.leaseExpiresAt).toBeGreaterThanOrEqual(dueAt + 60_000);
        release();
        await until(async () => (await t.get('a')) === undefined, 'the ack');
      });
    });

    describe('#start', () => {
      it('fires every timer once, never before its due time, with id, payload, dueAt and attempts', async () => {
        const t = timers({ namespace: uniqueNamespace(), shards: 3 });
        const due = new Map<string, number>();
        for (let i = 0; i < 30; i++) due.set(`t${i}`, await t.schedule(`t${i}`, 10 + i * 5, { i }));
        const fired = await worker(t);
        await until(() => fired.length === 30, '30 timers');
        await sleep(50);
        expect(fired).toHaveLength(30);
        for (const f of fired) {
          expect(f.dueAt).toBe(due.get(f.id));
          expect(f.payload).toEqual({ i: Number(f.id.slice(1)) });
          expect(f.attempts).toBe(1);
          expect((f as unknown as { firedAt: number }).firedAt).toBeGreaterThanOrEqual(f.dueAt);
        }
      });

      it('retries a timer whose handler rejects, and emits failed (timer, error) as BullMQ emits (job, err)', async () => {
        const t = timers({ namespace: uniqueNamespace(), backoff: 0 });
        const failures: [unknown, FiredTimer<Payload>][] = [];
        t.on('failed', (timer: FiredTimer<Payload>, error: unknown) => failures.push([error, timer]));
        await t.schedule('a', 0);
        const fired = await worker(t, (timer) => {
          if (timer.attempts === 1) throw new Error('boom');
        });
        await until(() => fired.length === 2, 'the retry');
        expect(failures).toHaveLength(1);
        expect((failures[0][0] as Error).message).toBe('boom');
        expect(failures[0][1]).toMatchObject({ id: 'a', attempts: 1, maxAttempts: 3 });
        expect(fired[1].attempts).toBe(2);
        expect(fired[1].dueAt).toBe(fired[0].dueAt);
        await until(async () => (await t.get('a')) === undefined, 'the ack of the retry');
      });

      it('hands a timer whose lease expired to another worker', async () => {
        const namespace = uniqueNamespace();
        // A takes one timer at a time, so it cannot claim its own expired lease again while stuck.
        const a = timers({ namespace, leaseMs: 150, concurrency: 1 });
        const b = timers({ namespace, leaseMs: 150 });
        let release!: () => void;
        const stuck = new Promise<void>((resolve) => (release = resolve));
        await a.schedule('x', 0, 'p');
        const firedA = await worker(a, () => stuck);
        await until(() => firedA.length === 1, 'the first claim');
        const firedB = await worker(b);
        await until(() => firedB.length === 1, 'the takeover', 5_000);
        // A stall, not a failed attempt (BullMQ counts them apart): the same attempt again.
        expect(firedB[0]).toMatchObject({ id: 'x', payload: 'p', attempts: 1 });
        await until(async () => (await b.get('x')) === undefined, 'the ack');
        release();
        expect(firedA).toHaveLength(1);
      });

      it('wakes for an earlier timer scheduled elsewhere without waiting for the safety poll', async () => {
        const namespace = uniqueNamespace();
        const w = timers({ namespace, pollIntervalMs: 600_000 });
        const scheduler = timers({ namespace });
        await w.schedule('late', 500_000);
        const fired = await worker(w);
        await sleep(50); // the first claim has happened; the worker sleeps until the 'late' timer
        const dueAt = await scheduler.schedule('early', 40);
        await until(() => fired.length === 1, 'the pub/sub wake-up', 5_000);
        expect(fired[0].id).toBe('early');
        expect(Date.now()).toBeGreaterThanOrEqual(dueAt);
      });

      it('shares timers among workers: each timer fires exactly once', async () => {
        const namespace = uniqueNamespace();
        const workers = [
          timers({ namespace, shards: 4 }),
          timers({ namespace, shards: 4 }),
          timers({ namespace, shards: 4 }),
        ];
        const fired = await Promise.all(workers.map((w) => worker(w)));
        const ids = Array.from({ length: 300 }, (_, i) => `j${i}`);
        await Promise.all(ids.map((id, i) => workers[i % 3].schedule(id, i % 50)));
        const all = () => fired.flat().map((f) => f.id);
        await until(() => all().length >= 300, '300 timers');
        await sleep(100);
        expect(all().sort()).toEqual([...ids].sort());
      });

      it('retries an ack that fails on a transient error instead of redelivering the timer', async () => {
        const t = timers({ namespace: uniqueNamespace(), leaseMs: 2_000 });
        const c = clients[clients.length - 1] as unknown as { tickwheelAck: (...args: string[]) => Promise<string[]> };
        const ack = vi.spyOn(c, 'tickwheelAck').mockRejectedValueOnce(new Error('Connection is closed.'));
        await t.schedule('a', 0);
        const fired = await worker(t);
        await until(async () => (await t.get('a')) === undefined, 'the retried ack');
        expect(fired).toHaveLength(1);
        expect(ack).toHaveBeenCalledTimes(2);
      });

      it('delivers a timer again after its lease when its ack fails for good', async () => {
        const t = timers({ namespace: uniqueNamespace(), leaseMs: 100 });
        const c = clients[clients.length - 1] as unknown as { tickwheelAck: (...args: string[]) => Promise<string[]> };
        const ack = vi.spyOn(c, 'tickwheelAck').mockRejectedValueOnce(new Error('ERR unexpected'));
        const errors: unknown[] = [];
        t.on('error', (error: unknown) => errors.push(error));
        await t.schedule('a', 0);
        const fired = await worker(t);
        await until(() => fired.length === 2, 'the redelivery');
        expect(errors).toHaveLength(1);
        expect(fired[1].attempts).toBe(1); // the lost ack is a stall: no attempt used up
        expect(Number(fired[1].token)).toBeGreaterThan(Number(fired[0].token));
        await until(async () => (await t.get('a')) === undefined, 'the second ack');
        expect(ack).toHaveBeenCalledTimes(2);
      });

      it('keeps a timer its own handler scheduled again (the ack is fenced)', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        await t.schedule('repeat', 0, 1);
        const fired = await worker(t, async (timer) => {
          if ((timer.payload as number) < 3) await t.schedule('repeat', 10, (timer.payload as number) + 1);
        });
        await until(() => fired.length === 3, 'three rounds');
        expect(fired.map((f) => [f.payload, f.attempts])).toEqual([
          [1, 1],
          [2, 1],
          [3, 1],
        ]);
        await until(async () => (await t.get('repeat')) === undefined, 'the last ack');
      });

      it('throws when started twice', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        await t.start(() => undefined);
        await expect(t.start(() => undefined)).rejects.toThrow(/already a worker/);
      });
    });

    describe('attempts and backoff', () => {
      /** Starts a worker whose handler always throws, recording [attempts, Date.now()] per run. */
      async function failing(t: RedisTimers<Payload>): Promise<[number, number][]> {
        const runs: [number, number][] = [];
        await t.start((timer) => {
          runs.push([timer.attempts, Date.now()]);
          throw new Error('boom');
        });
        return runs;
      }

      it('BullMQ worker.test.ts "should not retry a failed job more than the number of given attempts times": then it is in the failed set', async () => {
        const t = timers({ namespace: uniqueNamespace(), attempts: 3, backoff: 0 });
        const failures: FiredTimer<Payload>[] = [];
        t.on('failed', (timer: FiredTimer<Payload>) => failures.push(timer));
        await t.schedule('poison', 0, { x: 1 });
        const runs = await failing(t);
        await until(async () => (await t.get('poison'))?.state === 'failed', 'the failed set');
        await sleep(50);
        expect(runs.map(([n]) => n)).toEqual([1, 2, 3]);
        expect(failures.map((f) => [f.attempts, f.maxAttempts])).toEqual([
          [1, 3],
          [2, 3],
          [3, 3],
        ]);
        const info = await t.get('poison');
        expect(info).toMatchObject({
          state: 'failed',
          attempts: 3,
          lastError: 'Error: boom',
          nextAttemptAt: undefined,
          leaseExpiresAt: undefined,
        });
        expect(await t.listFailed()).toEqual([
          {
            id: 'poison',
            payload: { x: 1 },
            dueAt: info!.dueAt,
            attempts: 3,
            failedAt: info!.failedAt,
            reason: 'Error: boom',
          },
        ]);
      });

      it('BullMQ worker.test.ts "when attempts is 1 and job fails: should execute job only once"', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        await t.schedule('once', 0, undefined, { attempts: 1 });
        const runs = await failing(t);
        await until(async () => (await t.get('once'))?.state === 'failed', 'the failed set');
        await sleep(50);
        expect(runs).toHaveLength(1);
      });

      it('BullMQ worker.test.ts "when backoff type is fixed: respects fixed delay value", on the server clock', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        await t.schedule('fixed', 0, undefined, { attempts: 4, backoff: { type: 'fixed', delayMs: 60 } });
        const runs = await failing(t);
        await until(async () => (await t.get('fixed'))?.state === 'failed', 'the failed set');
        const gaps = runs.slice(1).map(([, at], i) => at - runs[i][1]);
        expect(gaps).toHaveLength(3);
        for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(59);
        expect(runs[3][1] - runs[0][1]).toBeLessThan(180 + 1_000);
      });

      it('BullMQ worker.test.ts "when backoff type is exponential": waits delayMs * 2^(attempts - 1)', async () => {
        const t = timers({ namespace: uniqueNamespace(), backoff: { type: 'exponential', delayMs: 40 } });
        await t.schedule('exp', 0, undefined, { attempts: 3 });
        const runs = await failing(t);
        await until(async () => (await t.get('exp'))?.state === 'failed', 'the failed set');
        expect(runs[1][1] - runs[0][1]).toBeGreaterThanOrEqual(39);
        expect(runs[2][1] - runs[1][1]).toBeGreaterThanOrEqual(79);
      });

      it('BullMQ worker.test.ts "when job has been failed and moved to wait: saves failedReason"', async () => {
        const t = timers({ namespace: uniqueNamespace(), backoff: 60_000 });
        await t.schedule('later', 0);
        const runs = await failing(t);
        await until(async () => (await t.get('later'))?.lastError !== undefined, 'the failure report');
        const info = await t.get('later');
        expect(runs).toHaveLength(1);
        expect(info).toMatchObject({ state: 'scheduled', attempts: 1, lastError: 'Error: boom' });
        expect(info!.nextAttemptAt).toBeGreaterThanOrEqual(info!.dueAt + 60_000);
      });

      it('BullMQ stalled_jobs.test.ts "moves jobs to failed" (maxStalledCount 0): a stalled timer goes to the failed set', async () => {
        const namespace = uniqueNamespace();
        const a = timers({ namespace, leaseMs: 100, concurrency: 1 });
        const b = timers({ namespace, leaseMs: 100, maxStalledCount: 0 });
        let release!: () => void;
        const stuck = new Promise<void>((resolve) => (release = resolve));
        await a.schedule('stalled', 0);
        const firedA = await worker(a, () => stuck);
        await until(() => firedA.length === 1, 'the first claim');
        const firedB = await worker(b);
        await until(async () => (await b.get('stalled'))?.state === 'failed', 'the failed set', 5_000);
        expect(firedB).toHaveLength(0);
        expect((await b.listFailed())[0]).toMatchObject({
          id: 'stalled',
          attempts: 1,
          reason: expect.stringMatching(/^stalled more than maxStalledCount \(0\) times/),
        });
        release();
      });

      it('a stall uses no attempt: a timer with attempts 1 whose lease expired once is delivered again (maxStalledCount 1)', async () => {
        const namespace = uniqueNamespace();
        const a = timers({ namespace, leaseMs: 100, concurrency: 1, attempts: 1 });
        const b = timers({ namespace, leaseMs: 5_000 });
        let release!: () => void;
        const stuck = new Promise<void>((resolve) => (release = resolve));
        await a.schedule('stalled', 0);
        const firedA = await worker(a, () => stuck);
        await until(() => firedA.length === 1, 'the first claim');
        const firedB = await worker(b);
        await until(() => firedB.length === 1, 'the delivery after the stall', 5_000);
        expect(firedA[0]).toMatchObject({ id: 'stalled', attempts: 1, stalls: 0 });
        expect(firedB[0]).toMatchObject({ id: 'stalled', attempts: 1, maxAttempts: 1, stalls: 1 });
        await until(async () => (await b.get('stalled')) === undefined, 'the ack');
        release();
      });
    });

    describe('the failed set', () => {
      async function failOnce(namespace: string, ids: string[]): Promise<RedisTimers<Payload>> {
        const t = timers({ namespace, attempts: 1 });
        for (const id of ids) await t.schedule(id, 0, { id });
        let failing = true;
        await t.start(() => {
          if (failing) throw new Error('down');
        });
        await until(async () => (await t.listFailed()).length === ids.length, 'the failed set');
        failing = false;
        return t;
      }

      it('BullMQ worker.test.ts "when job is in failed state: retries a job that fails" (retryFailed(id))', async () => {
        const t = await failOnce(uniqueNamespace(), ['a', 'b']);
        expect(await t.retryFailed('a')).toBe(1);
        expect(await t.retryFailed('a')).toBe(0);
        await until(async () => (await t.get('a')) === undefined, 'the retried timer to fire and ack');
        expect((await t.listFailed()).map((f) => f.id)).toEqual(['b']);
      });

      it('BullMQ queue.test.ts ".retryJobs: retries all failed jobs by default"', async () => {
        const t = await failOnce(uniqueNamespace(), ['a', 'b', 'c']);
        expect(await t.retryFailed()).toBe(3);
        await until(
          async () => (await Promise.all(['a', 'b', 'c'].map((id) => t.get(id)))).every((x) => x === undefined),
          'all three acked',
        );
        expect(await t.listFailed()).toEqual([]);
      });

      it('BullMQ clean.test.ts "should clean all failed jobs" (purgeFailed) and job.test.ts ".remove" (cancel)', async () => {
        const t = await failOnce(uniqueNamespace(), ['a', 'b', 'c']);
        expect(await t.cancel('c')).toBe(true);
        expect(await t.purgeFailed('a')).toBe(1);
        expect(await t.purgeFailed()).toBe(1);
        expect(await t.listFailed()).toEqual([]);
        for (const id of ['a', 'b', 'c']) expect(await t.get(id)).toBeUndefined();
      });
    });

    describe('#schedule with an existing id', () => {
      it('BullMQ events.test.ts "when job has been added again: emits duplicated event": ifExists keep leaves the first timer untouched', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        const dueAt = await t.schedule('dup', 60_000, 'first');
        expect(await t.schedule('dup', 10, 'second', { ifExists: 'keep' })).toBe(dueAt);
        expect(await t.get('dup')).toMatchObject({ payload: 'first', dueAt });
        expect(await t.schedule('dup', 10, 'third')).toBeLessThan(dueAt);
        expect((await t.get('dup'))?.payload).toBe('third');
      });
    });

    describe('fencing', () => {
      it('BullMQ stalled_jobs.test.ts "jobs not stalled while lock is extended": extendLease keeps a slow handler\'s claim', async () => {
        const namespace = uniqueNamespace();
        // The lease leaves room for a script call on ioredis-mock's Lua on a loaded machine (tens of ms).
        const a = timers({ namespace, leaseMs: 400, concurrency: 1 });
        const b = timers({ namespace, leaseMs: 400 });
        const extended: (number | undefined)[] = [];
        await a.schedule('slow', 0);
        const firedA = await worker(a, async (timer) => {
          for (let i = 0; i < 4; i++) {
            await sleep(200);
            extended.push(await timer.extendLease());
          }
        });
        const firedB = await worker(b);
        await until(
          async () => firedA.length === 1 && (await a.get('slow')) === undefined,
          'the slow handler to finish and ack',
          5_000,
        );
        expect(firedB).toHaveLength(0);
        expect(extended.every((x) => typeof x === 'number')).toBe(true);
      });

      it('BullMQ worker.redis.test.ts "emits error if lock is stolen": a stale worker can neither extend nor ack', async () => {
        const namespace = uniqueNamespace();
        const a = timers({ namespace, leaseMs: 100, concurrency: 1 });
        const b = timers({ namespace, leaseMs: 5_000 });
        const stale: [string, string][] = [];
        a.on('stale', (timer: FiredTimer<Payload>, stage: string) => stale.push([timer.id, stage]));
        let release!: () => void;
        const stuck = new Promise<void>((resolve) => (release = resolve));
        let extendAfterTakeover: number | undefined = 0;
        await a.schedule('x', 0);
        const firedA = await worker(a, async (timer) => {
          await stuck;
          extendAfterTakeover = await timer.extendLease();
        });
        await until(() => firedA.length === 1, 'the first claim');
        let releaseB!: () => void;
        const holdB = new Promise<void>((resolve) => (releaseB = resolve));
        const firedB = await worker(b, () => holdB);
        await until(() => firedB.length === 1, 'the takeover', 5_000);
        release();
        await until(() => stale.length === 1, 'the refused ack');
        expect(stale).toEqual([['x', 'ack']]);
        expect(extendAfterTakeover).toBeUndefined();
        expect(await b.get('x')).toMatchObject({ state: 'claimed', attempts: 1 });
        releaseB();
        await until(async () => (await b.get('x')) === undefined, "the new holder's ack");
      });
    });

    describe('#stop', () => {
      it('stops claiming and waits for running handlers and their acks', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        let finished = false;
        await t.schedule('a', 0);
        const fired = await worker(t, async () => {
          await sleep(50);
          finished = true;
        });
        await until(() => fired.length === 1, 'the claim');
        await t.stop();
        expect(finished).toBe(true);
        expect(await t.get('a')).toBeUndefined();
        await t.schedule('b', 0);
        await sleep(50);
        expect(fired).toHaveLength(1);
        expect((await t.get('b'))?.state).toBe('scheduled');
      });
    });
  });
}
