import { describe, expect, it } from 'vitest';
import { SetLevels } from '../src/timer-set-levels.js';
import { STAMP } from '../src/timer-set-slab.js';

/** The level buckets alone: timers filed for a due tick, found again by the next-event search. */
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

  /** Takes the next event's bucket and returns its entries' [index, stamp] pairs. */
  takeNext(): [number, number][] {
    this.takeBucket(this.nextEventBucket());
    const out: [number, number][] = [];
    for (let i = 0; i < this.batchLength; i += 2) out.push([this.batch[i], this.batch[i + 1]]);
    return out;
  }

  tidy(): void {
    this.compact();
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

  it('leaves an unlinked timer’s entry stale, with the old stamp, until its bucket is read', () => {
    const levels = new Levels();
    const a = levels.add(5);
    const b = levels.add(5);
    levels.remove(a);
    expect(levels.stale).toBe(1);
    expect(levels.next()).toEqual([5, 0]);
    expect(levels.takeNext()).toEqual([
      [a, 0],
      [b, 0],
    ]);
    expect(levels.w[(a << 3) | STAMP]).toBe(1);
    expect(levels.next()).toEqual([-1, -1]);
  });

  it('compacts stale entries away, keeping the order of the rest and clearing emptied buckets', () => {
    const levels = new Levels();
    const [a, b, c] = [levels.add(7), levels.add(7), levels.add(7)];
    const d = levels.add(9);
    levels.remove(b);
    levels.remove(d);
    levels.tidy();
    expect(levels.stale).toBe(0);
    expect(levels.takeNext()).toEqual([
      [a, 0],
      [c, 0],
    ]);
    expect(levels.next()).toEqual([-1, -1]);
  });

  it('sweeps every bucket empty', () => {
    const levels = new Levels();
    const filed = [3, 200, 300, 70_000, 2 ** 31 + 5].map((tick) => levels.add(tick));
    for (const s of filed) levels.remove(s);
    levels.clearAll();
    expect(levels.stale).toBe(0);
    expect(levels.next()).toEqual([-1, -1]);
  });

  it('builds a level’s bucket arrays only when a timer first needs that level, keeping the lower levels’ buckets', () => {
    const levels = new Levels();
    const tables = (): number => (levels as unknown as { entries: Int32Array[] }).entries.length;
    expect(tables()).toBe(0);
    const soon = levels.add(5);
    expect(tables()).toBe(256);
    levels.add(70_000);
    expect(tables()).toBe(3 * 256);
    expect(levels.takeNext()).toEqual([[soon, 0]]);
    expect(levels.next()).toEqual([65_536, 2]);
  });

  it('grows a bucket past its first array, keeping the filing order', () => {
    const levels = new Levels();
    const filed = Array.from({ length: 1_000 }, () => levels.add(42));
    expect(levels.takeNext().map(([s]) => s)).toEqual(filed);
  });
});
