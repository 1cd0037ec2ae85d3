/**
 * The game suite: @tickwheel/core's TimerSet against @colyseus/timer's ClockTimer, the timer
 * Node game servers use today, driving the same simulated world in this one process run,
 * candidates alternating round by round.
 *
 * The world: 100,000 entities with 5 buffs each (500,000 timers), buff kinds lasting 2, 5, 10,
 * 30 and 60 s, stepped by a 20 Hz fixed-step loop (50 ms of game time per tick, as fast as the
 * CPU allows). Each tick the timers advance, then game logic re-applies 500 random buffs (a
 * refresh to the full duration). A buff that expires is applied again at once, so the world
 * stays at 500,000 buffs. Both candidates are driven the way game servers drive them:
 *
 * - `tickwheel`: `TimerSet` on a `TimingWheel` over a `ManualClock`; a tick is
 *   `clock.advance(50)`; refresh is `set(key, duration, buff, { policy: 'max' })`; expiry is
 *   `onExpire` calling `set()` again.
 * - `colyseus`: `ClockTimer` with its clock reading the simulated time; a tick is `tick()` (as a
 *   Colyseus room's simulation interval calls `this.clock.tick()`); a buff is
 *   `clock.setTimeout(reapply, duration)`; refresh is `delayed.reset()` (the same as 'max' here:
 *   a buff's duration never changes).
 * - `colyseus setInterval`: the same, but each buff is one `clock.setInterval(...)` that never
 *   ends: ClockTimer's best case for a world whose buffs repeat forever (periodic effects).
 *
 *   node --expose-gc suites/game.mjs          # or: npm run bench -- game
 *
 * BENCH_REPEATS overrides the number of alternating rounds (default 3). The world and its
 * candidates are in lib/game-world.mjs, the key scenarios in lib/game-keys.mjs, and the periodic
 * world counted in instructions under cachegrind in lib/game-kernels.mjs (BENCH_GAME_INSTRUCTIONS
 * picks its candidates, BENCH_GAME_TICKS=short,long its runs).
 */
import { channelInstructionScenarios } from '../lib/channel-overhead.mjs';
import { heapPerBuff, periodicInstructionScenario } from '../lib/game-kernels.mjs';
import { keyChurn, BLOCK_PAIRS } from '../lib/game-keys.mjs';
import {
  BUFFS,
  BUFFS_PER_ENTITY,
  DURATIONS_MS,
  ENTITIES,
  LONG_TICKS,
  MEASURED_TICKS,
  QUIET_TICKS,
  REFRESHES_PER_TICK,
  STEP_MS,
  WARM_TICKS,
  busy,
  expirySamples,
  heapSamples,
  longSamples,
  quiet,
} from '../lib/game-world.mjs';
import { alternate, isMain, printScenario, runSuite, scenario, summarize } from '../lib/harness.mjs';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
/** Alternating blocks per candidate in the delete + set scenarios (BLOCK_PAIRS pairs each). */
const CHURN_BLOCKS = 4 * REPEATS + 1;

