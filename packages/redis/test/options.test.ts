import RedisMock from 'ioredis-mock';
import { describe, expect, it } from 'vitest';
import { expectUnknownKey, itRejectsBadValues, type OptionKind } from '../../../tests/helpers/bad-options.js';
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
        maxStalledCount: 1, // BullMQ's default
        waitForReplicas: 0,
        localTime: false,
      });
      expect(o.policy).toEqual({ maxAttempts: '3', backoff: 'e1000', ifExists: 'replace', maxWaitMs: '' });
      expect(DEFAULTS.failoverBudgetMs).toBeGreaterThan(15_000); // Redis's default cluster-node-timeout
    });

    it('keeps every default in one frozen, exported DEFAULTS', async () => {
      expect(Object.isFrozen(DEFAULTS)).toBe(true);
      expect(Object.isFrozen(DEFAULTS.backoff)).toBe(true);
      expect((await import('../src/index.js')).DEFAULTS).toBe(DEFAULTS);
    });

    it.each([
      [{ attempts: -1 }, RangeError, '@tickwheel/redis: attempts must be an integer >= 1, got -1'],
      [{ backoff: { type: 'fixed', delayMs: 1, jitter: 2 } }, RangeError, 'backoff.jitter must be at most 1, got 2'],
      [{ ifExists: 'merge' }, RangeError, 'ifExists must be "replace" or "keep", got "merge"'],
      [{ failoverBudgetMs: -1 }, RangeError, 'failoverBudgetMs must be a finite number of ms >= 0, got -1'],
      [{ waitForReplicas: 1.5 }, RangeError, 'waitForReplicas must be an integer >= 0, got 1.5'],
      [{ maxStalledCount: -1 }, RangeError, 'maxStalledCount must be an integer >= 0, got -1'],
      [{ maxStalledCount: 0.5 }, RangeError, 'maxStalledCount must be an integer >= 0, got 0.5'],
      [{ maxStalledCount: '1' }, TypeError, 'maxStalledCount must be'],
      [
        { waitForReplicasTimeoutMs: 0 },
        RangeError,
        'waitForReplicasTimeoutMs must be a finite number of ms >= 1, got 0',
      ],
      [{ timeSource: 'server' }, RangeError, 'timeSource must be "redis" or "local", got "server"'],
      [{ leaseMS: 5 }, TypeError, '@tickwheel/redis: unknown option leaseMS; known options: redis, namespace, wheel, '],
    ])('refuses %o', (bad, type, message) => {
      expect(() => resolveOptions({ redis, namespace: 'ns', ...bad } as never)).toThrow(type);
      expect(() => resolveOptions({ redis, namespace: 'ns', ...bad } as never)).toThrow(message);
    });

    it('takes maxStalledCount 0 (the first stall fails) and Infinity (no limit)', () => {
      expect(resolveOptions({ redis, namespace: 'ns', maxStalledCount: 0 }).maxStalledCount).toBe(0);
      expect(resolveOptions({ redis, namespace: 'ns', maxStalledCount: Infinity }).maxStalledCount).toBe(Infinity);
    });

    it('takes attempts: 0 or Infinity as no limit and backoff: 0 as none', () => {
      for (const attempts of [0, Infinity]) {
        expect(resolveOptions({ redis, namespace: 'ns', attempts, backoff: 0 }).policy).toMatchObject({
          maxAttempts: '0',
          backoff: '',
        });
      }
    });

    describe('the shared table of bad inputs', () => {
      const options: Record<string, OptionKind> = {
        leaseMs: 'durationMs',
        pollIntervalMs: 'durationMs',
        failoverBudgetMs: 'durationMs',
        waitForReplicasTimeoutMs: 'durationMs',
        shards: 'integer',
        batchSize: 'integer',
        concurrency: 'integer',
        waitForReplicas: 'integer',
        maxWaitMs: 'limitMs',
      };
      itRejectsBadValues('@tickwheel/redis', options, (path, value) =>
        resolveOptions({ redis, namespace: 'ns', [path]: value }),
      );

      it('rejects an unknown key, in the constructor and per timer', () => {
        expectUnknownKey(
          () => resolveOptions({ redis, namespace: 'ns', lease: 5 } as never),
          '@tickwheel/redis',
          'lease',
        );
        const defaults = resolveOptions({ redis, namespace: 'ns' }).policy;
        expectUnknownKey(() => resolveScheduleOptions({ delay: 5 } as never, defaults), '@tickwheel/redis', 'delay');
      });

      it('rejects a wheel that is not one', () => {
        expect(() => resolveOptions({ redis, namespace: 'ns', wheel: {} as never })).toThrow(
          '@tickwheel/redis: wheel must be a TimingWheel from @tickwheel/core, got {}',
        );
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
        maxWaitMs: '',
      });
      expect(resolveScheduleOptions({ maxWaitMs: 60_000.7 }, defaults)).toEqual({ ...defaults, maxWaitMs: '60000' });
      for (const off of [0, Infinity]) expect(resolveScheduleOptions({ maxWaitMs: off }, defaults).maxWaitMs).toBe('');
    });

    it('refuses a bad maxWaitMs, and one given with ifExists keep, naming it', () => {
      expect(() => resolveScheduleOptions({ maxWaitMs: -5 }, defaults)).toThrow(
        new RangeError(
          '@tickwheel/redis: options.maxWaitMs must be a number of ms >= 0 (0 or Infinity: no limit), got -5',
        ),
      );
      expect(() => resolveScheduleOptions({ maxWaitMs: '5' } as never, defaults)).toThrow(TypeError);
      expect(() => resolveScheduleOptions({ maxWaitMs: 5, ifExists: 'keep' }, defaults)).toThrow(
        new TypeError(
          "@tickwheel/redis: options.maxWaitMs needs ifExists 'replace' (a kept timer is never pushed back), got 5",
        ),
      );
      expect(() => resolveOptions({ redis, namespace: 'ns', maxWaitMs: 5, ifExists: 'keep' })).toThrow(
        /^@tickwheel\/redis: maxWaitMs needs ifExists 'replace'/,
      );
      // A default cap does not stop a call from keeping its timer: 'keep' never moves anything.
      const capped = resolveOptions({ redis, namespace: 'ns', maxWaitMs: 5 }).policy;
      expect(resolveScheduleOptions({ ifExists: 'keep' }, capped)).toMatchObject({ ifExists: 'keep', maxWaitMs: '5' });
    });

    it('names the per-timer option in errors', () => {
      expect(() => resolveScheduleOptions({ attempts: -1 }, defaults)).toThrow(
        '@tickwheel/redis: options.attempts must be an integer >= 1, got -1',
      );
      expect(() => resolveScheduleOptions({ delay: 5 } as never, defaults)).toThrow(
        '@tickwheel/redis: unknown option delay; known options: attempts, backoff, ifExists, maxWaitMs',
      );
      expect(() => resolveScheduleOptions(5 as never, defaults)).toThrow(
        '@tickwheel/redis: options must be an object, got 5',
      );
    });
  });
});
