/**
 * Counts the core suite's instruction kernels alone, without the rest of the suite: for checking a
 * hot-path change on several Nodes in minutes (the whole suite on every Node takes ~25 min).
 *
 * Usage: node benchmarks/suites/core.mjs --count <node binary> [scenario,...] [candidate,...]
 * Scenarios: rolling-10k-1dur, refresh-100k, expiry, expiry-overdue (default all); candidates:
 * tickwheel, floor, native, heap (default tickwheel,floor). Prints one JSON line per count.
 * CORE_COUNT_OPS=short,long overrides the two run lengths of rolling and refresh (the suite's are
 * 200000,1000000); CORE_COUNT_FLAGS adds node flags, space-separated.
 *
 * `expiry` fires its timers as they come due in wall-clock time, so how many wake-ups share them,
 * and the count, move with the machine's load (1,423-1,885 per timer for one build on Node 20).
 * `expiry-overdue` sleeps past the last due time before the loop runs and fires them all in one
 * pass; with CORE_COUNT_FLAGS=--predictable-gc-schedule two counts of one build differed by 0.7%.
 */
import { instructionsPerOp } from './harness.mjs';

const SPECS = {
  'rolling-10k-1dur': { shortOps: 200_000, longOps: 1_000_000 },
  'refresh-100k': { shortOps: 200_000, longOps: 1_000_000 },
  expiry: { shortOps: 50_000, longOps: 250_000 },
  'expiry-overdue': { shortOps: 50_000, longOps: 250_000 },
};

const override = process.env.CORE_COUNT_OPS?.split(',').map(Number);
if (override !== undefined) {
  for (const id of ['rolling-10k-1dur', 'refresh-100k']) SPECS[id] = { shortOps: override[0], longOps: override[1] };
}

/** Counts `scenarios` (comma-separated) of `candidates` under `node` and prints one JSON line per count. */
export function coreCounts(
  node = process.execPath,
  scenarios = Object.keys(SPECS).join(','),
  candidates = 'tickwheel,floor',
) {
  const nodeFlags = process.env.CORE_COUNT_FLAGS?.split(' ').filter(Boolean) ?? [];
  for (const id of scenarios.split(',')) {
    for (const candidate of candidates.split(',')) {
      const count = instructionsPerOp(node, id, candidate, SPECS[id], { nodeFlags });
      console.log(JSON.stringify({ node, scenario: id, candidate, perOp: Math.round(count.perOp * 10) / 10 }));
    }
  }
}