export async function run() {
  const t0 = performance.now();
  const scenarios = [];
  const world = `${ENTITIES.toLocaleString('en-US')} entities x ${BUFFS_PER_ENTITY} buffs (${BUFFS.toLocaleString('en-US')} timers) lasting ${DURATIONS_MS.map((d) => d / 1000).join('/')} s, ${1000 / STEP_MS} Hz fixed step`;

  const busyResults = await alternate(busy, REPEATS);
  const expiries = summarize(expirySamples);
  const busySc = scenario({
    id: 'cpu-per-tick-busy',
    title: 'CPU per tick, 500k buffs expiring and refreshed (20 Hz)',
    unit: 'CPU µs/tick',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'colyseus',
    peers: { colyseus: '@colyseus/timer' },
    results: { tickwheel: busyResults.tickwheel, colyseus: busyResults.colyseus },
    target: { ratio: 10 },
    note:
      `${world}; each tick ${REFRESHES_PER_TICK} refreshes and ${Math.round(expiries.tickwheel.median)} expiries ` +
      `(tickwheel) / ${Math.round(expiries.colyseus.median)} (colyseus), each re-applied at once. process.cpuUsage() (GC threads included) ` +
      `over the same ${MEASURED_TICKS} ticks after ${WARM_TICKS} warm-up ticks. ` +
      `ClockTimer (setTimeout, as a buff is applied) walks all timers every tick and removes each finished one with Array#splice on its 500k-entry array; see cpu-per-tick-periodic for its setInterval form, which avoids the splices.`,
  });
  printScenario(busySc);
  scenarios.push(busySc);

  const periodicSc = scenario({
    id: 'cpu-per-tick-periodic',
    title: 'CPU per tick, 500k periodic effects (20 Hz), ClockTimer as setInterval',
    unit: 'CPU µs/tick',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'colyseus setInterval',
    peers: { 'colyseus setInterval': '@colyseus/timer (setInterval)' },
    results: summarize(longSamples),
    target: { ratio: 3 },
    note:
      `The same world and refreshes, each buff repeating forever: ClockTimer as one setInterval per buff (never spliced), ` +
      `TimerSet unchanged (onExpire sets the key again). ${LONG_TICKS} ticks after the busy window, both candidates. ` +
      `Here every tick expires ${Math.round(expiries.tickwheel.median)} of ${BUFFS.toLocaleString('en-US')} timers (${((expiries.tickwheel.median / BUFFS) * 100).toFixed(2)}%): TimerSet pays per expiry ` +
      `(cache misses on the timer's slab entry, its key's slot and the caller's value, which onExpire reads to re-apply the buff), ClockTimer pays a sequential walk of all 500k.`,
  });
  printScenario(periodicSc);
  scenarios.push(periodicSc);

  // The same buffs held by the core wheel instead (a Map of { value, TimerHandle }, lib/game-kernels.mjs):
  // the memory that decides whether TimerSet keeps a scheduler of its own (timer-set/set-wheel.ts).
  for (let r = 0; r < REPEATS; r++) heapSamples['core wheel + Map'].push(await heapPerBuff('core wheel + Map'));

  const heapSc = scenario({
    id: 'heap-per-buff',
    title: 'Heap per buff, 500k buffs',
    unit: 'bytes',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'colyseus',
    peers: { colyseus: '@colyseus/timer' },
    results: summarize(heapSamples),
    target: { max: 200 },
    note: `Memory delta of building the world, V8 heapUsed plus ArrayBuffer backing stores (gc before and after): the timer, plus the buff object and the world's array slot (the same in both). TimerSet: a Map entry, the key and value cells of its key slot, its key record, its share of the slab and its entry in a wheel bucket (typed arrays, no object per buff, capacity doubled when full); ClockTimer: Delayed, its args array, the re-apply closure; core wheel + Map: a Map entry, an { value, handle } object, a TimerHandle and its re-arming closure (the world of instructions-per-tick-periodic). Node ${process.version}, pointer compression ${process.config.variables.v8_enable_pointer_compression ? 'on' : 'off'}.`,
  });
  printScenario(heapSc);
  scenarios.push(heapSc);

  const quietSc = scenario({
    id: 'cpu-per-tick-quiet',
    title: 'CPU per tick, 500k buffs, nothing due',
    unit: 'CPU µs/tick',
    higherIsBetter: false,
    subject: 'tickwheel',
    baseline: 'colyseus',
    results: await alternate(quiet, REPEATS),
    target: { ratio: 10 },
    note: `The same world with every buff lasting over an hour and no game events: the cost of holding the timers. Mean over ${QUIET_TICKS} ticks, after a full GC of the freshly built world (for both).`,
  });
  printScenario(quietSc);
  scenarios.push(quietSc);

  const churn = { '10k keys': keyChurn(10_000, CHURN_BLOCKS), '1M keys': keyChurn(1_000_000, CHURN_BLOCKS) };
  const churnSc = scenario({
    id: 'ops-1M-keys',
    title: 'delete + set of a random key, 1M keys vs 10k keys',
    unit: 'ns/op pair',
    higherIsBetter: false,
    subject: '1M keys',
    baseline: '10k keys',
    results: summarize({
      '1M keys': churn['1M keys'].timerSet,
      '10k keys': churn['10k keys'].timerSet,
      'plain Map, 1M keys': churn['1M keys'].map,
      'plain Map, 10k keys': churn['10k keys'].map,
    }),
    note: `TimerSet, blocks of ${BLOCK_PAIRS.toLocaleString('en-US')} pairs on random keys (ClockTimer has no keys, so no peer). A ratio below 1 is the 1M set running slower per operation: the work is O(1), but a million keys no longer fit in the CPU caches; the same pairs on a plain Map, measured alongside, slow down in the same way.`,
  });
  printScenario(churnSc);
  scenarios.push(churnSc);
  const churnMapSc = scenario({
    id: 'ops-1M-keys-vs-map',
    title: 'delete + set of a random key, 1M keys, against a plain Map',
    unit: 'ns/op pair',
    higherIsBetter: false,
    subject: '1M keys',
    baseline: 'plain Map, 1M keys',
    results: summarize({ '1M keys': churn['1M keys'].timerSet, 'plain Map, 1M keys': churn['1M keys'].map }),
    target: { ratio: 0.5 },
    note: `TimerSet's delete + set against a plain Map's delete + set (Map.delete, Map.set; no timer), both holding 1M keys in the same process, ${CHURN_BLOCKS} blocks of ${BLOCK_PAIRS.toLocaleString('en-US')} random pairs each, alternating block by block; medians. The target, ratio >= 0.5, is TimerSet costing at most twice what the Map costs: its own Map lookups plus the timer. A deleted timer's slab index is free at once (the set after it takes the same one); its 8-byte bucket entry goes stale and stays until its bucket comes up, or until stale entries pass twice the live ones (one compaction); the clock does not move here.`,
  });
  printScenario(churnMapSc);
  scenarios.push(churnMapSc);
  const pauseSc = scenario({
    id: 'pause-1M-keys',
    title: 'pause() + advance(1 ms) + resume() of the whole set, 1M keys vs 10k keys',
    unit: 'ns',
    higherIsBetter: false,
    subject: '1M keys',
    baseline: '10k keys',
    results: summarize({ '1M keys': [churn['1M keys'].pauseNs], '10k keys': [churn['10k keys'].pauseNs] }),
    note: 'Global pause cancels the set’s one timer on the wheel and stops its game clock, so it costs the same at any size. Mean of 10,000 after the delete + set blocks.',
  });
  printScenario(pauseSc);
  scenarios.push(pauseSc);

  // Issue 30: the periodic-effects target counted in instructions, which the load does not move.
  scenarios.push(...periodicInstructionScenario());

  console.log(`  (game suite took ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  // Issue 18: what the diagnostics channels cost here, in instructions (lib/channel-overhead.mjs).
  scenarios.push(...(await channelInstructionScenarios('game')));
  return { scenarios, extra: { expiriesPerTick: expiries } };
}

if (isMain(import.meta.url)) {
  await runSuite('game', run, { repeats: REPEATS });
}
