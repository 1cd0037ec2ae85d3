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
import { channelInstructionScenarios } from '../lib/channel-overhead.mjs';
import { channelScenarios } from '../lib/core-channels.mjs';
import { instructionScenarios } from '../lib/core-instructions.mjs';
import { expiryScenario, memoryScenario, refreshScenario, rollingScenarios } from '../lib/core-throughput.mjs';
import { latenessScenarios, wakeupScenarios } from '../lib/core-timing.mjs';
import { writeResults } from '../lib/harness.mjs';

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
