import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveOptions } from '../src/options.js';
import { backoffDelay, isNetworkError, retryTimingDelay, retryTimingHeader } from '../src/retry-policy.js';
import type { RetryOptions } from '../src/types.js';

const retryOf = (retry: RetryOptions) => resolveOptions({ retry }, undefined, '').retry!;
const headers = (entries: Record<string, string>) => new Headers(entries);
const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('retry-policy', () => {
  describe('backoffDelay', () => {
    it('grows by backoffFactor per retry', () => {
      const retry = retryOf({ backoffMs: 100, backoffFactor: 3 });
      expect([0, 1, 2].map((attempt) => backoffDelay(retry, attempt))).toEqual([100, 300, 900]);
    });

    // ky test/retry.ts "respect maximum backoffLimit"
    it('is capped at backoffLimit', () => {
      const retry = retryOf({ backoffMs: 300, backoffLimit: 1_000 });
      expect([0, 1, 2, 3].map((attempt) => backoffDelay(retry, attempt))).toEqual([300, 600, 1_000, 1_000]);
    });

    // ky test/retry.ts "backoffLimit: undefined treats as no limit (Infinity)"
    it('has no cap by default, nor with backoffLimit 0', () => {
      expect(backoffDelay(retryOf({ backoffMs: 300 }), 10)).toBe(300 * 2 ** 10);
      expect(backoffDelay(retryOf({ backoffMs: 300, backoffLimit: 0 }), 10)).toBe(300 * 2 ** 10);
    });

    // ky test/retry.ts "jitter: true applies full jitter to delay"
    it('draws uniformly from 0 to the delay with jitter: true', () => {
      vi.spyOn(Math, 'random').mockReturnValue(0.25);
      expect(backoffDelay(retryOf({ backoffMs: 400, jitter: true }), 1)).toBe(200);
    });

    // ky test/retry.ts "jitter: custom function applies custom jitter"
    it('applies a jitter function, ignoring a result that is not a finite number >= 0', () => {
      expect(backoffDelay(retryOf({ backoffMs: 100, jitter: (delay) => delay * 1.5 }), 0)).toBe(150);
      expect(backoffDelay(retryOf({ backoffMs: 100, jitter: () => -1 }), 0)).toBe(100);
      expect(backoffDelay(retryOf({ backoffMs: 100, jitter: () => Number.NaN }), 0)).toBe(100);
    });

    // ky test/retry.ts "jitter respects backoffLimit"
    it('caps the jittered delay at backoffLimit', () => {
      expect(backoffDelay(retryOf({ backoffMs: 100, backoffLimit: 120, jitter: (delay) => delay * 5 }), 0)).toBe(120);
    });
  });

  describe('retryTimingHeader', () => {
    // ky test/retry.ts "RateLimit-Reset delay seconds are respected like Retry-After"
    it('reads Retry-After first, then RateLimit-Reset and its aliases, in ky order', () => {
      expect(retryTimingHeader(headers({ 'retry-after': '1', 'ratelimit-reset': '9' }))).toEqual({
        value: '1',
        mayBeTimestamp: false,
      });
      expect(retryTimingHeader(headers({ 'ratelimit-reset': '2' }))).toEqual({ value: '2', mayBeTimestamp: true });
      expect(retryTimingHeader(headers({ 'x-ratelimit-retry-after': '3' }))).toEqual({
        value: '3',
        mayBeTimestamp: false,
      });
      expect(retryTimingHeader(headers({ 'x-rate-limit-reset': '4' }))).toEqual({ value: '4', mayBeTimestamp: true });
      expect(retryTimingHeader(headers({}))).toBeUndefined();
    });
  });

  describe('retryTimingDelay', () => {
    // ky test/retry.ts "respect Retry-After: 0 and retry immediately"
    it('reads delay seconds', () => {
      expect(retryTimingDelay({ value: '0', mayBeTimestamp: false }, NOW)).toBe(0);
      expect(retryTimingDelay({ value: '2', mayBeTimestamp: false }, NOW)).toBe(2_000);
    });

    // ky test/retry.ts "respect 413 Retry-After with HTTP date"
    it('reads an HTTP date, and a date in the past as 0', () => {
      expect(retryTimingDelay({ value: new Date(NOW + 3_000).toUTCString(), mayBeTimestamp: false }, NOW)).toBe(3_000);
      expect(retryTimingDelay({ value: new Date(NOW - 3_000).toUTCString(), mayBeTimestamp: false }, NOW)).toBe(0);
    });

    // ky test/retry.ts "RateLimit-Reset with time since epoch"
    it('reads a reset header in Unix seconds as a time, a Retry-After as seconds', () => {
      const at = String((NOW + 5_000) / 1000);
      expect(retryTimingDelay({ value: at, mayBeTimestamp: true }, NOW)).toBe(5_000);
      expect(retryTimingDelay({ value: at, mayBeTimestamp: false }, NOW)).toBe((NOW + 5_000) * 1);
    });

    // ky test/retry.ts "invalid Retry-After header falls back to retry delay"
    it('answers undefined for a value that is neither, so that the backoff applies', () => {
      expect(retryTimingDelay({ value: 'not-a-valid-value', mayBeTimestamp: false }, NOW)).toBeUndefined();
      expect(retryTimingDelay({ value: '1.5', mayBeTimestamp: false }, NOW)).toBeUndefined();
    });
  });

  describe('isNetworkError', () => {
    // ky test/retry.ts "non-network TypeError is not retried"
    it("is true for fetch's network error only", () => {
      expect(isNetworkError(new TypeError('fetch failed'))).toBe(true);
      expect(isNetworkError(new TypeError('Failed to fetch'))).toBe(true);
      expect(isNetworkError(new TypeError("Cannot read properties of undefined (reading 'x')"))).toBe(false);
      expect(isNetworkError(new Error('fetch failed'))).toBe(false);
    });
  });
});
