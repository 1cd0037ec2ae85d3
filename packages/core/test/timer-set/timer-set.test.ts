import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ManualClock,
  TimerLoopError,
  TimerSet,
  TimingWheel,
  type ExpireInfo,
  type TimerSetSnapshot,
} from '../../src/index.js';

type Fired = [atMs: number, key: string | number, value: unknown, stacksLeft: number];

/** A set on a fresh ManualClock that records every expiry as [time, key, value, stacksLeft]. */
function setup<V = unknown>(startMs = 0) {
  const clock = new ManualClock(startMs);
  const wheel = new TimingWheel({ clock });
  const fired: Fired[] = [];
  const onExpire = (key: string | number, value: V, info: ExpireInfo) =>
    fired.push([clock.now(), key, value, info.stacksLeft]);
  const set = new TimerSet<V>({ wheel, onExpire });
  return { clock, wheel, fired, onExpire, set };
}

describe('TimerSet', () => {
  describe('constructor', () => {
    it('requires an onExpire function', () => {
      expect(() => new TimerSet({} as never)).toThrow(/onExpire must be a function, got undefined/);
      expect(() => new TimerSet(null as never)).toThrow(TypeError);
    });

    it('requires a TimingWheel', () => {
      expect(() => new TimerSet({ wheel: {} as never, onExpire: () => {} })).toThrow(/wheel must be a TimingWheel/);
    });

    it('refuses an unknown option, naming it and the known ones, as the adapters do', () => {
      const wheel = new TimingWheel({ clock: new ManualClock() });
      const onExpire = () => {};
      expect(() => new TimerSet({ onExpire, bogus: 1 } as never)).toThrow(TypeError);
      expect(() => new TimerSet({ wheel, onExpire, bogus: 1 } as never)).toThrow(
        '@tickwheel/core: unknown option bogus; known options: wheel, onExpire, timeScale',
      );
      // A misspelt option must not silently fall back to its default.
      expect(() => new TimerSet({ wheel, onExpire, timescale: 0.5 } as never)).toThrow(/unknown option timescale/);
      expect(wheel.size).toBe(0);
    });

    it('takes an options object whose keys are all known, undefined values included', () => {
      const wheel = new TimingWheel({ clock: new ManualClock() });
      const set = new TimerSet({ wheel, onExpire: () => {}, timeScale: undefined });
      expect(set.timeScale).toBe(1);
    });

    it('refuses a closed wheel', () => {
      const wheel = new TimingWheel({ clock: new ManualClock() });
      wheel.close();
      expect(() => new TimerSet({ wheel, onExpire: () => {} })).toThrow(/wheel is closed/);
    });

    it('takes the resolution of its wheel: never early, at most one tick late', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock, tickMs: 50 });
      const fired: number[] = [];
      const set = new TimerSet<null, string>({ wheel, onExpire: () => fired.push(clock.now()) });
      set.set('a', 120, null);
      set.set('b', 150, null);
      clock.advance(70);
      set.pause();
      clock.advance(1010);
      set.resume();
      clock.advance(1000);
      // Due at 120 + 1010 paused = 1130 and at 1160: each fires on the wheel's next 50 ms tick.
      expect(fired).toEqual([1150, 1200]);
    });

    it('costs the outer wheel a single timer however many keys it holds', () => {
      const { set, wheel } = setup();
      for (let i = 0; i < 1000; i++) set.set(i, 100 + i, i);
      expect(set.size).toBe(1000);
      expect(wheel.size).toBe(1);
    });
  });

  describe('#set', () => {
    it('fires onExpire with key, value and stacksLeft 0 at the exact expiry', () => {
      const { set, clock, fired } = setup();
      set.set('hero:haste', 100, { speed: 2 });
      clock.advance(99);
      expect(fired).toEqual([]);
      expect(set.remaining('hero:haste')).toBe(1);
      clock.advance(1);
      expect(fired).toEqual([[100, 'hero:haste', { speed: 2 }, 0]]);
      expect(set.has('hero:haste')).toBe(false);
      expect(set.size).toBe(0);
    });

    it('fires a zero duration on the next pass, never synchronously', () => {
      const { set, clock, fired } = setup();
      set.set('a', 0, 1);
      expect(fired).toEqual([]);
      clock.advance(0);
      expect(fired).toEqual([[0, 'a', 1, 0]]);
    });

    it('fires timers in due order, and same-ms timers in the order they were set', () => {
      const { set, clock, fired } = setup();
      set.set('c', 30, 'c');
      set.set('a', 10, 'a');
      set.set('b2', 20, 'b2');
      set.set('b1', 20, 'b1');
      clock.advance(100);
      expect(fired.map((f) => f[1])).toEqual(['a', 'b2', 'b1', 'c']);
    });

    it('accepts object keys', () => {
      const { wheel, clock, fired } = setup();
      const objectKeyed = new TimerSet<number, object>({
        wheel,
        onExpire: (k, v) => fired.push([clock.now(), JSON.stringify(k), v, 0]),
      });
      const entity = { id: 7 };
      objectKeyed.set(entity, 10, 1);
      expect(objectKeyed.has(entity)).toBe(true);
      expect(objectKeyed.has({ id: 7 })).toBe(false);
      clock.advance(10);
      expect(fired).toEqual([[10, '{"id":7}', 1, 0]]);
    });

    describe("policy 'replace'", () => {
      it('restarts with the new duration and the new value (the default)', () => {
        const { set, clock, fired } = setup();
        set.set('k', 100, 'old');
        clock.advance(60);
        set.set('k', 100, 'new');
        expect(set.remaining('k')).toBe(100);
        expect(set.get('k')).toBe('new');
        clock.advance(99);
        expect(fired).toEqual([]);
        clock.advance(1);
        expect(fired).toEqual([[160, 'k', 'new', 0]]);
      });

      it('shortens a timer too', () => {
        const { set, clock, fired } = setup();
        set.set('k', 1000, 1, { policy: 'replace' });
        set.set('k', 10, 2, { policy: 'replace' });
        clock.advance(10);
        expect(fired).toEqual([[10, 'k', 2, 0]]);
        clock.advance(2000);
        expect(fired).toHaveLength(1);
      });

      it('collapses stacks to one', () => {
        const { set, clock, fired } = setup();
        set.set('k', 10, 1, { policy: 'stack' });
        set.set('k', 20, 1, { policy: 'stack' });
        set.set('k', 30, 1, { policy: 'stack' });
        set.set('k', 50, 2);
        expect(set.stacks('k')).toBe(1);
        clock.advance(100);
        expect(fired).toEqual([[50, 'k', 2, 0]]);
      });
    });

    describe("policy 'max'", () => {
      it('keeps the existing expiry when it is later', () => {
        const { set, clock, fired } = setup();
        set.set('k', 100, 'a');
        clock.advance(20);
        set.set('k', 50, 'b', { policy: 'max' });
        expect(set.remaining('k')).toBe(80);
        expect(set.get('k')).toBe('b');
        clock.advance(80);
        expect(fired).toEqual([[100, 'k', 'b', 0]]);
      });

      it('moves the expiry to now + duration when that is later', () => {
        const { set, clock, fired } = setup();
        set.set('k', 100, 'a');
        clock.advance(80);
        set.set('k', 50, 'b', { policy: 'max' });
        expect(set.remaining('k')).toBe(50);
        clock.advance(49);
        expect(fired).toEqual([]);
        clock.advance(1);
        expect(fired).toEqual([[130, 'k', 'b', 0]]);
      });

      it('raises every stack to the watermark', () => {
        const { set, clock, fired } = setup();
        set.set('k', 10, 'a', { policy: 'stack' });
        set.set('k', 100, 'a', { policy: 'stack' });
        set.set('k', 50, 'a', { policy: 'max' });
        expect(set.remainingPerStack('k')).toEqual([50, 100]);
        clock.advance(200);
        expect(fired).toEqual([
          [50, 'k', 'a', 1],
          [100, 'k', 'a', 0],
        ]);
      });
    });

    describe("policy 'extend'", () => {
      it('adds the duration to the remaining time', () => {
        const { set, clock, fired } = setup();
        set.set('k', 100, 'a');
        clock.advance(30);
        set.set('k', 50, 'b', { policy: 'extend' });
        expect(set.remaining('k')).toBe(120);
        clock.advance(119);
        expect(fired).toEqual([]);
        clock.advance(1);
        expect(fired).toEqual([[150, 'k', 'b', 0]]);
      });

      it('does not drift over many extensions', () => {
        const { set, clock, fired } = setup();
        set.set('k', 7, 'a');
        for (let i = 0; i < 1000; i++) {
          clock.advance(3);
          set.set('k', 3, 'a', { policy: 'extend' });
        }
        expect(set.remaining('k')).toBe(7);
        clock.advance(7);
        expect(fired).toEqual([[3007, 'k', 'a', 0]]);
      });

      it('extends every stack', () => {
        const { set } = setup();
        set.set('k', 10, 'a', { policy: 'stack' });
        set.set('k', 20, 'a', { policy: 'stack' });
        set.set('k', 5, 'a', { policy: 'extend' });
        expect(set.remainingPerStack('k')).toEqual([15, 25]);
      });
    });

    describe("policy 'ignore'", () => {
      it('leaves an existing timer and its value untouched', () => {
        const { set, clock, fired } = setup();
        set.set('cd', 100, 'first');
        clock.advance(50);
        set.set('cd', 1000, 'second', { policy: 'ignore' });
        expect(set.get('cd')).toBe('first');
        expect(set.remaining('cd')).toBe(50);
        clock.advance(50);
        expect(fired).toEqual([[100, 'cd', 'first', 0]]);
      });

      it('creates a missing key', () => {
        const { set } = setup();
        set.set('cd', 100, 'x', { policy: 'ignore' });
        expect(set.get('cd')).toBe('x');
        expect(set.remaining('cd')).toBe(100);
      });
    });

    describe("policy 'stack'", () => {
      it('adds independent stacks, each reporting the stacks left', () => {
        const { set, clock, fired } = setup();
        set.set('bleed', 100, 'v1', { policy: 'stack' });
        clock.advance(10);
        set.set('bleed', 100, 'v2', { policy: 'stack' });
        clock.advance(10);
        set.set('bleed', 50, 'v3', { policy: 'stack' });
        expect(set.stacks('bleed')).toBe(3);
        expect(set.remaining('bleed')).toBe(90);
        expect(set.remainingPerStack('bleed')).toEqual([80, 90, 50]);
        clock.advance(200);
        expect(fired).toEqual([
          [70, 'bleed', 'v3', 2],
          [100, 'bleed', 'v3', 1],
          [110, 'bleed', 'v3', 0],
        ]);
        expect(set.has('bleed')).toBe(false);
      });

      it('drops the oldest stack without onExpire when maxStacks is exceeded', () => {
        const { set, clock, fired } = setup();
        set.set('k', 100, 1, { policy: 'stack', maxStacks: 2 });
        clock.advance(10);
        set.set('k', 100, 2, { policy: 'stack', maxStacks: 2 });
        clock.advance(10);
        set.set('k', 100, 3, { policy: 'stack', maxStacks: 2 });
        expect(set.stacks('k')).toBe(2);
        expect(set.remainingPerStack('k')).toEqual([90, 100]);
        clock.advance(1000);
        expect(fired).toEqual([
          [110, 'k', 3, 1],
          [120, 'k', 3, 0],
        ]);
      });

      it('trims to a smaller maxStacks given later', () => {
        const { set } = setup();
        for (let i = 1; i <= 5; i++) set.set('k', i * 10, i, { policy: 'stack' });
        set.set('k', 60, 6, { policy: 'stack', maxStacks: 3 });
        expect(set.remainingPerStack('k')).toEqual([40, 50, 60]);
      });

      it('with maxStacks 1 keeps only the newest stack', () => {
        const { set } = setup();
        set.set('k', 100, 1, { policy: 'stack', maxStacks: 1 });
        set.set('k', 10, 2, { policy: 'stack', maxStacks: 1 });
        expect(set.remainingPerStack('k')).toEqual([10]);
      });
    });

    describe('bad input', () => {
      it.each([
        [-1, RangeError, /durationMs must be a finite number >= 0, got -1/],
        [NaN, RangeError, /durationMs must be a finite number >= 0, got NaN/],
        [Infinity, RangeError, /got Infinity/],
        ['10', TypeError, /durationMs must be a finite number >= 0, got "10" \(string\)/],
      ])('throws for durationMs %s and changes nothing', (duration, type, message) => {
        const { set } = setup();
        set.set('k', 100, 'keep');
        expect(() => set.set('k', duration as number, 'new')).toThrow(type);
        expect(() => set.set('k', duration as number, 'new')).toThrow(message);
        expect(() => set.set('other', duration as number, 'new')).toThrow(type);
        expect(set.get('k')).toBe('keep');
        expect(set.remaining('k')).toBe(100);
        expect(set.has('other')).toBe(false);
      });

      it('throws for an unknown policy and changes nothing', () => {
        const { set } = setup();
        set.set('k', 100, 'keep');
        expect(() => set.set('k', 5, 'new', { policy: 'refresh' as never })).toThrow(
          new RangeError(`policy must be one of 'replace', 'max', 'extend', 'ignore', 'stack', got "refresh"`),
        );
        expect(() => set.set('fresh', 5, 'new', { policy: 'refresh' as never })).toThrow(RangeError);
        expect(set.get('k')).toBe('keep');
        expect(set.size).toBe(1);
      });

      it.each([
        [0, RangeError],
        [1.5, RangeError],
        [-3, RangeError],
        [NaN, RangeError],
        ['2', TypeError],
      ])('throws for maxStacks %s and changes nothing', (maxStacks, type) => {
        const { set } = setup();
        set.set('k', 100, 'keep', { policy: 'stack' });
        expect(() => set.set('k', 5, 'new', { policy: 'stack', maxStacks: maxStacks as number })).toThrow(type);
        expect(() => set.set('k', 5, 'new', { policy: 'stack', maxStacks: maxStacks as number })).toThrow(
          /maxStacks must be an integer >= 1 or Infinity/,
        );
        expect(set.stacks('k')).toBe(1);
        expect(set.get('k')).toBe('keep');
      });

      it('throws for options that are not an object', () => {
        const { set } = setup();
        expect(() => set.set('k', 5, 'v', 'stack' as never)).toThrow(/options must be an object, got "stack"/);
        expect(set.size).toBe(0);
      });

      it('throws after close() and when the wheel is closed', () => {
        const { set, wheel } = setup();
        const other = new TimerSet({ wheel, onExpire: () => {} });
        set.close();
        expect(() => set.set('k', 5, 'v')).toThrow(/TimerSet is closed/);
        wheel.close();
        expect(() => other.set('k', 5, 'v')).toThrow(/TimingWheel is closed/);
        expect(other.size).toBe(0);
      });
    });
  });

  describe('#delete', () => {
    it('removes a key without onExpire and reports whether it existed', () => {
      const { set, clock, fired, wheel } = setup();
      set.set('k', 100, 1, { policy: 'stack' });
      set.set('k', 200, 1, { policy: 'stack' });
      expect(set.delete('k')).toBe(true);
      expect(set.delete('k')).toBe(false);
      expect(set.has('k')).toBe(false);
      expect(set.stacks('k')).toBe(0);
      expect(set.remaining('k')).toBeUndefined();
      clock.advance(1000);
      expect(fired).toEqual([]);
      expect(wheel.size).toBe(0);
    });

    it('deletes a paused key', () => {
      const { set, clock, fired } = setup();
      set.set('k', 100, 1);
      set.pause('k');
      expect(set.delete('k')).toBe(true);
      expect(set.resume('k')).toBe(false);
      clock.advance(1000);
      expect(fired).toEqual([]);
    });
  });

  describe('#get / #has / #stacks / #remaining / #keys', () => {
    it('reports nothing for unknown keys', () => {
      const { set } = setup();
      expect(set.get('nope')).toBeUndefined();
      expect(set.has('nope')).toBe(false);
      expect(set.stacks('nope')).toBe(0);
      expect(set.remaining('nope')).toBeUndefined();
      expect(set.remainingPerStack('nope')).toEqual([]);
    });

    it('lists keys in insertion order', () => {
      const { set } = setup();
      set.set('b', 10, 0);
      set.set('a', 10, 0);
      set.set(3, 10, 0);
      expect([...set.keys()]).toEqual(['b', 'a', 3]);
    });
  });

  describe('#pause / #resume', () => {
    it('pauses one key, keeping its remaining time exactly', () => {
      const { set, clock, fired } = setup();
      set.set('dot', 100, 'd');
      set.set('other', 150, 'o');
      clock.advance(30);
      expect(set.pause('dot')).toBe(true);
      expect(set.pause('dot')).toBe(false);
      expect(set.isPaused('dot')).toBe(true);
      expect(set.isPaused()).toBe(false);
      clock.advance(500);
      expect(set.remaining('dot')).toBe(70);
      expect(fired).toEqual([[150, 'other', 'o', 0]]);
      expect(set.resume('dot')).toBe(true);
      expect(set.resume('dot')).toBe(false);
      clock.advance(69);
      expect(fired).toHaveLength(1);
      clock.advance(1);
      expect(fired[1]).toEqual([600, 'dot', 'd', 0]);
    });

    it('pauses the whole set: game time stops and nothing fires', () => {
      const { set, clock, fired, wheel } = setup();
      set.set('a', 100, 'a');
      set.set('b', 200, 'b', { policy: 'stack' });
      set.set('b', 50, 'b', { policy: 'stack' });
      clock.advance(40);
      expect(set.pause()).toBe(true);
      expect(set.pause()).toBe(false);
      expect(set.isPaused()).toBe(true);
      expect(wheel.size).toBe(0);
      const gameTime = set.clock.now();
      clock.advance(10_000);
      expect(set.clock.now()).toBe(gameTime);
      expect(fired).toEqual([]);
      expect(set.remaining('a')).toBe(60);
      expect(set.remainingPerStack('b')).toEqual([160, 10]);
      expect(set.resume()).toBe(true);
      expect(set.resume()).toBe(false);
      clock.advance(200);
      expect(fired).toEqual([
        [10_050, 'b', 'b', 1],
        [10_100, 'a', 'a', 0],
        [10_200, 'b', 'b', 0],
      ]);
    });

    it('measures timers set while the set is paused in game time', () => {
      const { set, clock, fired } = setup();
      set.pause();
      set.set('k', 100, 1);
      clock.advance(500);
      expect(set.remaining('k')).toBe(100);
      set.resume();
      clock.advance(100);
      expect(fired).toEqual([[600, 'k', 1, 0]]);
    });

    it('keeps key pauses and the set pause independent', () => {
      const { set, clock, fired } = setup();
      set.set('frozen', 100, 'f');
      set.set('running', 100, 'r');
      set.pause('frozen');
      set.pause();
      clock.advance(1000);
      set.resume();
      expect(set.isPaused('frozen')).toBe(true);
      clock.advance(100);
      expect(fired).toEqual([[1100, 'running', 'r', 0]]);
      set.pause();
      expect(set.resume('frozen')).toBe(true);
      clock.advance(1000);
      expect(fired).toHaveLength(1);
      set.resume();
      clock.advance(100);
      expect(fired[1]).toEqual([2200, 'frozen', 'f', 0]);
    });

    it('applies policies to a paused key in its frozen time', () => {
      const { set, clock, fired } = setup();
      set.set('k', 100, 1);
      clock.advance(40);
      set.pause('k');
      set.set('k', 50, 2, { policy: 'extend' });
      expect(set.remaining('k')).toBe(110);
      set.set('k', 120, 3, { policy: 'max' });
      expect(set.remaining('k')).toBe(120);
      set.set('k', 30, 4, { policy: 'stack' });
      expect(set.remainingPerStack('k')).toEqual([120, 30]);
      clock.advance(1000);
      expect(set.isPaused('k')).toBe(true);
      expect(fired).toEqual([]);
      set.set('k', 20, 5);
      expect(set.remainingPerStack('k')).toEqual([20]);
      set.resume('k');
      clock.advance(20);
      expect(fired).toEqual([[1060, 'k', 5, 0]]);
    });

    it('pauses and resumes every stack of a key', () => {
      const { set, clock, fired } = setup();
      set.set('k', 10, 'v', { policy: 'stack' });
      set.set('k', 20, 'v', { policy: 'stack' });
      set.pause('k');
      clock.advance(100);
      set.resume('k');
      clock.advance(20);
      expect(fired).toEqual([
        [110, 'k', 'v', 1],
        [120, 'k', 'v', 0],
      ]);
    });

    it('returns false for unknown keys', () => {
      const { set } = setup();
      expect(set.pause('nope')).toBe(false);
      expect(set.resume('nope')).toBe(false);
      expect(set.isPaused('nope')).toBe(false);
    });

    it('treats an explicit undefined as a key, not as "all"', () => {
      const { wheel } = setup();
      const keyed = new TimerSet<number, string | undefined>({ wheel, onExpire: () => {} });
      keyed.set(undefined, 10, 1);
      expect(keyed.pause(undefined)).toBe(true);
      expect(keyed.isPaused()).toBe(false);
      expect(keyed.isPaused(undefined)).toBe(true);
    });
  });

  describe('callbacks', () => {
    it("cancels keys that keep setting themselves for the tick being fired after the wheel's loopLimit, with one TimerLoopError to its onError", () => {
      const clock = new ManualClock(0);
      const errors: unknown[] = [];
      const wheel = new TimingWheel({ clock, loopLimit: 20, onError: (error) => errors.push(error) });
      let fired = 0;
      const set: TimerSet<string> = new TimerSet<string>({
        wheel,
        onExpire: (key, value) => {
          fired++;
          if (key === 'loop') set.set(key, 0, value); // 0 ms from its own expiry: forever, for the same tick
        },
      });
      set.set('loop', 10, 'v');
      set.set('other', 10, 'w', { policy: 'stack' });
      set.set('later', 11, 'x');
      clock.advance(10);
      // The core wheel's policy (timing-wheel.passes.test.ts): loopLimit rounds of the tick, then cancelled.
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(TimerLoopError);
      expect(errors[0]).toMatchObject({ loopLimit: 20, atMs: 10, cancelled: 1 });
      expect(fired).toBe(21); // 'loop' 20 times, 'other' once
      expect(set.has('loop')).toBe(false);
      expect(set.size).toBe(1);
      // Time moves on, and the set keeps working.
      clock.advance(1);
      expect(fired).toBe(22);
      set.set('loop', 5, 'v2');
      expect(set.has('loop')).toBe(true);
    });

    it('may set and delete other keys while timers are expiring', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const order: string[] = [];
      const set: TimerSet<string> = new TimerSet<string>({
        wheel,
        onExpire: (key) => {
          order.push(`${key}@${clock.now()}`);
          if (key === 'a') {
            set.delete('b'); // due on the same ms, not yet fired: must not fire
            set.set('c', 0, 'c'); // due now: fires in the same pass
            set.set('d', 5, 'd');
            set.set('e', 100, 'e', { policy: 'replace' }); // pushed later while due now
          }
        },
      });
      set.set('a', 10, 'a');
      set.set('b', 10, 'b');
      set.set('e', 10, 'e');
      clock.advance(10);
      expect(order).toEqual(['a@10', 'c@10']);
      expect(set.has('b')).toBe(false);
      clock.advance(200);
      expect(order).toEqual(['a@10', 'c@10', 'd@15', 'e@110']);
    });

    it('may set its own key again: the key is gone before onExpire runs', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      let ticks = 0;
      const set: TimerSet<null> = new TimerSet<null>({
        wheel,
        onExpire: (key) => {
          expect(set.has(key)).toBe(false);
          if (++ticks < 3) set.set(key, 100, null);
        },
      });
      set.set('dot', 100, null);
      clock.advance(1000);
      expect(ticks).toBe(3);
      expect(set.size).toBe(0);
    });

    it('treats a key as gone during its last onExpire, whatever the callback does with it', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const seen: unknown[] = [];
      const set: TimerSet<string> = new TimerSet<string>({
        wheel,
        onExpire: (key, value) => {
          seen.push([
            key,
            value,
            set.size,
            set.has(key),
            set.get(key),
            set.stacks(key),
            set.remaining(key),
            [...set.keys()],
          ]);
          seen.push([set.delete(key), set.pause(key), set.resume(key), set.isPaused(key)]);
          if (value === 'again') {
            set.set(key, 10, 'revived', { policy: 'ignore' });
            seen.push([set.size, set.get(key), [...set.keys()], set.snapshot().timers.length]);
          }
        },
      });
      set.set('a', 5, 'again');
      set.set('b', 20, 'once');
      clock.advance(5);
      expect(seen).toEqual([
        ['a', 'again', 1, false, undefined, 0, undefined, ['b']],
        [false, false, false, false],
        [2, 'revived', ['a', 'b'], 2],
      ]);
      clock.advance(15);
      expect(set.size).toBe(0);
      expect(seen).toHaveLength(7);
      expect(seen[3]).toEqual(['a', 'revived', 1, false, undefined, 0, undefined, ['b']]);
      expect(seen[5]).toEqual(['b', 'once', 0, false, undefined, 0, undefined, []]);
    });

    it('survives set, delete and set of its own key from onExpire, with the entry pool full', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const fired: string[] = [];
      const set: TimerSet<string, string | number> = new TimerSet<string, string | number>({
        wheel,
        onExpire: (key, value) => {
          fired.push(`${key}=${value}@${clock.now()}`);
          if (value === 'first') {
            set.set(key, 10, 'revived');
            set.delete(key);
            set.set(key, 20, 'third');
          }
        },
      });
      for (let i = 0; i < 2000; i++) set.set(i, 1000, 'filler');
      for (let i = 0; i < 2000; i++) set.delete(i); // fills the pools
      set.set('k', 5, 'first');
      clock.advance(5);
      expect(set.has('k')).toBe(true);
      expect(set.get('k')).toBe('third');
      expect(set.size).toBe(1);
      clock.advance(100);
      expect(fired).toEqual(['k=first@5', 'k=third@25']);
      expect(set.size).toBe(0);
      expect(wheel.size).toBe(0);
    });

    it('may clear or close the set from the last onExpire of a key', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const set: TimerSet<string> = new TimerSet<string>({
        wheel,
        onExpire: (key) => {
          if (key === 'clear') {
            set.clear();
            set.set('after', 10, 'x');
          } else set.close();
        },
      });
      set.set('clear', 5, 'c');
      set.set('other', 50, 'o');
      clock.advance(5);
      expect([...set.keys()]).toEqual(['after']);
      expect(set.size).toBe(1);
      clock.advance(10);
      expect(set.size).toBe(0);
      expect(wheel.size).toBe(0);
    });

    it('may pause the whole set from a callback, stopping later expiries of the same pass', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const seen: string[] = [];
      const set: TimerSet<null> = new TimerSet<null>({
        wheel,
        onExpire: (key) => {
          seen.push(key as string);
          if (key === 'pause-game') set.pause();
        },
      });
      set.set('pause-game', 10, null);
      set.set('later', 20, null);
      clock.advance(100);
      expect(seen).toEqual(['pause-game']);
      expect(set.remaining('later')).toBe(10);
      set.resume();
      clock.advance(10);
      expect(seen).toEqual(['pause-game', 'later']);
    });

    it('passes a frozen info, for any number of stacks left', () => {
      const infos: ExpireInfo[] = [];
      const { wheel, clock } = setup();
      const set = new TimerSet<null, string>({ wheel, onExpire: (_key, _value, info) => infos.push(info) });
      for (let i = 0; i < 20; i++) set.set('k', 10 + i, null, { policy: 'stack' });
      clock.advance(100);
      expect(infos.map((info) => info.stacksLeft)).toEqual(Array.from({ length: 20 }, (_, i) => 19 - i));
      expect(infos.every((info) => Object.isFrozen(info))).toBe(true);
    });

    it('sees the remaining stacks while a stack expires', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const seen: number[] = [];
      const set: TimerSet<null> = new TimerSet<null>({
        wheel,
        onExpire: (key, _value, info) => seen.push(info.stacksLeft, set.stacks(key)),
      });
      set.set('k', 10, null, { policy: 'stack' });
      set.set('k', 20, null, { policy: 'stack' });
      clock.advance(20);
      expect(seen).toEqual([1, 1, 0, 0]);
    });

    it('lets an error from onExpire reach the wheel and keeps the other expiries going', () => {
      const clock = new ManualClock(0);
      const errors: unknown[] = [];
      const wheel = new TimingWheel({ clock, onError: (error) => errors.push(error) });
      const seen: string[] = [];
      const set = new TimerSet<null, string>({
        wheel,
        onExpire: (key) => {
          seen.push(key);
          if (key === 'bad') throw new Error('boom');
        },
      });
      set.set('bad', 10, null);
      set.set('good', 10, null);
      set.set('later', 20, null);
      clock.advance(20);
      expect(seen).toEqual(['bad', 'good', 'later']);
      expect(errors).toEqual([new Error('boom')]);
    });

    it('throws an error from onExpire out of clock.advance() when the wheel has no onError', () => {
      const { clock, wheel } = setup();
      const set = new TimerSet<null, string>({
        wheel,
        onExpire: () => {
          throw new Error('boom');
        },
      });
      set.set('bad', 10, null);
      expect(() => clock.advance(10)).toThrow('boom');
    });
  });

  describe('#clear / #close', () => {
    it('clear removes everything without onExpire; the set stays usable', () => {
      const { set, clock, fired } = setup();
      set.set('a', 10, 1);
      set.set('b', 10, 1, { policy: 'stack' });
      set.pause('a');
      set.clear();
      expect(set.size).toBe(0);
      clock.advance(100);
      expect(fired).toEqual([]);
      set.set('a', 10, 2);
      clock.advance(10);
      expect(fired).toEqual([[110, 'a', 2, 0]]);
    });

    it('lets its timers die with a closed wheel, without throwing from pause or resume', () => {
      const { set, wheel, clock, fired } = setup();
      set.set('a', 10, 1);
      set.set('b', 10, 1);
      set.pause('b');
      wheel.close();
      expect(set.pause()).toBe(true);
      expect(set.resume()).toBe(true);
      expect(set.resume('b')).toBe(true);
      clock.advance(100);
      expect(fired).toEqual([]);
      expect(() => set.set('c', 10, 1)).toThrow(/TimingWheel is closed/);
    });

    it('close releases the timer on the wheel', () => {
      const { set, wheel } = setup();
      set.set('a', 10, 1);
      expect(wheel.size).toBe(1);
      set.close();
      set.close();
      expect(wheel.size).toBe(0);
      expect(set.size).toBe(0);
    });
  });

  describe('README example', () => {
    it('logs what the README says it logs', () => {
      interface Buff {
        stat: 'armor' | 'speed';
        amount: number;
      }
      const log: string[] = [];
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const onExpire = (key: string | number, buff: Buff, { stacksLeft }: { stacksLeft: number }) =>
        log.push(`${key}: -${buff.amount} ${buff.stat}, ${stacksLeft} stack(s) left`);
      const buffs = new TimerSet<Buff>({ wheel, onExpire });
      const haste: Buff = { stat: 'speed', amount: 2 };
      const shield: Buff = { stat: 'armor', amount: 5 };
      buffs.set('hero:haste', 5_000, haste);
      buffs.set('hero:haste', 3_000, haste, { policy: 'max' });
      buffs.set('hero:shield', 4_000, shield, { policy: 'stack', maxStacks: 3 });
      buffs.set('hero:shield', 6_000, shield, { policy: 'stack', maxStacks: 3 });
      for (let tick = 0; tick < 20 * 4; tick++) clock.advance(50);
      expect(log).toEqual(['hero:shield: -5 armor, 1 stack(s) left']);
      buffs.pause();
      const saved = JSON.stringify(buffs.snapshot());
      buffs.close();
      const restored = TimerSet.restore<Buff>(JSON.parse(saved), { wheel, onExpire, offline: 'frozen' });
      restored.resume();
      for (let tick = 0; tick < 20 * 2; tick++) clock.advance(50);
      expect(log).toEqual([
        'hero:shield: -5 armor, 1 stack(s) left',
        'hero:haste: -2 speed, 0 stack(s) left',
        'hero:shield: -5 armor, 0 stack(s) left',
      ]);
    });
  });

  describe('on the system clock', () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    it('fires after its game time, not counting a pause, and holds remaining time while paused', async () => {
      // Read before the wheel exists: a delay counts from the job's first clock reading (the clock
      // contract), which the constructors below may take, so a reading after them would be late.
      const setAt = performance.now();
      const wheel = new TimingWheel();
      try {
        let resolveFired!: (at: number) => void;
        const fired = new Promise<number>((resolve) => (resolveFired = resolve));
        const set = new TimerSet<null, string>({ wheel, onExpire: () => resolveFired(performance.now()) });
        // Long enough that a loaded machine's late sleep(5) does not outlast it.
        set.set('k', 300, null);
        await sleep(5);
        set.pause();
        const pausedAt = performance.now();
        const frozen = set.remaining('k');
        await sleep(50);
        expect(set.remaining('k')).toBe(frozen);
        set.resume();
        const resumedAt = performance.now();
        const at = await fired;
        // Never early: 300 ms of game time, plus the pause (timing on both sides of the calls counts against us).
        expect(at - setAt).toBeGreaterThanOrEqual(300 + (resumedAt - pausedAt) - 2);
        expect(at - resumedAt).toBeGreaterThanOrEqual(frozen! - 2);
        expect(at - resumedAt).toBeLessThan(frozen! + 1000);
        expect(wheel.size).toBe(0);
      } finally {
        wheel.close();
      }
    });
  });

  describe('#snapshot / .restore', () => {
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    function populated() {
      const ctx = setup<{ name: string; power: number[] }>();
      const { set, clock } = ctx;
      set.set('hero:haste', 1000, { name: 'haste', power: [2] });
      set.set(42, 500, { name: 'bleed', power: [1, 2] }, { policy: 'stack' });
      clock.advance(100);
      set.set(42, 500, { name: 'bleed', power: [3] }, { policy: 'stack' });
      set.set('hero:stun', 300, { name: 'stun', power: [] });
      set.pause('hero:stun');
      clock.advance(100);
      return ctx;
    }

    it('produces plain JSON with keys, values, remaining time, stacks and paused state', () => {
      const { set } = populated();
      const saved = set.snapshot();
      expect(saved).toEqual({
        format: 'tickwheel.timer-set',
        version: 1,
        savedAt: Date.parse('2026-01-01T00:00:00Z'),
        paused: false,
        timeScale: 1,
        timers: [
          { key: 'hero:haste', value: { name: 'haste', power: [2] }, paused: false, remainingMs: [800] },
          { key: 42, value: { name: 'bleed', power: [3] }, paused: false, remainingMs: [300, 400] },
          { key: 'hero:stun', value: { name: 'stun', power: [] }, paused: true, remainingMs: [300] },
        ],
      } satisfies TimerSetSnapshot<{ name: string; power: number[] }>);
      expect(JSON.parse(JSON.stringify(saved))).toEqual(saved);
    });

    it('copies values, so later changes do not alter the save', () => {
      const { set } = setup<{ hp: number }>();
      const value = { hp: 1 };
      set.set('k', 10, value);
      const saved = set.snapshot();
      value.hp = 99;
      expect(saved.timers[0].value).toEqual({ hp: 1 });
    });

    it("round-trips with offline 'frozen': the same expiries after any time away", () => {
      const { set } = populated();
      const saved = JSON.parse(JSON.stringify(set.snapshot()));
      vi.setSystemTime(Date.now() + 3_600_000);
      const { clock, wheel, fired, onExpire } = setup(5000);
      const restored = TimerSet.restore(saved, { wheel, onExpire, offline: 'frozen' });
      expect(restored.size).toBe(3);
      expect(restored.stacks(42)).toBe(2);
      expect(restored.isPaused('hero:stun')).toBe(true);
      expect(restored.remaining('hero:stun')).toBe(300);
      expect(restored.get('hero:haste')).toEqual({ name: 'haste', power: [2] });
      clock.advance(1000);
      expect(fired).toEqual([
        [5300, 42, { name: 'bleed', power: [3] }, 1],
        [5400, 42, { name: 'bleed', power: [3] }, 0],
        [5800, 'hero:haste', { name: 'haste', power: [2] }, 0],
      ]);
      restored.resume('hero:stun');
      clock.advance(300);
      expect(fired[3]).toEqual([6300, 'hero:stun', { name: 'stun', power: [] }, 0]);
      expect(restored.snapshot().timers).toEqual([]);
    });

    it("round-trips with offline 'elapsed': running timers lose the time away, paused ones keep it", () => {
      const { set } = populated();
      const saved = JSON.parse(JSON.stringify(set.snapshot()));
      vi.setSystemTime(Date.now() + 350);
      const { clock, wheel, fired, onExpire } = setup(0);
      const restored = TimerSet.restore(saved, { wheel, onExpire, offline: 'elapsed' });
      expect(restored.remainingPerStack(42)).toEqual([0, 50]);
      expect(restored.remaining('hero:haste')).toBe(450);
      expect(restored.remaining('hero:stun')).toBe(300);
      expect(fired).toEqual([]);
      clock.advance(0);
      expect(fired).toEqual([[0, 42, { name: 'bleed', power: [3] }, 1]]);
      clock.advance(1000);
      expect(fired.slice(1)).toEqual([
        [50, 42, { name: 'bleed', power: [3] }, 0],
        [450, 'hero:haste', { name: 'haste', power: [2] }, 0],
      ]);
    });

    it('fires every timer that ran out while offline on the next pass, in snapshot order', () => {
      const { set } = populated();
      const saved = set.snapshot();
      vi.setSystemTime(Date.now() + 86_400_000);
      const { clock, wheel, fired, onExpire } = setup(0);
      TimerSet.restore(saved, { wheel, onExpire, offline: 'elapsed' });
      clock.advance(0);
      expect(fired.map((f) => [f[1], f[3]])).toEqual([
        ['hero:haste', 0],
        [42, 1],
        [42, 0],
      ]);
    });

    it("keeps every remaining time of a set saved while paused, even with 'elapsed'", () => {
      const { set } = populated();
      set.pause();
      const saved = set.snapshot();
      expect(saved.paused).toBe(true);
      vi.setSystemTime(Date.now() + 86_400_000);
      const { clock, wheel, fired, onExpire } = setup(0);
      const restored = TimerSet.restore(saved, { wheel, onExpire, offline: 'elapsed' });
      expect(restored.isPaused()).toBe(true);
      clock.advance(10_000);
      expect(fired).toEqual([]);
      expect(restored.remaining('hero:haste')).toBe(800);
      restored.resume();
      clock.advance(800);
      expect(fired.map((f) => f[0])).toEqual([10_300, 10_400, 10_800]);
    });

    it('ignores a wall clock that went backwards', () => {
      const { set } = populated();
      const saved = set.snapshot();
      vi.setSystemTime(Date.now() - 60_000);
      const { wheel, onExpire } = setup(0);
      const restored = TimerSet.restore(saved, { wheel, onExpire, offline: 'elapsed' });
      expect(restored.remaining('hero:haste')).toBe(800);
    });

    it.each([
      ['a function', { fn: () => 1 }, /key "k" cannot be saved: value\.fn is a function/],
      ['undefined', { a: undefined }, /value\.a is undefined/],
      ['NaN', [1, NaN], /value\[1\] is NaN/],
      ['Infinity', Infinity, /value is Infinity/],
      ['a bigint', 1n, /value is a bigint/],
      ['a symbol', Symbol('s'), /value is a symbol/],
      ['a Date', { at: new Date(0) }, /value\.at is a Date instance/],
      ['a Map', new Map(), /value is a Map instance/],
      ['a class instance', new (class Buff {})(), /value is a Buff instance/],
      // eslint-disable-next-line no-sparse-arrays -- the hole is the point: JSON would turn it into null
      ['a sparse array', [1, , 3], /value is an array with holes or extra properties/],
      [
        'an array with extra properties',
        Object.assign([1], { extra: true }),
        /value is an array with holes or extra properties/,
      ],
      ['a getter', Object.defineProperty({}, 'x', { get: () => 1, enumerable: true }), /value\.x is a getter/],
      ['symbol keys', { [Symbol('s')]: 1 }, /has symbol keys/],
    ])('refuses %s in a value, naming the key', (_what, value, message) => {
      const { set } = setup<unknown>();
      set.set('ok', 10, { fine: [1, 'two', null, true, { deep: 1.5 }] });
      set.set('k', 10, value);
      expect(() => set.snapshot()).toThrow(TypeError);
      expect(() => set.snapshot()).toThrow(message);
    });

    it('refuses a cycle', () => {
      const { set } = setup<unknown>();
      const value: Record<string, unknown> = { a: 1 };
      value.self = value;
      set.set('loop', 10, value);
      expect(() => set.snapshot()).toThrow(/key "loop" cannot be saved: value\.self refers back to itself/);
    });

    it('keeps an own "__proto__" key as a key', () => {
      const { set } = setup<unknown>();
      const value = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as unknown;
      set.set('k', 10, value);
      const copy = set.snapshot().timers[0].value;
      expect(JSON.stringify(copy)).toBe('{"__proto__":{"x":1},"y":2}');
      expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    });

    it('accepts shared (non-cyclic) references and null-prototype objects', () => {
      const { set } = setup<unknown>();
      const shared = { x: 1 };
      const bare = Object.assign(Object.create(null) as object, { y: 2 });
      set.set('k', 10, { a: shared, b: shared, bare });
      expect(set.snapshot().timers[0].value).toEqual({ a: { x: 1 }, b: { x: 1 }, bare: { y: 2 } });
    });

    it('refuses keys that are not strings or finite numbers, naming them', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const set = new TimerSet<number, unknown>({ wheel, onExpire: () => {} });
      set.set({ entity: 1 }, 10, 1);
      expect(() => set.snapshot()).toThrow(
        /snapshot: key \{"entity":1\} cannot be saved: snapshot\(\) needs string or finite number keys/,
      );
      set.clear();
      set.set(NaN, 10, 1);
      expect(() => set.snapshot()).toThrow(/key NaN cannot be saved/);
    });

    describe('bad saves', () => {
      function good(): TimerSetSnapshot<number> {
        return {
          format: 'tickwheel.timer-set',
          version: 1,
          savedAt: 0,
          paused: false,
          timers: [{ key: 'a', value: 1, paused: false, remainingMs: [10] }],
        };
      }
      it.each([
        ['not an object', () => null, /saved must be a TimerSet snapshot object, got null/],
        [
          'a wrong format',
          (s: TimerSetSnapshot<number>) => ({ ...s, format: 'x' }),
          /saved\.format must be "tickwheel\.timer-set", got "x"/,
        ],
        ['a newer version', (s: TimerSetSnapshot<number>) => ({ ...s, version: 2 }), /saved\.version must be 1, got 2/],
        [
          'no savedAt',
          (s: TimerSetSnapshot<number>) => ({ ...s, savedAt: undefined }),
          /saved\.savedAt must be a finite number/,
        ],
        ['a bad paused', (s: TimerSetSnapshot<number>) => ({ ...s, paused: 'no' }), /saved\.paused must be a boolean/],
        ['no timers', (s: TimerSetSnapshot<number>) => ({ ...s, timers: {} }), /saved\.timers must be an array/],
        [
          'an object key',
          (s: TimerSetSnapshot<number>) => ({ ...s, timers: [{ ...s.timers[0], key: {} }] }),
          /saved\.timers\[0\]\.key must be a string or a finite number/,
        ],
        [
          'a duplicate key',
          (s: TimerSetSnapshot<number>) => ({ ...s, timers: [s.timers[0], s.timers[0]] }),
          /saved\.timers\[1\]\.key "a" appears twice/,
        ],
        [
          'a negative remaining',
          (s: TimerSetSnapshot<number>) => ({ ...s, timers: [{ ...s.timers[0], remainingMs: [-1] }] }),
          /saved\.timers\[0\]\.remainingMs \(key "a"\) must hold finite numbers >= 0, got -1/,
        ],
        [
          'no stacks',
          (s: TimerSetSnapshot<number>) => ({ ...s, timers: [{ ...s.timers[0], remainingMs: [] }] }),
          /remainingMs \(key "a"\) must be a non-empty array/,
        ],
        [
          'a missing value',
          (s: TimerSetSnapshot<number>) => ({ ...s, timers: [{ key: 'a', paused: false, remainingMs: [1] }] }),
          /saved\.timers\[0\]\.value \(key "a"\) is missing/,
        ],
        [
          'a bad per-key paused',
          (s: TimerSetSnapshot<number>) => ({ ...s, timers: [{ ...s.timers[0], paused: 1 }] }),
          /saved\.timers\[0\]\.paused \(key "a"\) must be a boolean/,
        ],
      ])('rejects a save with %s and schedules nothing', (_what, mangle, message) => {
        const { wheel, onExpire } = setup();
        const bad: unknown = mangle(good());
        expect(() => TimerSet.restore(bad as TimerSetSnapshot<number>, { wheel, onExpire, offline: 'frozen' })).toThrow(
          message,
        );
        expect(wheel.size).toBe(0);
      });

      it('rejects a missing or unknown offline mode', () => {
        const { wheel, onExpire } = setup();
        expect(() => TimerSet.restore(good(), { wheel, onExpire } as never)).toThrow(
          /offline must be 'frozen' or 'elapsed', got undefined/,
        );
        expect(() => TimerSet.restore(good(), { wheel, onExpire, offline: 'skip' as never })).toThrow(RangeError);
        expect(() => TimerSet.restore(good(), null as never)).toThrow(/options must be an object/);
        expect(wheel.size).toBe(0);
      });

      it('rejects an unknown option, naming it', () => {
        const { set } = setup();
        set.set('a', 10, 1);
        const saved = set.snapshot();
        const { wheel, onExpire } = setup();
        expect(() => TimerSet.restore(saved, { wheel, onExpire, offline: 'frozen', ofline: 'x' } as never)).toThrow(
          '@tickwheel/core: unknown option ofline; known options: wheel, onExpire, offline, timeScale',
        );
        expect(wheel.size).toBe(0);
      });

      it('rejects a missing onExpire', () => {
        const { wheel } = setup();
        expect(() => TimerSet.restore(good(), { wheel, offline: 'frozen' } as never)).toThrow(
          /onExpire must be a function/,
        );
      });
    });
  });
});
