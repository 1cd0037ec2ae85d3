import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import { isTransient, raced, RedisUnavailableError, retryDelayMs, withFailoverBudget } from '../src/failover.js';

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('failover', () => {
  describe('isTransient', () => {
    it.each([
      'CLUSTERDOWN The cluster is down',
      'TRYAGAIN Multiple keys request during rehashing of slot',
      'LOADING Redis is loading the dataset in memory',
      "READONLY You can't write against a read only replica.",
      'Too many Cluster redirections. Last error: Error: Connection is closed.',
      'Connection is closed.',
      'Reached the max retries per request limit (which is 20). Refer to "maxRetriesPerRequest" option for details.',
      'only 0 of 1 replicas acknowledged the write within 1000 ms',
      "Stream isn't writeable and enableOfflineQueue options is false",
      'Command aborted due to connection close',
      'ERR user_script:12: TICKWHEEL_LATE this try arrived after its client gave up on it script: abc',
    ])('takes %j as transient', (message) => {
      expect(isTransient(new Error(message))).toBe(true);
    });

    it('looks at error codes and at causes', () => {
      expect(isTransient(withCode('connect failed', 'ECONNREFUSED'))).toBe(true);
      expect(isTransient(new Error('wrapped', { cause: new Error('CLUSTERDOWN') }))).toBe(true);
    });

    it.each([
      'ERR Error running script',
      'WRONGTYPE Operation against a key holding the wrong kind of value',
      'NOSCRIPT',
    ])("takes %j as the call's own error", (message) => {
      expect(isTransient(new Error(message))).toBe(false);
    });
    it('takes non-errors as not transient', () => {
      expect(isTransient('CLUSTERDOWN')).toBe(false);
    });
  });

  describe('retryDelayMs', () => {
    it('starts in tens of ms and doubles up to the cap', () => {
      expect(retryDelayMs(0, 1_000, 0)).toBe(10);
      expect(retryDelayMs(0, 1_000, 0.999)).toBeLessThanOrEqual(20);
      expect(retryDelayMs(3, 1_000, 0.999)).toBeLessThanOrEqual(160);
      expect(retryDelayMs(30, 1_000, 0.999)).toBeLessThanOrEqual(1_000);
      expect(retryDelayMs(30, 250, 0)).toBe(125);
    });
  });

  describe('withFailoverBudget', () => {
    // Every wait of the loop is on the wheel's clock: a ManualClock drives it, no sleeps.
    let clock: ManualClock;
    let wheel: TimingWheel;
    beforeEach(() => {
      clock = new ManualClock(0);
      wheel = new TimingWheel({ clock });
    });
    afterEach(() => {
      wheel.close();
    });

    /**
     * Settles `promise` by letting its promise jobs run and moving the clock to the next timer
     * of the wheel whenever nothing else can happen; returns how it settled and the clock then.
     */
    async function drive<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown; at: number }> {
      let outcome: { value?: T; error?: unknown } | undefined;
      promise.then(
        (value) => (outcome = { value }),
        (error: unknown) => (outcome = { error }),
      );
      for (let steps = 0; steps < 10_000; steps++) {
        for (let i = 0; i < 10; i++) await Promise.resolve();
        if (outcome !== undefined) return { ...outcome, at: clock.now() };
        if (!clock.runNext()) throw new Error('the loop waits on nothing the wheel will fire');
      }
      throw new Error('the loop did not settle within 10 000 wheel wake-ups');
    }

    it('retries transient errors until the call succeeds, pausing 10-20 ms on the wheel before the first retry', async () => {
      const at: number[] = [];
      const result = await drive(
        withFailoverBudget(
          wheel,
          () => {
            at.push(clock.now());
            if (at.length < 3) return Promise.reject(new Error('CLUSTERDOWN The cluster is down'));
            return Promise.resolve('ok');
          },
          5_000,
          'op',
          'retrying is safe',
        ),
      );
      expect(result.value).toBe('ok');
      expect(at).toHaveLength(3);
      expect(at[0]).toBe(0);
      // retryDelayMs: full jitter in [ceiling / 2, ceiling], 20 ms then 40 ms.
      expect(at[1] - at[0]).toBeGreaterThanOrEqual(10);
      expect(at[1] - at[0]).toBeLessThanOrEqual(20);
      expect(at[2] - at[1]).toBeGreaterThanOrEqual(20);
      expect(at[2] - at[1]).toBeLessThanOrEqual(40);
      expect(wheel.size).toBe(0); // the try's race timer was cancelled with the answer
    });

    it("rethrows the call's own error at once", async () => {
      let calls = 0;
      const own = new Error('ERR bad');
      const result = await drive(
        withFailoverBudget(
          wheel,
          () => {
            calls++;
            return Promise.reject(own);
          },
          5_000,
          'op',
          'x',
        ),
      );
      expect([result.error, result.at, calls]).toEqual([own, 0, 1]);
    });

    it('gives up once the budget is spent on the wheel clock, with the last error as cause', async () => {
      const last = new Error('Connection is closed.');
      const tries: number[] = [];
      const result = await drive(
        withFailoverBudget(
          wheel,
          () => {
            tries.push(clock.now());
            return Promise.reject(last);
          },
          100,
          'cancel("a")',
          'retrying is safe',
        ),
      );
      expect(result.error).toBeInstanceOf(RedisUnavailableError);
      expect((result.error as Error).cause).toBe(last);
      expect((result.error as RedisUnavailableError).attempts).toBe(tries.length);
      // The last pause is cut to what is left of the budget, so the loop ends at 100 ms, not after.
      expect(result.at).toBe(100);
      expect(tries.at(-1)).toBe(100);
      expect((result.error as Error).message).toBe(
        `@tickwheel/redis: cancel("a") failed: Redis was unavailable for the whole failoverBudgetMs (100 ms, ${tries.length} tries; ` +
          'last error: Connection is closed.). It may or may not have been applied; retrying is safe',
      );
    });

    it('abandons a try that never settles after tryTimeoutMs and bounds the call by the budget (no hangs)', async () => {
      const tries: [number, number][] = [];
      const result = await drive(
        withFailoverBudget(
          wheel,
          (tryMs) => {
            tries.push([clock.now(), tryMs]);
            return new Promise(() => undefined);
          },
          5_000,
          'op',
          'x',
          2_000,
        ),
      );
      expect((result.error as Error).message).toMatch(/3 tries; last error: Redis did not answer within \d+ ms/);
      expect(result.at).toBe(5_000);
      // Tries of 2 s, each told its time, the last cut to the budget left.
      expect(tries.map(([, ms]) => ms).slice(0, 2)).toEqual([2_000, 2_000]);
      const [lastAt, lastMs] = tries[2];
      expect(lastAt + lastMs).toBe(5_000);
      expect(wheel.size).toBe(0);
    });

    it('with a budget of 0 makes one plain call, told it is never abandoned', async () => {
      const told: number[] = [];
      const result = await drive(
        withFailoverBudget(
          wheel,
          (tryMs) => {
            told.push(tryMs);
            return Promise.reject(new Error('CLUSTERDOWN'));
          },
          0,
          'op',
          'x',
        ),
      );
      expect([(result.error as Error).message, told, wheel.size]).toEqual(['CLUSTERDOWN', [Infinity], 0]);
    });
  });

  describe('raced', () => {
    it('rejects with a transient "did not answer within" once its time passed on the wheel, not before', async () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const outcome = raced(wheel, new Promise(() => undefined), 250).catch((error: unknown) => error);
      let settled = false;
      void outcome.then(() => (settled = true));
      clock.advance(249);
      for (let i = 0; i < 10; i++) await Promise.resolve();
      expect(settled).toBe(false);
      clock.advance(1);
      const error = await outcome;
      expect((error as Error).message).toBe('Redis did not answer within 250 ms');
      expect(isTransient(error)).toBe(true);
      wheel.close();
    });
  });
});
