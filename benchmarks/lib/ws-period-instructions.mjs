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
 * BENCH_WS_KERNEL_CONNECTIONS sets the connections (default 1 000).
 */
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { instructionsPerOp, valgrindAvailable } from './cachegrind.mjs';
import { printScenario, scenario } from './harness.mjs';
import { KERNEL_CONNECTIONS, WARM_PERIODS } from './ws-period-kernel.mjs';

const KERNEL = path.join(path.dirname(new URL(import.meta.url).pathname), 'ws-period-kernel.mjs');
const SHORT_PERIODS = 2;
const LONG_PERIODS = 32;
const CANDIDATES = ['tickwheel', 'readme', 'none'];

/** Instructions per connection per period of each candidate in `scenario` (idle or mixed). */
export function countPeriods(scenarioName, node = process.execPath) {
  const out = {};
  for (const candidate of CANDIDATES) {
    const count = instructionsPerOp(
      node,
      scenarioName,
      candidate,
      { shortOps: SHORT_PERIODS, longOps: LONG_PERIODS },
      { kernel: KERNEL },
    );
    const perConnection = count.perOp / KERNEL_CONNECTIONS;
    console.log(`  instructions ${scenarioName} ${candidate}: ${Math.round(perConnection)} per connection per period`);
    out[candidate] = { median: perConnection, samples: [perConnection], counts: count };
  }
  return out;
}

const method = (what) =>
  `valgrind --tool=cachegrind, node --predictable --no-concurrent-recompilation, the server process only (clients in a child process valgrind does not follow); (instructions of a ${LONG_PERIODS}-period run - those of a ${SHORT_PERIODS}-period run) / ${LONG_PERIODS - SHORT_PERIODS} periods / ${KERNEL_CONNECTIONS.toLocaleString('en-US')} connections, each run after the same ${WARM_PERIODS} periods and connection set-up (lib/ws-period-kernel.mjs). ${what} A period is a step of the clock: the wheel's clock (the system clock plus an offset) jumps one pingIntervalMs + pingSlackMs, the README pattern's setInterval pass runs once; then every pong is read. Every instruction of the server process, syscalls' user side and GC included. One count per candidate: it does not depend on the machine's load.`;

/** The suite's rows: idle (ours against the pattern) and mixed (ours above the floor against the pattern above it). */
export function periodInstructionScenarios() {
  if (!valgrindAvailable()) {
    console.warn(
      '  instructions: valgrind is not installed (Debian: apt-get install valgrind); no instruction counts this run',
    );
    return [];
  }
  const idle = countPeriods('idle');
  const mixed = countPeriods('mixed');
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

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const names = process.argv.slice(2);
  for (const name of names.length > 0 ? names : ['idle', 'mixed']) countPeriods(name);
}
