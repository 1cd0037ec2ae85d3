/**
 * The ws suite's instruction counts: the server's instructions per connection per heartbeat
 * period, on real loopback connections (ws-period-kernel.mjs), counted under cachegrind
 * (cachegrind.mjs: a long run minus a short run), for the heartbeat, the ws README pattern and
 * the no-heartbeat floor. A count does not move with the machine's load, so these rows decide
 * whether the heartbeat is cheaper than the pattern; the suite's CPU-time rows are the same
 * comparison timed.
 *
 *   node lib/ws-period-instructions.mjs [idle|mixed ...]      # prints the counts (this Node)
 *
 * BENCH_WS_KERNEL_CONNECTIONS sets the connections (default 1 000), BENCH_WS_KERNEL_WARM the
 * warm-up periods (default 10), BENCH_WS_COUNT_JOBS the counts run at once (default 2, as the
 * channel counts: each valgrind run is single-threaded); BENCH_WS_COUNTS=0 leaves the counts (and
 * their rows) out, for a machine too busy for them.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  answerParent,
  childValue,
  fewAtATime,
  instructionsPerOp,
  isMain,
  printScenario,
  scenario,
  valgrindAvailable,
} from './harness.mjs';
import { KERNEL_CONNECTIONS, WARM_PERIODS } from './ws-period-kernel.mjs';

const KERNEL = path.join(path.dirname(fileURLToPath(import.meta.url)), 'ws-period-kernel.mjs');
const SHORT_PERIODS = 2;
const LONG_PERIODS = 16;
const CANDIDATES = ['tickwheel', 'readme', 'none'];
const JOBS = Math.max(1, Number(process.env.BENCH_WS_COUNT_JOBS ?? 2));

/**
 * One candidate's count under this process's runtime: (long run - short run) / the periods
 * between, without V8's compilers' instructions (`compilers` in cachegrind.mjs): a function is
 * compiled once, but when depends on the type feedback that the run's timing gave it (how many
 * pongs one poll read), and two runs of one candidate compiled up to ~120M instructions apart
 * (Node 20, the README pattern, 1 000 connections), ~7k per connection per period of a 16-period
 * window. `perOpAll` keeps them; `perOp` is the work every period repeats (garbage collection
 * included).
 */
function countOne(scenarioName, candidate) {
  return instructionsPerOp(
    process.execPath,
    scenarioName,
    candidate,
    { shortOps: SHORT_PERIODS, longOps: LONG_PERIODS },
    { kernel: KERNEL, compilers: true },
  );
}

/** {@link countOne} in a child process (this file with `--count`), so that JOBS counts run at once. */
function countAsync(scenarioName, candidate) {
  return childValue(fileURLToPath(import.meta.url), ['--count', scenarioName, candidate], {
    label: `ws-period-instructions: ${scenarioName}/${candidate}`,
  });
}

/**
 * Instructions per connection per period of each candidate in each of `scenarioNames` (idle,
 * mixed): `{ [scenario]: { [candidate]: { median, samples, counts } } }`, JOBS counts at a time.
 */
export async function countPeriods(scenarioNames) {
  const jobs = scenarioNames.flatMap((name) => CANDIDATES.map((candidate) => [name, candidate]));
  const out = Object.fromEntries(scenarioNames.map((name) => [name, {}]));
  await fewAtATime(
    jobs.map(([name, candidate]) => async () => {
      const count = await countAsync(name, candidate);
      const perConnection = count.perOp / KERNEL_CONNECTIONS;
      const all = count.perOpAll / KERNEL_CONNECTIONS;
      console.log(
        `  instructions ${name} ${candidate}: ${Math.round(perConnection)} per connection per period (${Math.round(all)} with the compilers)`,
      );
      out[name][candidate] = { median: perConnection, samples: [perConnection], counts: count };
    }),
    JOBS,
  );
  return out;
}

