import { describe, expect, it } from 'vitest';
import { ManualClock, TimerLoopError } from '../../src/index.js';
import { bucketOf, bucketStart, SetWheel, type ExpirySink } from '../../src/timer-set/set-wheel.js';
import { StackSlab } from '../../src/timer-set/slab.js';

/** The set's wheel on a ManualClock with its slab, recording [clock time, index] for every timer that fires. */
class RecordingWheel implements ExpirySink {
  readonly fired: [number, number][] = [];
  onFire: ((s: number) => void) | undefined;
  readonly slab = new StackSlab();
  readonly wheel: SetWheel;

  readonly cancelled: number[] = [];

  constructor(
    readonly manual: ManualClock,
    loopLimit = 1000,
  ) {
    this.wheel = new SetWheel(this.slab, manual, (wake) => manual.createDriver(wake), this, loopLimit);
  }

  get pending(): number {
    return this.wheel.pending;
  }

  get stale(): number {
    return this.wheel.stale;
  }

  add(ms: number): number {
    const s = this.slab.alloc(0);
    this.wheel.schedule(s, ms);
    return s;
  }

  move(s: number, ms: number): void {
    this.wheel.reschedule(s, ms);
  }

  remove(s: number): void {
    this.wheel.unschedule(s);
    this.slab.free(s);
  }

  drop(s: number): void {
    this.wheel.discard(s);
  }

  left(s: number): number {
    return this.wheel.remainingOf(s);
  }

  capacity(): number {
    return this.slab.w.length / 8;
  }

  fire(s: number): void {
    this.fired.push([this.manual.now(), s]);
    this.slab.free(s);
    this.onFire?.(s);
  }

  cancel(s: number): void {
    this.cancelled.push(s);
    this.slab.free(s);
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

  it('cancels a timer that re-arms itself for the current tick forever after loopLimit rounds, with one TimerLoopError', () => {
    const clock = new ManualClock(0);
    const wheel = new RecordingWheel(clock, 50);
    let stop = false;
    wheel.onFire = () => {
      if (!stop) wheel.add(0);
    };
    wheel.add(5);
    let thrown: unknown;
    try {
      clock.advance(5);
    } catch (error) {
      thrown = error;
    }
    // The core wheel's policy (timing-wheel.passes.test.ts): loopLimit rounds fire, the next is cancelled.
    expect(thrown).toBeInstanceOf(TimerLoopError);
    expect(thrown).toMatchObject({ loopLimit: 50, atMs: 5, cancelled: 1 });
    expect(wheel.fired).toHaveLength(50);
    expect(wheel.cancelled).toHaveLength(1);
    expect(wheel.pending).toBe(0);
    stop = true;
    wheel.add(1);
    clock.advance(1);
    expect(wheel.fired).toHaveLength(51);
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

  describe('levels and buckets', () => {
    /** Entry tables built so far (a level's 256 buckets are made when a timer first needs it). */
    const tables = (w: RecordingWheel): number => (w.wheel as unknown as { entries: Int32Array[] }).entries.length;

    it('builds a level only when a timer first needs it, and keeps the lower levels', () => {
      const wheel = new RecordingWheel(new ManualClock(0));
      expect(tables(wheel)).toBe(0);
      wheel.add(5);
      expect(tables(wheel)).toBe(256);
      wheel.add(70_000);
      expect(tables(wheel)).toBe(3 * 256);
      wheel.manual.advance(70_000);
      expect(wheel.fired.map(([at]) => at)).toEqual([5, 70_000]);
    });

    it('grows a bucket past its first array, keeping the filing order', () => {
      const wheel = new RecordingWheel(new ManualClock(0));
      const filed = Array.from({ length: 1_000 }, () => wheel.add(42));
      wheel.manual.advance(42);
      expect(wheel.fired.map(([, s]) => s)).toEqual(filed);
    });

    it('drops stale entries when their bucket comes up, and sweeps them all when the wheel empties', () => {
      const wheel = new RecordingWheel(new ManualClock(0));
      const [a, b] = [wheel.add(5), wheel.add(5)];
      wheel.remove(a);
      expect(wheel.stale).toBe(1);
      wheel.manual.advance(5);
      expect(wheel.fired.map(([, s]) => s)).toEqual([b]);
      expect(wheel.stale).toBe(0);
      const filed = [3, 200, 300, 70_000, 2 ** 31 + 5].map((ms) => wheel.add(ms));
      for (const s of filed) wheel.remove(s);
      expect([wheel.pending, wheel.stale]).toEqual([0, 0]);
    });
  });
});

describe('bucketOf', () => {
  it('files a tick at the level of its highest base-256 digit that differs from the current tick', () => {
    // The worked example of set-wheel.ts's header.
    expect(bucketOf(0x00f0, 0)).toBe(240);
    expect(bucketOf(0x1388, 0)).toBe(256 + 19);
    expect(bucketOf(0xea60, 0)).toBe(256 + 234);
    expect(bucketOf(0x0493e0, 0)).toBe(2 * 256 + 4);
    expect(bucketOf(255, 0)).toBe(255);
    expect(bucketOf(256, 0)).toBe(256 + 1);
    expect(bucketOf(65_536, 0)).toBe(2 * 256 + 1);
  });

  it('measures the digits against the current tick, not against 0', () => {
    expect(bucketOf(1_010, 1_000)).toBe(1_010 & 255);
    expect(bucketOf(0x1_00ff, 0x1_0000)).toBe(255);
    expect(bucketOf(0x1_0100, 0x1_00ff)).toBe(256 + 1);
  });

  it('gives the same digits past 2^31 ticks, by division', () => {
    const current = 2 ** 40;
    expect(bucketOf(current + 5, current)).toBe(5);
    expect(bucketOf(current + 300, current)).toBe(256 + 1);
    expect(bucketOf(2 ** 48, 0)).toBe(6 * 256 + 1);
    expect(bucketOf(2 ** 31, 2 ** 31 - 1)).toBe(3 * 256 + 128);
  });
});

describe('bucketStart', () => {
  it("is the tick at which a bucket comes up in its level's current window", () => {
    expect(bucketStart(240, 0)).toBe(240);
    expect(bucketStart(256 + 19, 0)).toBe(19 * 256);
    expect(bucketStart(2 * 256 + 4, 0)).toBe(4 * 65_536);
    expect(bucketStart(256 + 3, 5 * 65_536 + 7)).toBe(5 * 65_536 + 3 * 256);
  });

  it('inverts bucketOf: a bucket never comes up after the ticks filed in it', () => {
    for (const [tick, current] of [
      [70_000, 0],
      [300, 10],
      [2 ** 33 + 12_345, 2 ** 33],
      [99, 99],
    ]) {
      const start = bucketStart(bucketOf(tick, current), current);
      expect(start).toBeLessThanOrEqual(tick);
      expect(start).toBeGreaterThanOrEqual(current - (current % 256) - 0);
    }
  });
});
