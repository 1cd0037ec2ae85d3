import RedisMock from 'ioredis-mock';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import { afterEach, describe, expect, it } from 'vitest';
import { keyList, shardKeys, wakeChannel, type ShardKeys } from '../src/keys.js';
import { defineScripts, type ScriptCommands } from '../src/scripts.js';
import type { FiredTimer, RedisClient, TimerHandler } from '../src/types.js';
import type { StaleStage } from '../src/types.js';
import { Worker } from '../src/worker.js';
import { nextAt, record as readRecord } from './helpers/script-shard.js';
import { settle, uniqueNamespace, until } from './helpers/wait.js';

// The worker on ioredis-mock with the server's clock and the local one both a ManualClock: a
// timer is claimed when the test moves the clock to its due time, never because of the machine.

const client = defineScripts(new RedisMock() as unknown as RedisClient);

let callSeq = 0;
/** Runs a write script wrapped by once (lua-prelude.ts) as a fresh call, at the ManualClock's time. */
function writeAt(clock: ManualClock, keys: ShardKeys, command: keyof ScriptCommands, args: string[]): Promise<never> {
  const run = client as unknown as Record<string, (...a: string[]) => Promise<never>>;
  const call = [`c${++callSeq}`, '', '60000', ''];
  return run[command](...keyList(keys), `${keys.due}:calls`, ...args, ...call, String(clock.now()));
}

interface Setup {
  clock: ManualClock;
  keys: ShardKeys;
  worker: Worker;
  fired: FiredTimer[];
  failed: Array<[string, unknown]>;
  stale: Array<[string, StaleStage]>;
  errors: unknown[];
  schedule(
    id: string,
    dueAt: number,
    options?: { attempts?: number; backoff?: string; payload?: string },
  ): Promise<unknown>;
  record(id: string): Promise<string | null>;
}

const running: Array<{ worker: Worker; wheel: TimingWheel }> = [];
afterEach(async () => {
  for (const { worker, wheel } of running.splice(0)) {
    await worker.stop();
    wheel.close();
  }
});

function setup(handler: TimerHandler, options: { concurrency?: number; pollIntervalMs?: number } = {}): Setup {
  const clock = new ManualClock(1_000);
  const wheel = new TimingWheel({ clock });
  const namespace = uniqueNamespace('worker');
  const keys = shardKeys('tickwheel', namespace, 0);
  const channel = wakeChannel('tickwheel', namespace);
  const fired: FiredTimer[] = [];
  const failed: Array<[string, unknown]> = [];
  const stale: Array<[string, StaleStage]> = [];
  const errors: unknown[] = [];
  const worker = new Worker({
    client,
    shards: [keys],
    channel,
    wheel,
    leaseMs: 10_000,
    pollIntervalMs: options.pollIntervalMs ?? 60_000,
    batchSize: 100,
    concurrency: options.concurrency ?? 100,
    failoverBudgetMs: 1_000,
    maxStalledCount: 1,
    write: (command, _index, args) => writeAt(clock, keys, command, args),
    namespace,
    now: () => String(clock.now()),
    handler: (timer) => {
      fired.push(timer);
      return handler(timer);
    },
    onError: (error) => errors.push(error),
    onFailed: (timer, error) => failed.push([timer.id, error]),
    onStale: (timer, stage) => stale.push([timer.id, stage]),
  });
  running.push({ worker, wheel });
  const schedule: Setup['schedule'] = (id, dueAt, { attempts = 3, backoff = 'f1000', payload = '' } = {}) =>
    writeAt(clock, keys, 'tickwheelSchedule', [
      id,
      'at',
      String(dueAt),
      payload,
      channel,
      '0',
      'replace',
      String(attempts),
      backoff,
      '',
    ]);
  const record = (id: string) => readRecord(keyList(keys), id, client);
  return { clock, keys, worker, fired, failed, stale, errors, schedule, record };
}

