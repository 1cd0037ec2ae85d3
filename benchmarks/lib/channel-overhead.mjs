/**
 * What the diagnostics channels cost on each hot path that publishes, in instructions counted by
 * cachegrind (issue 18: "with no subscriber the benchmarks move by less than 1%"): a figure that
 * can resolve 1% on a shared 2-core machine, where wall time cannot.
 *
 * For each kernel of channel-kernels.mjs and each candidate, instructions per operation are
 * (instructions of a long run - those of a short run) / (long ops - short ops), as in
 * cachegrind.mjs, under `node --predictable --no-concurrent-recompilation`. The candidates:
 *
 * - `channels compiled out`: the build with every `hasSubscribers` read replaced by `false`
 *   (channel-candidates.mjs `compiledOut`), the baseline;
 * - `no subscriber`: the build as shipped, nobody listening: its % over the baseline is the row
 *   with the issue's target (< 1%, ratio >= 0.99);
 * - `OpenTelemetry bridge on`: the same with `instrumentTickwheel()` recording (informational, %
 *   over `no subscriber`).
 *
 * The rows belong to the suites that own the hot path; each suite calls
 * `channelInstructionScenarios('<suite>')`. To count them without re-running whole suites, and
 * merge them into each runtime's run of results/<suite>.json:
 *
 *   node lib/channel-overhead.mjs --node all            # every suite's rows, Node 20, 22, 24, 26
 *   node lib/channel-overhead.mjs --node 22 core game   # some suites under one runtime
 *   node lib/channel-overhead.mjs --against <other checkout>/packages [kernel ...]
 *                                     # this build vs another's, no subscriber (prints only)
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CHANNEL_CANDIDATES, compiledOut } from './channel-candidates.mjs';
import { CHANNEL_KERNELS } from './channel-kernels.mjs';
import {
  answerParent,
  BENCH_DIR,
  childValue,
  fewAtATime,
  instructionsPerOp,
  isMain,
  printScenario,
  RESULTS_DIR,
  scenario,
  valgrindAvailable,
  writeResults,
} from './harness.mjs';
import { nodeBinary, parseMajors, runUnder } from './runtimes.mjs';

const KERNEL = path.join(path.dirname(fileURLToPath(import.meta.url)), 'channel-kernels.mjs');

/** The hot paths that publish, by the suite whose rows they are. */
export const CHANNEL_INSTRUCTION_SUITES = {
  core: [
    { kernel: 'wake-1', what: 'a wheel wake-up firing 1 timer', unit: 'instructions/wake-up' },
    { kernel: 'wake-100', what: 'a wheel wake-up firing 100 timers', unit: 'instructions/wake-up' },
  ],
  game: [{ kernel: 'timer-set-expiry', what: 'a TimerSet key set and expired', unit: 'instructions/expiry' }],
  fetch: [
    { kernel: 'fetch-request', what: 'a request through withTimeouts, stub fetch', unit: 'instructions/request' },
    { kernel: 'fetch-timeout', what: 'a request timed out (headersMs), stub fetch', unit: 'instructions/request' },
  ],
  grpc: [
    { kernel: 'grpc-call', what: 'a unary call through deadlineInterceptor, stub call', unit: 'instructions/call' },
    { kernel: 'grpc-deadline', what: 'a unary call ended by its deadline, stub call', unit: 'instructions/call' },
  ],
  ws: [
    { kernel: 'ws-period', what: 'a heartbeat period of one answering connection', unit: 'instructions/connection' },
    { kernel: 'ws-kill', what: 'a connection killed by the heartbeat', unit: 'instructions/connection' },
  ],
};

/** Kernel candidate names (channel-kernels.mjs) -> the names the results show. */
const CANDIDATES = {
  'compiled-out': CHANNEL_CANDIDATES.compiledOut,
  'no-subscriber': CHANNEL_CANDIDATES.noSubscriber,
  'bridge-on': CHANNEL_CANDIDATES.bridgeOn,
};
/**
 * What to count, when the machine is too busy for all of it (each count is two valgrind runs of
 * ~10 s of CPU): BENCH_CHANNEL_KERNELS lists kernels (default all), BENCH_CHANNEL_BRIDGE=0 leaves
 * out the bridge candidate (and its rows).
 */
const ONLY_KERNELS = (process.env.BENCH_CHANNEL_KERNELS ?? '').split(',').filter(Boolean);
const COUNTED = Object.keys(CANDIDATES).filter(
  (candidate) => candidate !== 'bridge-on' || process.env.BENCH_CHANNEL_BRIDGE !== '0',
);

/**
 * Counts per candidate (BENCH_CHANNEL_REPEATS, default 1), alternating candidates; a row shows
 * their median. A count does not depend on the machine's load, but it does move with when the
 * garbage collector and the optimizer happen to run: repeated counts of one build on Node 20's
 * fetch kernel (~56k instructions per request) differ by up to ~1%, the size of the target.
 */
