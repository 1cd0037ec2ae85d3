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
 * The candidates themselves are in lib/core-kernels.mjs, the scenarios in lib/core-throughput.mjs
 * (rolling, refresh, expiry, memory), lib/core-timing.mjs (wake-ups, lateness),
 * lib/core-channels.mjs and lib/core-instructions.mjs. The `instructions` group counts
 * instructions per operation of the micro-scenarios under cachegrind (lib/cachegrind.mjs), a
 * figure that does not move with the machine's load.
 *
 *   node --expose-gc suites/core.mjs                  # or: npm run bench -- core
 *   node --expose-gc suites/core.mjs --group rolling  # one group only, its scenarios as JSON on stdout
 *   node --expose-gc suites/core.mjs --count <node> [scenario,...] [candidate,...]  # instruction kernels alone (lib/core-count.mjs)
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
import { fileURLToPath } from 'node:url';
import { channelInstructionScenarios } from '../lib/channel-overhead.mjs';
import { channelScenarios } from '../lib/core-channels.mjs';
import { instructionScenarios } from '../lib/core-instructions.mjs';
import { expiryScenario, memoryScenario, refreshScenario, rollingScenarios } from '../lib/core-throughput.mjs';
import { latenessScenarios, wakeupScenarios } from '../lib/core-timing.mjs';
import { answerParent, childValue, isMain, packageProvenance, writeResults } from '../lib/harness.mjs';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);

// ---------------------------------------------------------------------------------------------

/** The scenario groups, each run in a fresh child process (see `run`). */
const GROUPS = {
  rolling: () => rollingScenarios(REPEATS),
  refresh: () => refreshScenario(REPEATS),
  expiry: () => expiryScenario(REPEATS),
  memory: () => memoryScenario(REPEATS),
  wakeups: () => wakeupScenarios(REPEATS),
  lateness: () => latenessScenarios(REPEATS),
  channels: () => channelScenarios(REPEATS),
  instructions: () => instructionScenarios(),
  // Issue 18: the wake-up's channel in instructions (lib/channel-overhead.mjs).
  'channel-instructions': () => channelInstructionScenarios('core'),
};

/** Runs one group in this process and answers the parent with its scenarios. */
async function runGroup(name) {
  answerParent([await GROUPS[name]()].flat());
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
    scenarios.push(
      ...(await childValue(fileURLToPath(import.meta.url), ['--group', name], { label: `core group ${name}` })),
    );
  }
  console.log(`  (core suite took ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  return { scenarios };
}

/** Which build of @tickwheel/core was measured (results' `extra`). */
function coreProvenance() {
  const { commit, uncommittedChanges, distBuiltAt } = packageProvenance('@tickwheel/core');
  return { coreCommit: commit, coreUncommittedChanges: uncommittedChanges, coreDistBuiltAt: distBuiltAt };
}

if (isMain(import.meta.url)) {
  if (typeof globalThis.gc !== 'function') {
    console.error('run with --expose-gc (node --expose-gc suites/core.mjs) so memory figures are exact');
    process.exit(1);
  }
  const groupIndex = process.argv.indexOf('--group');
  if (groupIndex > 0) {
    await runGroup(process.argv[groupIndex + 1]);
  } else if (process.argv[2] === '--count') {
    const { coreCounts } = await import('../lib/core-count.mjs');
    coreCounts(...process.argv.slice(3));
  } else {
    const { scenarios } = await run();
    const file = writeResults('core', {
      scenarios,
      command: 'npm run bench -- core',
      repeats: REPEATS,
      extra: coreProvenance(),
    });
    console.log(`  wrote ${file}`);
  }
}
