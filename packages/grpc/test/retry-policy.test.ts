import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { backoffMs, baseBackoffMs, parseRetry, pushbackMs } from '../src/retry-policy.js';

describe('retry-policy', () => {
  describe('#parseRetry', () => {
    it('fills in what is left out from DEFAULTS.retry', () => {
      expect(parseRetry({}, 'retry')).toEqual({
        limit: 2,
        perAttemptMs: Infinity,
        statusCodes: new Set([status.UNAVAILABLE]),
        initialMs: 100,
        maxMs: 1_000,
        multiplier: 2,
        jitter: 0.2,
      });
    });

    it('takes status codes by name or number, and 0 as no per-attempt limit', () => {
      const plan = parseRetry({ statusCodes: ['RESOURCE_EXHAUSTED', 14], perAttemptMs: 0, limit: 4 }, 'retry');
      expect(plan.statusCodes).toEqual(new Set([status.RESOURCE_EXHAUSTED, status.UNAVAILABLE]));
      expect(plan.perAttemptMs).toBe(Infinity);
      expect(plan.limit).toBe(4);
    });

    it('raises the default maxMs to an initialMs above it', () => {
      expect(parseRetry({ backoff: { initialMs: 5_000 } }, 'retry').maxMs).toBe(5_000);
    });

    it.each([
      [{ limit: -1 }, RangeError, '@tickwheel/grpc: retry.limit must be an integer >= 0, got -1'],
      [{ limit: 1.5 }, RangeError, 'retry.limit must be an integer >= 0, got 1.5'],
      [
        { statusCodes: 'UNAVAILABLE' },
        TypeError,
        'retry.statusCodes must be an array of status codes, got "UNAVAILABLE"',
      ],
      [{ statusCodes: ['OK'] }, RangeError, 'retry.statusCodes[0] must be a grpc status name other than OK'],
      [{ statusCodes: [0] }, RangeError, 'retry.statusCodes[0] must be an integer >= 1, got 0'],
      [{ perAttemptMs: -5 }, RangeError, 'retry.perAttemptMs must be a number of ms >= 0'],
      [
        { backoff: { initialMs: 500, maxMs: 100 } },
        RangeError,
        'retry.backoff.maxMs must be at least backoff.initialMs (500), got 100',
      ],
      [{ backoff: { multiplier: 0.5 } }, RangeError, 'retry.backoff.multiplier must be a finite number >= 1, got 0.5'],
      [{ backoff: { jitter: 2 } }, RangeError, 'retry.backoff.jitter must be at most 1, got 2'],
      [{ backoff: { initial: 5 } }, TypeError, 'unknown option retry.backoff.initial'],
      [
        { attempts: 3 },
        TypeError,
        'unknown option retry.attempts; known options: limit, perAttemptMs, statusCodes, backoff',
      ],
      [null, TypeError, 'retry must be an object, got null'],
    ])('rejects %o', (value, type, message) => {
      expect(() => parseRetry(value, 'retry')).toThrow(type);
      expect(() => parseRetry(value, 'retry')).toThrow(message);
    });
  });

  describe('#baseBackoffMs', () => {
    it('grows by the multiplier from initialMs and stops at maxMs (gRFC A6)', () => {
      const plan = parseRetry({ backoff: { initialMs: 100, maxMs: 1_000, multiplier: 3 } }, 'retry');
      expect([1, 2, 3, 4].map((n) => baseBackoffMs(plan, n))).toEqual([100, 300, 900, 1_000]);
    });
  });

  describe('#backoffMs', () => {
    it('spreads the base by ±jitter', () => {
      const plan = parseRetry({ backoff: { initialMs: 100, jitter: 0.2 } }, 'retry');
      expect(backoffMs(plan, 1, 0)).toBeCloseTo(80);
      expect(backoffMs(plan, 1, 0.5)).toBeCloseTo(100);
      expect(backoffMs(plan, 1, 0.999999)).toBeCloseTo(120);
    });
  });

  describe('#pushbackMs', () => {
    it('reads a non-negative integer as a delay, anything else as "do not retry", nothing as none', () => {
      expect(pushbackMs([])).toBeUndefined();
      expect(pushbackMs(['250'])).toBe(250);
      expect(pushbackMs(['0'])).toBe(0);
      expect(pushbackMs(['-1'])).toBe(-1);
      expect(pushbackMs(['soon'])).toBe(-1);
    });
  });
});
