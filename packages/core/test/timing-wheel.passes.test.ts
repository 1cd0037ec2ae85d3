import { describe, expect, it } from 'vitest';
import { ManualClock, TimerLoopError, TimingWheel, type TimerHandle } from '../src/index.js';

function manualWheel(options: { tickMs?: number; wheelSize?: number } = {}) {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock, tickMs: options.tickMs, wheelSize: options.wheelSize });
  return { clock, wheel };
}

describe('TimingWheel: passes, cascade and runaway timers', () => {
  describe('errors and runaway timers', () => {
    it('routes an error to onError and keeps firing the others', () => {
      const clock = new ManualClock(0);
      const errors: Array<[unknown, TimerHandle]> = [];
      const wheel = new TimingWheel({ clock, onError: (e, h) => errors.push([e, h]) });
      const log: number[] = [];
      const bad = wheel.schedule(5, () => {
        throw new Error('boom');
      });
      wheel.schedule(5, () => log.push(1));
      wheel.schedule(6, () => log.push(2));
      clock.advance(10);
      expect(log).toEqual([1, 2]);
      expect(errors).toHaveLength(1);
      expect((errors[0][0] as Error).message).toBe('boom');
      expect(errors[0][1]).toBe(bad);
    });

    it('rethrows from advance() without onError, after every due callback has run', () => {
      const { clock, wheel } = manualWheel();
      const log: number[] = [];
      wheel.schedule(5, () => {
        throw new Error('first');
      });
      wheel.schedule(5, () => log.push(5));
      wheel.schedule(7, () => {
        throw new Error('second');
      });
      wheel.schedule(9, () => log.push(9));
      let thrown: unknown;
      try {
        clock.advance(10);
      } catch (error) {
        thrown = error;
      }
      expect(log).toEqual([5, 9]);
      expect(thrown).toBeInstanceOf(AggregateError);
      expect((thrown as AggregateError).errors.map((e: Error) => e.message)).toEqual(['first', 'second']);
      expect(clock.now()).toBe(10);
    });

    it('stops a timer that re-arms itself for the current tick forever, naming the loop (sinon: "aborting after N timers")', () => {
      const { clock, wheel } = manualWheel();
      let runs = 0;
      const h = wheel.schedule(1, (self) => {
        runs++;
        self.refresh(0);
      });
      expect(() => clock.advance(1)).toThrow(
        /Aborting after 1000 rounds of timers re-arming for the same tick \(1 ms\), assuming an infinite loop/,
      );
      expect(runs).toBe(1000);
      expect(h.state).toBe('cancelled');
      clock.advance(1000);
      expect(runs).toBe(1000);
    });

    it('gives the loop error to onError, never an AggregateError of callbacks that did not throw', () => {
      const clock = new ManualClock(0);
      const errors: unknown[] = [];
      const wheel = new TimingWheel({ clock, onError: (error) => errors.push(error), loopLimit: 50 });
      let runs = 0;
      wheel.schedule(0, (self) => {
        runs++;
        self.refresh(0);
      });
      expect(() => clock.advance(1000)).not.toThrow();
      expect(runs).toBe(50);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(TimerLoopError);
      expect((errors[0] as TimerLoopError).loopLimit).toBe(50);
    });

    it("throws the loop error with the callbacks' own errors as its cause", () => {
      const { clock, wheel } = manualWheel();
      const boom = new Error('boom');
      wheel.schedule(1, () => {
        throw boom;
      });
      wheel.schedule(1, (self) => self.refresh(0));
      let thrown: unknown;
      try {
        clock.advance(1);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(TimerLoopError);
      expect((thrown as Error).cause).toBe(boom);
    });

    it('rejects a loopLimit that is not a positive integer, naming it', () => {
      expect(() => new TimingWheel({ clock: new ManualClock(), loopLimit: 0 })).toThrow(
        /loopLimit must be an integer >= 1, got 0/,
      );
      expect(() => new TimingWheel({ clock: new ManualClock(), loopLimit: 1.5 })).toThrow(RangeError);
    });
  });

  describe('lazy refresh and the driver', () => {
    it('does not sleep past a later bucket when a lazily pushed timer sits in the first one', () => {
      // Found by the property test: tick 3 ms, 4 buckets a level, after a long advance.
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock, tickMs: 3, wheelSize: 4 });
      clock.advance(2_529_578_943);
      const fired: Array<[string, number, number]> = [];
      const pushed = wheel.schedule(28_735, (h) => fired.push(['pushed', h.expiresAt, clock.now()]));
      wheel.schedule(0, () => pushed.refresh(77_890));
      wheel.schedule(77_887, (h) => fired.push(['other', h.expiresAt, clock.now()]));
      while (clock.runNext());
      expect(fired).toEqual([
        ['other', 2_529_656_832, 2_529_656_832],
        ['pushed', 2_529_656_835, 2_529_656_835],
      ]);
    });
  });
});
