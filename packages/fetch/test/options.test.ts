import { ManualClock, sharedWheel, TimingWheel } from '@tickwheel/core';
import { describe, expect, it } from 'vitest';
import { DEFAULTS, IDEMPOTENT_METHODS, resolveOptions } from '../src/options.js';

describe('options', () => {
  describe('resolveOptions', () => {
    it('fills in the documented defaults', () => {
      const resolved = resolveOptions({}, undefined, '');
      expect(resolved).toMatchObject({
        totalMs: Infinity,
        headersMs: Infinity,
        bodyIdleMs: Infinity,
        retry: undefined,
        budgetMs: Infinity,
        untimed: true,
      });
      expect(resolved.wheel).toBe(sharedWheel());
      expect(DEFAULTS.retryDefaults.methods).toBe(IDEMPOTENT_METHODS);
    });

    it('fills a retry object from the retry defaults, and a number is the limit', () => {
      const fromObject = resolveOptions({ retry: {} }, undefined, '').retry!;
      expect(fromObject).toMatchObject({ limit: 2, backoffMs: 100, backoffFactor: 2, budgetMs: Infinity });
      expect([...fromObject.methods]).toEqual(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
      expect(resolveOptions({ retry: 4 }, undefined, '').retry!.limit).toBe(4);
      expect(resolveOptions({ retry: 0 }, undefined, '').retry).toBeUndefined();
    });

    it.each([
      [{ totalMs: -1 }, RangeError, 'totalMs must be a finite number >= 0, got -1'],
      [{ headersMs: Number.NaN }, RangeError, 'headersMs must be a finite number >= 0, got NaN'],
      [{ bodyIdleMs: Infinity }, RangeError, 'bodyIdleMs must be a finite number >= 0, got Infinity'],
      [{ totalMs: '5' }, TypeError, 'totalMs must be a finite number >= 0, got "5" (string)'],
      [{ totalMs: 100, headersMs: 101 }, RangeError, 'headersMs must not exceed totalMs (100), got 101'],
      [
        { timeout: 5 },
        TypeError,
        'unknown option timeout; expected one of totalMs, headersMs, bodyIdleMs, retry, wheel',
      ],
      [{ wheel: {} }, TypeError, 'wheel must be a TimingWheel, got {}'],
      [{ retry: 'yes' }, TypeError, 'retry must be an object, a number or false, got "yes"'],
      [{ retry: { limit: 1.5 } }, RangeError, 'retry.limit must be an integer >= 0, got 1.5'],
      [{ retry: -1 }, RangeError, 'retry.limit must be a finite number >= 0, got -1'],
      [{ retry: { backoffFactor: 0.5 } }, RangeError, 'retry.backoffFactor must be a finite number >= 1, got 0.5'],
      [{ retry: { budgetMs: -5 } }, RangeError, 'retry.budgetMs must be a finite number >= 0, got -5'],
      [{ retry: { methods: 'GET' } }, TypeError, 'retry.methods must be an array of method names, got "GET"'],
      [{ retry: { onRetry: 1 } }, TypeError, 'retry.onRetry must be a function, got 1'],
      [
        { retry: { retries: 1 } },
        TypeError,
        'unknown option retry.retries; expected one of retry.limit, retry.budgetMs, retry.backoffMs, retry.backoffFactor, retry.methods, retry.onRetry',
      ],
    ])('rejects %j with a clear message', (options, type, message) => {
      expect(() => resolveOptions(options as never, undefined, '')).toThrow(type);
      expect(() => resolveOptions(options as never, undefined, '')).toThrow(message);
    });

    it('throws a TypeError for options that are not an object', () => {
      expect(() => resolveOptions(null as never, undefined, '')).toThrow('options must be an object, got null');
    });

    describe('per request', () => {
      const base = resolveOptions(
        { totalMs: 1_000, headersMs: 200, retry: { limit: 3, budgetMs: 5_000 } },
        undefined,
        '',
      );

      it('keeps what the request leaves out and prefixes error messages with timeouts.', () => {
        const merged = resolveOptions({ headersMs: 100, retry: { limit: 1 } }, base, 'timeouts.');
        expect(merged).toMatchObject({ totalMs: 1_000, headersMs: 100, budgetMs: 5_000 });
        expect(merged.retry!.limit).toBe(1);
        expect(() => resolveOptions({ totalMs: -2 }, base, 'timeouts.')).toThrow(
          'timeouts.totalMs must be a finite number >= 0, got -2',
        );
      });

      it('checks headersMs against the inherited totalMs', () => {
        expect(() => resolveOptions({ headersMs: 2_000 }, base, 'timeouts.')).toThrow(
          'timeouts.headersMs must not exceed totalMs (1000), got 2000',
        );
      });

      it('switches limits and retries off with false', () => {
        const off = resolveOptions({ totalMs: false, headersMs: false, retry: false }, base, 'timeouts.');
        expect(off).toMatchObject({
          totalMs: Infinity,
          headersMs: Infinity,
          retry: undefined,
          budgetMs: Infinity,
          untimed: true,
        });
      });

      it('uses the wheel given per request', () => {
        const wheel = new TimingWheel({ clock: new ManualClock() });
        expect(resolveOptions({ wheel }, base, 'timeouts.').wheel).toBe(wheel);
        expect(resolveOptions({}, resolveOptions({ wheel }, undefined, ''), 'timeouts.').wheel).toBe(wheel);
      });
    });
  });
});
