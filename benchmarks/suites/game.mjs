/**
 * The game suite: @tickwheel/core's TimerSet against @colyseus/timer's ClockTimer, the timer
 * Node game servers use today, driving the same simulated world in this one process run,
 * candidates alternating round by round.
 *
 * The world: 100,000 entities with 5 buffs each (500,000 timers), buff kinds lasting 2, 5, 10,
 * 30 and 60 s, stepped by a 20 Hz fixed-step loop (50 ms of game time per tick, as fast as the
 * CPU allows). Each tick the timers advance, then game logic re-applies 500 random buffs (a
 * refresh to the full duration). A buff that expires is applied again at once, so the world
 * stays at 500,000 buffs. Both candidates are driven the way game servers drive them:
 *
 * - `tickwheel`: `TimerSet` on a `TimingWheel` over a `ManualClock`; a tick is
 *   `clock.advance(50)`; refresh is `set(key, duration, buff, { policy: 'max' })`; expiry is
 *   `onExpire` calling `set()` again.
 * - `colyseus`: `ClockTimer` with its clock reading the simulated time; a tick is `tick()` (as a
 *   Colyseus room's simulation interval calls `this.clock.tick()`); a buff is
 *   `clock.setTimeout(reapply, duration)`; refresh is `delayed.reset()` (the same as 'max' here:
 *   a buff's duration never changes).
 * - `colyseus setInterval`: the same, but each buff is one `clock.setInterval(...)` that never
 *   ends: ClockTimer's best case for a world whose buffs repeat forever (periodic effects).
 *
 *   node --expose-gc suites/game.mjs          # or: npm run bench -- game
 *
 * BENCH_REPEATS overrides the number of alternating rounds (default 3).
 */
import { pathToFileURL } from 'node:url';
import { ManualClock, TimerSet, TimingWheel } from '@tickwheel/core';
import { ClockTimer } from '@colyseus/timer';
import { channelInstructionScenarios } from '../lib/channel-overhead.mjs';
import { alternate, gc, median, printScenario, scenario, writeResults } from '../lib/harness.mjs';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);

const ENTITIES = 100_000;
const BUFFS_PER_ENTITY = 5;
const BUFFS = ENTITIES * BUFFS_PER_ENTITY;
const STEP_MS = 50;
const DURATIONS_MS = [2_000, 5_000, 10_000, 30_000, 60_000];
const REFRESHES_PER_TICK = 500;
const WARM_TICKS = 3;
/** ClockTimer needs over a second per busy tick at this size, so the compared window is short... */
const MEASURED_TICKS = 6;
/** ...and TimerSet alone then runs this many more ticks, for a steadier figure of its own. */
const LONG_TICKS = 200;

/** A small deterministic PRNG (mulberry32), so both candidates see the same world and refreshes. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = prng(20_260_101);
/** First expiry of each buff: a whole number of ticks into its duration, so expiries are spread evenly. */
const initialMs = new Int32Array(BUFFS);
for (let i = 0; i < BUFFS; i++) {
  const steps = DURATIONS_MS[i % BUFFS_PER_ENTITY] / STEP_MS;
  initialMs[i] = STEP_MS * (1 + Math.floor(random() * steps));
}
const maxTicks = WARM_TICKS + MEASURED_TICKS + LONG_TICKS;
const refreshTargets = new Int32Array(maxTicks * REFRESHES_PER_TICK);
for (let i = 0; i < refreshTargets.length; i++) refreshTargets[i] = Math.floor(random() * BUFFS);

