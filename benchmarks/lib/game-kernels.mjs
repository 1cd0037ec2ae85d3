/**
 * The game suite's periodic-effects world as a kernel for counting instructions under cachegrind
 * (cachegrind.mjs): one candidate, N ticks of the 20 Hz loop.
 *
 *   node --predictable --no-concurrent-recompilation --expose-gc lib/game-kernels.mjs periodic <candidate> <ticks>
 *
 * The world is lib/game-world.mjs's: 500,000 buffs on 100,000 entities lasting 2, 5, 10, 30 and
 * 60 s, each re-applied as it expires, 500 refreshes per tick. `tickwheel` is a TimerSet whose
 * onExpire sets the key again and whose refreshes are `set(..., { policy: 'max' })`;
 * `colyseus setInterval` is ClockTimer with one never-ending interval per buff, refreshed by
 * `delayed.reset()` (ClockTimer's best case for this world, as in the suite's
 * cpu-per-tick-periodic). The world is built and run for a fixed warm-up of WARM_TICKS before
 * the counted ticks, so that a short and a long run differ only in the ticks counted, and the
 * refresh order is generated for the longest run and read from its start.
 */
import { fileURLToPath } from 'node:url';
import { ClockTimer } from '@colyseus/timer';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import { BUFFS, DURATIONS_MS, REFRESHES_PER_TICK, STEP_MS, initialMs, makeBuff, timerSetWorld } from './game-world.mjs';
import {
  answerParent,
  childValue,
  instructionsPerOp,
  isMain,
  memoryAfterGc,
  printScenario,
  prng,
  scenario,
  valgrindAvailable,
} from './harness.mjs';

/** The longest run a count may ask for, in ticks after the warm-up. */
export const MAX_TICKS = 400;
/** Ticks before the counted ones: every buff kind has expired and been re-applied by then in both. */
const WARM_TICKS = 60;

const random = prng(20_260_202);
const refreshTargets = new Int32Array((WARM_TICKS + MAX_TICKS) * REFRESHES_PER_TICK);
for (let i = 0; i < refreshTargets.length; i++) refreshTargets[i] = Math.floor(random() * BUFFS);

/** Candidate -> a function building its world and returning `step(tick)` and the expiries seen. */
export const PERIODIC = {
  tickwheel() {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    const counter = { expired: 0 };
    const { set, buffs } = timerSetWorld(wheel, counter);
    const refresh = { policy: 'max' };
    const step = (tick) => {
      clock.advance(STEP_MS);
      for (let r = tick * REFRESHES_PER_TICK, end = r + REFRESHES_PER_TICK; r < end; r++) {
        const i = refreshTargets[r];
        set.set(i, DURATIONS_MS[buffs[i].kind], buffs[i], refresh);
      }
    };
    return { step, counter };
  },
  // TimerSet's engine replaced by the core wheel's levels: a Map from key to { value, handle },
  // each buff a TimerHandle on a TimingWheel of its own (1 ms ticks) that the world's wheel
  // drives, as a TimerSet's game clock does; re-applied by handle.refresh() from its callback
  // (no allocation), refreshed by a lazy refresh when that is later ('max'). What the set's slab
  // wheel is measured against when deciding whether TimerSet needs a scheduler of its own.
  'core wheel + Map'() {
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    const counter = { expired: 0 };
    const buffs = new Array(BUFFS);
    const entries = new Map();
    for (let i = 0; i < BUFFS; i++) {
      const buff = makeBuff(i);
      buffs[i] = buff;
      const entry = { value: buff, handle: undefined };
      entry.handle = wheel.schedule(initialMs[i], () => {
        counter.expired++;
        entry.handle.refresh(DURATIONS_MS[entry.value.kind]);
      });
      entries.set(i, entry);
    }
    const step = (tick) => {
      clock.advance(STEP_MS);
      for (let r = tick * REFRESHES_PER_TICK, end = r + REFRESHES_PER_TICK; r < end; r++) {
        const i = refreshTargets[r];
        const entry = entries.get(i);
        const duration = DURATIONS_MS[buffs[i].kind];
        entry.value = buffs[i];
        if (duration > entry.handle.remaining()) entry.handle.refresh(duration);
      }
    };
    return { step, counter };
  },
  'colyseus setInterval'() {
    const clock = { now: 0 };
    const timer = new ClockTimer();
    timer.now = () => clock.now;
    timer.start();
    const counter = { expired: 0 };
    const buffs = new Array(BUFFS);
    for (let i = 0; i < BUFFS; i++) {
      const buff = makeBuff(i);
      buffs[i] = buff;
      buff.delayed = timer.setInterval(() => {
        counter.expired++;
      }, DURATIONS_MS[buff.kind]);
      buff.delayed.elapsedTime = DURATIONS_MS[buff.kind] - initialMs[i];
    }
    const step = (tick) => {
      clock.now += STEP_MS;
      timer.tick();
      for (let r = tick * REFRESHES_PER_TICK, end = r + REFRESHES_PER_TICK; r < end; r++) {
        buffs[refreshTargets[r]].delayed.reset();
      }
    };
    return { step, counter };
  },
};

