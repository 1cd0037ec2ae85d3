/**
 * The core suite's throughput, CPU and memory scenarios: rolling schedule+cancel, refresh-heavy
 * idle detection, expiry of 1M timers, and heap bytes per pending timer. Each takes the number of
 * alternating rounds; the candidates are in core-kernels.mjs.
 */
import {
  CONNECTIONS,
  CORE_PEERS,
  EXPIRY_TIMERS,
  IDLE_MS,
  MESSAGES,
  TIMER_WHEEL_RESOLUTION_MS,
  durationsFor,
  expiring,
  memory,
  messageOrder,
  refreshing,
  rolling,
} from './core-kernels.mjs';
import { alternate, printScenario, scenario } from './harness.mjs';

// ---------------------------------------------------------------------------------------------
// 1. Rolling RPC pattern: K timers in flight; each op cancels the oldest and schedules a new one.
// Timers are 5..56 s out, so none fires while measured; each candidate has its own loop so that
// no call site is shared (and made polymorphic) between candidates.

export async function rollingScenarios(repeats) {
  const out = [];
  const configs = [
    { k: 10_000, ops: 1_000_000, distinct: 1, target: 5 },
    { k: 10_000, ops: 1_000_000, distinct: 256, target: 5 },
    // A run at 1M sets up and tears down 1M timers per candidate: fewer ops and rounds keep the
    // suite's length bounded (native setTimeout needs ~1 s per run on a busy 2-core machine).
    { k: 1_000_000, ops: 500_000, distinct: 1, target: 3, rounds: Math.min(repeats, 3) },
    { k: 1_000_000, ops: 500_000, distinct: 256, target: 3, rounds: Math.min(repeats, 3) },
  ];
  for (const { k, ops, distinct, target, rounds = repeats } of configs) {
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
      // The front door's schedule+cancel row: 10k in flight, one duration.
      ...(k === 10_000 && distinct === 1 ? { peers: CORE_PEERS } : {}),
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

export async function refreshScenario(repeats) {
  const order = messageOrder();
  const candidates = Object.fromEntries(Object.entries(refreshing).map(([name, fn]) => [name, async () => fn(order)]));
  const results = await alternate(candidates, repeats);
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
    peers: CORE_PEERS,
    note: `${CONNECTIONS.toLocaleString('en-US')} idle timers of ${IDLE_MS / 1000} s; ${MESSAGES.toLocaleString('en-US')} messages in random order, each refreshing its connection's timer (native: timeout.refresh()).`,
  });
  printScenario(sc);
  return sc;
}

// ---------------------------------------------------------------------------------------------
// 3. Expiry: 1M timers, due evenly over one second, all fire. Measured: the process's CPU time
// (user + system) from the first schedule to the last callback, i.e. what firing them costs.

export async function expiryScenario(repeats) {
  const results = await alternate(expiring(EXPIRY_TIMERS), repeats);
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
    peers: CORE_PEERS,
    note: `CPU time (user+system, process.cpuUsage) from the first of 1,000,000 schedules to the last callback; delays spread evenly over 1-1000 ms. The floor links all of them, then unlinks and calls each at once (no clock, no waiting). timer-wheel is advanced by a setInterval every ${TIMER_WHEEL_RESOLUTION_MS} ms, its resolution (it has no driver of its own); undici's fast timers sweep their array every 499 ms. Both fire up to a second late (see the lateness rows), which costs them no CPU here.`,
  });
  printScenario(sc);
  return sc;
}

// ---------------------------------------------------------------------------------------------
// 4. Memory: heap bytes per pending timer with 1M pending, one shared callback. The array that
// holds the handles (every candidate needs them to cancel) is allocated before the baseline
// reading, so only what each timer costs is counted.

export async function memoryScenario(repeats) {
  const results = await alternate(memory, Math.min(repeats, 3));
  const sc = scenario({
    id: 'memory-per-timer',
    title: 'Memory per pending timer, 1M pending',
    unit: 'bytes',
    higherIsBetter: false,
    subject: 'tickwheel',
    floor: 'floor',
    baseline: 'native',
    results,
    // Issue 30: no more than the 72 B a handle took when it was filed (six fields; the floor's node
    // is three), plus the 0.03-0.04 B per timer the wheel's buckets and levels came to then.
    target: { max: 72.1 },
    peers: CORE_PEERS,
    note: `V8 heapUsed delta over 1,000,000 pending timers with one shared callback (gc before and after; the handle array is counted in neither). Node ${process.version}, pointer compression ${process.config.variables.v8_enable_pointer_compression ? 'on' : 'off'}.`,
  });
  printScenario(sc);
  return sc;
}
