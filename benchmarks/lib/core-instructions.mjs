/**
 * The core suite's instruction counts: the micro-scenarios of core-throughput.mjs counted under
 * cachegrind (cachegrind.mjs) rather than timed, so a change can be judged without the
 * neighbours' noise.
 */
import { CONNECTIONS } from './core-kernels.mjs';
import { instructionsPerOp, valgrindAvailable } from './cachegrind.mjs';
import { printScenario, scenario } from './harness.mjs';

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
    // Issue 30: the wheel's own work on top of what any list costs, at most 0.4 of the floor.
    target: { maxOverFloor: 1.4 },
  },
  {
    id: `refresh-${CONNECTIONS / 1000}k`,
    title: `Instructions per refresh, ${CONNECTIONS / 1000}k handles, random order`,
    unit: 'instructions/op',
    shortOps: 200_000,
    longOps: 1_000_000,
    // Issue 30: a lazy refresh (one field write) no dearer than moving a node to a list's tail.
    target: { maxOverFloor: 1.0 },
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

export async function instructionScenarios() {
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
      target: INSTRUCTION_CANDIDATES.includes('floor') ? spec.target : undefined,
      results,
      note: `valgrind --tool=cachegrind, node --predictable --no-concurrent-recompilation; (instructions of a ${spec.longOps.toLocaleString('en-US')}-op run - those of a ${spec.shortOps.toLocaleString('en-US')}-op run) / ${(spec.longOps - spec.shortOps).toLocaleString('en-US')}, each after the same warm-up run (lib/instruction-kernel.mjs). Every instruction of the process, GC included; cache misses are not in it. One count per candidate: it does not depend on the machine's load.`,
    });
    printScenario(sc);
    out.push(sc);
  }
  return out;
}
