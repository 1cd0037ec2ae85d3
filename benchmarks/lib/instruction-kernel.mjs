/**
 * One candidate on one micro-scenario for N operations, for counting instructions under
 * cachegrind (see cachegrind.mjs); the candidates are the wall-clock suite's own
 * (core-kernels.mjs), so both figures measure the same code.
 *
 *   node --no-concurrent-recompilation --expose-gc lib/instruction-kernel.mjs <scenario> <candidate> <ops>
 *
 * Everything that does not scale with `ops` is the same in a short and a long run, so it cancels
 * out: the timers in flight are set up alike, and the refresh order is always generated at its
 * longest length and then cut to `ops`. Before the counted run the same kernel runs a fixed
 * warm-up, so that both runs find the code optimized and the young generation grown to its
 * working size (without it the figure fell from 490 to 370 instructions per op for the floor
 * as the run got longer: fewer scavenges per op in a longer run).
 */
import { CONNECTIONS, durationsFor, expiring, messageOrder, refreshing, rolling } from './core-kernels.mjs';
import { isMain } from './harness.mjs';

/** The longest run any scenario is counted with; the refresh order is generated at this length. */
export const MAX_OPS = 2_000_000;
/** Operations of the warm-up run (timers, for expiry). */
const WARM_OPS = { expiry: 100_000, 'expiry-overdue': 100_000, default: 400_000 };

export const KERNELS = {
  'rolling-10k-1dur': (candidate, ops) => rolling[candidate](10_000, ops, durationsFor(1)),
  'rolling-10k-256dur': (candidate, ops) => rolling[candidate](10_000, ops, durationsFor(256)),
  [`refresh-${CONNECTIONS / 1000}k`]: (candidate, ops) => refreshing[candidate](messageOrder(MAX_OPS).subarray(0, ops)),
  expiry: (candidate, ops) => expiring(ops)[candidate](),
  'expiry-overdue': (candidate, ops) => expiring(ops, true)[candidate](),
};

if (isMain(import.meta.url)) {
  const [scenario, candidate, opsText] = process.argv.slice(2);
  const ops = Number(opsText);
  if (!(scenario in KERNELS) || !(ops > 0 && ops <= MAX_OPS)) {
    console.error(`usage: instruction-kernel.mjs <${Object.keys(KERNELS).join('|')}> <candidate> <ops 1..${MAX_OPS}>`);
    process.exit(2);
  }
  await KERNELS[scenario](candidate, WARM_OPS[scenario] ?? WARM_OPS.default);
  await KERNELS[scenario](candidate, ops);
}
