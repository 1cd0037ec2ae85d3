/**
 * The behaviour RedisTimers must have on every backend. test/redis-timers.test.ts runs it on
 * ioredis-mock, test/integration/redis-timers.test.ts on a real redis-server: same assertions.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RedisTimers } from '../../src/redis-timers.js';
import type { FiredTimer, RedisClient, RedisTimersOptions } from '../../src/types.js';
import { sleep, uniqueNamespace, until } from './wait.js';

type Payload = Record<string, unknown> | number | string | undefined;

export function describeRedisTimers(backend: string, makeClient: () => RedisClient): void {
  describe(`RedisTimers on ${backend}`, () => {
    const clients: RedisClient[] = [];
    const instances: RedisTimers<Payload>[] = [];

    function client(): RedisClient {
      const c = makeClient();
      clients.push(c);
      return c;
    }

    function timers(options: Partial<RedisTimersOptions> & { namespace: string }): RedisTimers<Payload> {
      const t = new RedisTimers<Payload>({ redis: client(), leaseMs: 5_000, ...options });
      instances.push(t);
      return t;
    }

    /** Starts a worker that records what it fires. */
    async function worker(t: RedisTimers<Payload>, handler?: (timer: FiredTimer<Payload>) => unknown): Promise<FiredTimer<Payload>[]> {
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
        expect(await t.get('a')).toEqual({ id: 'a', payload: { x: 1 }, dueAt, attempts: 0, state: 'scheduled', leaseExpiresAt: undefined });
      });

      it('stores any JSON payload unchanged, colons and non-ASCII text included', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        const payload = { text: 'a:b:c ✓ 日本 🎉', nested: [{ x: null, y: -1.5e-7, z: '' }], quote: '"\\\n' };
        await t.schedule('a:b', 0, payload);
        expect((await t.get('a:b'))?.payload).toEqual(payload);
        const fired = await worker(t);
        await until(() => fired.length === 1, 'the timer');
        expect(fired[0]!.payload).toEqual(payload);
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
        await expect(t.schedule('', 10)).rejects.toThrow(new TypeError('id must be a non-empty string, got ""'));
        await expect(t.schedule(5 as unknown as string, 10)).rejects.toThrow(TypeError);
        await expect(t.schedule('a', -5)).rejects.toThrow(new RangeError('delayMs must be a finite number >= 0, got -5'));
        await expect(t.schedule('a', Number.NaN)).rejects.toThrow(RangeError);
        await expect(t.schedule('a', '10' as unknown as number)).rejects.toThrow(TypeError);
        await expect(t.schedule('a', { at: new Date(Number.NaN) })).rejects.toThrow(/delayMs\.at must be a valid Date/);
        await expect(t.schedule('a', 10, { f: () => 1 })).rejects.toThrow(/payload\.f is not JSON-serialisable: function f/);
        await expect(t.schedule('a', 10, { list: [1, { n: Number.NaN }] })).rejects.toThrow(/payload\.list\[1\]\.n is not JSON-serialisable: NaN/);
        await expect(t.schedule('a', 10, { big: 10n } as unknown as Payload)).rejects.toThrow(/payload\.big .*BigInt/);
        await expect(t.schedule('a', 10, { u: undefined })).rejects.toThrow(/payload\.u .*undefined/);
        await expect(t.schedule('a', 10, cyclic)).rejects.toThrow(/payload\.self .*circular/);
        await expect(t.schedule('a', 10, { when: new Date() })).rejects.toThrow(/payload\.when .*Date/);
        await expect(t.schedule('a', 1e300)).rejects.toThrow(/delayMs must be at most 8640000000000000/);
        await expect(t.schedule('a', { at: -1 })).rejects.toThrow(new RangeError('delayMs.at must be a finite number >= 0, got -1'));
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

      it('retries a timer whose handler rejects once its lease expires, and emits failed', async () => {
        const t = timers({ namespace: uniqueNamespace(), leaseMs: 100 });
        const failures: [unknown, FiredTimer<Payload>][] = [];
        t.on('failed', (error: unknown, timer: FiredTimer<Payload>) => failures.push([error, timer]));
        await t.schedule('a', 0);
        const fired = await worker(t, (timer) => {
          if (timer.attempts === 1) throw new Error('boom');
        });
        await until(() => fired.length === 2, 'the retry');
        expect(failures).toHaveLength(1);
        expect((failures[0]![0] as Error).message).toBe('boom');
        expect(fired[1]!.attempts).toBe(2);
        expect(fired[1]!.dueAt).toBe(fired[0]!.dueAt);
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
        expect(firedB[0]).toMatchObject({ id: 'x', payload: 'p', attempts: 2 });
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
        expect(fired[0]!.id).toBe('early');
        expect(Date.now()).toBeGreaterThanOrEqual(dueAt);
      });

      it('shares timers among workers: each timer fires exactly once', async () => {
        const namespace = uniqueNamespace();
        const workers = [timers({ namespace, shards: 4 }), timers({ namespace, shards: 4 }), timers({ namespace, shards: 4 })];
        const fired = await Promise.all(workers.map((w) => worker(w)));
        const ids = Array.from({ length: 300 }, (_, i) => `j${i}`);
        await Promise.all(ids.map((id, i) => workers[i % 3]!.schedule(id, i % 50)));
        const all = () => fired.flat().map((f) => f.id);
        await until(() => all().length >= 300, '300 timers');
        await sleep(100);
        expect(all().sort()).toEqual([...ids].sort());
      });

      it('keeps a timer whose ack fails and delivers it again after the lease', async () => {
        const t = timers({ namespace: uniqueNamespace(), leaseMs: 100 });
        const c = clients[clients.length - 1] as unknown as { tickwheelAck: (...args: string[]) => Promise<number> };
        const ack = vi.spyOn(c, 'tickwheelAck').mockRejectedValueOnce(new Error('connection lost'));
        const errors: unknown[] = [];
        t.on('error', (error: unknown) => errors.push(error));
        await t.schedule('a', 0);
        const fired = await worker(t);
        await until(() => fired.length === 2, 'the redelivery');
        expect(errors).toHaveLength(1);
        expect(fired[1]!.attempts).toBe(2);
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
        expect(fired.map((f) => [f.payload, f.attempts])).toEqual([[1, 1], [2, 1], [3, 1]]);
        await until(async () => (await t.get('repeat')) === undefined, 'the last ack');
      });

      it('throws when started twice', async () => {
        const t = timers({ namespace: uniqueNamespace() });
        await t.start(() => undefined);
        await expect(t.start(() => undefined)).rejects.toThrow(/already a worker/);
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