const REPEATS = Math.max(1, Math.floor(Number(process.env.BENCH_CHANNEL_REPEATS ?? 1)));

/** Valgrind runs at once (each is single-threaded); BENCH_CHANNEL_JOBS overrides. */
const JOBS = Math.max(1, Number(process.env.BENCH_CHANNEL_JOBS ?? 2));

/** instructionsPerOp of one candidate, counted in a child process so that two can run at once. */
function countAsync(scenarioId, candidate, copy) {
  return childValue(fileURLToPath(import.meta.url), ['--count', scenarioId, candidate, copy.dir], {
    label: `channel-overhead: ${scenarioId}/${candidate}`,
  });
}

const pct = (subject, baseline) => (subject / baseline - 1) * 100;

/**
 * The instruction rows of one suite under this process's runtime: per hot path, `no subscriber`
 * vs `channels compiled out` (target < 1%) and `OpenTelemetry bridge on` vs `no subscriber`.
 * Empty (with a warning) when valgrind is not installed.
 */
export async function channelInstructionScenarios(suite) {
  if (!(suite in CHANNEL_INSTRUCTION_SUITES))
    throw new RangeError(`channel-overhead: no channel rows for suite ${JSON.stringify(suite)}`);
  const specs = CHANNEL_INSTRUCTION_SUITES[suite].filter(
    (spec) => ONLY_KERNELS.length === 0 || ONLY_KERNELS.includes(spec.kernel),
  );
  if (specs.length === 0) return [];
  if (!valgrindAvailable()) {
    console.warn(
      '  channel instructions: valgrind is not installed (Debian: apt-get install valgrind); no rows this run',
    );
    return [];
  }
  const packages = ['fetch', 'grpc', 'ws'];
  const stripped = compiledOut(packages);
  const built = compiledOut(packages, false);
  try {
    const jobs = [];
    for (let repeat = 0; repeat < REPEATS; repeat++)
      for (const spec of specs)
        for (const candidate of COUNTED)
          jobs.push(() => countAsync(spec.kernel, candidate, candidate === 'compiled-out' ? stripped : built));
    const counts = await fewAtATime(jobs, JOBS);
    const out = [];
    specs.forEach((spec, i) => {
      const results = {};
      COUNTED.forEach((candidate, j) => {
        const mine = Array.from(
          { length: REPEATS },
          (_, repeat) => counts[(repeat * specs.length + i) * COUNTED.length + j],
        );
        const samples = mine.map((count) => count.perOp);
        const middle = [...samples].sort((a, b) => a - b)[(REPEATS - 1) >> 1];
        results[CANDIDATES[candidate]] = {
          median: middle,
          samples,
          counts: REPEATS === 1 ? mine[0] : mine,
        };
      });
      const off = results[CANDIDATES['compiled-out']].median;
      const unused = results[CANDIDATES['no-subscriber']].median;
      const bridged = results[CANDIDATES['bridge-on']]?.median;
      const kernel = CHANNEL_KERNELS[spec.kernel];
      const how = `valgrind --tool=cachegrind, node --predictable --no-concurrent-recompilation; (instructions of a ${kernel.longOps.toLocaleString('en-US')}-op run - those of a ${kernel.shortOps.toLocaleString('en-US')}-op run) / ${(kernel.longOps - kernel.shortOps).toLocaleString('en-US')}, each after a ${kernel.warmOps.toLocaleString('en-US')}-op warm-up, on a ManualClock wheel (lib/channel-kernels.mjs \`${spec.kernel}\`). "${CHANNEL_CANDIDATES.compiledOut}" is the same build with every hasSubscribers read replaced by false (lib/channel-candidates.mjs). ${REPEATS === 1 ? 'One count per candidate' : `The median of ${REPEATS} counts per candidate, alternating`}: a count does not depend on the machine's load.`;
      out.push({
        ...scenario({
          id: `channels-instructions-${spec.kernel}`,
          title: `Diagnostics channels with no subscriber, instructions: ${spec.what}`,
          unit: spec.unit,
          higherIsBetter: false,
          subject: CHANNEL_CANDIDATES.noSubscriber,
          baseline: CHANNEL_CANDIDATES.compiledOut,
          results,
          target: { ratio: 0.99 },
          note: `${how} Target: less than 1% more instructions than the compiled-out build (ratio >= 0.99).`,
        }),
        overheadPct: pct(unused, off),
      });
      if (bridged !== undefined)
        out.push({
          ...scenario({
            id: `channels-bridge-instructions-${spec.kernel}`,
            title: `OpenTelemetry bridge on, instructions: ${spec.what} (informational)`,
            unit: spec.unit,
            higherIsBetter: false,
            subject: CHANNEL_CANDIDATES.bridgeOn,
            baseline: CHANNEL_CANDIDATES.noSubscriber,
            results,
            note: `The counts of channels-instructions-${spec.kernel}; instrumentTickwheel() recording every event into the SDK's MeterProvider (periodic reader, in-memory exporter).`,
          }),
          overheadPct: pct(bridged, unused),
        });
    });
    for (const sc of out) printScenario(sc);
    return out;
  } finally {
    stripped.remove();
    built.remove();
  }
}

