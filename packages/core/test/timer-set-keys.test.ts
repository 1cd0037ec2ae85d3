import { describe, expect, it } from 'vitest';
import { ManualClock } from '../src/index.js';
import { KeyRecords, NONE } from '../src/timer-set-keys.js';
import { OWNER } from '../src/timer-set-slab.js';

/** Key records on a ManualClock, recording [clock time, key] for every stack that fires. */
class RecordingKeys extends KeyRecords<string, object> {
  readonly fired: [number, string][] = [];

  constructor(readonly manual: ManualClock) {
    super(manual, (wake) => manual.createDriver(wake));
  }

  protected fire(s: number): void {
    const k = this.w[(s << 3) | OWNER];
    this.fired.push([this.manual.now(), this.kv[k << 1] as string]);
    this.unlinkStack(k, s);
    this.freeStack(s);
  }

  stackList(k: number): number[] {
    const out: number[] = [];
    for (let s = this.oldestOf(k); s !== NONE; s = this.newerOf(s)) out.push(s);
    return out;
  }

  times(k: number): number[] {
    return this.stackList(k).map((s) => this.remainingOfStack(k, s));
  }

  drop(k: number, s: number): void {
    this.dropStack(k, s);
  }
}

describe('KeyRecords', () => {
  describe('#addStack', () => {
    it('chains a key slot’s stacks oldest first, each filed with its own time', () => {
      const keys = new RecordingKeys(new ManualClock(0));
      const k = keys.newKey('hero:bleed', {});
      expect(keys.stackList(k)).toEqual([]);
      for (const ms of [30, 10, 20]) keys.addStack(k, ms);
      expect(keys.times(k)).toEqual([30, 10, 20]);
      keys.manual.advance(30);
      expect(keys.fired).toEqual([
        [10, 'hero:bleed'],
        [20, 'hero:bleed'],
        [30, 'hero:bleed'],
      ]);
      expect(keys.stackList(k)).toEqual([]);
    });
  });

  describe('#dropStack', () => {
    it('unlinks a middle stack without reporting it', () => {
      const keys = new RecordingKeys(new ManualClock(0));
      const k = keys.newKey('k', {});
      for (const ms of [10, 20, 30]) keys.addStack(k, ms);
      const [, middle] = keys.stackList(k);
      keys.drop(k, middle);
      expect(keys.times(k)).toEqual([10, 30]);
      keys.manual.advance(30);
      expect(keys.fired.map(([at]) => at)).toEqual([10, 30]);
    });
  });

  describe('#pauseKey / #resumeKey', () => {
    it('keeps each stack’s remaining time while the clock moves, and files them again on resume', () => {
      const keys = new RecordingKeys(new ManualClock(0));
      const k = keys.newKey('k', {});
      keys.addStack(k, 100);
      keys.addStack(k, 250);
      keys.manual.advance(40);
      keys.pauseKey(k);
      expect(keys.isPaused(k)).toBe(true);
      keys.manual.advance(1_000);
      expect(keys.fired).toEqual([]);
      expect(keys.times(k)).toEqual([60, 210]);
      keys.resumeKey(k);
      expect(keys.isPaused(k)).toBe(false);
      keys.manual.advance(210);
      expect(keys.fired).toEqual([
        [1_100, 'k'],
        [1_250, 'k'],
      ]);
    });

    it('adds a stack to a paused key with its time frozen', () => {
      const keys = new RecordingKeys(new ManualClock(0));
      const k = keys.newKey('k', {});
      keys.markPaused(k);
      keys.addStack(k, 75);
      keys.manual.advance(500);
      expect(keys.times(k)).toEqual([75]);
      expect(keys.fired).toEqual([]);
    });
  });

  describe('#freeKey', () => {
    it('drops its stacks unreported, lets go of key and value, and hands the slot out next', () => {
      const keys = new RecordingKeys(new ManualClock(0));
      const a = keys.newKey('a', { a: 1 });
      keys.newKey('b', { b: 1 });
      keys.addStack(a, 10);
      keys.addStack(a, 20);
      keys.freeKey(a, true);
      expect(keys.kv[a << 1]).toBeUndefined();
      expect(keys.valueAt(a)).toBeUndefined();
      expect(keys.stackList(a)).toEqual([]);
      keys.manual.advance(100);
      expect(keys.fired).toEqual([]);
      expect(keys.newKey('c', { c: 1 })).toBe(a);
      expect(keys.valueAt(a)).toEqual({ c: 1 });
    });

    it('frees a paused key’s stacks, which are out of the wheel', () => {
      const keys = new RecordingKeys(new ManualClock(0));
      const k = keys.newKey('k', {});
      keys.addStack(k, 10);
      keys.pauseKey(k);
      keys.freeKey(k, false);
      expect(keys.isPaused(k)).toBe(false);
      keys.manual.advance(100);
      expect(keys.fired).toEqual([]);
    });
  });

  describe('#newKey', () => {
    it('grows its records past their first capacity, keeping every key', () => {
      const keys = new RecordingKeys(new ManualClock(0));
      const slots = Array.from({ length: 1_000 }, (_, i) => keys.newKey(`k${i}`, { i }));
      for (const [i, k] of slots.entries()) keys.addStack(k, 1 + (i % 7));
      expect(slots.every((k, i) => keys.kv[k << 1] === `k${i}` && keys.times(k).length === 1)).toBe(true);
      keys.manual.advance(7);
      expect(keys.fired).toHaveLength(1_000);
    });
  });
});
