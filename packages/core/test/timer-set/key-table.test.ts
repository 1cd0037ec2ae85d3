import { describe, expect, it } from 'vitest';
import { ManualClock, TimerSet, TimingWheel, type ExpireCallback } from '../../src/index.js';
import { KeyTable, NONE } from '../../src/timer-set/key-table.js';
import { REPLACE, STACK } from '../../src/timer-set/options.js';

/** Diagnostics off: no subscriber, nothing published. */
const NO_REPORT = { channel: { hasSubscribers: false }, publish: () => undefined };

/** A key table on a fresh ManualClock that records [clock time, key, stacks left] for every expiry. */
function table() {
  const clock = new ManualClock(0);
  const fired: [number, string, number][] = [];
  const keys = new KeyTable<string, object>(
    clock,
    (wake) => clock.createDriver(wake),
    (key, _value, { stacksLeft }) => fired.push([clock.now(), key, stacksLeft]),
    NO_REPORT,
    1000, // the wheel's default loopLimit
  );
  const stackList = (k: number): number[] => {
    const out: number[] = [];
    for (let s = keys.oldestOf(k); s !== NONE; s = keys.newerOf(s)) out.push(s);
    return out;
  };
  const times = (k: number): number[] => stackList(k).map((s) => keys.remainingOfStack(k, s));
  return { clock, fired, keys, stackList, times };
}

describe('KeyTable', () => {
  describe('#addStack', () => {
    it('chains a key slot’s stacks oldest first, each filed with its own time', () => {
      const { keys, clock, fired, stackList, times } = table();
      const k = keys.newKey('hero:bleed', {});
      expect(stackList(k)).toEqual([]);
      for (const ms of [30, 10, 20]) keys.addStack(k, ms);
      expect(times(k)).toEqual([30, 10, 20]);
      clock.advance(30);
      expect(fired).toEqual([
        [10, 'hero:bleed', 2],
        [20, 'hero:bleed', 1],
        [30, 'hero:bleed', 0],
      ]);
    });

    it('adds a stack to a paused key with its time frozen', () => {
      const { keys, clock, fired, times } = table();
      const k = keys.newKey('k', {});
      keys.markPaused(k);
      keys.addStack(k, 75);
      clock.advance(500);
      expect(times(k)).toEqual([75]);
      expect(fired).toEqual([]);
    });
  });

  describe('#set', () => {
    it("drops the oldest stack past maxStacks, and 'replace' collapses to the oldest, unreported", () => {
      const { keys, clock, fired, times } = table();
      for (const ms of [10, 20, 30]) keys.set('k', ms, {}, STACK, 2);
      const k = keys.live('k');
      expect(times(k)).toEqual([20, 30]);
      keys.set('k', 50, {}, REPLACE, Infinity);
      expect(times(k)).toEqual([50]);
      clock.advance(100);
      expect(fired).toEqual([[50, 'k', 0]]);
    });
  });

  describe('#pauseKey / #resumeKey', () => {
    it('keeps each stack’s remaining time while the clock moves, and files them again on resume', () => {
      const { keys, clock, fired, times } = table();
      const k = keys.newKey('k', {});
      keys.addStack(k, 100);
      keys.addStack(k, 250);
      clock.advance(40);
      keys.pauseKey(k);
      expect(keys.isPaused(k)).toBe(true);
      clock.advance(1_000);
      expect(fired).toEqual([]);
      expect(times(k)).toEqual([60, 210]);
      keys.resumeKey(k);
      expect(keys.isPaused(k)).toBe(false);
      clock.advance(210);
      expect(fired).toEqual([
        [1_100, 'k', 1],
        [1_250, 'k', 0],
      ]);
    });
  });

  describe('#releaseKey', () => {
    it('drops its stacks unreported, lets go of the value, and hands the slot out next', () => {
      const { keys, clock, fired, stackList } = table();
      const a = keys.newKey('a', { a: 1 });
      keys.newKey('b', { b: 1 });
      keys.addStack(a, 10);
      keys.addStack(a, 20);
      keys.releaseKey(a);
      expect(keys.valueAt(a)).toBeUndefined();
      expect(stackList(a)).toEqual([]);
      clock.advance(100);
      expect(fired).toEqual([]);
      expect(keys.newKey('c', { c: 1 })).toBe(a);
      expect(keys.valueAt(a)).toEqual({ c: 1 });
    });

    it('frees a paused key’s stacks, which are out of the wheel', () => {
      const { keys, clock, fired } = table();
      const k = keys.newKey('k', {});
      keys.addStack(k, 10);
      keys.pauseKey(k);
      keys.releaseKey(k);
      expect(keys.isPaused(k)).toBe(false);
      clock.advance(100);
      expect(fired).toEqual([]);
      expect(keys.wheel.pending).toBe(0);
    });
  });

  describe('#newKey', () => {
    it('grows its records past their first capacity, keeping every key', () => {
      const { keys, clock, fired, times } = table();
      const slots = Array.from({ length: 1_000 }, (_, i) => keys.newKey(`k${i}`, { i }));
      for (const [i, k] of slots.entries()) keys.addStack(k, 1 + (i % 7));
      expect(slots.every((k, i) => (keys.valueAt(k) as { i: number }).i === i && times(k).length === 1)).toBe(true);
      clock.advance(7);
      expect(fired).toHaveLength(1_000);
      expect(fired.filter(([at]) => at === 1)[0][1]).toBe('k0');
    });
  });
});