/**
 * Puts `scenarios` into this runtime's run of results/<suite>.json, replacing rows of the same
 * id; a file or runtime with no run yet gets a run of these rows only.
 */
function mergeIntoResults(suite, scenarios) {
  // Runs under other runtimes may merge into the same file at the same time: one at a time.
  const lock = path.join(RESULTS_DIR, `.${suite}.channel-merge.lock`);
  for (let tries = 0; ; tries++) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST' || tries > 600) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
  try {
    return mergeLocked(suite, scenarios);
  } finally {
    fs.rmdirSync(lock);
  }
}

function mergeLocked(suite, scenarios) {
  const file = path.join(RESULTS_DIR, `${suite}.json`);
  const major = Number(process.versions.node.split('.')[0]);
  const record = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : null;
  const run = record?.runs?.find((r) => r.runtime?.major === major);
  if (run === undefined) {
    writeResults(suite, { scenarios, command: 'node lib/channel-overhead.mjs', repeats: 1 });
    return file;
  }
  const ids = new Set(scenarios.map((sc) => sc.id));
  run.scenarios = [...run.scenarios.filter((sc) => !ids.has(sc.id)), ...scenarios];
  run.channelInstructions = { date: new Date().toISOString(), command: `node lib/channel-overhead.mjs ${suite}` };
  fs.writeFileSync(file, JSON.stringify(record, null, 2) + '\n');
  return file;
}

/**
 * `no subscriber` of this build against the same kernels on another checkout's built packages
 * (e.g. the commit before a change to the channels): instructions per op and the % difference.
 * Prints only; nothing is written to the results.
 */
async function compareBuilds(otherPackages, kernels) {
  const packages = ['fetch', 'grpc', 'ws'];
  const mine = compiledOut(packages, false);
  const other = compiledOut(packages, false, path.resolve(otherPackages));
  try {
    const chosen = kernels.length > 0 ? kernels : Object.keys(CHANNEL_KERNELS);
    const jobs = chosen.flatMap((kernel) =>
      [mine, other].map((copy) => () => countAsync(kernel, 'no-subscriber', copy)),
    );
    const counts = await fewAtATime(jobs, JOBS);
    chosen.forEach((kernel, i) => {
      const [a, b] = [counts[2 * i].perOp, counts[2 * i + 1].perOp];
      console.log(
        `  ${kernel}: this build ${a.toFixed(1)} instructions/op, ${otherPackages} ${b.toFixed(1)}: ${pct(a, b) >= 0 ? '+' : ''}${pct(a, b).toFixed(3)}%`,
      );
    });
  } finally {
    mine.remove();
    other.remove();
  }
}

async function main(args) {
  if (args[0] === '--count') {
    const [, scenarioId, candidate, dir] = args;
    const env = { ...process.env, TICKWHEEL_CHANNEL_COPY: dir };
    const count = instructionsPerOp(process.execPath, scenarioId, candidate, CHANNEL_KERNELS[scenarioId], {
      kernel: KERNEL,
      env,
    });
    answerParent(count);
    return;
  }
  if (args[0] === '--against') {
    await compareBuilds(args[1], args.slice(2));
    return;
  }
  if (args[0] === '--merge') {
    for (const suite of args.slice(1)) {
      console.log(`  ${suite} (Node ${process.versions.node})`);
      console.log(`  wrote ${mergeIntoResults(suite, await channelInstructionScenarios(suite))}`);
    }
    return;
  }
  let nodeList = 'current';
  const suites = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--node') nodeList = args[++i];
    else suites.push(args[i]);
  }
  const chosen = suites.length > 0 ? suites : Object.keys(CHANNEL_INSTRUCTION_SUITES);
  for (const suite of chosen)
    if (!(suite in CHANNEL_INSTRUCTION_SUITES))
      throw new RangeError(
        `unknown suite ${JSON.stringify(suite)}; the suites with channel rows are ${Object.keys(CHANNEL_INSTRUCTION_SUITES).join(', ')}`,
      );
  for (const major of parseMajors(nodeList)) {
    const node = nodeBinary(major);
    const status = runUnder(node, fileURLToPath(import.meta.url), ['--merge', ...chosen]);
    if (status !== 0) throw new Error(`Node ${major}: status ${status}`);
  }
  await import(pathToFileURL(path.join(BENCH_DIR, 'render.mjs')).href);
}

if (isMain(import.meta.url)) await main(process.argv.slice(2));
