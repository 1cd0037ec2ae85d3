import { describe, expect, it } from 'vitest';
import { TimingWheel } from '../src/index.js';
import type { DrivingClock, WakeupDriver } from '../src/internal.js';

/** A clock standing still at 0 whose driver records what the wheel tells it. */
function recordingWheel() {
  const calls: string[] = [];
  let wake: () => void = () => undefined;
  const driver: WakeupDriver = {
    arm: (atMs) => calls.push(`arm ${atMs}`),
    disarm: () => calls.push('disarm'),
    setRef: (ref) => calls.push(`ref ${ref}`),
    close: () => calls.push('close'),
  };
  let now = 0;
  const clock: DrivingClock = {
    now: () => now,
    createDriver: (w) => {
      wake = w;
      return driver;
    },
  };
  const wheel = new TimingWheel({ clock });
  const advanceTo = (ms: number) => {
    now = ms;
    wake();
  };
  return { wheel, calls, advanceTo };
}

describe('wheel filing', () => {
  describe('arming', () => {
    it('arms the driver only for a timer sooner than the armed one, and disarms when the last is cancelled', () => {
      const { wheel, calls } = recordingWheel();
      const a = wheel.schedule(100, () => undefined);
      const b = wheel.schedule(200, () => undefined);
      const c = wheel.schedule(50, () => undefined);
      expect(calls).toEqual(['arm 100', 'arm 50']);
      a.cancel();
      c.cancel();
      expect(calls).toEqual(['arm 100', 'arm 50']);
      b.cancel();
      expect(calls).toEqual(['arm 100', 'arm 50', 'disarm']);
    });
  });

  describe('ref state', () => {
    it('tells the driver to let the process exit exactly while every pending timer is unref’ed', () => {
      const { wheel, calls } = recordingWheel();
      const a = wheel.schedule(100, () => undefined).unref();
      expect(calls.filter((c) => c.startsWith('ref'))).toEqual(['ref false']);
      const b = wheel.schedule(100, () => undefined);
      expect(calls.filter((c) => c.startsWith('ref'))).toEqual(['ref false', 'ref true']);
      b.cancel();
      expect(calls.filter((c) => c.startsWith('ref'))).toEqual(['ref false', 'ref true', 'ref false']);
      a.ref();
      expect(calls.filter((c) => c.startsWith('ref'))).toEqual(['ref false', 'ref true', 'ref false', 'ref true']);
    });

    it('counts an unref’ed handle re-armed by refresh() after it fired, and forgets it when it fires again', () => {
      const { wheel, calls, advanceTo } = recordingWheel();
      const a = wheel.schedule(10, () => undefined).unref();
      const keep = wheel.schedule(1_000, () => undefined);
      advanceTo(10);
      expect(a.state).toBe('fired');
      keep.cancel();
      a.refresh(); // pending again, still unref'ed: the only pending timer
      expect(a.hasRef()).toBe(false);
      expect(calls.filter((c) => c.startsWith('ref')).at(-1)).toBe('ref false');
      advanceTo(20);
      expect(a.state).toBe('fired');
      const b = wheel.schedule(5, () => undefined);
      expect(b.hasRef()).toBe(true);
      expect(calls.filter((c) => c.startsWith('ref')).at(-1)).toBe('ref true');
    });
  });

  describe('counters', () => {
    it('keeps stats() right through schedule, cancel, fire and re-arm', () => {
      const { wheel, advanceTo } = recordingWheel();
      const a = wheel.schedule(10, () => undefined);
      const b = wheel.schedule(20, () => undefined);
      wheel.schedule(30, () => undefined);
      b.cancel();
      b.cancel();
      advanceTo(10);
      a.refresh();
      b.refresh();
      expect(wheel.stats()).toMatchObject({ pending: 3, scheduled: 5, fired: 1, cancelled: 1 });
      advanceTo(100);
      expect(wheel.stats()).toMatchObject({ pending: 0, scheduled: 5, fired: 4, cancelled: 1 });
      expect(wheel.size).toBe(0);
    });
  });
});
