import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/index.js';
import { SetWheel } from '../src/timer-set-wheel.js';

/** The set's wheel on a ManualClock, recording [clock time, index] for every timer that fires. */
class RecordingWheel extends SetWheel {
  readonly fired: [number, number][] = [];
  onFire: ((s: number) => void) | undefined;

  constructor(readonly manual: ManualClock) {
    super(manual, (wake) => manual.createDriver(wake));
  }

  add(ms: number): number {
    const s = this.allocStack(0);
    this.schedule(s, ms);
    return s;
  }

  move(s: number, ms: number): void {
    this.reschedule(s, ms);
  }

  remove(s: number): void {
    this.unschedule(s);
    this.freeStack(s);
  }

  drop(s: number): void {
    this.discard(s);
  }

  left(s: number): number {
    return this.remainingOf(s);
  }

  capacity(): number {
    return this.w.length / 8;
  }

  protected fire(s: number): void {
    this.fired.push([this.manual.now(), s]);
    this.freeStack(s);
    this.onFire?.(s);
  }
}

describe('SetWheel', () => {
  it('fires every timer at its exact due time, in due order, across levels', () => {
    const clock = new ManualClock(0);
    const wheel = new RecordingWheel(clock);
    // Level 0 (< 256 ms), level 1 (< 65.5 s), level 2 and level 3 (4.3 h).
    const delays = [20_000_000, 70_000, 300, 1, 255, 256, 65_535, 65_536];
    const ids = delays.map((ms) => wheel.add(ms));
    clock.advance(25_000_000);
    const expected = delays.map((ms, i) => [ms, ids[i]] as [number, number]).sort((a, b) => a[0] - b[0]);
    expect(wheel.fired).toEqual(expected);
    expect(wheel.pending).toBe(0);
  });

  it('fires timers due on the same tick in the order they were filed', () => {
    const clock = new ManualClock(0);
    const wheel = new RecordingWheel(clock);
    const a = wheel.add(10_000);
    const b = wheel.add(10_000);
    clock.advance(5_000);
    const c = wheel.add(5_000);
    clock.advance(5_000);
    expect(wheel.fired.map(([, s]) => s)).toEqual([a, b, c]);
  });

  it('moves a timer later in place and earlier at once, never early', () => {
    const clock = new ManualClock(0);
    const wheel = new RecordingWheel(clock);
    const later = wheel.add(100);
    const earlier = wheel.add(90_000);
    wheel.move(later, 5_000);
    wheel.move(earlier, 50);
    expect(wheel.left(later)).toBe(5_000);
    clock.advance(10_000);
    expect(wheel.fired).toEqual([
      [50, earlier],
      [5_000, later],
    ]);
  });

  it('stops firing a removed timer and gives the wake-up back when empty', () => {
    const clock = new ManualClock(0);
    const wheel = new RecordingWheel(clock);
    const s = wheel.add(100);
    wheel.remove(s);
    expect(wheel.pending).toBe(0);
    clock.advance(1_000);
    expect(wheel.fired).toEqual([]);
  });

  it('never fires a discarded timer, frees its index at once and gives the wake-up back when empty', () => {
    const clock = new ManualClock(0);
    const wheel = new RecordingWheel(clock);
    const keep = wheel.add(300);
    const other = wheel.add(300);
    const gone = wheel.add(300);
    wheel.drop(gone);
    expect([wheel.pending, wheel.stale]).toEqual([2, 1]);
    // Its index is free already: the next timer takes it, and the stale entry does not fire it.
    const next = wheel.add(300);
    expect(next).toBe(gone);
    clock.advance(300);
    expect(wheel.fired).toEqual([
      [300, keep],
      [300, other],
      [300, next],
    ]);
    expect(wheel.stale).toBe(0);
    const far = wheel.add(70_000);
    wheel.drop(far);
    expect([wheel.pending, wheel.stale]).toEqual([0, 0]);
    expect(clock.runNext()).toBe(false);
  });

  it('keeps stale entries within twice the live ones (plus a slack), whatever the pattern', () => {
    const clock = new ManualClock(0);
    const wheel = new RecordingWheel(clock);
    const live = Array.from({ length: 100 }, () => wheel.add(60_000));
    let most = 0;
    for (let i = 0; i < 10_000; i++) {
      wheel.drop(wheel.add(60_000));
      most = Math.max(most, wheel.stale);
    }
    expect(wheel.pending).toBe(live.length);
    expect(most).toBeLessThanOrEqual(2 * live.length + 1_025);
    // 101 timers live at most: freed indices are reused, the slab doubled from 8 to 128 only.
    expect(wheel.capacity()).toBe(128);
    clock.advance(60_000);
    expect(wheel.fired.map(([, s]) => s)).toEqual(live);
    expect(wheel.stale).toBe(0);
  });

  it('fires a timer moved earlier once, at its new time, though its old entry is still filed', () => {
    const clock = new ManualClock(0);
    const wheel = new RecordingWheel(clock);
    const s = wheel.add(500);
    wheel.move(s, 100);
    wheel.onFire = (fired) => {
      if (clock.now() === 100) wheel.add(600);
      expect(fired).toBe(s);
    };
    clock.advance(1_000);
    expect(wheel.fired).toEqual([
      [100, s],
      [700, s],
    ]);
  });

  it('fires a timer set for the current tick from a callback in the same pass', () => {
    const clock = new ManualClock(0);
    const wheel = new RecordingWheel(clock);
    let again = 3;
    wheel.onFire = () => {
      if (again-- > 0) wheel.add(0);
    };
    wheel.add(10);
    clock.advance(10);
    expect(wheel.fired.map(([at]) => at)).toEqual([10, 10, 10, 10]);
  });

  it('does not hang on a timer that re-arms itself for the current tick forever: time moves on, with an error', () => {
    const clock = new ManualClock(0);
    const wheel = new RecordingWheel(clock);
    let stop = false;
    wheel.onFire = () => {
      if (!stop) wheel.add(0);
    };
    wheel.add(5);
    expect(() => clock.advance(5)).toThrow(/kept re-arming for game tick 5 10000 times/);
    stop = true;
    const count = wheel.fired.length;
    clock.advance(1);
    expect(wheel.fired.length).toBe(count + 1);
    expect(wheel.fired.at(-1)![0]).toBe(6);
  });

  it('fires exactly past 2^31 ticks', () => {
    const clock = new ManualClock(0);
    const wheel = new RecordingWheel(clock);
    const far = 2 ** 31 + 12_345;
    const s = wheel.add(far);
    clock.advance(far - 1);
    expect(wheel.fired).toEqual([]);
    clock.advance(1);
    expect(wheel.fired).toEqual([[far, s]]);
    const t = wheel.add(1_000);
    clock.advance(1_000);
    expect(wheel.fired.at(-1)).toEqual([far + 1_000, t]);
  });

  it('grows past its first capacity and reuses freed indices before growing again', () => {
    const clock = new ManualClock(0);
    const wheel = new RecordingWheel(clock);
    const ids = Array.from({ length: 5_000 }, (_, i) => wheel.add(1 + (i % 3_000)));
    expect(new Set(ids).size).toBe(5_000);
    const capacity = wheel.capacity();
    clock.advance(3_000);
    expect(wheel.fired).toHaveLength(5_000);
    for (let i = 0; i < 5_000; i++) wheel.add(10);
    expect(wheel.capacity()).toBe(capacity);
  });
});
