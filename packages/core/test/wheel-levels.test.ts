import { describe, expect, it } from 'vitest';
import { ManualClock, TimingWheel } from '../src/index.js';
import { firstSetBit, levelAndSlotOfLargeTick, levelOf, levelOfBitTable, slotOf } from '../src/wheel/wheel-levels.js';

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

describe('slot arithmetic (pure functions of wheel-levels.ts)', () => {
  // 64 slots: shift 6, mask 63; the worked example of timing-wheel.ts's header.
  const shift = 6;
  const mask = 63;
  const table = levelOfBitTable(shift);

  describe('levelOfBitTable', () => {
    it('maps each bit to its base-2^shift digit', () => {
      expect([...table.subarray(0, 13)]).toEqual([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2]);
      expect(table[31]).toBe(5);
      expect([...levelOfBitTable(1).subarray(0, 4)]).toEqual([0, 1, 2, 3]);
    });
  });

  describe('levelOf / slotOf', () => {
    it('files 10 000 ms from tick 0 at level 2, slot 2, as in the worked example', () => {
      expect(levelOf(10_000, 0, mask, table)).toBe(2);
      expect(slotOf(10_000, 2, shift, mask)).toBe(2);
    });

    it('follows the worked example down the levels as the current tick moves', () => {
      expect([levelOf(10_000, 8192, mask, table), slotOf(10_000, 1, shift, mask)]).toEqual([1, 28]);
      expect([levelOf(10_000, 9984, mask, table), slotOf(10_000, 0, shift, mask)]).toEqual([0, 16]);
    });

    it('puts a tick in the current level-0 window at level 0, whatever the distance', () => {
      expect(levelOf(63, 0, mask, table)).toBe(0);
      expect(levelOf(64, 0, mask, table)).toBe(1);
      expect(levelOf(127, 64, mask, table)).toBe(0);
      expect(levelOf(128, 127, mask, table)).toBe(1);
      expect(levelOf(5, 5, mask, table)).toBe(0);
    });

    it('agrees with the division form for every tick up to 2^31', () => {
      for (const [tick, current] of [
        [0x7fffffff, 0],
        [0x40000000, 0x3fffffff],
        [123_456_789, 98_765],
        [4096, 4095],
      ]) {
        const level = levelOf(tick, current, mask, table);
        expect([level, slotOf(tick, level, shift, mask)]).toEqual(levelAndSlotOfLargeTick(tick, current, 64));
      }
    });
  });

  describe('levelAndSlotOfLargeTick', () => {
    it('files ticks past 2^31 exactly, by division', () => {
      expect(levelAndSlotOfLargeTick(2 ** 40 + 5, 2 ** 40, 64)).toEqual([0, 5]);
      expect(levelAndSlotOfLargeTick(2 ** 42, 0, 64)).toEqual([7, 1]);
      expect(levelAndSlotOfLargeTick(Number.MAX_VALUE, 0, 65536)[0]).toBeGreaterThan(60);
    });
  });

  describe('firstSetBit', () => {
    it('finds the first set bit at or after a slot, across words, or -1', () => {
      const words = new Int32Array(2);
      expect(firstSetBit(words, 0)).toBe(-1);
      words[0] = 1 << 3;
      words[1] = (1 << 31) | (1 << 2);
      expect(firstSetBit(words, 0)).toBe(3);
      expect(firstSetBit(words, 3)).toBe(3);
      expect(firstSetBit(words, 4)).toBe(34);
      expect(firstSetBit(words, 35)).toBe(63);
      expect(firstSetBit(words, 63)).toBe(63);
    });
  });
});