const method = (what, results) =>
  `valgrind --tool=cachegrind, node --predictable --no-concurrent-recompilation, the server process only (clients in a child process valgrind does not follow); (instructions of a ${LONG_PERIODS}-period run - those of a ${SHORT_PERIODS}-period run) / ${LONG_PERIODS - SHORT_PERIODS} periods / ${KERNEL_CONNECTIONS.toLocaleString('en-US')} connections, each run after the same connection set-up and ${WARM_PERIODS} warm-up periods (lib/ws-period-kernel.mjs): V8 optimizes a function that runs once per period (the wheel pass that visits the connections due) only after several periods, and a warm-up that ends before that counts its one-off compilation as a per-period cost. ${what} A period is a step of the clock: the wheel's clock (the system clock plus an offset) jumps one pingIntervalMs + pingSlackMs, the README pattern's setInterval pass runs once; then every pong is read. Every instruction of the server process (syscalls' user side and GC included) except those of V8's compilers (TurboFan/Turboshaft, Maglev, Sparkplug, by symbol), which compile a function once but at a point that depends on the feedback the run's timing gave it: two runs of one candidate differed by up to ~120M compiler instructions. ${withCompilers(results)} One count per candidate: it does not depend on the machine's load.`;

/** The counts with the compilers' instructions, for the note. */
const withCompilers = (results) =>
  `With them (every instruction): ${Object.entries(results)
    .map(([name, r]) => `${name} ${Math.round(r.counts.perOpAll / KERNEL_CONNECTIONS).toLocaleString('en-US')}`)
    .join(', ')} per connection per period.`;

/** The suite's rows: idle (ours against the pattern) and mixed (ours above the floor against the pattern above it). */
export async function periodInstructionScenarios() {
  if (!valgrindAvailable()) {
    console.warn(
      '  instructions: valgrind is not installed (Debian: apt-get install valgrind); no instruction counts this run',
    );
    return [];
  }
  if (process.env.BENCH_WS_COUNTS === '0') {
    console.warn('  instructions: BENCH_WS_COUNTS=0, no ws instruction counts this run');
    return [];
  }
  const { idle, mixed } = await countPeriods(['idle', 'mixed']);
  const above = (r, name) => r[name].median - r.none.median;
  const own = {
    tickwheel: { median: above(mixed, 'tickwheel'), samples: [above(mixed, 'tickwheel')] },
    readme: { median: above(mixed, 'readme'), samples: [above(mixed, 'readme')] },
  };
  const scenarios = [
    scenario({
      id: 'instructions-idle-period',
      title: 'Instructions per connection per heartbeat period (idle connections)',
      unit: 'instructions/connection',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'readme',
      results: idle,
      target: { ratio: 1 },
      note: method(
        "Idle connections: each is pinged and answers once per period with either design; 'none' is the floor (no heartbeat). Target: no more than the README pattern (ratio >= 1).",
        idle,
      ),
    }),
    scenario({
      id: 'instructions-mixed-period',
      title: 'Mixed traffic: instructions per connection per period',
      unit: 'instructions/connection',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'readme',
      results: mixed,
      note: method(
        "Every other connection sends 2 messages of 16 bytes per period, the app listening to messages in every candidate; 'none' is the floor: the same traffic with no heartbeat.",
        mixed,
      ),
    }),
    scenario({
      id: 'instructions-mixed-heartbeat',
      title: 'Mixed traffic: heartbeat instructions above the no-heartbeat floor, per connection per period',
      unit: 'instructions/connection',
      higherIsBetter: false,
      subject: 'tickwheel',
      baseline: 'readme',
      results: own,
      target: { ratio: 1 / 0.55 },
      note: `The row above, each candidate's count minus the floor's ('none', ${Math.round(mixed.none.median).toLocaleString('en-US')} instructions/connection, counted in the same run). Target: at most 0.55x the README pattern's (ratio >= ${(1 / 0.55).toFixed(2)}).`,
    }),
  ];
  for (const sc of scenarios) printScenario(sc);
  return scenarios;
}

if (isMain(import.meta.url) && process.argv[2] === '--count') {
  answerParent(countOne(process.argv[3], process.argv[4]));
} else if (isMain(import.meta.url)) {
  const names = process.argv.slice(2);
  await countPeriods(names.length > 0 ? names : ['idle', 'mixed']);
}
