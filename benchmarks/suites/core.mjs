/**
 * The core suite: @tickwheel/core's TimingWheel against what a Node user would otherwise hold
 * many timers in, all in this one process run, candidates alternating round by round:
 *
 * - `native`: one `setTimeout` per timer (`clearTimeout`, `timeout.refresh()`);
 * - `heap`: an indexed binary-heap timer queue with one native timer (lib/heap-timer-queue.mjs);
 * - `timer-wheel`: the `timer-wheel` npm package (hashed wheel, 1 s resolution, driven by the
 *   caller's `advance()`; used where its design fits the scenario);
 * - `floor`: a bare intrusive doubly-linked list (lib/floor-list.mjs), the cost no timer can go
 *   below; every throughput, CPU and memory figure of the wheel is also reported as a multiple
 *   of it (`costOverFloor`).
 *
 * The candidates themselves are in lib/core-kernels.mjs. The `instructions` group counts
 * instructions per operation of the micro-scenarios under cachegrind (lib/cachegrind.mjs), a
 * figure that does not move with the machine's load.
 *
 *   node --expose-gc suites/core.mjs                  # or: npm run bench -- core
 *   node --expose-gc suites/core.mjs --group rolling  # one group only, results on stdout
 *
 * The `channels` group (issue 18) measures the wheel's diagnostics channels: wake-ups with the
 * channels compiled out, with no subscriber, and with the OpenTelemetry bridge on
 * (lib/channel-candidates.mjs).
 *
 * Each scenario group (rolling, refresh, expiry, memory, wakeups, lateness, channels, instructions) runs in
 * its own child process; within it the candidates alternate. BENCH_REPEATS overrides the number
 * of alternating rounds (default 5; the 1M rolling runs, memory and wakeups use at most 3);
 * BENCH_INSTRUCTIONS the candidates counted under cachegrind (default tickwheel,native,floor).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { TimingWheel } from '@tickwheel/core';
import timerWheelPackage from 'timer-wheel';
import {
  CONNECTIONS,
  EXPIRY_TIMERS,
  IDLE_MS,
  MESSAGES,
  durationsFor,
  expiring,
  memory,
  messageOrder,
  noop,
  refreshing,
  rolling,
} from '../lib/core-kernels.mjs';
import { instructionsPerOp, valgrindAvailable } from '../lib/cachegrind.mjs';
import { HeapTimerQueue } from '../lib/heap-timer-queue.mjs';
import { bridgeOn, CHANNEL_CANDIDATES, compiledOut } from '../lib/channel-candidates.mjs';
import { channelInstructionScenarios } from '../lib/channel-overhead.mjs';
import { alternate, median, percentile, printScenario, scenario, writeResults } from '../lib/harness.mjs';

const { ActionTimerWheel } = timerWheelPackage;

const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Per-round numbers pulled out of `alternate` runs that measure more than one figure. */
function summarize(samples) {
  return Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, { median: median(s), samples: s }]));
}

// ---------------------------------------------------------------------------------------------
// 1. Rolling RPC pattern: K timers in flight; each op cancels the oldest and schedules a new one.
// Timers are 5..56 s out, so none fires while measured; each candidate has its own loop so that
// no call site is shared (and made polymorphic) between candidates.

