import { describe, expect, it } from 'vitest';
import type { WakeupDriver } from '../src/clocks/clock.js';
import { ManualClock, TimerLoopError, TimingWheel } from '../src/index.js';
import { SetWheel, type ExpirySink } from '../src/timer-set/set-wheel.js';
import { StackSlab } from '../src/timer-set/slab.js';

/** One of core's two wheels on a ManualClock, its driver's armings recorded. */
interface Subject {
  readonly clock: ManualClock;
  /** Every time the wheel asked its driver to wake it at. */
  readonly arms: number[];
  /** Schedules a timer `ms` from now that runs `onFire` when it fires. */
  add(ms: number, onFire?: () => void): void;
}

/** Wraps `driver`, recording every `arm`. */
function recording(driver: WakeupDriver, arms: number[]): WakeupDriver {
  return {
    arm: (atMs) => {
      arms.push(atMs);
      driver.arm(atMs);
    },
    disarm: () => driver.disarm(),
    setRef: (ref) => driver.setRef(ref),
    close: () => driver.close(),
  };
}

/** The core wheel: linked handles. */
function timingWheel(loopLimit = 1000): Subject {
  const clock = new ManualClock(0);
  const arms: number[] = [];
  const recordingClock = {
    now: () => clock.now(),
    createDriver: (wake: () => void) => recording(clock.createDriver(wake), arms),
  };
  const wheel = new TimingWheel({ clock: recordingClock, loopLimit });
  return { clock, arms, add: (ms, onFire) => void wheel.schedule(ms, () => onFire?.()) };
}

/** A TimerSet's wheel: slab indices, its expiries told to a sink. */
function setWheel(loopLimit = 1000): Subject {
  const clock = new ManualClock(0);
  const arms: number[] = [];
  const slab = new StackSlab();
  const callbacks = new Map<number, (() => void) | undefined>();
  const sink: ExpirySink = {
    fire(s) {
      const onFire = callbacks.get(s);
      slab.free(s);
      onFire?.();
    },
    cancel(s) {
      slab.free(s);
    },
  };
  const wheel = new SetWheel(slab, clock, (wake) => recording(clock.createDriver(wake), arms), sink, loopLimit);
  return {
    clock,
    arms,
    add(ms, onFire) {
      const s = slab.alloc(0);
      callbacks.set(s, onFire);
      wheel.schedule(s, ms);
    },
  };
}

// The two wheels once drifted apart on both points below, when each had its own copy of the algorithm.
describe.each([
  ['TimingWheel', timingWheel],
  ['SetWheel', setWheel],
])('WheelEngine under %s', (_name, build) => {
  describe('#rearm', () => {
    it("wakes at a higher level's earliest timer, not at its bucket's start", () => {
      const subject = build();
      const fired: number[] = [];
      subject.add(10, () => fired.push(subject.clock.now()));
      // 70 000 ms: level 2 of a 64-slot wheel (bucket from 65 536), level 2 of a 256-slot one (from 65 536).
      subject.add(70_000, () => fired.push(subject.clock.now()));
      subject.clock.advance(100_000);
      expect(fired).toEqual([10, 70_000]);
      expect(subject.arms).toEqual([10, 70_000]);
    });

    it('arms at once for a timer filed sooner than the coarse timer it waits for', () => {
      const subject = build();
      const fired: number[] = [];
      subject.add(1, () => fired.push(subject.clock.now()));
      subject.add(70_000, () => fired.push(subject.clock.now()));
      subject.clock.advance(1);
      // Filed after the pass, in a finer bucket than the 70 s timer's: it is armed for at once.
      subject.add(200, () => fired.push(subject.clock.now()));
      subject.clock.advance(100_000);
      expect(fired).toEqual([1, 201, 70_000]);
      expect(subject.arms).toEqual([1, 70_000, 201, 70_000]);
    });
  });

  describe('#wake', () => {
    it("throws one TimerLoopError with a callback's error as its cause when a runaway stop and a throw share a pass", () => {
      const subject = build(20);
      const boom = new Error('boom');
      subject.add(5, () => {
        throw boom;
      });
      const again = (): void => subject.add(0, again);
      subject.add(5, again);
      let thrown: unknown;
      try {
        subject.clock.advance(5);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(TimerLoopError);
      expect(thrown).toMatchObject({ loopLimit: 20, atMs: 5, cancelled: 1 });
      expect((thrown as TimerLoopError).cause).toBe(boom);
    });
  });
});