/** Builds the candidate's world, runs the warm-up, then `ticks` more; returns the expiries of those. */
export function runPeriodic(candidate, ticks) {
  const { step, counter } = PERIODIC[candidate]();
  for (let t = 0; t < WARM_TICKS; t++) step(t);
  const before = counter.expired;
  for (let t = WARM_TICKS; t < WARM_TICKS + ticks; t++) step(t);
  return counter.expired - before;
}

/**
 * Candidates counted by {@link periodicInstructionScenario} (BENCH_GAME_INSTRUCTIONS, a comma list;
 * default all three) and the ticks of its short and long runs (BENCH_GAME_TICKS=short,long).
 */
const COUNTED = (process.env.BENCH_GAME_INSTRUCTIONS ?? Object.keys(PERIODIC).join(',')).split(',').filter(Boolean);
const [SHORT_TICKS, LONG_TICKS] = (process.env.BENCH_GAME_TICKS ?? '20,120').split(',').map(Number);

/**
 * V8 flags that make the collector's work the same in every run of a 500,000-buff world.
 * Incremental marking sizes its steps by time, and the heap grows by a factor computed from
 * measured GC and mutator speeds, so under valgrind the build of the world did a different
 * amount of marking from one run to the next: two counts of one candidate differed by more than
 * the whole counted window (one read negative). With these flags two runs differ by 0.0001%.
 */
const DETERMINISTIC_GC = ['--no-incremental-marking', '--no-memory-reducer', '--heap-growing-percent=100'];

/**
 * The periodic-effects world counted under cachegrind, per candidate: instructions per tick,
 * (long run - short run) / (long ticks - short ticks). A count does not move with the load of
 * the machine; it does not see cache misses either, which are most of what a TimerSet expiry
 * costs in wall time at 500,000 keys (cpu-per-tick-periodic measures those).
 * Empty (with a warning) when valgrind is not installed.
 */
export function periodicInstructionScenario() {
  if (!valgrindAvailable()) {
    console.warn('  game instructions: valgrind is not installed (Debian: apt-get install valgrind); no row this run');
    return [];
  }
  const kernel = fileURLToPath(import.meta.url);
  const results = {};
  for (const candidate of COUNTED) {
    const count = instructionsPerOp(
      process.execPath,
      'periodic',
      candidate,
      { shortOps: SHORT_TICKS, longOps: LONG_TICKS },
      { kernel, nodeFlags: DETERMINISTIC_GC },
    );
    results[candidate] = { median: count.perOp, samples: [count.perOp], counts: count };
  }
  const sc = scenario({
    id: 'instructions-per-tick-periodic',
    title: 'Instructions per tick, 500k periodic effects (20 Hz), ClockTimer as setInterval',
    unit: 'instructions/tick',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'colyseus setInterval',
    results,
    target: { ratio: 3 },
    note:
      `The world of cpu-per-tick-periodic, counted under valgrind --tool=cachegrind with node --predictable --no-concurrent-recompilation: ` +
      `(instructions of a ${LONG_TICKS}-tick run - those of a ${SHORT_TICKS}-tick run) / ${LONG_TICKS - SHORT_TICKS}, each after building the world and ${WARM_TICKS} warm-up ticks ` +
      `(lib/game-kernels.mjs). "core wheel + Map" is TimerSet's job done with the core wheel's levels instead of the set's own: a Map of { value, TimerHandle }, ` +
      `each buff re-armed by handle.refresh() from its callback; it is what decides whether TimerSet keeps a scheduler of its own (set-wheel.ts). ` +
      `Node runs with ${DETERMINISTIC_GC.join(' ')} so that GC work is the same in every run (see DETERMINISTIC_GC). ` +
      `One count per candidate: a count does not depend on the machine's load.`,
  });
  printScenario(sc);
  return [sc];
}

/**
 * Heap per buff of a candidate's world, built in a fresh process (`heap <candidate>`, with
 * --expose-gc): in the suite's process a world measured after another could still be held by a
 * stale register of the loop that built the previous one, and read as 0 bytes.
 */
export async function heapPerBuff(candidate) {
  return childValue(fileURLToPath(import.meta.url), ['heap', candidate], { label: `game-kernels heap ${candidate}` });
}

if (isMain(import.meta.url)) {
  const [scenario, candidate, ticksText] = process.argv.slice(2);
  if (scenario === 'heap' && candidate in PERIODIC) {
    const before = memoryAfterGc();
    const world = PERIODIC[candidate]();
    const bytesPerBuff = (memoryAfterGc() - before) / BUFFS;
    if (typeof world.step !== 'function') throw new Error(`${candidate}: no world built`);
    answerParent(bytesPerBuff);
  } else {
    const ticks = Number(ticksText);
    if (scenario !== 'periodic' || !(candidate in PERIODIC) || !(ticks >= 0 && ticks <= MAX_TICKS)) {
      console.error(
        `usage: game-kernels.mjs periodic <${Object.keys(PERIODIC).join('|')}> <ticks 0..${MAX_TICKS}> | heap <candidate>`,
      );
      process.exit(2);
    }
    const expired = runPeriodic(candidate, ticks);
    console.log(JSON.stringify({ expired }));
  }
}
