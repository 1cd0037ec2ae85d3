import { describe, expect, it } from 'vitest';
import { ManualClock, TimerLoopError, TimingWheel, type TimerHandle } from '../src/index.js';

function manualWheel(options: { tickMs?: number; wheelSize?: number; start?: number } = {}) {
  const clock = new ManualClock(options.start ?? 0);
  const wheel = new TimingWheel({ clock, tickMs: options.tickMs, wheelSize: options.wheelSize });
  return { clock, wheel };
}

const YEAR_MS = 365 * 24 * 3600 * 1000;

describe('TimingWheel', () => {
  describe('#constructor', () => {
    it('rejects a wheelSize that is not a power of two, naming it and the value', () => {
      expect(() => new TimingWheel({ wheelSize: 48 })).toThrow(RangeError);
      expect(() => new TimingWheel({ wheelSize: 48 })).toThrow(/wheelSize.*48/);
      expect(() => new TimingWheel({ wheelSize: 1 })).toThrow(/wheelSize/);
      expect(() => new TimingWheel({ wheelSize: '64' as unknown as number })).toThrow(TypeError);
    });

    it('rejects a tickMs that is not a positive finite number', () => {
      expect(() => new TimingWheel({ tickMs: 0 })).toThrow(/tickMs.*0/);
      expect(() => new TimingWheel({ tickMs: -1 })).toThrow(RangeError);
      expect(() => new TimingWheel({ tickMs: Number.NaN })).toThrow(/tickMs.*NaN/);
    });

    it('rejects a clock without now() and an onError that is not a function', () => {
      expect(() => new TimingWheel({ clock: {} as never })).toThrow(/clock/);
      expect(() => new TimingWheel({ onError: 5 as never })).toThrow(/onError.*5/);
    });
  });

  describe('#schedule', () => {
    it('fires each timer exactly at its expiry, in expiry order', () => {
      const { clock, wheel } = manualWheel();
      const seen: Array<[number, number, number]> = [];
      for (const delay of [5, 10_000, 3, 64, 4096, 0, 65, 262_144]) {
        wheel.schedule(delay, (h) => seen.push([delay, clock.now(), h.expiresAt]));
      }
      clock.advance(300_000);
      expect(seen.map(([delay]) => delay)).toEqual([0, 3, 5, 64, 65, 4096, 10_000, 262_144]);
      for (const [delay, now, expiresAt] of seen) {
        expect(now).toBe(delay);
        expect(expiresAt).toBe(delay);
      }
    });

    it('never fires early and at most one tick late with a coarse tick', () => {
      const { clock, wheel } = manualWheel({ tickMs: 10 });
      const fired: Array<[number, number]> = [];
      for (const delay of [1, 9, 10, 11, 25, 99, 100, 1234]) {
        const h = wheel.schedule(delay, () => fired.push([h.expiresAt, clock.now()]));
      }
      clock.advance(2000);
      expect(fired).toHaveLength(8);
      for (const [expiresAt, now] of fired) {
        expect(now).toBeGreaterThanOrEqual(expiresAt);
        expect(now - expiresAt).toBeLessThan(10);
        expect(now % 10).toBe(0);
      }
    });

    it('fires timers due in the same tick in the order they were scheduled', () => {
      const { clock, wheel } = manualWheel();
      const order: string[] = [];
      wheel.schedule(100, () => order.push('a'));
      wheel.schedule(5000, () => order.push('far'));
      wheel.schedule(100, () => order.push('b'));
      clock.advance(50);
      wheel.schedule(50, () => order.push('c'));
      clock.advance(5000);
      expect(order).toEqual(['a', 'b', 'c', 'far']);
    });

    it('rounds fractional delays up to the next whole millisecond', () => {
      const { clock, wheel } = manualWheel();
      const h = wheel.schedule(2.2, () => undefined);
      expect(h.expiresAt).toBe(3);
      clock.advance(2.5);
      expect(h.pending).toBe(true);
      clock.advance(0.5);
      expect(h.pending).toBe(false);
    });

    it.each([
      [-5, RangeError, /delayMs must be a finite number >= 0, got -5/],
      [Number.NaN, RangeError, /delayMs.*NaN/],
      [Infinity, RangeError, /delayMs.*Infinity/],
      ['10', TypeError, /delayMs.*"10"/],
      [undefined, TypeError, /delayMs.*undefined/],
    ])('throws for delay %s and leaves the wheel unchanged', (delay, type, message) => {
      const { wheel } = manualWheel();
      wheel.schedule(10, () => undefined);
      const before = wheel.stats();
      expect(() => wheel.schedule(delay as number, () => undefined)).toThrow(type);
      expect(() => wheel.schedule(delay as number, () => undefined)).toThrow(message);
      expect(wheel.stats()).toEqual(before);
    });

    it('throws a TypeError for a callback that is not a function', () => {
      const { wheel } = manualWheel();
      expect(() => wheel.schedule(10, 'nope' as never)).toThrow(/callback must be a function, got "nope"/);
      expect(wheel.size).toBe(0);
    });

    it('throws after close()', () => {
      const { wheel } = manualWheel();
      wheel.close();
      expect(() => wheel.schedule(1, () => undefined)).toThrow(/closed/);
    });
  });

  describe('#scheduleAt', () => {
    it('fires at an absolute time on the clock', () => {
      const { clock, wheel } = manualWheel({ start: 1000 });
      let at = -1;
      wheel.scheduleAt(1500, () => (at = clock.now()));
      clock.advance(499);
      expect(at).toBe(-1);
      clock.advance(1);
      expect(at).toBe(1500);
    });

    it('fires a time in the past on the next pass', () => {
      const { clock, wheel } = manualWheel({ start: 1000 });
      let at = -1;
      wheel.scheduleAt(10, () => (at = clock.now()));
      clock.advance(0);
      expect(at).toBe(1000);
    });

    it('rejects a non-finite time', () => {
      const { wheel } = manualWheel();
      expect(() => wheel.scheduleAt(Number.NaN, () => undefined)).toThrow(/timeMs.*NaN/);
    });
  });

  describe('long delays', () => {
    it('fires a timer 100 years out at its exact expiry, past setTimeout\'s 2^31-1 ms limit', () => {
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

  describe('callbacks', () => {
    it('may schedule, cancel and refresh other timers, and the changes take effect in the same advance', () => {
      const { clock, wheel } = manualWheel();
      const log: string[] = [];
      const victim = wheel.schedule(20, () => log.push('victim'));
      const pushed = wheel.schedule(15, () => log.push(`pushed@${clock.now()}`));
      wheel.schedule(10, () => {
        log.push('first');
        victim.cancel();
        pushed.refresh(30); // now 10 + 30 = 40
        wheel.schedule(5, () => log.push(`child@${clock.now()}`));
        wheel.schedule(0, () => log.push(`same-tick@${clock.now()}`));
      });
      clock.advance(100);
      expect(log).toEqual(['first', 'same-tick@10', 'child@15', 'pushed@40']);
    });

    it('may cancel a timer due in the same tick before it runs', () => {
      const { clock, wheel } = manualWheel();
      const log: string[] = [];
      let second: TimerHandle | undefined;
      wheel.schedule(10, () => {
        log.push('first');
        expect(second!.cancel()).toBe(true);
      });
      second = wheel.schedule(10, () => log.push('second'));
      clock.advance(10);
      expect(log).toEqual(['first']);
      expect(wheel.size).toBe(0);
    });

    it('sees its own handle as no longer pending, unless it refreshes it', () => {
      const { clock, wheel } = manualWheel();
      const states: Array<[boolean, string]> = [];
      let runs = 0;
      const h = wheel.schedule(10, (self) => {
        states.push([self.pending, self.state]);
        expect(self.cancel()).toBe(false);
        if (++runs < 3) {
          self.refresh();
          states.push([self.pending, self.state]);
        }
      });
      clock.advance(100);
      expect(runs).toBe(3);
      expect(states).toEqual([
        [false, 'firing'],
        [true, 'pending'],
        [false, 'firing'],
        [true, 'pending'],
        [false, 'firing'],
      ]);
      expect(h.state).toBe('fired');
    });

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
      expect((errors[0]![0] as Error).message).toBe('boom');
      expect(errors[0]![1]).toBe(bad);
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
      expect(() => clock.advance(1)).toThrow(/Aborting after 1000 rounds of timers re-arming for the same tick \(1 ms\), assuming an infinite loop/);
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

    it('throws the loop error with the callbacks\' own errors as its cause', () => {
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
      expect(() => new TimingWheel({ clock: new ManualClock(), loopLimit: 0 })).toThrow(/loopLimit must be an integer >= 1, got 0/);
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

  describe('#size and #stats', () => {
    it('counts pending, scheduled, fired, cancelled, cascades and lazy re-filings', () => {
      const { clock, wheel } = manualWheel();
      const a = wheel.schedule(10, () => undefined);
      const b = wheel.schedule(20, () => undefined);
      wheel.schedule(5000, () => undefined);
      expect(wheel.size).toBe(3);
      a.cancel();
      b.refresh(500); // later: stays in its bucket, re-filed when that comes up
      clock.advance(10_000);
      expect(wheel.stats()).toMatchObject({ pending: 0, scheduled: 3, fired: 2, cancelled: 1, refiled: 1 });
      expect(wheel.stats().cascaded).toBeGreaterThan(0);
    });
  });

  describe('#close', () => {
    it('cancels everything, and a second close does nothing', () => {
      const { clock, wheel } = manualWheel();
      const handles = [1, 100, 100_000].map((d) => wheel.schedule(d, () => expect.unreachable()));
      wheel.close();
      wheel.close();
      expect(wheel.size).toBe(0);
      expect(handles.every((h) => h.state === 'cancelled')).toBe(true);
      clock.advance(1_000_000);
      expect(wheel.isClosed).toBe(true);
    });

    it('cancels the rest of a due batch when a callback closes the wheel', () => {
      const { clock, wheel } = manualWheel();
      const log: string[] = [];
      wheel.schedule(5, () => {
        log.push('closer');
        wheel.close();
      });
      const sameTick = wheel.schedule(5, () => log.push('same tick'));
      clock.advance(10);
      expect(log).toEqual(['closer']);
      expect(sameTick.state).toBe('cancelled');
      expect(wheel.size).toBe(0);
    });

    it('is what `using` calls', () => {
      const clock = new ManualClock(0);
      let escaped: TimingWheel;
      {
        using wheel = new TimingWheel({ clock });
        wheel.schedule(5, () => expect.unreachable());
        escaped = wheel;
      }
      expect(escaped.isClosed).toBe(true);
      clock.advance(10);
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
