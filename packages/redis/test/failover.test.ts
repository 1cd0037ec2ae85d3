import { describe, expect, it } from 'vitest';
import { isTransient, RedisUnavailableError, retryDelayMs, withFailoverBudget } from '../src/failover.js';

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
    it('retries transient errors until the call succeeds', async () => {
      let calls = 0;
      const result = await withFailoverBudget(
        () => {
          if (++calls < 3) return Promise.reject(new Error('CLUSTERDOWN The cluster is down'));
          return Promise.resolve('ok');
        },
        5_000,
        'op',
        'retrying is safe',
      );
      expect([result, calls]).toEqual(['ok', 3]);
    });

    it("rethrows the call's own error at once", async () => {
      let calls = 0;
      const own = new Error('ERR bad');
      await expect(
        withFailoverBudget(
          () => {
            calls++;
            return Promise.reject(own);
          },
          5_000,
          'op',
          'x',
        ),
      ).rejects.toBe(own);
      expect(calls).toBe(1);
    });

    it('gives up after the budget with the last error as cause', async () => {
      const last = new Error('Connection is closed.');
      const error = await withFailoverBudget(() => Promise.reject(last), 100, 'cancel("a")', 'retrying is safe').catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(RedisUnavailableError);
      expect((error as Error).cause).toBe(last);
      expect((error as Error).message).toMatch(
        /cancel\("a"\) failed: Redis was unavailable for the whole failoverBudgetMs \(100 ms, \d+ tries; last error: Connection is closed\.\)/,
      );
    });

    it('bounds a call that never settles by the budget (no hangs)', async () => {
      const started = performance.now();
      await expect(withFailoverBudget(() => new Promise(() => undefined), 80, 'op', 'x')).rejects.toThrow(
        /did not answer within/,
      );
      expect(performance.now() - started).toBeLessThan(1_000);
    });

    it('with a budget of 0 makes one plain call', async () => {
      await expect(withFailoverBudget(() => Promise.reject(new Error('CLUSTERDOWN')), 0, 'op', 'x')).rejects.toThrow(
        'CLUSTERDOWN',
      );
    });
  });
});
