import { describe, expect, it } from 'vitest';
import { grpcTimeoutValue, msUntil } from '../src/grpc-timeout.js';

describe('grpc-timeout', () => {
  describe('#grpcTimeoutValue', () => {
    it('writes whole milliseconds, rounded up', () => {
      expect(grpcTimeoutValue(1500.2)).toBe('1501m');
      expect(grpcTimeoutValue(0)).toBe('0m');
      expect(grpcTimeoutValue(-3)).toBe('0m');
    });

    it('switches to a coarser unit when milliseconds need more than 8 digits', () => {
      expect(grpcTimeoutValue(99_999_999)).toBe('99999999m');
      expect(grpcTimeoutValue(100_000_000)).toBe('100000S');
      expect(grpcTimeoutValue(365 * 24 * 3_600_000)).toBe('31536000S');
      expect(grpcTimeoutValue(3_650 * 24 * 3_600_000)).toBe('5256000M');
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
