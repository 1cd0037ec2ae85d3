/**
 * The game suite's world: 500,000 buffs on 100,000 entities, and its candidates (TimerSet, ClockTimer).
 * Must not depend on: the suite's scenario records or the results file (suites/game.mjs builds those).
 *
 * Both candidates drive the same simulated world in one process: the same first expiries, the
 * same refreshes per tick, the same 20 Hz fixed step. See suites/game.mjs for what is compared.
 */
import { ManualClock, TimerSet, TimingWheel } from '@tickwheel/core';
import { ClockTimer } from '@colyseus/timer';
import { cpuMicros, gc, memoryAfterGc, prng } from './harness.mjs';

export const ENTITIES = 100_000;
export const BUFFS_PER_ENTITY = 5;
export const BUFFS = ENTITIES * BUFFS_PER_ENTITY;
export const STEP_MS = 50;
export const DURATIONS_MS = [2_000, 5_000, 10_000, 30_000, 60_000];
export const REFRESHES_PER_TICK = 500;
export const WARM_TICKS = 3;
/** ClockTimer needs over a second per busy tick at this size, so the compared window is short... */
export const MEASURED_TICKS = 6;
/** ...and TimerSet alone then runs this many more ticks, for a steadier figure of its own. */
export const LONG_TICKS = 200;

const random = prng(20_260_101);
/** First expiry of each buff: a whole number of ticks into its duration, so expiries are spread evenly. */
export const initialMs = new Int32Array(BUFFS);
for (let i = 0; i < BUFFS; i++) {
  const steps = DURATIONS_MS[i % BUFFS_PER_ENTITY] / STEP_MS;
  initialMs[i] = STEP_MS * (1 + Math.floor(random() * steps));
}
const maxTicks = WARM_TICKS + MEASURED_TICKS + LONG_TICKS;
const refreshTargets = new Int32Array(maxTicks * REFRESHES_PER_TICK);
for (let i = 0; i < refreshTargets.length; i++) refreshTargets[i] = Math.floor(random() * BUFFS);

export const makeBuff = (i) => ({
  entity: (i / BUFFS_PER_ENTITY) | 0,
  kind: i % BUFFS_PER_ENTITY,
  power: 1 + (i % 3),
  delayed: null,
});

/** One 20 Hz step of a ClockTimer world: move its clock, tick it, reset this tick's refreshed buffs. */
function clockTimerStep(timer, clock, buffs) {
  return (tick) => {
    clock.now += STEP_MS;
    timer.tick();
    for (let r = tick * REFRESHES_PER_TICK, end = r + REFRESHES_PER_TICK; r < end; r++) {
      buffs[refreshTargets[r]].delayed.reset();
    }
  };
}

/** Side figures of each round, keyed by candidate: heap per buff and expiries seen. */
export const heapSamples = { tickwheel: [], colyseus: [], 'colyseus setInterval': [], 'core wheel + Map': [] };
export const expirySamples = { tickwheel: [], colyseus: [], 'colyseus setInterval': [] };
export const longSamples = { tickwheel: [], 'colyseus setInterval': [] };

// ---------------------------------------------------------------------------------------------
// 1. Busy world: expiries, re-applications and refreshes every tick.

/**
 * Steps a world through the warm-up and the measured window (then the long window when `long`),
 * records its expiries per tick (and CPU per long tick), and returns CPU µs per measured tick.
 */
function measureWorld(name, step, counter, long) {
  for (let t = 0; t < WARM_TICKS; t++) step(t);
  counter.expired = 0;
  let c0 = cpuMicros();
  for (let t = WARM_TICKS; t < WARM_TICKS + MEASURED_TICKS; t++) step(t);
  const perTick = (cpuMicros() - c0) / MEASURED_TICKS;
  expirySamples[name].push(counter.expired / MEASURED_TICKS);
  if (long) {
    c0 = cpuMicros();
    for (let t = WARM_TICKS + MEASURED_TICKS; t < maxTicks; t++) step(t);
    longSamples[name].push((cpuMicros() - c0) / LONG_TICKS);
  }
  return perTick;
}

/** A started ClockTimer reading the simulated clock, an empty world for it, and the memory in use before. */
function clockTimerWorld() {
  const clock = { now: 0 };
  const timer = new ClockTimer();
  timer.now = () => clock.now;
  timer.start();
  // `before` first: the world's array counts in every candidate's figure, as in TimerSet's.
  const before = memoryAfterGc();
  return { clock, timer, counter: { expired: 0 }, before, buffs: new Array(BUFFS) };
}

