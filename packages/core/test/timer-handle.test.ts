import { describe, expect, it } from 'vitest';
import { MAX_DELAY_MS, ManualClock, TimingWheel, type Clock } from '../src/index.js';

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
    /** A clock that reuses one reading per job, named as SystemClock names them (`_readingId`), moved by hand. */
    class JobClock implements Clock {
      t = 0.25;
      _readingId = -1;
      private readings = 0;
      private reading = 0;
      constructor(private readonly reusing = true) {}
      now(): number {
        if (!this.reusing) return this.t;
        if (this._readingId < 0) {
          this._readingId = ++this.readings;
          this.reading = this.t;
        }
        return this.reading;
      }
      endJob(): void {
        this._readingId = -1;
      }
    }

    it("adds a whole delay to the tick base of the job's reading, and rounds a new reading in the next job", () => {
      const clock = new JobClock();
      const wheel = new TimingWheel({ clock });
      const [a, b] = [wheel.schedule(100, () => {}), wheel.schedule(100, () => {})];
      clock.t = 5.5; // the clock moved, but the job still reuses its reading of 0.25
      a.refresh();
      b.refresh();
      expect([a.expiresAt, b.expiresAt]).toEqual([101, 101]);
      clock.endJob();
      b.refresh(); // a new job: a new reading, a new base
      a.refresh();
      expect([a.expiresAt, b.expiresAt]).toEqual([106, 106]);
      wheel.close();
    });

    it('reads the clock at every refresh when it keeps no job reading, and for a fractional delay', () => {
      const clock = new JobClock(false);
      const wheel = new TimingWheel({ clock });
      const h = wheel.schedule(100, () => {});
      const f = wheel.schedule(100.5, () => {});
      clock.t = 5.5;
      h.refresh();
      clock.t = 7.25;
      h.refresh();
      expect(h.expiresAt).toBe(108);
      const job = new JobClock();
      const other = new TimingWheel({ clock: job });
      const g = other.schedule(100.5, () => {});
      job.t = 9;
      g.refresh();
      expect(g.expiresAt).toBe(101); // 0.25 + 100.5, rounded up: the job's reading, not a base plus 100.5
      f.refresh();
      expect(f.expiresAt).toBe(108);
      wheel.close();
      other.close();
    });

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

  describe('#refreshAt', () => {
    it('moves a pending timer to an absolute time on the clock', () => {
      const { clock, wheel } = manualWheel();
      clock.advance(1000);
      const fired: number[] = [];
      const h = wheel.schedule(100, () => fired.push(clock.now()));
      expect(h.refreshAt(1500)).toBe(h);
      expect(h.expiresAt).toBe(1500);
      clock.advance(499);
      expect(fired).toEqual([]);
      clock.advance(1);
      expect(fired).toEqual([1500]);
    });

    it('pushes a deadline later without relinking, and re-files it when its old slot comes up', () => {
      const { clock, wheel } = manualWheel();
      const fired: number[] = [];
      const h = wheel.schedule(10, () => fired.push(clock.now()));
      for (let t = 1; t <= 50; t++) {
        clock.advance(1);
        h.refreshAt(t + 10);
      }
      expect(wheel.stats().refiled).toBeLessThanOrEqual(6);
      expect(wheel.stats().scheduled).toBe(1);
      clock.advance(10);
      expect(fired).toEqual([60]);
    });

    it('moves a deadline earlier at once', () => {
      const { clock, wheel } = manualWheel();
      const fired: number[] = [];
      const h = wheel.schedule(100_000, () => fired.push(clock.now()));
      h.refreshAt(5);
      clock.advance(5);
      expect(fired).toEqual([5]);
    });

    it('fires a time in the past on the next pass, never before the current tick', () => {
      const { clock, wheel } = manualWheel();
      clock.advance(1000);
      const fired: number[] = [];
      const h = wheel.schedule(50, () => fired.push(clock.now()));
      h.refreshAt(10);
      expect(h.pending).toBe(true);
      clock.advance(0);
      expect(fired).toEqual([1000]);
      h.refreshAt(-Number.MAX_VALUE);
      clock.advance(0);
      expect(fired).toEqual([1000, 1000]);
    });

    it('is never early with a coarse or fractional tick: the first tick at or after the time', () => {
      for (const tickMs of [8, 0.3, 1000 / 60]) {
        const { clock, wheel } = manualWheel(tickMs);
        let firedAt = -1;
        const h = wheel.schedule(1, () => (firedAt = clock.now()));
        h.refreshAt(101);
        expect(h.expiresAt).toBeGreaterThanOrEqual(101);
        expect(h.expiresAt - 101).toBeLessThan(tickMs);
        while (firedAt < 0 && clock.runNext());
        expect(firedAt).toBe(h.expiresAt);
      }
    });

    it('re-arms a fired or cancelled handle, like refresh(), and keeps the delay refresh() reuses', () => {
      const { clock, wheel } = manualWheel();
      let runs = 0;
      const h = wheel.schedule(10, () => runs++);
      clock.advance(10);
      expect(h.state).toBe('fired');
      h.refreshAt(25);
      expect([h.pending, wheel.size, h.delayMs]).toEqual([true, 1, 10]);
      clock.advance(15);
      expect(runs).toBe(2);
      h.cancel();
      h.refreshAt(30);
      clock.advance(5);
      expect(runs).toBe(3);
      h.refresh();
      expect(h.expiresAt).toBe(40);
    });

    it('may be called from its own callback', () => {
      const { clock, wheel } = manualWheel();
      const fired: number[] = [];
      wheel.schedule(10, (self) => {
        fired.push(clock.now());
        if (fired.length < 3) self.refreshAt(clock.now() + 7);
      });
      clock.advance(100);
      expect(fired).toEqual([10, 17, 24]);
    });

    it('makes Infinity, or a time more than MAX_DELAY_MS ahead, a timer that never fires', () => {
      const { clock, wheel } = manualWheel();
      let fired = 0;
      const a = wheel.schedule(5, () => fired++).refreshAt(Infinity);
      const b = wheel.schedule(10, () => fired++);
      clock.advance(5);
      b.refreshAt(5 + 2 * MAX_DELAY_MS);
      const c = wheel.schedule(MAX_DELAY_MS + 2, () => fired++).refreshAt(Infinity);
      expect([a, b, c].map((h) => [h.pending, h.expiresAt])).toEqual([
        [true, Infinity],
        [true, Infinity],
        [true, Infinity],
      ]);
      clock.advance(1e300);
      expect(fired).toBe(0);
      // and it can be brought back
      a.refreshAt(clock.now() + 3);
      clock.advance(3);
      expect(fired).toBe(1);
    });

    it('honours a time exactly MAX_DELAY_MS ahead', () => {
      const { clock, wheel } = manualWheel();
      let fired = 0;
      const h = wheel.schedule(5, () => fired++).refreshAt(MAX_DELAY_MS);
      expect(h.expiresAt).toBe(MAX_DELAY_MS);
      clock.advance(MAX_DELAY_MS - 1);
      expect(fired).toBe(0);
      clock.advance(1);
      expect(fired).toBe(1);
    });

    it('rejects a bad time naming the package and the value, and leaves the timer as it was', () => {
      const { wheel } = manualWheel();
      const h = wheel.schedule(10, () => undefined);
      expect(() => h.refreshAt(Number.NaN)).toThrow(RangeError);
      expect(() => h.refreshAt(Number.NaN)).toThrow(/^@tickwheel\/core: timeMs must be a number .*got NaN$/);
      expect(() => h.refreshAt(-Infinity)).toThrow(/@tickwheel\/core: timeMs .*got -Infinity/);
      expect(() => h.refreshAt('5' as unknown as number)).toThrow(TypeError);
      expect(() => h.refreshAt('5' as unknown as number)).toThrow(/@tickwheel\/core: timeMs .*got "5" \(string\)/);
      expect(() => h.refreshAt(undefined as unknown as number)).toThrow(TypeError);
      expect([h.pending, h.expiresAt, h.delayMs]).toEqual([true, 10, 10]);
    });

    it('throws once the wheel is closed', () => {
      const { wheel } = manualWheel();
      const h = wheel.schedule(10, () => undefined);
      wheel.close();
      expect(() => h.refreshAt(20)).toThrow(/closed/);
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