const makeBuff = (i) => ({
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

function heapUsed() {
  gc();
  return process.memoryUsage().heapUsed;
}

function cpuMicros() {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** Side figures of each round, keyed by candidate: heap per buff and expiries seen. */
const heapSamples = { tickwheel: [], colyseus: [], 'colyseus setInterval': [] };
const expirySamples = { tickwheel: [], colyseus: [], 'colyseus setInterval': [] };
const longSamples = { tickwheel: [], 'colyseus setInterval': [] };

// ---------------------------------------------------------------------------------------------
// 1. Busy world: expiries, re-applications and refreshes every tick.

const busy = {
  async tickwheel() {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    let expired = 0;
    const before = heapUsed();
    const buffs = new Array(BUFFS);
    const set = new TimerSet({
      wheel,
      onExpire: (key, buff) => {
        expired++;
        set.set(key, DURATIONS_MS[buff.kind], buff);
      },
    });
    for (let i = 0; i < BUFFS; i++) {
      const buff = makeBuff(i);
      buffs[i] = buff;
      set.set(i, initialMs[i], buff);
    }
    heapSamples.tickwheel.push((heapUsed() - before) / BUFFS);
    const refresh = { policy: 'max' };
    const step = (tick) => {
      clock.advance(STEP_MS);
      for (let r = tick * REFRESHES_PER_TICK, end = r + REFRESHES_PER_TICK; r < end; r++) {
        const i = refreshTargets[r];
        set.set(i, DURATIONS_MS[buffs[i].kind], buffs[i], refresh);
      }
    };
    for (let t = 0; t < WARM_TICKS; t++) step(t);
    expired = 0;
    let c0 = cpuMicros();
    for (let t = WARM_TICKS; t < WARM_TICKS + MEASURED_TICKS; t++) step(t);
    const perTick = (cpuMicros() - c0) / MEASURED_TICKS;
    expirySamples.tickwheel.push(expired / MEASURED_TICKS);
    c0 = cpuMicros();
    for (let t = WARM_TICKS + MEASURED_TICKS; t < maxTicks; t++) step(t);
    longSamples.tickwheel.push((cpuMicros() - c0) / LONG_TICKS);
    set.close();
    wheel.close();
    return perTick;
  },
  async colyseus() {
    const clock = { now: 0 };
    const timer = new ClockTimer();
    timer.now = () => clock.now;
    timer.start();
    let expired = 0;
    const before = heapUsed();
    const buffs = new Array(BUFFS);
    for (let i = 0; i < BUFFS; i++) {
      const buff = makeBuff(i);
      buffs[i] = buff;
      const reapply = () => {
        expired++;
        buff.delayed = timer.setTimeout(reapply, DURATIONS_MS[buff.kind]);
      };
      buff.delayed = timer.setTimeout(reapply, initialMs[i]);
    }
    heapSamples.colyseus.push((heapUsed() - before) / BUFFS);
    const step = clockTimerStep(timer, clock, buffs);
    for (let t = 0; t < WARM_TICKS; t++) step(t);
    expired = 0;
    const c0 = cpuMicros();
    for (let t = WARM_TICKS; t < WARM_TICKS + MEASURED_TICKS; t++) step(t);
    const perTick = (cpuMicros() - c0) / MEASURED_TICKS;
    expirySamples.colyseus.push(expired / MEASURED_TICKS);
    timer.clear();
    return perTick;
  },
  // ClockTimer at its best for this world: each buff is one interval that never ends, so no
  // Delayed is ever spliced out. A buff that repeats forever is a periodic effect (damage over
  // time), not a buff that lapses, but it is what this steady world literally does.
  async 'colyseus setInterval'() {
    const clock = { now: 0 };
    const timer = new ClockTimer();
    timer.now = () => clock.now;
    timer.start();
    let expired = 0;
    const before = heapUsed();
    const buffs = new Array(BUFFS);
    for (let i = 0; i < BUFFS; i++) {
      const buff = makeBuff(i);
      buffs[i] = buff;
      buff.delayed = timer.setInterval(() => {
        expired++;
      }, DURATIONS_MS[buff.kind]);
      // Delayed.elapsedTime is public: start part-way through, so the first run comes at initialMs.
      buff.delayed.elapsedTime = DURATIONS_MS[buff.kind] - initialMs[i];
    }
    heapSamples['colyseus setInterval'].push((heapUsed() - before) / BUFFS);
    const step = clockTimerStep(timer, clock, buffs);
    for (let t = 0; t < WARM_TICKS; t++) step(t);
    expired = 0;
    let c0 = cpuMicros();
    for (let t = WARM_TICKS; t < WARM_TICKS + MEASURED_TICKS; t++) step(t);
    const perTick = (cpuMicros() - c0) / MEASURED_TICKS;
    expirySamples['colyseus setInterval'].push(expired / MEASURED_TICKS);
    c0 = cpuMicros();
    for (let t = WARM_TICKS + MEASURED_TICKS; t < maxTicks; t++) step(t);
    longSamples['colyseus setInterval'].push((cpuMicros() - c0) / LONG_TICKS);
    timer.clear();
    return perTick;
  },
};

// ---------------------------------------------------------------------------------------------
// 2. Quiet world: the same 500,000 buffs, all lasting longer than the run, no game events. What
// a tick costs just for holding the timers.

const QUIET_TICKS = 100;

const quiet = {
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

// ---------------------------------------------------------------------------------------------
// 3. O(1) at a million keys: a dispel plus a new buff (delete + set), and pausing and resuming
// the whole set, at 10,000 and at 1,000,000 keys. TimerSet only (ClockTimer has no keys).

const SCALE_OPS = 200_000;

function scaleRun(keys) {
  const clock = new ManualClock(0);
  const wheel = new TimingWheel({ clock });
  const set = new TimerSet({ wheel, onExpire: () => {} });
  const buff = { power: 1 };
  for (let i = 0; i < keys; i++) set.set(i, 1_000 + (i % 60_000), buff);
  const pick = prng(keys);
  const targets = new Int32Array(SCALE_OPS);
  for (let i = 0; i < SCALE_OPS; i++) targets[i] = Math.floor(pick() * keys);
  let t0 = performance.now();
  for (let i = 0; i < SCALE_OPS; i++) {
    const key = targets[i];
    set.delete(key);
    set.set(key, 1_000 + (i % 60_000), buff);
  }
  const churnNs = ((performance.now() - t0) * 1e6) / SCALE_OPS;
  // The same pairs on a plain Map of the same size: what the memory hierarchy alone costs.
  const map = new Map();
  for (let i = 0; i < keys; i++) map.set(i, buff);
  t0 = performance.now();
  for (let i = 0; i < SCALE_OPS; i++) {
    const key = targets[i];
    map.delete(key);
    map.set(key, buff);
  }
  const mapNs = ((performance.now() - t0) * 1e6) / SCALE_OPS;
  map.clear();
  t0 = performance.now();
  for (let i = 0; i < 10_000; i++) {
    set.pause();
    clock.advance(1);
    set.resume();
  }
  const pauseNs = ((performance.now() - t0) * 1e6) / 10_000;
  set.close();
  wheel.close();
  return { churnNs, mapNs, pauseNs };
}

const scaleSamples = {
  churn: { '1M keys': [], '10k keys': [], 'plain Map, 1M keys': [], 'plain Map, 10k keys': [] },
  pause: { '1M keys': [], '10k keys': [] },
};
function scaleCandidate(keys, label) {
  return async () => {
    const { churnNs, mapNs, pauseNs } = scaleRun(keys);
    scaleSamples.churn[label].push(churnNs);
    scaleSamples.churn[`plain Map, ${label}`].push(mapNs);
    scaleSamples.pause[label].push(pauseNs);
    return churnNs;
  };
}
const scale = { '10k keys': scaleCandidate(10_000, '10k keys'), '1M keys': scaleCandidate(1_000_000, '1M keys') };

function summarize(samples) {
  return Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, { median: median(s), samples: s }]));
}

// ---------------------------------------------------------------------------------------------

export async function run() {
  const t0 = performance.now();
  const scenarios = [];
  const world = `${ENTITIES.toLocaleString('en-US')} entities x ${BUFFS_PER_ENTITY} buffs (${BUFFS.toLocaleString('en-US')} timers) lasting ${DURATIONS_MS.map((d) => d / 1000).join('/')} s, ${1000 / STEP_MS} Hz fixed step`;

  const busyResults = await alternate(busy, REPEATS);
  const expiries = summarize(expirySamples);
  const busySc = scenario({
    id: 'cpu-per-tick-busy',
    title: 'CPU per tick, 500k buffs expiring and refreshed (20 Hz)',
    unit: 'CPU µs/tick',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'colyseus',
    results: { tickwheel: busyResults.tickwheel, colyseus: busyResults.colyseus },
    target: { ratio: 10 },
    note:
      `${world}; each tick ${REFRESHES_PER_TICK} refreshes and ${Math.round(expiries.tickwheel.median)} expiries ` +
      `(tickwheel) / ${Math.round(expiries.colyseus.median)} (colyseus), each re-applied at once. process.cpuUsage() (GC threads included) ` +
      `over the same ${MEASURED_TICKS} ticks after ${WARM_TICKS} warm-up ticks. ` +
      `ClockTimer (setTimeout, as a buff is applied) walks all timers every tick and removes each finished one with Array#splice on its 500k-entry array; see cpu-per-tick-periodic for its setInterval form, which avoids the splices.`,
  });
  printScenario(busySc);
  scenarios.push(busySc);

  const periodicSc = scenario({
    id: 'cpu-per-tick-periodic',
    title: 'CPU per tick, 500k periodic effects (20 Hz), ClockTimer as setInterval',
    unit: 'CPU µs/tick',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'colyseus setInterval',
    results: summarize(longSamples),
    target: { ratio: 3 },
    note:
      `The same world and refreshes, each buff repeating forever: ClockTimer as one setInterval per buff (never spliced), ` +
      `TimerSet unchanged (onExpire sets the key again). ${LONG_TICKS} ticks after the busy window, both candidates. ` +
      `Here every tick expires ${Math.round(expiries.tickwheel.median)} of ${BUFFS.toLocaleString('en-US')} timers (${((expiries.tickwheel.median / BUFFS) * 100).toFixed(2)}%): TimerSet pays per expiry ` +
      `(cache misses on the timer's slab entry, its key's slot and the caller's value, which onExpire reads to re-apply the buff), ClockTimer pays a sequential walk of all 500k.`,
  });
  printScenario(periodicSc);
  scenarios.push(periodicSc);

  const heapSc = scenario({
    id: 'heap-per-buff',
    title: 'Heap per buff, 500k buffs',
    unit: 'bytes',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'colyseus',
    results: summarize(heapSamples),
    target: { max: 200 },
    note: `V8 heapUsed delta (gc before and after) of building the world: the timer, plus the buff object and the world's array slot (the same in both). TimerSet: a Map entry, the key and value cells of its key slot and its share of the slab's typed arrays (no object per buff); ClockTimer: Delayed, its args array, the re-apply closure. Node ${process.version}, pointer compression ${process.config.variables.v8_enable_pointer_compression ? 'on' : 'off'}.`,
  });
  printScenario(heapSc);
  scenarios.push(heapSc);

  const quietSc = scenario({
    id: 'cpu-per-tick-quiet',
    title: 'CPU per tick, 500k buffs, nothing due',
    unit: 'CPU µs/tick',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'colyseus',
    results: await alternate(quiet, REPEATS),
    target: { ratio: 10 },
    note: `The same world with every buff lasting over an hour and no game events: the cost of holding the timers. Mean over ${QUIET_TICKS} ticks, after a full GC of the freshly built world (for both).`,
  });
  printScenario(quietSc);
  scenarios.push(quietSc);

  await alternate(scale, REPEATS);
  const churnSc = scenario({
    id: 'ops-1M-keys',
    title: 'delete + set of a random key, 1M keys vs 10k keys',
    unit: 'ns/op pair',
    higherIsBetter: false,
    subject: '1M keys',
    baseline: '10k keys',
    results: summarize(scaleSamples.churn),
    note: `TimerSet, ${SCALE_OPS.toLocaleString('en-US')} pairs on random keys (ClockTimer has no keys, so no peer). A ratio below 1 is the 1M set running slower per operation: the work is O(1), but a million keys no longer fit in the CPU caches; the same pairs on a plain Map, measured alongside, slow down in the same way.`,
  });
  printScenario(churnSc);
  scenarios.push(churnSc);
  const churnMapSc = scenario({
    id: 'ops-1M-keys-vs-map',
    title: 'delete + set of a random key, 1M keys, against a plain Map',
    unit: 'ns/op pair',
    higherIsBetter: false,
    subject: '1M keys',
    baseline: 'plain Map, 1M keys',
    results: {
      '1M keys': summarize(scaleSamples.churn)['1M keys'],
      'plain Map, 1M keys': summarize(scaleSamples.churn)['plain Map, 1M keys'],
    },
    target: { ratio: 0.5 },
    note: `The same pairs as above: TimerSet's delete + set against a plain Map's delete + set on the same keys in the same run (Map.delete, Map.set; no timer). The target, ratio >= 0.5, is TimerSet costing at most twice what the Map costs: its own Map lookups plus the timer.`,
  });
  printScenario(churnMapSc);
  scenarios.push(churnMapSc);
  const pauseSc = scenario({
    id: 'pause-1M-keys',
    title: 'pause() + advance(1 ms) + resume() of the whole set, 1M keys vs 10k keys',
    unit: 'ns',
    higherIsBetter: false,
    subject: '1M keys',
    baseline: '10k keys',
    results: summarize(scaleSamples.pause),
    note: 'Global pause cancels the set’s one timer on the wheel and stops its game clock, so it costs the same at any size.',
  });
  printScenario(pauseSc);
  scenarios.push(pauseSc);

  console.log(`  (game suite took ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  // Issue 18: what the diagnostics channels cost here, in instructions (lib/channel-overhead.mjs).
  scenarios.push(...(await channelInstructionScenarios('game')));
  return { scenarios, extra: { expiriesPerTick: expiries } };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (typeof globalThis.gc !== 'function') {
    console.error('run with --expose-gc (node --expose-gc suites/game.mjs) so memory figures are exact');
    process.exit(1);
  }
  const { scenarios, extra } = await run();
  const file = writeResults('game', { scenarios, command: 'npm run bench -- game', repeats: REPEATS, extra });
  console.log(`  wrote ${file}`);
}