describe('worker', () => {
  describe('#start', () => {
    it('claims a timer when the clock reaches its due time, not before, and acks it when the handler resolves', async () => {
      const t = setup(() => undefined);
      await t.schedule('a', 1_500, { payload: '{"player":7}' });
      await t.worker.start();
      await settle();
      t.clock.advance(499);
      await settle();
      expect(t.fired).toEqual([]);
      t.clock.advance(1);
      await until(() => t.fired.length === 1, 'the claim');
      expect(t.fired[0]).toMatchObject({ id: 'a', payload: { player: 7 }, dueAt: 1_500, attempts: 1, maxAttempts: 3 });
      expect(t.fired[0].leaseExpiresAt).toBe(11_500);
      await until(async () => (await t.record('a')) === null, 'the ack');
      expect(t.errors).toEqual([]);
    });

    it('claims at once what is already due', async () => {
      const t = setup(() => undefined);
      await t.schedule('a', 0);
      await t.worker.start();
      await until(() => t.fired.length === 1, 'the claim');
    });

    it('is woken by a schedule earlier than everything it knew of (the PUBLISH), without polling', async () => {
      const t = setup(() => undefined);
      await t.schedule('late', 50_000);
      await t.worker.start();
      await settle();
      await t.schedule('early', 1_200);
      await settle();
      // The worker may wake up to 1 ms early (its bound on the server's clock offset); then it
      // claims again once the local clock has passed the reply's time, as in the first test.
      t.clock.advance(199);
      await settle();
      t.clock.advance(1);
      await until(() => t.fired.length === 1, 'the early claim');
      expect(t.fired[0].id).toBe('early');
    });
  });

  describe('failures', () => {
    it('reports each failed attempt, puts it back after its backoff, and fails it for good on the last', async () => {
      const t = setup(() => {
        throw new Error('handler broke');
      });
      await t.schedule('a', 1_000, { attempts: 2, backoff: 'f1000' });
      await t.worker.start();
      await until(() => t.fired.length === 1, 'the first attempt');
      await until(
        async () => (await nextAt(keyList(t.keys), 'a', client)) === '2000',
        'the retry, due after the backoff',
      );
      t.clock.advance(999);
      await settle();
      expect(t.fired).toHaveLength(1);
      t.clock.advance(1);
      await until(() => t.fired.length === 2, 'the second attempt');
      expect(t.fired[1].attempts).toBe(2);
      await until(async () => (await client.zscore(t.keys.failed, 'a')) !== null, 'the move to the failed set');
      expect(t.failed.map(([id, error]) => [id, (error as Error).message])).toEqual([
        ['a', 'handler broke'],
        ['a', 'handler broke'],
      ]);
      expect(await client.hget(t.keys.reasons, 'a')).toBe('Error: handler broke');
    });
  });

  describe('stalls', () => {
    it('delivers a timer whose lease expired with stalls 1 on the same attempt, and its failure still waits for its backoff', async () => {
      let calls = 0;
      let release!: () => void;
      const t = setup(() => {
        // The first run outlives its lease; the second fails.
        if (++calls === 1) return new Promise<void>((resolve) => (release = resolve));
        throw new Error('broke after a stall');
      });
      await t.schedule('a', 1_000, { attempts: 2, backoff: 'f1000' });
      await t.worker.start();
      t.clock.advance(1_000);
      await until(() => t.fired.length === 1, 'the first delivery');
      expect(t.fired[0]).toMatchObject({ attempts: 1, stalls: 0 });
      const leaseEnd = t.fired[0].leaseExpiresAt;
      // The worker wakes up to 1 ms early (see the first test), finds nothing yet, and claims again once past it.
      t.clock.advance(leaseEnd - t.clock.now());
      await settle();
      t.clock.advance(2);
      await until(() => t.fired.length === 2, 'the delivery after the stall');
      expect(t.fired[1]).toMatchObject({ id: 'a', attempts: 1, stalls: 1 });
      await until(
        async () => (await nextAt(keyList(t.keys), 'a', client)) === String(t.clock.now() + 1_000),
        'the retry, due after the backoff',
      );
      release(); // its ack is refused: the timer was claimed again
      await until(() => t.stale.some(([id, stage]) => id === 'a' && stage === 'ack'), 'the refused ack');
    });
  });

  describe('concurrency', () => {
    it('runs at most `concurrency` handlers at once and claims more as they finish', async () => {
      const release: Array<() => void> = [];
      const t = setup(() => new Promise<void>((resolve) => release.push(resolve)), { concurrency: 1 });
      await t.schedule('a', 1_000);
      await t.schedule('b', 1_000);
      await t.worker.start();
      await until(() => t.fired.length === 1, 'the first claim');
      await settle();
      expect(t.fired).toHaveLength(1);
      release[0]();
      await until(() => t.fired.length === 2, 'the second claim');
      release[1]();
    });
  });

  describe('extendLease', () => {
    it('extends the claim’s lease from server now, fenced by its token', async () => {
      let extended: number | undefined;
      const t = setup(async (timer) => {
        t.clock.advance(3_000);
        extended = await timer.extendLease(20_000);
      });
      await t.schedule('a', 1_000);
      await t.worker.start();
      await until(() => extended !== undefined, 'the extension');
      expect(extended).toBe(24_000);
    });

    it('refuses a bad duration with the kit’s error', async () => {
      let error: unknown;
      const t = setup(async (timer) => {
        error = await timer.extendLease(0).catch((e: unknown) => e);
      });
      await t.schedule('a', 1_000);
      await t.worker.start();
      await until(() => error !== undefined, 'the refusal');
      expect(error).toEqual(
        new RangeError('@tickwheel/redis: extendLease(ms) must be a finite number of ms >= 1, got 0'),
      );
    });
  });

  describe('#stop', () => {
    it('waits for running handlers and their acks, then claims nothing more', async () => {
      let release: () => void = () => {};
      const t = setup(() => new Promise<void>((resolve) => (release = resolve)));
      await t.schedule('a', 1_000);
      await t.schedule('b', 5_000);
      await t.worker.start();
      await until(() => t.fired.length === 1, 'the claim');
      const stopped = t.worker.stop();
      let done = false;
      void stopped.then(() => (done = true));
      await settle();
      expect(done).toBe(false);
      release();
      await stopped;
      expect(await t.record('a')).toBeNull();
      t.clock.advance(10_000);
      await settle();
      expect(t.fired).toHaveLength(1);
    });
  });
});
