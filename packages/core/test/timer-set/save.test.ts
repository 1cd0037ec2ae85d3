import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/index.js';
import { loadTimers, saveTimers, stackTimes } from '../../src/timer-set/save.js';
import { KeyTable } from '../../src/timer-set/key-table.js';
import { REPLACE, STACK } from '../../src/timer-set/options.js';

/** Diagnostics off: no subscriber, nothing published. */
const NO_REPORT = { channel: { hasSubscribers: false }, publish: () => undefined };

function store<K>(clock: ManualClock, fired: unknown[] = []): KeyTable<K, { power: number }> {
  return new KeyTable<K, { power: number }>(
    clock,
    (wake) => clock.createDriver(wake),
    (key) => fired.push(key),
    NO_REPORT,
    1000, // the wheel's default loopLimit
  );
}

describe('saveTimers', () => {
  it('saves every key in key order with deep-copied values and each stack’s remaining time', () => {
    const clock = new ManualClock(0);
    const keys = store<string>(clock);
    const value = { power: 2 };
    keys.set('hero:dot', 3_000, value, STACK, Infinity);
    clock.advance(1_000);
    keys.set('hero:dot', 3_000, value, STACK, Infinity);
    keys.set('orc:slow', 500, { power: 1 }, REPLACE, Infinity);
    keys.pauseKey(keys.live('orc:slow'));
    const saved = saveTimers(keys);
    expect(saved).toEqual([
      { key: 'hero:dot', value: { power: 2 }, paused: false, remainingMs: [2_000, 3_000] },
      { key: 'orc:slow', value: { power: 1 }, paused: true, remainingMs: [500] },
    ]);
    value.power = 9;
    expect(saved[0].value).toEqual({ power: 2 });
  });

  it('names a key that JSON cannot hold, and saves nothing', () => {
    const clock = new ManualClock(0);
    const keys = store<unknown>(clock);
    keys.set('ok', 10, { power: 1 }, REPLACE, Infinity);
    keys.set({ id: 1 }, 10, { power: 1 }, REPLACE, Infinity);
    expect(() => saveTimers(keys)).toThrow(/key \{.*\} cannot be saved/);
  });
});

describe('loadTimers', () => {
  it('sets the saved stacks, running ones shortened by the time elapsed (never below 0), paused ones as saved', () => {
    const clock = new ManualClock(0);
    const fired: unknown[] = [];
    const keys = store<string | number>(clock, fired);
    loadTimers(
      keys,
      [
        { key: 'a', value: { power: 1 }, paused: false, remainingMs: [100, 5_000] },
        { key: 7, value: { power: 2 }, paused: true, remainingMs: [50] },
      ],
      [{ power: 1 }, { power: 2 }],
      1_000,
    );
    const a = keys.live('a');
    expect(stackTimes(keys, a)).toEqual([0, 4_000]);
    expect(stackTimes(keys, keys.live(7))).toEqual([50]);
    expect(keys.isPaused(keys.live(7))).toBe(true);
    clock.advance(4_000);
    expect(fired).toEqual(['a', 'a']);
  });
});
