import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_DELAY_MS, nextDown, nextUp, sumUp, TickScale } from '../src/wheel/tick-scale.js';

describe('tick-scale', () => {
  describe('nextUp / nextDown', () => {
    it('step one double at a time, across zero and at the top of the safe integers', () => {
      expect(nextUp(1)).toBe(1 + Number.EPSILON);
      expect(nextDown(1)).toBe(1 - Number.EPSILON / 2);
      expect(nextUp(0)).toBe(Number.MIN_VALUE);
      expect(nextDown(0)).toBe(-Number.MIN_VALUE);
      expect(nextUp(-Number.MIN_VALUE)).toBe(-0);
      expect(nextUp(2 ** 53)).toBe(2 ** 53 + 2);
    });
  });

  describe('sumUp', () => {
    it('is plain addition up to 2^53 and rounds up, never down, past it', () => {
      expect(sumUp(0.1, 0.2)).toBe(0.1 + 0.2);
      expect(sumUp(1, 2 ** 53)).toBe(2 ** 53 + 2); // 2^53 + 1 is not a double: up, not to even
      expect(sumUp(3, 2 ** 53)).toBe(2 ** 53 + 4);
      expect(sumUp(2, 2 ** 53)).toBe(2 ** 53 + 2);
    });
  });

  describe('TickScale', () => {
    it('with tickMs 1: ticks are whole ms, due ticks round up, now ticks round down', () => {
      const scale = new TickScale(100, 1);
      expect(scale.dueTick(5)).toBe(5);
      expect(scale.dueTick(5.2)).toBe(6);
      expect(scale.nowTick(105.9)).toBe(5);
      expect(scale.timeOfTick(6)).toBe(106);
      expect(scale.timeOfTick(Infinity)).toBe(Infinity);
      expect(scale.dueTick(MAX_DELAY_MS)).toBe(MAX_DELAY_MS);
    });

    it('with a whole tickMs (10): boundaries are exact', () => {
      const scale = new TickScale(0, 10);
      expect([scale.dueTick(1), scale.dueTick(10), scale.dueTick(11)]).toEqual([1, 1, 2]);
      expect(scale.timeOfTick(3)).toBe(30);
      expect(scale.nowTick(29.999)).toBe(2);
    });

    it('with 1000 / 60: five frames are five ticks, not six, however the sum rounded', () => {
      const frame = 1000 / 60;
      const scale = new TickScale(0, frame);
      let t = 0;
      for (let n = 1; n <= 100_000; n++) {
        t += frame;
        if (n % 997 === 0 || n < 50) {
          expect(scale.nowTick(t)).toBe(n);
          expect(scale.dueTick(t + 5 * frame)).toBe(n + 5);
        }
      }
    });

    it('gives whole ticks, never a time at which its own tick has not begun, nothing earlier at which it has, and never a due tick before the expiry (property)', () => {
      fc.assert(
        fc.property(
          fc.oneof(
            fc.constantFrom(1, 0.3, 0.7, 1000 / 60, 10, 1 / 1024),
            fc.double({ min: 1e-3, max: 1e5, noNaN: true }),
          ),
          fc.integer({ min: 0, max: 2 ** 40 }),
          fc.oneof(fc.integer({ min: 0, max: 2 ** 40 }), fc.double({ min: 0, max: 2 ** 60, noNaN: true })),
          (tickMs, origin, tick) => {
            const scale = new TickScale(origin, tickMs);
            const k = Math.floor(tick);
            const t = scale.timeOfTick(k);
            expect(scale.nowTick(t)).toBeGreaterThanOrEqual(k);
            if (k > 0 && t > origin) expect(scale.nowTick(nextDown(t))).toBeLessThan(k);
            // A due tick's start is at or after the expiry, up to the documented tolerance.
            const e = k * tickMs;
            const due = scale.dueTick(e);
            expect(Number.isInteger(due)).toBe(true);
            expect(Number.isInteger(scale.nowTick(t))).toBe(true);
            expect(scale.timeOfTick(due)).toBeGreaterThanOrEqual(
              origin + e - Math.min(e * 2 ** -29, tickMs / 32) - 1e-9,
            );
          },
        ),
        { numRuns: 5000 },
      );
    });

    it('caps ticks of a clock near Number.MAX_VALUE to a finite number', () => {
      const scale = new TickScale(0, 1 / 1024);
      expect(scale.nowTick(Number.MAX_VALUE)).toBe(Number.MAX_VALUE);
      expect(scale.dueTick(Number.MAX_VALUE)).toBe(Number.MAX_VALUE);
      expect(Number.isFinite(scale.timeOfTick(Number.MAX_VALUE))).toBe(true);
    });
  });
});
