import { describe, expect, it } from 'vitest';
import { SetLevels } from '../src/timer-set-levels.js';

/** The level rings alone: timers filed for a due tick, found again by the next-event search. */
class Levels extends SetLevels {
  add(tick: number): number {
    const s = this.allocStack(0);
    this.t[(s << 2) | 3] = tick;
    this.link(s);
    return s;
  }

  remove(s: number): void {
    this.unlink(s);
    this.freeStack(s);
  }

  /** The next event's tick and the level it was found at, or [-1, -1]. */
  next(): [number, number] {
    const bucket = this.nextEventBucket();
    return bucket < 0 ? [-1, -1] : [this.bucketTick(bucket), bucket >>> 8];
  }

  moveTo(tick: number): void {
    this.currentTick = tick;
  }

  clearAll(): void {
    this.sweep();
  }

  fresh(): number {
    return this.allocStack(0);
  }
}

describe('SetLevels', () => {
  it('files a tick at the level of its highest base-256 digit that differs from the current tick', () => {
    const levels = new Levels();
    levels.add(70_000);
    expect(levels.next()).toEqual([65_536, 2]);
    levels.add(300);
    expect(levels.next()).toEqual([256, 1]);
    levels.add(255);
    expect(levels.next()).toEqual([255, 0]);
  });

  it('files an overdue tick for the current tick', () => {
    const levels = new Levels();
    levels.moveTo(1_000);
    levels.add(10);
    expect(levels.next()).toEqual([1_000, 0]);
  });

  it('clears a bucket when its last timer is unlinked, so the search moves on', () => {
    const levels = new Levels();
    const a = levels.add(5);
    const b = levels.add(5);
    levels.add(9);
    levels.remove(a);
    expect(levels.next()).toEqual([5, 0]);
    levels.remove(b);
    expect(levels.next()).toEqual([9, 0]);
  });

  it('sweeps every bucket empty and frees every filed index for reuse', () => {
    const levels = new Levels();
    const filed = [3, 200, 300, 70_000, 2 ** 31 + 5].map((tick) => levels.add(tick));
    levels.clearAll();
    expect(levels.next()).toEqual([-1, -1]);
    const reused = filed.map(() => levels.fresh());
    expect(reused.sort((x, y) => x - y)).toEqual([...filed].sort((x, y) => x - y));
  });
});
