import { describe, expect, it } from 'vitest';
import { ManualClock, TimerSet, TimingWheel, type ExpireCallback } from '../src/index.js';

/** A set on a fresh ManualClock whose onExpire `make` builds, given the set (once built) and the clock. */
function setup<V, K>(make: (self: () => TimerSet<V, K>, clock: ManualClock) => ExpireCallback<K, V>) {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  // The callback is called only after the set exists, so it may refer to it.
  const set: TimerSet<V, K> = new TimerSet<V, K>({ wheel, onExpire: make(() => set, clock) });
  return { clock, wheel, set };
}

describe('KeyedStacks (through TimerSet)', () => {
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
