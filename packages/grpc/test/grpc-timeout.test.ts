import { describe, expect, it } from 'vitest';
import { grpcTimeoutValue, MAX_GRPC_TIMEOUT_MS, msUntil, parseGrpcTimeout } from '../src/grpc-timeout.js';

describe('grpc-timeout', () => {
  describe('#grpcTimeoutValue', () => {
    it('writes the coarsest unit that says the budget exactly', () => {
      expect(grpcTimeoutValue(30_000)).toBe('30S');
      expect(grpcTimeoutValue(90_000)).toBe('90S');
      expect(grpcTimeoutValue(120_000)).toBe('2M');
      expect(grpcTimeoutValue(3_600_000)).toBe('1H');
      expect(grpcTimeoutValue(250)).toBe('250m');
      expect(grpcTimeoutValue(30 * 86_400_000)).toBe('720H');
      expect(grpcTimeoutValue(365 * 86_400_000)).toBe('8760H');
    });

    it('rounds a fraction of a millisecond up to a whole one, as grpc-js sends its own deadlines', () => {
      // A grpc-js server reads `1500200u` as (1500200 * 0.001) | 0 = 1500 ms: less than the budget.
      expect(grpcTimeoutValue(1500.2)).toBe('1501m');
      expect(grpcTimeoutValue(0.0005)).toBe('1m');
      expect(grpcTimeoutValue(29_999.873_123)).toBe('30S');
      expect(grpcTimeoutValue(59_999.000_001)).toBe('1M');
    });

    it('rounds up in the finest unit that fits 8 digits when no unit is exact', () => {
      // 1e12 ms is 16666666.67 minutes and 277777.78 hours: the minutes are rounded up.
      expect(grpcTimeoutValue(1e12)).toBe('16666667M');
      expect(grpcTimeoutValue(100_000_000.5)).toBe('100001S');
      expect(grpcTimeoutValue(2 ** 31 - 1)).toBe('2147484S');
    });

    it('gives the same value for the same whole milliseconds, call after call', () => {
      expect(grpcTimeoutValue(59_999.2)).toBe('1M');
      expect(grpcTimeoutValue(59_999.9)).toBe('1M');
      expect(grpcTimeoutValue(250)).toBe('250m');
      expect(grpcTimeoutValue(59_999.9)).toBe('1M');
    });

    it('never says less than the budget', () => {
      for (const ms of [0.3, 1.0000004, 999.9999, 86_400_001.5, 1e12 + 1, 2 ** 40 + 0.5, 123_456_789.123]) {
        expect(parseGrpcTimeout(grpcTimeoutValue(ms))! - ms).toBeGreaterThanOrEqual(0);
        // What a grpc-js server reads (`(digits * unit) | 0`) is never less either.
        if (ms <= MAX_GRPC_TIMEOUT_MS) expect(parseGrpcTimeout(grpcTimeoutValue(ms))! | 0).toBeGreaterThanOrEqual(ms);
      }
    });

    it('writes 0m for a spent budget and 99999999H past what the header can say', () => {
      expect(grpcTimeoutValue(0)).toBe('0m');
      expect(grpcTimeoutValue(-3)).toBe('0m');
      expect(grpcTimeoutValue(Number.NaN)).toBe('0m');
      expect(grpcTimeoutValue(2 ** 53)).toBe('99999999H');
      expect(grpcTimeoutValue(Infinity)).toBe('99999999H');
    });

    it('keeps every budget up to MAX_GRPC_TIMEOUT_MS within what grpc-js reads as 32-bit ms', () => {
      for (const ms of [MAX_GRPC_TIMEOUT_MS, MAX_GRPC_TIMEOUT_MS - 0.5, 99_999_999.5, 2_000_000_000.7]) {
        expect(parseGrpcTimeout(grpcTimeoutValue(ms))).toBeLessThanOrEqual(2 ** 31 - 1);
      }
      expect(grpcTimeoutValue(MAX_GRPC_TIMEOUT_MS)).toBe('2147483S');
      expect(parseGrpcTimeout(grpcTimeoutValue(MAX_GRPC_TIMEOUT_MS + 1))).toBeGreaterThan(2 ** 31 - 1);
    });
  });

  describe('#parseGrpcTimeout', () => {
    it('reads every unit without overflow', () => {
      expect(parseGrpcTimeout('720H')).toBe(2_592_000_000);
      expect(parseGrpcTimeout('43300M')).toBe(2_598_000_000);
      expect(parseGrpcTimeout('99999999H')).toBe(99_999_999 * 3_600_000);
      expect(parseGrpcTimeout('2S')).toBe(2_000);
      expect(parseGrpcTimeout('7m')).toBe(7);
      expect(parseGrpcTimeout('1500u')).toBe(1.5);
      expect(parseGrpcTimeout('2000000n')).toBe(2);
    });

    it('rejects what the spec does not allow', () => {
      for (const bad of ['', '1', 'H', '123456789m', '-5S', '5 S', '5s', '1.5S', ' 5S', '5SS'])
        expect(parseGrpcTimeout(bad)).toBeUndefined();
    });
  });

  describe('#msUntil', () => {
    it('reads grpc-js deadlines given as a Date or epoch milliseconds', () => {
      expect(msUntil(new Date(10_500), 10_000)).toBe(500);
      expect(msUntil(9_000, 10_000)).toBe(-1_000);
    });

    it('treats no deadline, Infinity and an invalid Date as no deadline', () => {
      expect(msUntil(undefined, 0)).toBe(Infinity);
      expect(msUntil(Infinity, 0)).toBe(Infinity);
      expect(msUntil(new Date(Number.NaN), 0)).toBe(Infinity);
    });
  });
});
