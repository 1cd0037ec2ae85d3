import { describe, expect, it } from 'vitest';
import { ManualClock, TimingWheel } from '../src/index.js';

function manualWheel(tickMs = 1) {
  const clock = new ManualClock(0);
  return { clock, wheel: new TimingWheel({ clock, tickMs }) };
}

describe('TimerHandle', () => {
  describe('#cancel', () => {
    it('returns true once while pending, then false; the callback never runs', () => {
      const { clock, wheel } = manualWheel();
      const h = wheel.schedule(10, () => expect.unreachable());
      expect(h.cancel()).toBe(true);
      expect(h.cancel()).toBe(false);
      expect(h.state).toBe('cancelled');
      expect(wheel.size).toBe(0);
      clock.advance(100);
    });

    it('returns false after the timer fired', () => {
      const { clock, wheel } = manualWheel();
      const h = wheel.schedule(10, () => undefined);
      clock.advance(10);
      expect(h.cancel()).toBe(false);
      expect(wheel.stats().cancelled).toBe(0);
    });

    it('is what `using` calls at block exit', () => {
      const { clock, wheel } = manualWheel();
      {
        using h = wheel.schedule(10, () => expect.unreachable());
        expect(h.pending).toBe(true);
      }
      expect(wheel.size).toBe(0);
      clock.advance(20);
    });
  });

  describe('#refresh', () => {
    it('restarts from now with the last delay', () => {
      const { clock, wheel } = manualWheel();
      const fired: number[] = [];
      const h = wheel.schedule(100, () => fired.push(clock.now()));
      clock.advance(60);
      h.refresh();
      expect(h.expiresAt).toBe(160);
      clock.advance(99);
      expect(fired).toEqual([]);
      clock.advance(1);
      expect(fired).toEqual([160]);
    });

    it('pushes a deadline later without relinking, and re-files it when its old slot comes up', () => {
      const { clock, wheel } = manualWheel();
      const fired: number[] = [];
      const h = wheel.schedule(10, () => fired.push(clock.now()));
      for (let t = 1; t <= 50; t++) {
        clock.advance(1);
        h.refresh(10);
      }
      // 50 refreshes, but only the slots that came up (every 10 ms) moved the entry.
      expect(wheel.stats().refiled).toBeLessThanOrEqual(6);
      clock.advance(10);
      expect(fired).toEqual([60]);
    });

    it('moves a deadline earlier at once', () => {
      const { clock, wheel } = manualWheel();
      const fired: number[] = [];
      const h = wheel.schedule(100_000, () => fired.push(clock.now()));
      h.refresh(5);
      expect(h.delayMs).toBe(5);
      clock.advance(5);
      expect(fired).toEqual([5]);
    });

    it("re-arms a fired or cancelled handle, like Node's timeout.refresh()", () => {
      const { clock, wheel } = manualWheel();
      let runs = 0;
      const h = wheel.schedule(10, () => runs++);
      clock.advance(10);
      expect(runs).toBe(1);
      h.refresh();
      expect(h.pending).toBe(true);
      expect(wheel.size).toBe(1);
      clock.advance(10);
      expect(runs).toBe(2);
      h.refresh(5);
      h.cancel();
      h.refresh();
      clock.advance(5);
      expect(runs).toBe(3);
    });

    it('rejects a bad delay and leaves the timer as it was', () => {
      const { wheel } = manualWheel();
      const h = wheel.schedule(10, () => undefined);
      expect(() => h.refresh(-1)).toThrow(/delayMs must be a finite number >= 0, got -1/);
      expect(() => h.refresh(Number.NaN)).toThrow(RangeError);
      expect(h.expiresAt).toBe(10);
      expect(h.delayMs).toBe(10);
    });

    it('stays never-early and at most one tick late with a coarse tick', () => {
      const { clock, wheel } = manualWheel(8);
      const fired: Array<[number, number]> = [];
      const h = wheel.schedule(20, (self) => fired.push([self.expiresAt, clock.now()]));
      clock.advance(5);
      h.refresh(13); // due at 18, fires at the tick boundary 24, which expiresAt reports
      expect(h.expiresAt).toBe(24);
      clock.advance(100);
      expect(fired).toEqual([[24, 24]]);
    });
  });

  describe('#remaining', () => {
    it('counts down to 0 and is 0 when no longer pending', () => {
      const { clock, wheel } = manualWheel();
      const h = wheel.schedule(100, () => undefined);
      clock.advance(30);
      expect(h.remaining()).toBe(70);
      h.cancel();
      expect(h.remaining()).toBe(0);
    });
  });

  describe('#ref / #unref', () => {
    it('tracks hasRef() and returns the handle for chaining', () => {
      const { wheel } = manualWheel();
      const h = wheel.schedule(10, () => undefined);
      expect(h.hasRef()).toBe(true);
      expect(h.unref()).toBe(h);
      expect(h.hasRef()).toBe(false);
      expect(h.ref().hasRef()).toBe(true);
    });

    it('keeps the ref state and the delay apart for delays of 0 and -0, across refresh and re-arm', () => {
      const { clock, wheel } = manualWheel();
      const h = wheel.schedule(-0, () => undefined);
      expect(h.hasRef()).toBe(true);
      expect(Object.is(h.delayMs, 0)).toBe(true);
      h.unref();
      expect(h.hasRef()).toBe(false);
      expect(Object.is(h.delayMs, 0)).toBe(true);
      h.refresh(7);
      expect([h.hasRef(), h.delayMs]).toEqual([false, 7]);
      clock.advance(7);
      expect(h.state).toBe('fired');
      h.refresh();
      expect([h.pending, h.hasRef(), h.delayMs]).toEqual([true, false, 7]);
      h.ref().refresh(-0);
      expect([h.hasRef(), Object.is(h.delayMs, 0)]).toEqual([true, true]);
      h.cancel();
      expect([h.state, h.hasRef()]).toEqual(['cancelled', true]);
    });

    it('reports each state while the callback runs and after it', () => {
      const { clock, wheel } = manualWheel();
      const seen: string[] = [];
      const h = wheel.schedule(1, (self) => {
        seen.push(self.state, String(self.cancel()));
        self.refresh(5);
        seen.push(self.state);
        self.cancel();
        seen.push(self.state);
      });
      clock.advance(1);
      expect(seen).toEqual(['firing', 'false', 'pending', 'cancelled']);
      expect(h.state).toBe('cancelled');
      const g = wheel.schedule(1, () => undefined);
      clock.advance(1);
      expect(g.state).toBe('fired');
    });
  });
});
