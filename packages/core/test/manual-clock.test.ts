import { describe, expect, it } from 'vitest';
import { ManualClock, TimingWheel } from '../src/index.js';

describe('ManualClock', () => {
  describe('#advance', () => {
    it('moves through each due expiry so every callback sees its own time', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const seen: number[] = [];
      for (const d of [30, 10, 20]) wheel.schedule(d, () => seen.push(clock.now()));
      clock.advance(100);
      expect(seen).toEqual([10, 20, 30]);
      expect(clock.now()).toBe(100);
    });

    it('fires timers that callbacks schedule inside the window in the same call', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const seen: number[] = [];
      const chain = () => {
        seen.push(clock.now());
        if (seen.length < 5) wheel.schedule(15, chain);
      };
      wheel.schedule(15, chain);
      clock.advance(70);
      expect(seen).toEqual([15, 30, 45, 60]);
      clock.advance(5);
      expect(seen).toEqual([15, 30, 45, 60, 75]);
    });

    it('interleaves several wheels on one clock in time order', () => {
      const clock = new ManualClock(0);
      const a = new TimingWheel({ clock });
      const b = new TimingWheel({ clock, tickMs: 5 });
      const log: string[] = [];
      a.schedule(7, () => log.push(`a@${clock.now()}`));
      b.schedule(3, () => log.push(`b@${clock.now()}`));
      a.schedule(12, () => log.push(`a@${clock.now()}`));
      clock.advance(20);
      expect(log).toEqual(['b@5', 'a@7', 'a@12']);
    });

    it('gives the same firing order for the same operations (deterministic)', () => {
      const run = () => {
        const clock = new ManualClock(0);
        const wheel = new TimingWheel({ clock });
        const log: number[] = [];
        for (let i = 0; i < 500; i++) wheel.schedule((i * 7919) % 1000, () => log.push(i));
        for (let step = 0; step < 20; step++) clock.advance(50);
        return log;
      };
      expect(run()).toEqual(run());
    });

    it('rejects negative, NaN and re-entrant advances', () => {
      const clock = new ManualClock(0);
      expect(() => clock.advance(-1)).toThrow(/ms must be a finite number >= 0, got -1/);
      expect(() => clock.advance(Number.NaN)).toThrow(RangeError);
      expect(() => clock.advanceTo(-5)).toThrow(/earlier than now/);
      const wheel = new TimingWheel({ clock });
      wheel.schedule(1, () => clock.advance(1));
      expect(() => clock.advance(5)).toThrow(/cannot be called from a timer callback/);
      expect(clock.now()).toBe(5);
    });
  });

  describe('#runNext', () => {
    it('jumps to the next pending wake-up however far away', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      let fired = false;
      wheel.schedule(3_000_000_000, () => (fired = true));
      expect(clock.runNext()).toBe(true);
      expect(fired).toBe(true);
      expect(clock.now()).toBe(3_000_000_000);
      expect(clock.runNext()).toBe(false);
    });
  });

  describe('infinite loops between wheels', () => {
    it('stops two wheels that re-arm each other for the same instant, naming the loop', () => {
      const clock = new ManualClock(0);
      const a = new TimingWheel({ clock });
      const b = new TimingWheel({ clock });
      let pings = 0;
      const ping = (): void => {
        pings++;
        (pings % 2 === 0 ? a : b).schedule(0, ping);
      };
      a.schedule(1, ping);
      expect(() => clock.advance(10)).toThrow(
        /aborting after 100000 wake-ups at 1 ms, assuming an infinite loop between wheels/,
      );
      expect(clock.now()).toBe(10);
      expect(pings).toBeGreaterThan(100_000);
      a.close();
      b.close();
    }, 10_000);

    it('refuses an advance that would make the clock infinite, naming the value', () => {
      const clock = new ManualClock(Number.MAX_VALUE);
      expect(() => clock.advance(Number.MAX_VALUE)).toThrow(/ms must keep the clock finite/);
      expect(clock.now()).toBe(Number.MAX_VALUE);
    });
  });
});
