/**
 * undici's fast timers tests (test/timers.js for lib/util/timers.js), translated. undici runs
 * them under @sinonjs/fake-timers with `clock.tick(1)` steps; here vitest's fake timers (the
 * same library) drive the wheel's system clock and native timer, which is the setting undici
 * users are in. undici's fast timers tick every 499 ms, so its tests accept being up to
 * ACCEPTABLE_DELTA (700 ms) late; this wheel has 1 ms ticks and is held to 1 ms.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SystemClock, TimingWheel } from '../src/index.js';

/** Late beyond this, in ms, is a failure here (undici: 700). */
const ACCEPTABLE_DELTA = 1;

function tick(ms: number): void {
  // undici's tick(): one fake ms at a time, so every timer callback sees its own turn.
  for (let i = 0; i < ms; i++) vi.advanceTimersByTime(1);
}

describe('undici test/timers.js', () => {
  let wheel: TimingWheel;
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'performance'] });
    wheel = new TimingWheel({ clock: new SystemClock() });
  });
  afterEach(() => {
    wheel.close();
    vi.useRealTimers();
  });

  it('clearTimeout can clear a timer (a FastTimer can be cleared)', () => {
    let fired = false;
    const timer = wheel.schedule(1001, () => (fired = true));
    expect(timer.cancel()).toBe(true);
    tick(1500);
    expect(fired).toBe(false);
    expect(timer.state).toBe('cancelled');
  });

  it('a cleared FastTimer can be refreshed', () => {
    let fired = 0;
    const timer = wheel.schedule(1001, () => fired++);
    timer.cancel();
    timer.refresh();
    tick(2000);
    expect(fired).toBe(1);
  });

  /** A timer of `delayMs` refreshed by native timers at `refreshAt`; returns how late it fired after `targetMs`. */
  function refreshedLateness(delayMs: number, refreshAt: number[], targetMs: number, runMs: number): number {
    const start = performance.now();
    let delta = Number.NaN;
    const timeout = wheel.schedule(delayMs, () => (delta = performance.now() - start - targetMs));
    for (const at of refreshAt) setTimeout(() => timeout.refresh(), at);
    tick(runMs);
    return delta;
  }

  it('refresh correctly with timeout < TICK_MS: 80 ms refreshed at 40, 80, 120 fires at 200', () => {
    const delta = refreshedLateness(80, [40, 80, 120], 200, 500);
    expect(delta).toBeGreaterThanOrEqual(0);
    expect(delta).toBeLessThanOrEqual(ACCEPTABLE_DELTA);
  });

  it('refresh correctly with timeout > TICK_MS: 501 ms refreshed at 250, 750, 1250 fires at 1751', () => {
    const delta = refreshedLateness(501, [250, 750, 1250], 1751, 2000);
    expect(delta).toBeGreaterThanOrEqual(0);
    expect(delta).toBeLessThanOrEqual(ACCEPTABLE_DELTA);
  });

  it('refresh correctly FastTimer with timeout > TICK_MS: 1001 ms refreshed every 250 ms four times', () => {
    const longRunning = wheel.schedule(1e10, () => undefined);
    const start = performance.now();
    let delta = Number.NaN;
    // undici's fast clock advances in 499 ms steps, so it expects 2493; this wheel's is exact: 2001.
    const timeout = wheel.schedule(1001, () => (delta = performance.now() - start - 2001));
    for (let i = 0; i < 4; i++) {
      tick(250);
      timeout.refresh();
    }
    longRunning.cancel();
    tick(5000);
    expect(delta).toBeGreaterThanOrEqual(0);
    expect(delta).toBeLessThanOrEqual(ACCEPTABLE_DELTA);
  });

  it('meet acceptable resolution time: 15 delays from 0 to 5000 ms, none early, none late', () => {
    const targets = [0, 1, 499, 500, 501, 990, 999, 1000, 1001, 1100, 1400, 1499, 1500, 4000, 5000];
    const start = performance.now();
    const deltas = new Map<number, number>();
    for (const target of targets) wheel.schedule(target, () => deltas.set(target, performance.now() - start - target));
    tick(6000);
    expect([...deltas.keys()].sort((a, b) => a - b)).toEqual(targets);
    for (const delta of deltas.values()) {
      expect(delta).toBeGreaterThanOrEqual(0);
      expect(delta).toBeLessThanOrEqual(ACCEPTABLE_DELTA);
    }
  });

  it('a FastTimer will only increment by the defined TICK_MS value (here: the wheel reads the clock, no internal stepping)', () => {
    // undici keeps its own coarse clock that only moves by 499 ms when its timer fires; this
    // wheel keeps no clock of its own, so a timer's remaining time follows the clock exactly.
    const h = wheel.schedule(1e10, () => undefined);
    const first = h.remaining();
    for (let i = 1; i <= 6; i++) {
      tick(250);
      expect(first - h.remaining()).toBe(250 * i);
    }
  });
});
