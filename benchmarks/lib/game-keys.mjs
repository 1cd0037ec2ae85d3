/**
 * The game suite's key scenarios: delete + set of random keys against a plain Map, and whole-set pause.
 * Must not depend on: ClockTimer (it has no keys) or the suite's scenario records.
 *
 * A TimerSet of `keys` keys and a plain Map of as many keys are built side by side in one
 * process, so both see the same memory hierarchy and the same neighbours' load; then blocks of
 * delete + set pairs on random keys run on one and on the other in turn (the first of each round
 * alternating), and each block is one sample. The ratio of the medians is TimerSet's cost in
 * Maps: its own Map lookups plus the timer.
 */
import { ManualClock, TimerSet, TimingWheel } from '@tickwheel/core';
import { gc } from './harness.mjs';
import { prng } from './harness.mjs';

/** Pairs per block: long enough for a stable figure (tens of ms), short enough for many blocks. */
export const BLOCK_PAIRS = 50_000;
/** Durations of 1 to 61 s, as buffs and cooldowns, so timers spread over the wheel's first two levels. */
const durationMs = (i) => 1_000 + (i % 60_000);

/**
 * Samples of ns per delete + set pair for a TimerSet and a Map of `keys` keys, `rounds` blocks
 * each, alternating, plus ns per whole-set pause() + advance(1) + resume().
 */
export function keyChurn(keys, rounds) {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  const set = new TimerSet({ wheel, onExpire: () => {} });
  const map = new Map();
  const buff = { power: 1 };
  for (let i = 0; i < keys; i++) {
    set.set(i, durationMs(i), buff);
    map.set(i, buff);
  }
  const pick = prng(keys);
  const targets = new Int32Array(2 * rounds * BLOCK_PAIRS);
  for (let i = 0; i < targets.length; i++) targets[i] = Math.floor(pick() * keys);
  let next = 0;
  const timerSetBlock = () => {
    const t0 = performance.now();
    for (let i = 0; i < BLOCK_PAIRS; i++) {
      const key = targets[next++];
      set.delete(key);
      set.set(key, durationMs(i), buff);
    }
    return ((performance.now() - t0) * 1e6) / BLOCK_PAIRS;
  };
  const mapBlock = () => {
    const t0 = performance.now();
    for (let i = 0; i < BLOCK_PAIRS; i++) {
      const key = targets[next++];
      map.delete(key);
      map.set(key, buff);
    }
    return ((performance.now() - t0) * 1e6) / BLOCK_PAIRS;
  };
  const samples = { timerSet: [], map: [] };
  gc();
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      samples.timerSet.push(timerSetBlock());
      samples.map.push(mapBlock());
    } else {
      samples.map.push(mapBlock());
      samples.timerSet.push(timerSetBlock());
    }
  }
  map.clear();
  const t0 = performance.now();
  for (let i = 0; i < 10_000; i++) {
    set.pause();
    clock.advance(1);
    set.resume();
  }
  const pauseNs = ((performance.now() - t0) * 1e6) / 10_000;
  set.close();
  wheel.close();
  return { ...samples, pauseNs };
}