/**
 * TimerSet's world on `wheel`: every buff set at its initial expiry and, as it expires, set again
 * for its duration (counted in `counter.expired`).
 */
export function timerSetWorld(wheel, counter) {
  const buffs = new Array(BUFFS);
  const set = new TimerSet({
    wheel,
    onExpire: (key, buff) => {
      counter.expired++;
      set.set(key, DURATIONS_MS[buff.kind], buff);
    },
  });
  for (let i = 0; i < BUFFS; i++) {
    const buff = makeBuff(i);
    buffs[i] = buff;
    set.set(i, initialMs[i], buff);
  }
  return { set, buffs };
}

export const busy = {
  async tickwheel() {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    const counter = { expired: 0 };
    const before = memoryAfterGc();
    const { set, buffs } = timerSetWorld(wheel, counter);
    heapSamples.tickwheel.push((memoryAfterGc() - before) / BUFFS);
    const refresh = { policy: 'max' };
    const step = (tick) => {
      clock.advance(STEP_MS);
      for (let r = tick * REFRESHES_PER_TICK, end = r + REFRESHES_PER_TICK; r < end; r++) {
        const i = refreshTargets[r];
        set.set(i, DURATIONS_MS[buffs[i].kind], buffs[i], refresh);
      }
    };
    const perTick = measureWorld('tickwheel', step, counter, true);
    set.close();
    wheel.close();
    return perTick;
  },
  async colyseus() {
    const { clock, timer, counter, buffs, before } = clockTimerWorld();
    for (let i = 0; i < BUFFS; i++) {
      const buff = makeBuff(i);
      buffs[i] = buff;
      const reapply = () => {
        counter.expired++;
        buff.delayed = timer.setTimeout(reapply, DURATIONS_MS[buff.kind]);
      };
      buff.delayed = timer.setTimeout(reapply, initialMs[i]);
    }
    heapSamples.colyseus.push((memoryAfterGc() - before) / BUFFS);
    const step = clockTimerStep(timer, clock, buffs);
    const perTick = measureWorld('colyseus', step, counter, false);
    timer.clear();
    return perTick;
  },
  // ClockTimer at its best for this world: each buff is one interval that never ends, so no
  // Delayed is ever spliced out. A buff that repeats forever is a periodic effect (damage over
  // time), not a buff that lapses, but it is what this steady world literally does.
  async 'colyseus setInterval'() {
    const { clock, timer, counter, buffs, before } = clockTimerWorld();
    for (let i = 0; i < BUFFS; i++) {
      const buff = makeBuff(i);
      buffs[i] = buff;
      buff.delayed = timer.setInterval(() => {
        counter.expired++;
      }, DURATIONS_MS[buff.kind]);
      // Delayed.elapsedTime is public: start part-way through, so the first run comes at initialMs.
      buff.delayed.elapsedTime = DURATIONS_MS[buff.kind] - initialMs[i];
    }
    heapSamples['colyseus setInterval'].push((memoryAfterGc() - before) / BUFFS);
    const step = clockTimerStep(timer, clock, buffs);
    const perTick = measureWorld('colyseus setInterval', step, counter, true);
    timer.clear();
    return perTick;
  },
};

// ---------------------------------------------------------------------------------------------
// 2. Quiet world: the same 500,000 buffs, all lasting longer than the run, no game events. What
// a tick costs just for holding the timers.

export const QUIET_TICKS = 100;

export const quiet = {
  async tickwheel() {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    const set = new TimerSet({ wheel, onExpire: () => {} });
    for (let i = 0; i < BUFFS; i++) set.set(i, 3_600_000 + initialMs[i], makeBuff(i));
    gc();
    clock.advance(STEP_MS);
    const c0 = cpuMicros();
    for (let t = 0; t < QUIET_TICKS; t++) clock.advance(STEP_MS);
    const perTick = (cpuMicros() - c0) / QUIET_TICKS;
    set.close();
    wheel.close();
    return perTick;
  },
  async colyseus() {
    let now = 0;
    const timer = new ClockTimer();
    timer.now = () => now;
    timer.start();
    for (let i = 0; i < BUFFS; i++) {
      const buff = makeBuff(i);
      buff.delayed = timer.setTimeout(() => buff, 3_600_000 + initialMs[i]);
    }
    gc();
    now += STEP_MS;
    timer.tick();
    const c0 = cpuMicros();
    for (let t = 0; t < QUIET_TICKS; t++) {
      now += STEP_MS;
      timer.tick();
    }
    const perTick = (cpuMicros() - c0) / QUIET_TICKS;
    timer.clear();
    return perTick;
  },
};
