import { describe, expect, it } from 'vitest';
import { backoffDelayMs, encodeAttempts, encodeBackoff } from '../src/backoff.js';

describe('backoff', () => {
  describe('encodeBackoff', () => {
    it('encodes none, a number (fixed ms, as BullMQ accepts) and both types with jitter', () => {
      expect(encodeBackoff(undefined, 'backoff')).toBe('');
      expect(encodeBackoff(0, 'backoff')).toBe('');
      expect(encodeBackoff(300, 'backoff')).toBe('f300');
      expect(encodeBackoff({ type: 'fixed', delayMs: 750.2 }, 'backoff')).toBe('f751');
      expect(encodeBackoff({ type: 'exponential', delayMs: 200, jitter: 0.5 }, 'backoff')).toBe('e200j500');
      expect(encodeBackoff({ type: 'exponential', delayMs: 200, jitter: 0 }, 'backoff')).toBe('e200');
    });

    it.each([
      [-1, RangeError, 'backoff must be a finite number >= 0, got -1'],
      ['100', TypeError, 'backoff must be a number of ms or { type, delayMs, jitter? }, got "100"'],
      [{ type: 'linear', delayMs: 1 }, TypeError, "backoff.type must be 'fixed' or 'exponential', got \"linear\""],
      [{ type: 'fixed', delay: 1 }, TypeError, 'backoff has an unknown key "delay" (known: type, delayMs, jitter)'],
      [{ type: 'fixed', delayMs: Number.NaN }, RangeError, 'backoff.delayMs must be a finite number >= 0, got NaN'],
      [
        { type: 'fixed', delayMs: 2 ** 40 },
        RangeError,
        'backoff.delayMs must be at most 2147483647, got 1099511627776',
      ],
      // BullMQ job.test.ts "when jitter backoff option is provided with a value lesser than 0" / "greater than 1"
      [
        { type: 'fixed', delayMs: 1, jitter: -0.1 },
        RangeError,
        'backoff.jitter must be a number from 0 to 1, got -0.1',
      ],
      [{ type: 'fixed', delayMs: 1, jitter: 1.5 }, RangeError, 'backoff.jitter must be a number from 0 to 1, got 1.5'],
    ])('refuses %o', (bad, type, message) => {
      expect(() => encodeBackoff(bad, 'backoff')).toThrow(type);
      expect(() => encodeBackoff(bad, 'backoff')).toThrow(message);
    });
  });

  describe('backoffDelayMs', () => {
    it('waits nothing without a policy', () => {
      expect(backoffDelayMs('', 5)).toBe(0);
    });

    it('BullMQ backoffs.ts fixed: delayMs after every attempt', () => {
      expect([1, 2, 3].map((n) => backoffDelayMs('f750', n))).toEqual([750, 750, 750]);
    });

    it('BullMQ worker.test.ts "when backoff type is exponential": delayMs * 2^(attempts - 1)', () => {
      expect([1, 2, 3, 4].map((n) => backoffDelayMs('e200', n))).toEqual([200, 400, 800, 1_600]);
      expect(backoffDelayMs('e1000', 200)).toBe(2 ** 31 - 1);
    });

    it('BullMQ worker.test.ts "when jitter option is provided": between 0 and the full wait with jitter 1', () => {
      expect(backoffDelayMs('e200j1000', 2, 0)).toBe(0);
      expect(backoffDelayMs('e200j1000', 2, 0.999)).toBeLessThanOrEqual(400);
      expect(backoffDelayMs('f750j1000', 1, 0.5)).toBe(375);
    });

    it('BullMQ worker.test.ts "when jitter is provided with lower value than 1": within [wait * (1 - jitter), wait]', () => {
      for (const random of [0, 0.25, 0.5, 0.999]) {
        const wait = backoffDelayMs('e200j500', 3, random);
        expect(wait).toBeGreaterThanOrEqual(400);
        expect(wait).toBeLessThanOrEqual(800);
      }
    });
  });

  describe('encodeAttempts', () => {
    it('takes integers >= 1 and Infinity (stored as 0)', () => {
      expect(encodeAttempts(1, 'attempts')).toBe(1);
      expect(encodeAttempts(Infinity, 'attempts')).toBe(0);
      expect(() => encodeAttempts(0, 'attempts')).toThrow(
        new RangeError('attempts must be an integer from 1 to 1000000000 or Infinity, got 0'),
      );
      expect(() => encodeAttempts(2.5, 'attempts')).toThrow(RangeError);
      expect(() => encodeAttempts('3', 'attempts')).toThrow(
        new TypeError('attempts must be an integer >= 1 or Infinity, got "3"'),
      );
    });
  });
});