/** A set on a fresh ManualClock whose onExpire `make` builds, given the set (once built) and the clock. */
function setup<V, K>(make: (self: () => TimerSet<V, K>, clock: ManualClock) => ExpireCallback<K, V>) {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  // The callback is called only after the set exists, so it may refer to it.
  const set: TimerSet<V, K> = new TimerSet<V, K>({ wheel, onExpire: make(() => set, clock) });
  return { clock, wheel, set };
}

describe('KeyTable (through TimerSet)', () => {
  describe('a key set again from its own onExpire', () => {
    it('keeps firing as a periodic effect, with its place in key order', () => {
      const fired: [number, string][] = [];
      const { set, clock } = setup<number, string>((s, c) => (key, ticks) => {
        fired.push([c.now(), key]);
        if (ticks > 1) s().set(key, 100, ticks - 1);
      });
      set.set('dot', 100, 3);
      set.set('other', 1_000, 0);
      clock.advance(1_000);
      expect(fired).toEqual([
        [100, 'dot'],
        [200, 'dot'],
        [300, 'dot'],
        [1_000, 'other'],
      ]);
      expect(set.size).toBe(0);
    });

    it('revives a NaN key found through the Map, not the fast path', () => {
      const fired: number[] = [];
      const { set, clock } = setup<number, number>((s, c) => (key, n) => {
        fired.push(c.now());
        if (n > 0) s().set(key, 10, n - 1);
      });
      set.set(NaN, 10, 2);
      clock.advance(100);
      expect(fired).toEqual([10, 20, 30]);
      expect(set.has(NaN)).toBe(false);
    });

    it('can be set twice from the callback, as two stacks', () => {
      const { set, clock } = setup<string, string>((s) => (key, value) => {
        if (value === 'first') {
          s().set(key, 10, 'again', { policy: 'stack' });
          s().set(key, 20, 'again', { policy: 'stack' });
        }
      });
      set.set('k', 5, 'first');
      clock.advance(5);
      expect(set.stacks('k')).toBe(2);
      expect(set.remainingPerStack('k')).toEqual([10, 20]);
    });

    it('is gone when the callback revives and then deletes it, and its slot keeps no old value', () => {
      const { set, clock } = setup<{ n: number }, string>((s) => (key) => {
        s().set(key, 10, { n: 2 });
        s().delete(key);
      });
      set.set('k', 5, { n: 1 });
      clock.advance(50);
      expect(set.has('k')).toBe(false);
      expect(set.size).toBe(0);
      set.set('fresh', 10, { n: 3 });
      expect(set.get('fresh')).toEqual({ n: 3 });
      expect(set.get('k')).toBeUndefined();
    });

    it('can be paused from its own callback right after being set again', () => {
      const { set, clock } = setup<number, string>((s) => (key, n) => {
        if (n === 1) {
          s().set(key, 40, 2);
          s().pause(key);
        }
      });
      set.set('k', 10, 1);
      clock.advance(1_000);
      expect(set.isPaused('k')).toBe(true);
      expect(set.remaining('k')).toBe(40);
      set.resume('k');
      expect(set.remaining('k')).toBe(40);
    });
  });

  it('reports stacksLeft from the key when a key with several stacks loses one', () => {
    const seen: number[] = [];
    const { set, clock } = setup<null, string>(() => (_key, _value, info) => seen.push(info.stacksLeft));
    for (const ms of [10, 20, 30]) set.set('k', ms, null, { policy: 'stack' });
    clock.advance(30);
    expect(seen).toEqual([2, 1, 0]);
    expect(set.has('k')).toBe(false);
  });

  it('holds many keys and frees their slots for reuse', () => {
    const { set, clock } = setup<number, number>(() => () => {});
    for (let i = 0; i < 20_000; i++) set.set(i, 1 + (i % 500), i);
    expect(set.size).toBe(20_000);
    for (let i = 0; i < 20_000; i += 2) set.delete(i);
    expect(set.size).toBe(10_000);
    expect(set.get(1)).toBe(1);
    expect(set.get(2)).toBeUndefined();
    clock.advance(500);
    expect(set.size).toBe(0);
  });
});
