import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock, TimerSet, TimingWheel, type ExpireInfo } from '../../src/index.js';

type Fired = [atMs: number, key: string | number, value: unknown, stacksLeft: number];

/** A set on a fresh ManualClock (wheel time = the clock's) that records every expiry as [wheel time, key, value, stacksLeft]. */
function setup<V = unknown>(options: { startMs?: number; timeScale?: number; tickMs?: number } = {}) {
  const clock = new ManualClock(options.startMs ?? 0);
  const wheel = new TimingWheel({ clock, tickMs: options.tickMs ?? 1 });
  const fired: Fired[] = [];
  const onExpire = (key: string | number, value: V, info: ExpireInfo) =>
    fired.push([clock.now(), key, value, info.stacksLeft]);
  const set = new TimerSet<V>({ wheel, onExpire, timeScale: options.timeScale });
  return { clock, wheel, fired, onExpire, set };
}

describe('TimerSet', () => {
  describe('timeScale', () => {
    it('defaults to 1 and takes the constructor option', () => {
      expect(setup().set.timeScale).toBe(1);
      expect(setup({ timeScale: 0.25 }).set.timeScale).toBe(0.25);
    });

    it('runs game time at the factor: a 1 s timer at 0.5 takes 2 s of wheel time', () => {
      const { set, clock, fired } = setup({ timeScale: 0.5 });
      set.set('hero:haste', 1_000, 'haste');
      clock.advance(1_000);
      expect(set.remaining('hero:haste')).toBe(500);
      expect(set.clock.now()).toBe(500);
      clock.advance(999);
      expect(fired).toEqual([]);
      clock.advance(1);
      expect(fired).toEqual([[2_000, 'hero:haste', 'haste', 0]]);
    });

    it('measures durations given while scaled in game time', () => {
      const { set, clock, fired } = setup({ timeScale: 4 });
      clock.advance(10);
      set.set('a', 100, 1);
      clock.advance(24);
      expect(fired).toEqual([]);
      expect(set.remaining('a')).toBe(4);
      clock.advance(1);
      expect(fired).toEqual([[35, 'a', 1, 0]]);
    });
  });

  describe('#setTimeScale', () => {
    it('keeps every remaining game time and rescales the wheel time left, with one outer timer', () => {
      const { set, clock, wheel, fired } = setup();
      for (let i = 0; i < 1_000; i++) set.set(i, 1_000 + i, i);
      clock.advance(400);
      expect(set.remaining(0)).toBe(600);
      expect(set.setTimeScale(2)).toBe(set);
      expect(set.timeScale).toBe(2);
      // Game time left is unchanged; it now runs out in half the wheel time.
      expect(set.remaining(0)).toBe(600);
      expect(set.remaining(999)).toBe(1_599);
      expect(wheel.size).toBe(1);
      clock.advance(299);
      expect(fired).toEqual([]);
      clock.advance(1);
      expect(fired).toEqual([[700, 0, 0, 0]]);
      clock.advance(1_000);
      expect(fired).toHaveLength(1_000);
      // Key i is due at game time 1000 + i, reached at wheel time 400 + (600 + i) / 2.
      for (const [at, key] of fired) expect(at).toBe(400 + Math.ceil((600 + (key as number)) / 2));
    });

    it('slows down and speeds up again: the game time of each stretch adds up', () => {
      const { set, clock, fired } = setup();
      set.set('dot', 1_000, null);
      clock.advance(100); // 100 game ms
      set.setTimeScale(0.1);
      clock.advance(1_000); // 100 game ms
      expect(set.remaining('dot')).toBe(800);
      set.setTimeScale(4);
      clock.advance(199); // 796 game ms
      expect(fired).toEqual([]);
      expect(set.remaining('dot')).toBe(4);
      clock.advance(1);
      expect(fired).toEqual([[1_300, 'dot', null, 0]]);
    });

    it('freezes the set at 0 like pause(), with no outer timer, until a factor above 0', () => {
      const { set, clock, wheel, fired } = setup();
      set.set('a', 100, 1);
      set.set('b', 300, 2);
      clock.advance(50);
      set.setTimeScale(0);
      expect(wheel.size).toBe(0);
      clock.advance(1_000_000);
      expect(fired).toEqual([]);
      expect(set.remaining('a')).toBe(50);
      expect(set.isPaused()).toBe(false);
      expect(set.clock.now()).toBe(50);
      // Timers set while frozen wait too, in game time.
      set.set('c', 10, 3);
      clock.advance(1_000);
      expect(fired).toEqual([]);
      set.setTimeScale(1);
      clock.advance(60);
      expect(fired.map((f) => [f[0] - 1_001_050, f[1]])).toEqual([
        [10, 'c'],
        [50, 'a'],
      ]);
    });

    it('is separate from pause(): the scale applies on resume(), and resume() does not undo a scale of 0', () => {
      const { set, clock, fired } = setup();
      set.set('a', 100, 1);
      expect(set.pause()).toBe(true);
      set.setTimeScale(2);
      clock.advance(1_000);
      expect(fired).toEqual([]);
      expect(set.remaining('a')).toBe(100);
      expect(set.resume()).toBe(true);
      clock.advance(49);
      expect(fired).toEqual([]);
      clock.advance(1);
      expect(fired).toEqual([[1_050, 'a', 1, 0]]);

      set.set('b', 100, 2);
      set.setTimeScale(0);
      expect(set.pause()).toBe(true);
      expect(set.isPaused()).toBe(true);
      expect(set.resume()).toBe(true);
      clock.advance(10_000);
      expect(fired).toHaveLength(1);
      expect(set.isPaused()).toBe(false);
      set.setTimeScale(0.5);
      clock.advance(200);
      expect(fired[1]).toEqual([11_250, 'b', 2, 0]);
    });

    it('leaves a key paused with pause(key) frozen, and runs it at the scale once resumed', () => {
      const { set, clock, fired } = setup();
      set.set('stun', 100, null);
      clock.advance(40);
      set.pause('stun');
      set.setTimeScale(3);
      clock.advance(1_000);
      expect(set.remaining('stun')).toBe(60);
      set.resume('stun');
      clock.advance(19);
      expect(fired).toEqual([]);
      clock.advance(1);
      expect(fired).toEqual([[1_060, 'stun', null, 0]]);
    });

    it('applies policies in game time', () => {
      const { set, clock } = setup({ timeScale: 2 });
      set.set('a', 1_000, 1);
      clock.advance(100); // 200 game ms
      set.set('a', 300, 2, { policy: 'extend' });
      expect(set.remaining('a')).toBe(1_100);
      set.set('a', 2_000, 3, { policy: 'max' });
      expect(set.remaining('a')).toBe(2_000);
      set.set('a', 500, 4, { policy: 'stack' });
      expect(set.remainingPerStack('a')).toEqual([2_000, 500]);
    });

    it('may change the scale from onExpire: later expiries of the same pass keep their game time', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const fired: [number, string][] = [];
      const set = new TimerSet<null, string>({
        wheel,
        onExpire: (key) => {
          fired.push([clock.now(), key]);
          if (key === 'slow-mo') set.setTimeScale(0.5);
        },
      });
      set.set('slow-mo', 100, null);
      set.set('later', 200, null);
      clock.advance(100);
      expect(fired).toEqual([[100, 'slow-mo']]);
      clock.advance(199);
      expect(fired).toHaveLength(1);
      clock.advance(1);
      expect(fired[1]).toEqual([300, 'later']);
    });

    it('takes tiny and huge factors without hanging or firing early', () => {
      const { set, clock, fired } = setup();
      set.set('a', 1_000, 1);
      set.setTimeScale(1e-300);
      clock.advance(1e9);
      expect(fired).toEqual([]);
      expect(set.remaining('a')).toBeGreaterThan(999);
      set.setTimeScale(1e6);
      clock.advance(1);
      expect(fired).toHaveLength(1);
      expect(set.has('a')).toBe(false);
    });

    it.each([
      [-1, '-1'],
      [-0.5, '-0.5'],
      [NaN, 'NaN'],
      [Infinity, 'Infinity'],
      [-Infinity, '-Infinity'],
    ])('refuses %s with a RangeError naming @tickwheel/core, timeScale and the value', (factor, shown) => {
      const { set, clock, fired } = setup();
      set.set('a', 100, 1);
      const message = `@tickwheel/core: timeScale must be a finite number >= 0, got ${shown}`;
      expect(() => set.setTimeScale(factor)).toThrow(RangeError);
      expect(() => set.setTimeScale(factor)).toThrow(message);
      expect(() => setup({ timeScale: factor })).toThrow(message);
      // Nothing changed.
      expect(set.timeScale).toBe(1);
      clock.advance(100);
      expect(fired).toHaveLength(1);
    });

    it('refuses a factor that is not a number with a TypeError', () => {
      const { set } = setup();
      expect(() => set.setTimeScale('2' as never)).toThrow(TypeError);
      expect(() => set.setTimeScale('2' as never)).toThrow(
        '@tickwheel/core: timeScale must be a finite number >= 0, got "2"',
      );
      expect(() => setup({ timeScale: null as never })).toThrow(TypeError);
    });
  });

  describe('on a 60 Hz stepped loop', () => {
    const FRAME_MS = 1000 / 60;

    it('fires a periodic effect every 500 ms of game time, never early and at most one frame late, as the scale changes', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock, tickMs: FRAME_MS });
      const ticks: { frame: number; game: number; due: number }[] = [];
      let frame = 0;
      let due = 500;
      const set = new TimerSet<null, string>({
        wheel,
        onExpire: (key) => {
          ticks.push({ frame, game: set.clock.now(), due });
          due += 500;
          set.set(key, 500, null);
        },
      });
      set.set('burn', 500, null);
      const gameAt: number[] = [];
      const scales = [1, 0.5, 2, 0.25, 1];
      // 2 s of wheel time at each scale: 2 + 1 + 4 + 0.5 + 2 = 9.5 s of game time.
      for (const scale of scales) {
        set.setTimeScale(scale);
        for (let i = 0; i < 120; i++) {
          frame++;
          clock.advance(FRAME_MS);
          gameAt[frame] = set.clock.now();
        }
      }
      expect(set.clock.now()).toBeCloseTo(9_500, 6);
      expect(ticks).toHaveLength(19);
      for (const t of ticks) {
        expect(t.game).toBeGreaterThanOrEqual(t.due);
        // The frame before the one it fired on had not reached its due time.
        expect(gameAt[t.frame - 1] ?? 0).toBeLessThan(t.due);
      }
    });

    it('freezes a running world at 0 between frames and picks up where it stopped', () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock, tickMs: FRAME_MS });
      const fired: { key: number; frame: number }[] = [];
      let frame = 0;
      const gameAt: number[] = [0];
      const set = new TimerSet<null, number>({ wheel, onExpire: (key) => fired.push({ key, frame }) });
      // Key k lasts 5 (k + 1) frames of game time, all set on frame 0.
      const dueOf = (k: number) => 5 * (k + 1) * FRAME_MS;
      for (let k = 0; k < 10; k++) set.set(k, dueOf(k), null);
      const step = (frames: number) => {
        for (let i = 0; i < frames; i++) {
          frame++;
          clock.advance(FRAME_MS);
          gameAt[frame] = set.clock.now();
        }
      };
      step(12);
      set.setTimeScale(0);
      step(600);
      expect(fired.map((f) => f.key)).toEqual([0, 1]);
      set.setTimeScale(1);
      step(50);
      expect(fired.map((f) => f.key)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(gameAt[612]).toBe(gameAt[12]);
      for (const { key, frame: at } of fired) {
        // Never early; at most one frame past the whole game millisecond it was filed for.
        expect(gameAt[at]).toBeGreaterThanOrEqual(dueOf(key));
        expect(gameAt[at - 1]).toBeLessThan(Math.ceil(dueOf(key)));
        if (key >= 2) expect(at).toBeGreaterThan(612);
      }
    });
  });

  describe('#snapshot / .restore with a time scale', () => {
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it('saves game time and the scale, and restores the scale', () => {
      const { set, clock } = setup({ timeScale: 0.5 });
      set.set('a', 1_000, 'v');
      clock.advance(400);
      const saved = JSON.parse(JSON.stringify(set.snapshot()));
      expect(saved.timeScale).toBe(0.5);
      expect(saved.timers[0].remainingMs).toEqual([800]);
      const next = setup();
      const restored = TimerSet.restore(saved, { wheel: next.wheel, onExpire: next.onExpire, offline: 'frozen' });
      expect(restored.timeScale).toBe(0.5);
      next.clock.advance(1_599);
      expect(next.fired).toEqual([]);
      next.clock.advance(1);
      expect(next.fired).toEqual([[1_600, 'a', 'v', 0]]);
    });

    it("counts time away at the saved scale with offline 'elapsed', and takes a timeScale option over the save's", () => {
      const { set } = setup({ timeScale: 2 });
      set.set('a', 1_000, 'v');
      const saved = set.snapshot();
      vi.setSystemTime(Date.now() + 300);
      const next = setup();
      const restored = TimerSet.restore(saved, {
        wheel: next.wheel,
        onExpire: next.onExpire,
        offline: 'elapsed',
        timeScale: 1,
      });
      // 300 ms away at 2x: 600 game ms gone.
      expect(restored.remaining('a')).toBe(400);
      expect(restored.timeScale).toBe(1);
    });

    it('reads a save without a timeScale as 1, and refuses a bad one', () => {
      const { set } = setup();
      set.set('a', 100, 'v');
      const { timeScale: _dropped, ...old } = set.snapshot();
      const next = setup();
      const options = { wheel: next.wheel, onExpire: next.onExpire, offline: 'frozen' as const };
      expect(TimerSet.restore(old, options).timeScale).toBe(1);
      expect(() => TimerSet.restore({ ...old, timeScale: -2 }, options)).toThrow(
        'saved.timeScale must be a finite number >= 0, got -2',
      );
      expect(() => TimerSet.restore(old, { ...options, timeScale: NaN })).toThrow(
        '@tickwheel/core: timeScale must be a finite number >= 0, got NaN',
      );
      expect(next.wheel.size).toBe(1);
    });
  });

  // Translated from pomdog (mogemimi/pomdog, test/FrameworkTest/Application/TimerTest.cpp,
  // TEST(Timer, Scale) and TEST(Timer, Scaling)): a timer's time is the game clock's time times
  // its scale. pomdog samples a real clock over 100 sleeps and compares within an epsilon; here a
  // ManualClock makes the product exact. pomdog also accepts a negative scale; a TimerSet refuses
  // it (game time never runs backwards, so a timer never un-expires).
  describe('pomdog Timer tests', () => {
    it('Scale: reads back the factor it was given, 0 included', () => {
      const { set } = setup();
      set.setTimeScale(0.5);
      expect(set.timeScale).toBe(0.5);
      set.setTimeScale(0);
      expect(set.timeScale).toBe(0);
      expect(() => set.setTimeScale(-0.5)).toThrow(RangeError);
      expect(set.timeScale).toBe(0);
    });

    it('Scaling: after 100 ticks the game time is the clock time times the scale', () => {
      const scale = 0.4;
      const { set, clock } = setup({ startMs: 0, timeScale: scale });
      for (let i = 0; i < 100; i++) clock.advance(10);
      expect(set.clock.now()).toBeCloseTo(clock.now() * scale, 9);
    });
  });

  // Translated from FastLED (FastLED/FastLED, tests/test_fx_time.cpp, TEST_CASE "TimeScale basic
  // functionality", SUBCASE "Time scaling"): starting at 1000 ms, 500 ms at 2x add 1000 ms of
  // scaled time, then 1000 ms at 0.5x add 500 more. Its last SUBCASE (a negative scale clamped
  // at the start time) has no counterpart: a negative scale is refused here.
  describe('FastLED TimeScale tests', () => {
    it('Time scaling: each stretch adds its wall time times the scale in force', () => {
      const { set, clock } = setup({ startMs: 1_000 });
      const start = set.clock.now();
      set.setTimeScale(2);
      expect(set.clock.now() - start).toBe(0);
      clock.advanceTo(1_500);
      expect(set.clock.now() - start).toBe(1_000);
      set.setTimeScale(0.5);
      expect(set.timeScale).toBe(0.5);
      clock.advanceTo(2_500);
      expect(set.clock.now() - start).toBe(1_500);
    });
  });
});