async function rollingScenarios() {
  const out = [];
  const configs = [
    { k: 10_000, ops: 1_000_000, distinct: 1, target: 5 },
    { k: 10_000, ops: 1_000_000, distinct: 256, target: 5 },
    // A run at 1M sets up and tears down 1M timers per candidate: fewer ops and rounds keep the
    // suite's length bounded (native setTimeout needs ~1 s per run on a busy 2-core machine).
    { k: 1_000_000, ops: 500_000, distinct: 1, target: 3, rounds: Math.min(REPEATS, 3) },
    { k: 1_000_000, ops: 500_000, distinct: 256, target: 3, rounds: Math.min(REPEATS, 3) },
  ];
  for (const { k, ops, distinct, target, rounds = REPEATS } of configs) {
    const durations = durationsFor(distinct);
    const candidates = Object.fromEntries(
      Object.entries(rolling).map(([name, fn]) => [name, async () => fn(k, ops, durations)]),
    );
    const results = await alternate(candidates, rounds);
    const kLabel = k >= 1_000_000 ? `${k / 1_000_000}M` : `${k / 1000}k`;
    const sc = scenario({
      id: `rolling-${kLabel}-${distinct === 1 ? '1dur' : `${distinct}dur`}`,
      title: `Rolling RPC, K=${kLabel}, ${distinct === 1 ? 'one duration' : `${distinct} durations`}`,
      unit: 'ops/s',
      higherIsBetter: true,
      subject: 'tickwheel',
      floor: 'floor',
      baseline: 'native',
      results,
      target: { ratio: target },
      note: `${k.toLocaleString('en-US')} timers in flight; one op = cancel the oldest + schedule a new one (${ops.toLocaleString('en-US')} ops per run, timers 5-56 s out so none fires).`,
    });
    printScenario(sc);
    out.push(sc);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// 2. Refresh-heavy idle detection: 100k connections with an idle timer each; every simulated
// message refreshes its connection's timer. Messages hit connections in a fixed random order.

async function refreshScenario() {
  const order = messageOrder();
  const candidates = Object.fromEntries(Object.entries(refreshing).map(([name, fn]) => [name, async () => fn(order)]));
  const results = await alternate(candidates, REPEATS);
  const sc = scenario({
    id: 'refresh-heavy',
    title: 'Refresh-heavy idle detection, 100k handles',
    unit: 'refreshes/s',
    higherIsBetter: true,
    subject: 'tickwheel',
    floor: 'floor',
    baseline: 'native',
    results,
    target: { ratio: 6 },
    note: `${CONNECTIONS.toLocaleString('en-US')} idle timers of ${IDLE_MS / 1000} s; ${MESSAGES.toLocaleString('en-US')} messages in random order, each refreshing its connection's timer (native: timeout.refresh()).`,
  });
  printScenario(sc);
  return sc;
}

// ---------------------------------------------------------------------------------------------
// 3. Expiry: 1M timers, due evenly over one second, all fire. Measured: the process's CPU time
// (user + system) from the first schedule to the last callback, i.e. what firing them costs.

/**
 * timer-wheel has no driver of its own: the caller advances it. Advanced every 1 ms (as a user
 * wanting the others' resolution would), it does not fire all of 1M timers due within a second
 * (its layer-0 buckets are 1024 ms wide), so it cannot be timed like the others; instead this
 * counts how many it had fired 2 s after the last was due.
 */
async function timerWheelExpiryProbe() {
  const wheel = new ActionTimerWheel();
  let fired = 0;
  const onFire = () => {
    fired++;
  };
  for (let i = 0; i < EXPIRY_TIMERS; i++) wheel.schedule(onFire, 1 + Math.floor((i * 1000) / EXPIRY_TIMERS));
  const interval = setInterval(() => wheel.advance(), 1);
  await sleep(3000);
  clearInterval(interval);
  return fired;
}

async function expiryScenario() {
  const results = await alternate(expiring(EXPIRY_TIMERS), REPEATS);
  const firedByTimerWheel = await timerWheelExpiryProbe();
  const sc = scenario({
    id: 'expiry-1M',
    title: 'Expiry: 1M timers fire over 1 s (CPU)',
    unit: 'CPU ms',
    higherIsBetter: false,
    subject: 'tickwheel',
    floor: 'floor',
    baseline: 'native',
    results,
    target: { ratio: 2 },
    note: `CPU time (user+system, process.cpuUsage) from the first of 1,000,000 schedules to the last callback; delays spread evenly over 1-1000 ms. The floor links all of them, then unlinks and calls each at once (no clock, no waiting). timer-wheel is left out: advanced every 1 ms, it had fired ${firedByTimerWheel.toLocaleString('en-US')} of them 2 s after the last was due.`,
  });
  printScenario(sc);
  return sc;
}

// ---------------------------------------------------------------------------------------------
// 4. Memory: heap bytes per pending timer with 1M pending, one shared callback. The array that
// holds the handles (every candidate needs them to cancel) is allocated before the baseline
// reading, so only what each timer costs is counted.

async function memoryScenario() {
  const results = await alternate(memory, Math.min(REPEATS, 3));
  const sc = scenario({
    id: 'memory-per-timer',
    title: 'Memory per pending timer, 1M pending',
    unit: 'bytes',
    higherIsBetter: false,
    subject: 'tickwheel',
    floor: 'floor',
    baseline: 'native',
    results,
    target: { max: 56 },
    note: `V8 heapUsed delta over 1,000,000 pending timers with one shared callback (gc before and after; the handle array is counted in neither). Node ${process.version}, pointer compression ${process.config.variables.v8_enable_pointer_compression ? 'on' : 'off'}.`,
  });
  printScenario(sc);
  return sc;
}

// ---------------------------------------------------------------------------------------------
// 5. Wakeups: native timer callbacks the wheel takes. Idle: an empty wheel (after one timer was
// scheduled and cancelled) over one second. Sparse: 20 timers spread over 2 s.

async function idleWakeups() {
  const wheel = new TimingWheel();
  wheel.schedule(500, noop).cancel();
  await sleep(1000);
  const wakeups = wheel.stats().wakeups;
  wheel.close();
  return wakeups;
}

const SPARSE_TIMERS = 20;
const SPARSE_SPAN_MS = 2000;

function sparseRun(schedule) {
  return new Promise((resolve) => {
    let fired = 0;
    const onFire = () => {
      if (++fired === SPARSE_TIMERS) resolve();
    };
    for (let i = 0; i < SPARSE_TIMERS; i++) schedule(((i + 1) * SPARSE_SPAN_MS) / SPARSE_TIMERS, onFire);
  });
}

const sparse = {
  tickwheel: async () => {
    const wheel = new TimingWheel();
    await sparseRun((delay, cb) => wheel.schedule(delay, cb));
    const wakeups = wheel.stats().wakeups;
    wheel.close();
    return wakeups;
  },
  native: async () => {
    // One native timer per timer: its callbacks are its wakeups.
    let wakeups = 0;
    await sparseRun((delay, cb) =>
      setTimeout(() => {
        wakeups++;
        cb();
      }, delay),
    );
    return wakeups;
  },
  heap: async () => {
    const queue = new HeapTimerQueue();
    await sparseRun((delay, cb) => queue.schedule(delay, cb));
    return queue.wakeups;
  },
};

async function wakeupScenarios() {
  const idle = await alternate({ tickwheel: idleWakeups }, Math.min(REPEATS, 3));
  const idleSc = scenario({
    id: 'wakeups-idle',
    title: 'Wakeups of an idle wheel over 1 s',
    unit: 'wakeups',
    higherIsBetter: false,
    subject: 'tickwheel',
    results: idle,
    target: { max: 0 },
    note: 'wheel.stats().wakeups over one idle second of an empty wheel (one timer scheduled and cancelled first, so the native timer had been armed).',
  });
  printScenario(idleSc);
  const sparseResults = await alternate(sparse, Math.min(REPEATS, 3));
  const sparseSc = scenario({
    id: 'wakeups-sparse',
    title: `Wakeups for ${SPARSE_TIMERS} sparse timers over 2 s`,
    unit: 'wakeups',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'native',
    results: sparseResults,
    target: { max: SPARSE_TIMERS },
    note: `${SPARSE_TIMERS} timers due every ${SPARSE_SPAN_MS / SPARSE_TIMERS} ms over ${SPARSE_SPAN_MS / 1000} s; target: no more than one wakeup per timer (a 1 ms ticking wheel would take ~${SPARSE_SPAN_MS}).`,
  });
  printScenario(sparseSc);
  return [idleSc, sparseSc];
}

// ---------------------------------------------------------------------------------------------
// 6. Lateness on the system clock at 100k timers/s: a setImmediate loop schedules timers in
// batches (delays 1-50 ms) for LOAD_MS; each callback records now - (scheduled at + delay).

const RATE_PER_S = 100_000;
const LOAD_MS = 1500;
const MAX_DELAY_MS = 50;

function latenessRun(schedule) {
  const capacity = Math.ceil((RATE_PER_S * LOAD_MS) / 1000) + 1000;
  const lateness = new Float64Array(capacity);
  return new Promise((resolve) => {
    let scheduled = 0;
    let fired = 0;
    let loadDone = false;
    const finish = () => {
      const values = lateness.subarray(0, fired);
      resolve({
        p50: percentile(values, 50),
        p99: percentile(values, 99),
        max: percentile(values, 100),
        min: percentile(values, 0),
        count: fired,
      });
    };
    const start = performance.now();
    const pump = () => {
      const now = performance.now();
      const elapsed = now - start;
      const want = Math.min(capacity, Math.floor((elapsed * RATE_PER_S) / 1000));
      while (scheduled < want) {
        const delay = 1 + (scheduled % MAX_DELAY_MS);
        const due = now + delay;
        schedule(delay, () => {
          lateness[fired++] = performance.now() - due;
          if (loadDone && fired === scheduled) finish();
        });
        scheduled++;
      }
      if (elapsed < LOAD_MS) setImmediate(pump);
      else loadDone = true;
    };
    setImmediate(pump);
  });
}

async function latenessScenarios() {
  const extra = { p50: {}, max: {}, min: {}, count: {} };
  const record = (name, r) => {
    for (const key of Object.keys(extra)) (extra[key][name] ??= []).push(r[key]);
    return r.p99;
  };
  const results = await alternate(
    {
      tickwheel: async () => {
        const wheel = new TimingWheel();
        const r = await latenessRun((delay, cb) => wheel.schedule(delay, cb));
        wheel.close();
        return record('tickwheel', r);
      },
      native: async () => record('native', await latenessRun((delay, cb) => setTimeout(cb, delay))),
      // The same wheel without the blocked-loop I/O yield, to show what that option costs here.
      'tickwheel-no-io-yield': async () => {
        const wheel = new TimingWheel({ yieldToIoWhenLateMs: Infinity });
        const r = await latenessRun((delay, cb) => wheel.schedule(delay, cb));
        wheel.close();
        return record('tickwheel-no-io-yield', r);
      },
      heap: async () => {
        const queue = new HeapTimerQueue();
        const r = await latenessRun((delay, cb) => queue.schedule(delay, cb));
        queue.close();
        return record('heap', r);
      },
    },
    // Lateness varies most from run to run on a shared machine: all the rounds.
    REPEATS,
  );
  const load = `${RATE_PER_S.toLocaleString('en-US')} timers/s for ${LOAD_MS / 1000} s, delays 1-${MAX_DELAY_MS} ms, scheduled in batches from a setImmediate loop; lateness = callback time - (schedule time + delay) on performance.now()`;
  const common = { unit: 'ms', higherIsBetter: false, subject: 'tickwheel', baseline: 'native' };
  const p99 = scenario({
    ...common,
    id: 'lateness-p99',
    title: 'Lateness p99 at 100k timers/s',
    results,
    target: { maxOver: 1 },
    note: `${load}. 'tickwheel-no-io-yield' is the same wheel with yieldToIoWhenLateMs: Infinity (by default a wake-up 10 ms or more late yields one loop turn to I/O first).`,
  });
  const p50 = scenario({
    ...common,
    id: 'lateness-p50',
    title: 'Lateness p50 at 100k timers/s',
    results: summarize(extra.p50),
    note: `${load}.`,
  });
  const max = scenario({
    ...common,
    id: 'lateness-max',
    title: 'Lateness max at 100k timers/s',
    results: summarize(extra.max),
    note: `${load}.`,
  });
  // Negative = fired before schedule time + delay. A ratio of two signed figures means nothing.
  const min = {
    ...scenario({
      ...common,
      id: 'lateness-min',
      title: 'Lateness min at 100k timers/s (negative: fired early)',
      results: summarize(extra.min),
    }),
    ratio: null,
    note: `${load}. Native setTimeout counts its delay from libuv's cached loop time, truncated to whole ms, so it can fire up to ~1 ms before schedule time + delay; the wheel counts from performance.now() and never fires early.`,
  };
  for (const sc of [p50, p99, max, min]) printScenario(sc);
  return [p50, p99, max, min];
}

// ---------------------------------------------------------------------------------------------
// 7. Instructions per operation under cachegrind (lib/cachegrind.mjs): the micro-scenarios
// above, counted rather than timed, so a change can be judged without the neighbours' noise.

const INSTRUCTION_SCENARIOS = [
  {
    id: 'rolling-10k-1dur',
    title: 'Instructions per schedule+cancel, K=10k, one duration',
    unit: 'instructions/op',
    shortOps: 200_000,
    longOps: 1_000_000,
  },
  {
    id: `refresh-${CONNECTIONS / 1000}k`,
    title: `Instructions per refresh, ${CONNECTIONS / 1000}k handles, random order`,
    unit: 'instructions/op',
    shortOps: 200_000,
    longOps: 1_000_000,
  },
  {
    id: 'expiry',
    title: 'Instructions per timer scheduled and fired (expiry over 1 s)',
    unit: 'instructions/timer',
    shortOps: 50_000,
    longOps: 250_000,
  },
];
/** Which candidates are counted (each costs two valgrind runs per scenario, ~10 s each). */
const INSTRUCTION_CANDIDATES = (process.env.BENCH_INSTRUCTIONS ?? 'tickwheel,native,floor').split(',').filter(Boolean);

async function instructionScenarios() {
  if (!valgrindAvailable()) {
    console.warn(
      '  instructions: valgrind is not installed (Debian: apt-get install valgrind); no instruction counts this run',
    );
    return [];
  }
  const out = [];
  for (const spec of INSTRUCTION_SCENARIOS) {
    const results = {};
    for (const candidate of INSTRUCTION_CANDIDATES) {
      const count = instructionsPerOp(process.execPath, spec.id, candidate, spec);
      results[candidate] = { median: count.perOp, samples: [count.perOp], counts: count };
    }
    const sc = scenario({
      id: `instructions-${spec.id}`,
      title: spec.title,
      unit: spec.unit,
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'native',
      floor: INSTRUCTION_CANDIDATES.includes('floor') ? 'floor' : undefined,
      results,
      note: `valgrind --tool=cachegrind, node --predictable --no-concurrent-recompilation; (instructions of a ${spec.longOps.toLocaleString('en-US')}-op run - those of a ${spec.shortOps.toLocaleString('en-US')}-op run) / ${(spec.longOps - spec.shortOps).toLocaleString('en-US')}, each after the same warm-up run (lib/instruction-kernel.mjs). Every instruction of the process, GC included; cache misses are not in it. One count per candidate: it does not depend on the machine's load.`,
    });
    printScenario(sc);
    out.push(sc);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// 8. Diagnostics channels: what a wake-up pays for its channel with nobody listening, and with
// the OpenTelemetry bridge on. A ManualClock wheel is driven 1 ms at a time, so every step is one
// wake-up (one publish site) and the figure is CPU per timer, schedule and fire included.

const CHANNEL_TIMERS = 200_000;

/** One sample: CPU ns per timer for `timers` timers due `perWake` to a millisecond, fired step by step. */
function wakeSample(core, timers, perWake) {
  const clock = new core.ManualClock(0);
  const wheel = new core.TimingWheel({ clock });
  const steps = Math.ceil(timers / perWake);
  const start = process.cpuUsage();
  for (let i = 0; i < timers; i++) wheel.schedule(1 + Math.floor(i / perWake), noop);
  for (let step = 0; step < steps; step++) clock.advance(1);
  const used = process.cpuUsage(start);
  wheel.close();
  return ((used.user + used.system) * 1000) / timers;
}

async function channelScenarios() {
  // Each candidate on a copy of its own (see compiledOut's `strip`).
  const copies = [compiledOut([]), compiledOut([], false), compiledOut([], false)];
  try {
    const [stripped, built, bridged] = await Promise.all(copies.map((copy) => copy.load('core')));
    const out = [];
    for (const [id, perWake, what] of [
      ['channels-unused-sparse', 1, 'one timer per wake-up (a wake-up per timer: the most channel reads per timer)'],
      ['channels-unused-dense', 1_000, '1,000 timers per wake-up'],
    ]) {
      const candidates = {
        [CHANNEL_CANDIDATES.compiledOut]: () => wakeSample(stripped, CHANNEL_TIMERS, perWake),
        [CHANNEL_CANDIDATES.noSubscriber]: () => wakeSample(built, CHANNEL_TIMERS, perWake),
        [CHANNEL_CANDIDATES.bridgeOn]: async () => {
          // Subscribed only during its own samples: the other candidates run with nobody listening.
          const bridge = bridgeOn();
          try {
            return wakeSample(bridged, CHANNEL_TIMERS, perWake);
          } finally {
            await bridge.disable();
          }
        },
      };
      for (const sample of Object.values(candidates)) await sample(); // warm-up
      const results = await alternate(candidates, Math.max(REPEATS, 7));
      const note = `${CHANNEL_TIMERS.toLocaleString('en-US')} timers on a ManualClock wheel, ${what}, fired by advance(1) steps; CPU ns per timer (schedule and fire). "${CHANNEL_CANDIDATES.compiledOut}" is the same build with every hasSubscribers read replaced by false (lib/channel-candidates.mjs); "${CHANNEL_CANDIDATES.bridgeOn}" adds instrumentTickwheel() recording every wake-up (lateness, timers fired, callback time) into the SDK's MeterProvider.`;
      const unused = scenario({
        id,
        title: `Diagnostics channels with no subscriber: ${what}`,
        unit: 'ns/timer',
        higherIsBetter: false,
        subject: CHANNEL_CANDIDATES.noSubscriber,
        baseline: CHANNEL_CANDIDATES.compiledOut,
        results,
        target: { ratio: 0.99 },
        note: `${note} Target: within 1% of the compiled-out build (ratio >= 0.99).`,
      });
      const bridge = scenario({
        id: id.replace('unused', 'bridge'),
        title: `OpenTelemetry bridge on: ${what} (informational)`,
        unit: 'ns/timer',
        higherIsBetter: false,
        subject: CHANNEL_CANDIDATES.bridgeOn,
        baseline: CHANNEL_CANDIDATES.noSubscriber,
        results,
        note: `The samples of ${id}.`,
      });
      printScenario(unused);
      printScenario(bridge);
      out.push(unused, bridge);
    }
    return out;
  } finally {
    for (const copy of copies) copy.remove();
  }
}

// ---------------------------------------------------------------------------------------------

/** The scenario groups, each run in a fresh child process (see `run`). */
const GROUPS = {
  rolling: rollingScenarios,
  refresh: refreshScenario,
  expiry: expiryScenario,
  memory: memoryScenario,
  wakeups: wakeupScenarios,
  lateness: latenessScenarios,
  channels: channelScenarios,
  instructions: instructionScenarios,
  // Issue 18: the wake-up's channel in instructions (lib/channel-overhead.mjs).
  'channel-instructions': () => channelInstructionScenarios('core'),
};
const RESULT_PREFIX = '@@core-result ';

/** Runs one group in this process and hands its scenarios to the parent on stdout. */
async function runGroup(name) {
  const scenarios = [await GROUPS[name]()].flat();
  process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(scenarios)}\n`);
}

/**
 * Runs every group, each in its own child process (with --expose-gc), one after another. The
 * candidates of a scenario still alternate within one process run; a fresh process per group
 * keeps one group's garbage, heap layout and JIT state (a million dead timers from the rolling
 * runs, say) from weighing on the next group.
 */
export async function run() {
  const scenarios = [];
  const t0 = performance.now();
  for (const name of Object.keys(GROUPS)) {
    const child = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--group', name], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * 2 ** 20,
    });
    const lines = (child.stdout ?? '').split('\n');
    for (const line of lines) if (line && !line.startsWith(RESULT_PREFIX)) console.log(line);
    const result = lines.find((line) => line.startsWith(RESULT_PREFIX));
    if (child.status !== 0 || result === undefined)
      throw new Error(`core suite: group ${name} failed (status ${child.status})`);
    scenarios.push(...JSON.parse(result.slice(RESULT_PREFIX.length)));
  }
  console.log(`  (core suite took ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  return { scenarios };
}

/**
 * Which build of @tickwheel/core was measured: the commit, whether packages/core had changes not
 * yet committed, and when its dist was built.
 */
function coreProvenance() {
  const distEntry = createRequire(import.meta.url).resolve('@tickwheel/core');
  const coreDir = path.dirname(path.dirname(distEntry));
  const git = (...args) => {
    try {
      return execFileSync('git', args, { cwd: coreDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return null;
    }
  };
  const status = git('status', '--porcelain', '--', '.');
  return {
    coreCommit: git('rev-parse', '--short', 'HEAD'),
    coreUncommittedChanges: status === null ? null : status.length > 0,
    coreDistBuiltAt: new Date(
      Math.max(
        ...fs
          .readdirSync(path.dirname(distEntry))
          .filter((f) => f.endsWith('.js'))
          .map((f) => fs.statSync(path.join(path.dirname(distEntry), f)).mtimeMs),
      ),
    ).toISOString(),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (typeof globalThis.gc !== 'function') {
    console.error('run with --expose-gc (node --expose-gc suites/core.mjs) so memory figures are exact');
    process.exit(1);
  }
  const groupIndex = process.argv.indexOf('--group');
  if (groupIndex > 0) {
    await runGroup(process.argv[groupIndex + 1]);
    process.exit(0);
  }
  const { scenarios } = await run();
  const file = writeResults('core', {
    scenarios,
    command: 'npm run bench -- core',
    repeats: REPEATS,
    extra: coreProvenance(),
  });
  console.log(`  wrote ${file}`);
}
