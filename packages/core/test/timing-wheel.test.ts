import { describe, expect, it } from 'vitest';
import {
  createDeadline,
  currentDeadline,
  isTimingWheel,
  MAX_DELAY_MS,
  ManualClock,
  TimingWheel,
  withDeadline,
} from '../src/index.js';
import { expectUnknownKey } from '../../../tests/helpers/bad-options.js';

function manualWheel(options: { tickMs?: number; wheelSize?: number; start?: number } = {}) {
  const clock = new ManualClock(options.start ?? 0);
  const wheel = new TimingWheel({ clock, tickMs: options.tickMs, wheelSize: options.wheelSize });
  return { clock, wheel };
}

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

    it('refuses an unknown option, naming the package and the key, as the adapters do', () => {
      expectUnknownKey(() => new TimingWheel({ tickMS: 50 } as never), '@tickwheel/core', 'tickMS');
      expect(() => new TimingWheel({ tickMS: 50 } as never)).toThrow(
        '@tickwheel/core: unknown option tickMS; known options: tickMs, wheelSize, clock, onError, loopLimit, yieldToIoWhenLateMs',
      );
      expectUnknownKey(() => new TimingWheel({ tickMs: 5, bogus: 1 } as never), '@tickwheel/core', 'bogus');
      expect(() => new TimingWheel(null as never)).toThrow('@tickwheel/core: options must be an object, got null');
      expect(() => new TimingWheel([] as never)).toThrow(TypeError);
      expect(new TimingWheel({ tickMs: undefined, clock: new ManualClock() }).tickMs).toBe(1);
    });

    it('names the package, the option and the value in every option error', () => {
      const pkg = '@tickwheel/core';
      expect(() => new TimingWheel({ tickMs: 0 })).toThrow(`${pkg}: tickMs must be a finite number > 0, got 0`);
      expect(() => new TimingWheel({ tickMs: '1' as never })).toThrow(TypeError);
      expect(() => new TimingWheel({ wheelSize: 48 })).toThrow(
        `${pkg}: wheelSize must be a power of two from 2 to 65536, got 48`,
      );
      expect(() => new TimingWheel({ loopLimit: 0 })).toThrow(`${pkg}: loopLimit must be an integer >= 1, got 0`);
      expect(() => new TimingWheel({ loopLimit: 1.5 })).toThrow(RangeError);
      expect(() => new TimingWheel({ yieldToIoWhenLateMs: -1 })).toThrow(`${pkg}: yieldToIoWhenLateMs must be`);
      expect(() => new TimingWheel({ clock: 5 as never })).toThrow(
        `${pkg}: clock must be an object with a now() method, got 5`,
      );
      expect(() => new TimingWheel({ onError: 5 as never })).toThrow(`${pkg}: onError must be a function, got 5`);
      expect(new TimingWheel({ yieldToIoWhenLateMs: Infinity, clock: new ManualClock() }).isClosed).toBe(false);
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
      wheel.schedule(10, () => {
        log.push('first');
        expect(second.cancel()).toBe(true);
      });
      const second = wheel.schedule(10, () => log.push('second'));
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

  describe('delays at the edges: the same rule in schedule, scheduleAt, refresh and deadlines', () => {
    const honoured = [0, 0.5, 2 ** 31 - 1, 2 ** 31, 2 ** 53 - 1, MAX_DELAY_MS];
    const never = [2 ** 53 + 2, 1e300, Number.MAX_VALUE];

    it.each(honoured)('honours %d ms exactly through every entry point', (delay) => {
      const { clock, wheel } = manualWheel();
      const firedAt: Record<string, number> = {};
      const record = (name: string) => () => (firedAt[name] = clock.now());
      wheel.schedule(delay, record('schedule'));
      wheel.scheduleAt(delay, record('scheduleAt'));
      wheel.schedule(5, record('refresh')).refresh(delay);
      const deadline = createDeadline(delay, { wheel, onAbort: record('deadline') });
      expect(deadline.expiresAt).toBe(delay);
      const due = Math.ceil(delay);
      if (due > 0) clock.advance(due - 1);
      expect(Object.keys(firedAt).filter((k) => firedAt[k] < due)).toEqual([]);
      clock.advance(due === 0 ? 0 : 1);
      expect(firedAt).toEqual({ schedule: due, scheduleAt: due, refresh: due, deadline: due });
    });

    it.each(never)('makes %d ms a timer that never fires, at no cost, through every entry point', (delay) => {
      const { clock, wheel } = manualWheel();
      let fired = 0;
      const handles = [
        wheel.schedule(delay, () => fired++),
        wheel.scheduleAt(delay, () => fired++),
        wheel.schedule(5, () => fired++).refresh(delay),
      ];
      const deadline = createDeadline(delay, { wheel });
      expect(handles.map((h) => h.expiresAt)).toEqual([Infinity, Infinity, Infinity]);
      expect(handles.every((h) => h.pending && h.remaining() === Infinity)).toBe(true);
      expect(wheel.size).toBe(4);
      // No wake-up, ever, but the one at 5 ms where the lazily refreshed timer still sat.
      while (clock.runNext());
      expect(wheel.stats().wakeups).toBe(1);
      expect(clock.now()).toBe(5);
      clock.advance(1e300);
      expect(fired).toBe(0);
      expect(deadline.signal.aborted).toBe(false);
      expect(handles.map((h) => h.cancel())).toEqual([true, true, true]);
      deadline.dispose();
      expect(wheel.size).toBe(0);
      // and a timer that never fires can be brought back
      const again = manualWheel();
      const h = again.wheel.schedule(delay, () => fired++);
      h.refresh(10);
      again.clock.advance(10);
      expect(fired).toBe(1);
    });

    it('withDeadline applies the same rule', async () => {
      const { clock, wheel } = manualWheel();
      const seen = await withDeadline(Number.MAX_VALUE, () => Promise.resolve(currentDeadline()!.remaining()), {
        wheel,
      });
      expect(seen).toBeGreaterThan(2 ** 53);
      expect(clock.runNext()).toBe(false);
    });

    it('returns at once for every one of them, on the system clock too', () => {
      const wheel = new TimingWheel();
      const started = performance.now();
      const handles = [...honoured, ...never].map((d) => wheel.schedule(d, () => undefined).unref());
      for (const h of handles) h.refresh(Number.MAX_VALUE);
      expect(performance.now() - started).toBeLessThan(1_000);
      wheel.close();
    });
  });

  describe('fractional ticks', () => {
    it.each([0.3, 0.7, 1000 / 60, 0.1])(
      'with tickMs %d advance() terminates, never early, at most one tick late',
      (tickMs) => {
        const { clock, wheel } = manualWheel({ tickMs });
        const fired: Array<[number, number, number]> = [];
        for (const d of [0, 0.1, 0.3, 0.7, 1, 2.5, 16.6, 100, 1000, 12_345.6, 2 ** 31]) {
          const e = clock.now() + d;
          wheel.schedule(d, (h) => fired.push([e, h.expiresAt, clock.now()]));
        }
        clock.advance(2 ** 31 + 1_000);
        expect(fired).toHaveLength(11);
        for (const [e, expiresAt, now] of fired) {
          expect(now).toBe(expiresAt);
          expect(expiresAt).toBeGreaterThanOrEqual(e - e * 2 ** -29);
          expect(expiresAt - e).toBeLessThan(tickMs);
        }
      },
    );

    it('fires each timer of a 60 Hz loop on its frame, frame after frame', () => {
      const frameMs = 1000 / 60;
      const { clock, wheel } = manualWheel({ tickMs: frameMs });
      const fired: Array<[string, number]> = [];
      let frame = 0;
      const at = (frames: number, name: string) => wheel.schedule(frames * frameMs, () => fired.push([name, frame]));
      at(1, 'next frame');
      at(5, 'five frames');
      at(60, 'one second');
      at(3600, 'one minute');
      for (frame = 1; frame <= 4000; frame++) {
        if (frame === 100) at(7, 'seven frames from 100');
        if (frame === 2500) at(1, 'next frame from 2500');
        clock.advance(frameMs);
        if (frame === 100) fired.push(['frame 100 passed', frame]);
      }
      expect(fired).toEqual([
        ['next frame', 1],
        ['five frames', 5],
        ['one second', 60],
        ['frame 100 passed', 100],
        ['seven frames from 100', 106],
        ['next frame from 2500', 2500],
        ['one minute', 3600],
      ]);
    });
  });

  describe('same-time order', () => {
    it('fires a timer refreshed to a later time after those already due then (as Node does)', () => {
      const { clock, wheel } = manualWheel();
      const order: string[] = [];
      const refreshed = wheel.schedule(10, () => order.push('refreshed'));
      wheel.schedule(20, () => order.push('a'));
      clock.advance(5);
      refreshed.refresh(15);
      clock.advance(20);
      expect(order).toEqual(['a', 'refreshed']);
    });

    it('fires a timer scheduled between a lazy refresh and its old slot before it (unlike Node)', () => {
      const { clock, wheel } = manualWheel();
      const order: string[] = [];
      const refreshed = wheel.schedule(10, () => order.push('refreshed'));
      refreshed.refresh(20);
      clock.advance(5);
      wheel.schedule(15, () => order.push('scheduled after the refresh'));
      clock.advance(20);
      expect(order).toEqual(['scheduled after the refresh', 'refreshed']);
    });

    it('fires a timer refreshed to an earlier time after those already due then', () => {
      const { clock, wheel } = manualWheel();
      const order: string[] = [];
      const h = wheel.schedule(50, () => order.push('refreshed'));
      wheel.schedule(10, () => order.push('a'));
      h.refresh(10);
      clock.advance(10);
      expect(order).toEqual(['a', 'refreshed']);
    });
  });

  describe('isTimingWheel', () => {
    it('recognises wheels by their brand, not by their prototype', () => {
      const { wheel } = manualWheel();
      expect(isTimingWheel(wheel)).toBe(true);
      expect(isTimingWheel(Object.create(wheel) as unknown)).toBe(true);
      for (const other of [undefined, null, {}, { schedule() {} }, 'wheel', TimingWheel])
        expect(isTimingWheel(other)).toBe(false);
      expect(isTimingWheel({ [Symbol.for('@tickwheel/core.TimingWheel@0')]: true })).toBe(true);
    });
  });
});
