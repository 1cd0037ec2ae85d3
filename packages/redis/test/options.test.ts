import RedisMock from 'ioredis-mock';
import { describe, expect, it } from 'vitest';
import { DEFAULTS, resolveOptions, resolveScheduleOptions } from '../src/options.js';
import type { RedisClient } from '../src/types.js';

const redis = new RedisMock() as unknown as RedisClient;

describe('options', () => {
  describe('resolveOptions', () => {
    it('fills in the documented defaults', () => {
      const o = resolveOptions({ redis, namespace: 'ns' });
      expect(o).toMatchObject({
        leaseMs: 30_000,
        shards: 1,
        failoverBudgetMs: 20_000,
        waitForReplicas: 0,
        localTime: false,
      });
      expect(o.policy).toEqual({ maxAttempts: '3', backoff: 'e1000', ifExists: 'replace' });
      expect(DEFAULTS.failoverBudgetMs).toBeGreaterThan(15_000); // Redis's default cluster-node-timeout
    });

    it.each([
      [{ attempts: 0 }, RangeError, 'attempts must be an integer from 1 to 1000000000 or Infinity, got 0'],
      [
        { backoff: { type: 'fixed', delayMs: 1, jitter: 2 } },
        RangeError,
        'backoff.jitter must be a number from 0 to 1, got 2',
      ],
      [{ ifExists: 'merge' }, TypeError, "ifExists must be 'replace' or 'keep', got \"merge\""],
      [{ failoverBudgetMs: -1 }, RangeError, 'failoverBudgetMs must be a finite number >= 0, got -1'],
      [{ waitForReplicas: 1.5 }, RangeError, 'waitForReplicas must be an integer from 0 to 100, got 1.5'],
      [{ waitForReplicasTimeoutMs: 0 }, RangeError, 'waitForReplicasTimeoutMs must be a finite number >= 1, got 0'],
      [{ timeSource: 'server' }, TypeError, "timeSource must be 'redis' or 'local', got \"server\""],
      [{ leaseMS: 5 }, TypeError, 'RedisTimers has an unknown option "leaseMS"'],
    ])('refuses %o', (bad, type, message) => {
      expect(() => resolveOptions({ redis, namespace: 'ns', ...bad } as never)).toThrow(type);
      expect(() => resolveOptions({ redis, namespace: 'ns', ...bad } as never)).toThrow(message);
    });

    it('takes attempts: Infinity as no limit and backoff: 0 as none', () => {
      expect(resolveOptions({ redis, namespace: 'ns', attempts: Infinity, backoff: 0 }).policy).toMatchObject({
        maxAttempts: '0',
        backoff: '',
      });
    });
  });

  describe('resolveScheduleOptions', () => {
    const defaults = resolveOptions({ redis, namespace: 'ns' }).policy;

    it('overrides the instance defaults per timer', () => {
      expect(resolveScheduleOptions(undefined, defaults)).toBe(defaults);
      expect(resolveScheduleOptions({ attempts: 7 }, defaults)).toEqual({ ...defaults, maxAttempts: '7' });
      expect(resolveScheduleOptions({ backoff: { type: 'fixed', delayMs: 5 }, ifExists: 'keep' }, defaults)).toEqual({
        maxAttempts: '3',
        backoff: 'f5',
        ifExists: 'keep',
      });
    });

    it('names the per-timer option in errors', () => {
      expect(() => resolveScheduleOptions({ attempts: -1 }, defaults)).toThrow(
        'options.attempts must be an integer from 1 to 1000000000 or Infinity, got -1',
      );
      expect(() => resolveScheduleOptions({ delay: 5 } as never, defaults)).toThrow(
        'schedule has an unknown option "delay"',
      );
      expect(() => resolveScheduleOptions(5 as never, defaults)).toThrow('options must be an object, got 5');
    });
  });
});
