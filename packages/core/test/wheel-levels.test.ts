import { describe, expect, it } from 'vitest';
import { ManualClock, TimingWheel } from '../src/index.js';

function manualWheel(options: { tickMs?: number; wheelSize?: number } = {}) {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock, tickMs: options.tickMs, wheelSize: options.wheelSize });
  return { clock, wheel };
}

const YEAR_MS = 365 * 24 * 3600 * 1000;

describe('wheel levels', () => {
  describe('long delays', () => {
    it("fires a timer 100 years out at its exact expiry, past setTimeout's 2^31-1 ms limit", () => {
      const { clock, wheel } = manualWheel();
      const delays = [2 ** 31, 2 ** 31 + 7, 50 * YEAR_MS + 3, 100 * YEAR_MS, 100 * YEAR_MS + 1];
      const seen: Array<[number, number]> = [];
      for (const d of delays) wheel.schedule(d, () => seen.push([d, clock.now()]));
      clock.advance(101 * YEAR_MS);
      expect(seen).toEqual(delays.map((d) => [d, d]));
    });

    it('keeps exact expiries when scheduled late in a long-running wheel', () => {
      const { clock, wheel } = manualWheel();
      clock.advance(3 * YEAR_MS + 12345);
      const seen: number[] = [];
      const h = wheel.schedule(777, () => seen.push(clock.now()));
      const far = wheel.schedule(2 * YEAR_MS + 1, () => seen.push(clock.now()));
      clock.advance(3 * YEAR_MS);
      expect(seen).toEqual([h.expiresAt, far.expiresAt]);
    });
  });

  describe('empty stretches', () => {
    it('advances a ManualClock by a century with thousands of timers pending in milliseconds', () => {
      const { clock, wheel } = manualWheel();
      let fired = 0;
      for (let i = 0; i < 5000; i++) wheel.schedule((i + 1) * 7 * 24 * 3600 * 1000, () => fired++);
      const started = performance.now();
      clock.advance(100 * YEAR_MS);
      const elapsed = performance.now() - started;
      expect(fired).toBe(5000);
      // Generous: a loop over every 1 ms tick of a century would take days.
      expect(elapsed).toBeLessThan(5000);
      expect(wheel.stats().wakeups).toBeLessThanOrEqual(5000 * wheel.stats().levels);
    });
  });

  describe('wheel sizes', () => {
    it.each([2, 4, 32, 64, 256, 4096])('fires exactly with wheelSize %i', (wheelSize) => {
      const { clock, wheel } = manualWheel({ wheelSize });
      const delays = [0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 1000, 4095, 4096, 4097, 123_456, 2 ** 31 + 5];
      const seen: Array<[number, number]> = [];
      for (const d of delays) wheel.schedule(d, () => seen.push([d, clock.now()]));
      clock.advance(2 ** 32);
      expect(seen).toEqual(delays.map((d) => [d, d]));
    });
  });
});
