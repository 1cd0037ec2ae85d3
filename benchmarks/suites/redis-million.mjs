/**
 * The redis-million suite: a million pending timers, end to end (issue 29). For each system in
 * turn, @tickwheel/redis then BullMQ 5 delayed jobs, on its own private redis-server (started here
 * on a free loopback port, no RDB snapshots, no AOF: memory and CPU are the data structures' own):
 *
 * 1. three worker processes start (lib/redis-million-worker.mjs, concurrency 100 each, empty
 *    handlers that record their start on the Redis clock);
 * 2. a scheduler process (lib/redis-million-scheduler.mjs) schedules N timers with the same
 *    61-byte JSON payload, due uniformly over the window, starting a lead time after it starts
 *    (so that every timer is pending when scheduling ends), one call per timer for both
 *    (tickwheel's `schedule`, BullMQ's `Queue.add` with `delay`), the calls in flight capped by
 *    the same adaptive window (AIMD, up to 1 000; see the scheduler);
 * 3. right after scheduling: `MEMORY PURGE`, then `used_memory` minus its value before
 *    scheduling, divided by the timers pending, is the Redis memory per pending timer;
 * 4. the timers fire; the run ends once every timer fired and nothing more came for a settle
 *    time, or a grace time after the last due time, whichever is first.
 *
 * Reported per system: timers lost (never fired), duplicated (deliveries beyond the first),
 * lateness p50/p99/max of each timer's first delivery (handler start minus due time, both on the
 * Redis server's clock), Redis memory per pending timer, Redis CPU (`INFO cpu`, used_cpu_sys +
 * used_cpu_user deltas) while scheduling and while firing, the workers' CPU (`process.cpuUsage()`
 * summed over the three) while firing, the scheduler's CPU and its rate.
 *
 *   npm run bench -- redis-million --node current    # 1M timers over 10 min: ~40 min in all
 *   BENCH_MILLION_QUICK=1 node --expose-gc suites/redis-million.mjs   # 100k over 1 min, ~5 min
 *
 * BENCH_MILLION_TIMERS and BENCH_MILLION_WINDOW_MS set any other scale (BENCH_MILLION_LEAD_MS the
 * lead time, default N / 10 ms with at least 10 s). Only the full scale (1M over 10 min) writes
 * results/redis-million.json; any other scale writes its JSON to the system's temporary directory
 * and says where. BENCH_MILLION_NOTE is recorded with the results (say what else ran on the
 * machine). Every wait is bounded: a child that hangs is killed by pid, and a watchdog stops the
 * whole suite (children and servers, by pid) once its time budget is spent.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startRedisServer } from '../lib/redis-servers.mjs';
import {
  forkWorker,
  isMain,
  machineInfo,
  packageProvenance,
  percentile,
  printScenario,
  redisCpuSeconds,
  runtimeInfo,
  scenario,
  sleep,
  usedMemory,
  withTimeout,
  writeResults,
} from '../lib/harness.mjs';

const FULL = { timers: 1_000_000, windowMs: 600_000 };
const QUICK = { timers: 100_000, windowMs: 60_000 };
const base = process.env.BENCH_MILLION_QUICK === '1' ? QUICK : FULL;
const TIMERS = Number(process.env.BENCH_MILLION_TIMERS ?? base.timers);
const WINDOW_MS = Number(process.env.BENCH_MILLION_WINDOW_MS ?? base.windowMs);
/**
 * How long after scheduling starts the window opens: long enough for the scheduler to finish
 * first, so that every timer is pending when memory is measured and none is scheduled late. Per
 * system, from scheduling rates measured on this shared 2-core machine (tickwheel ~10k/s, BullMQ
 * ~4k/s) with a 2.5× margin (the machine's load moves them a lot); a run that overruns it says so (`firedWhileScheduling`).
 */
const LEAD_MS = {
  tickwheel: Number(process.env.BENCH_MILLION_LEAD_MS ?? Math.max(10_000, Math.ceil(TIMERS / 4))),
  bullmq: Number(process.env.BENCH_MILLION_LEAD_MS ?? Math.max(10_000, Math.ceil((TIMERS * 2) / 3))),
};
const IS_FULL = TIMERS === FULL.timers && WINDOW_MS === FULL.windowMs;
const WORKERS = 3;
const CONCURRENCY = 100;
/** The scheduler's window of calls in flight grows up to this. */
const MAX_IN_FLIGHT = 1_000;
/** After the last due time: longer than a lease (tickwheel 30 s) or a stall check (BullMQ 30 s). */
const GRACE_MS = 60_000;
/** After every timer fired: time for a late duplicate to show. */
const SETTLE_MS = 5_000;
const SYSTEMS = ['tickwheel', 'bullmq'];
const LIB = path.join(path.dirname(path.dirname(fileURLToPath(import.meta.url))), 'lib');

for (const [name, value, min] of [
  ['BENCH_MILLION_TIMERS', TIMERS, 1],
  ['BENCH_MILLION_WINDOW_MS', WINDOW_MS, 1_000],
  ['BENCH_MILLION_LEAD_MS', Math.min(LEAD_MS.tickwheel, LEAD_MS.bullmq), 1_000],
]) {
  if (!Number.isInteger(value) || value < min)
    throw new RangeError(`${name} must be an integer >= ${min}, got ${value}`);
}

// ---------------------------------------------------------------------------------------------
// Everything started here, so that a watchdog (or an error) can stop it by pid.

const children = new Set();
const servers = new Set();

function killAll() {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const server of servers) if (server.pid !== undefined) process.kill(server.pid, 'SIGKILL');
}

/** A worker of lib/ (harness protocol), remembered so that `killAll` can stop it. */
function forkChild(script, args, onEvent) {
  const worker = forkWorker(path.join(LIB, script), args, { label: `redis-million: ${script}`, onEvent });
  children.add(worker.child);
  worker.child.once('exit', () => children.delete(worker.child));
  return worker;
}

/** Which build of @tickwheel/redis was measured: commit, uncommitted changes, dist build time. */
function redisPackageProvenance() {
  const { commit, branch, uncommittedChanges, distBuiltAt } = packageProvenance('@tickwheel/redis');
  return {
    redisPackageCommit: commit,
    redisPackageBranch: branch,
    redisPackageUncommittedChanges: uncommittedChanges,
    redisPackageDistBuiltAt: distBuiltAt,
  };
}

// ---------------------------------------------------------------------------------------------
// One system, end to end.

async function runSystem(system) {
  const loadAtStart = os.loadavg().map((x) => Math.round(x * 100) / 100);
  const server = await startRedisServer();
  servers.add(server);
  const admin = new Redis({ port: server.port, host: '127.0.0.1', maxRetriesPerRequest: 3 });
  admin.on('error', () => undefined);
  const name = `million-${system}`;
  const count = new Uint8Array(TIMERS);
  const firstLateness = new Float64Array(TIMERS).fill(NaN);
  let distinct = 0;
  let deliveries = 0;
  let outOfRange = 0;
  const workers = [];
  try {
    const redisVersion = /redis_version:(\S+)/.exec(await admin.info('server'))[1];
    for (let w = 0; w < WORKERS; w++) {
      const config = JSON.stringify({ port: server.port, name, concurrency: CONCURRENCY });
      const onEvent = (fired) => {
        for (let k = 0; k < fired.length; k += 2) {
          const i = fired[k];
          if (!(i >= 0 && i < TIMERS)) {
            outOfRange++;
            continue;
          }
          deliveries++;
          if (count[i]++ === 0) {
            distinct++;
            firstLateness[i] = fired[k + 1];
          }
        }
      };
      workers.push(forkChild('redis-million-worker.mjs', [system, config], onEvent));
    }
    await withTimeout(Promise.all(workers.map((w) => w.ready)), 30_000, `${system}'s ${WORKERS} workers starting`);
    const workerCpu = async () =>
      (await withTimeout(Promise.all(workers.map((w) => w.ask('cpu'))), 10_000, 'the workers reporting CPU')).reduce(
        (sum, micros) => sum + micros,
        0,
      );
    await sleep(1_000);

    // Scheduling.
    const mem0 = await usedMemory(admin);
    const redisCpu0 = await redisCpuSeconds(admin);
    const workerCpu0 = await workerCpu();
    const sched = { firstDueMs: NaN, payloadBytes: NaN, done: null, scheduled: 0 };
    const schedConfig = JSON.stringify({
      port: server.port,
      name,
      n: TIMERS,
      windowMs: WINDOW_MS,
      leadMs: LEAD_MS[system],
      maxInFlight: MAX_IN_FLIGHT,
    });
    const schedStart = Date.now();
    const scheduler = forkChild('redis-million-scheduler.mjs', [system, schedConfig], (m) => {
      if (m.firstDueMs !== undefined) Object.assign(sched, m);
      if (m.scheduled !== undefined) {
        sched.scheduled = m.scheduled;
        console.log(
          `  ${system}: ${m.scheduled.toLocaleString('en-US')} scheduled (window ${m.window}), ${distinct} fired`,
        );
      }
    });
    // The scheduler's one answer is its summary, sent as it exits.
    sched.done = await withTimeout(scheduler.ready, LEAD_MS[system] + WINDOW_MS + 120_000, `${system}'s scheduling`);
    const firedWhileScheduling = distinct;
    const mem1 = await usedMemory(admin);
    const redisCpu1 = await redisCpuSeconds(admin);
    const workerCpu1 = await workerCpu();
    const keysPending = await admin.dbsize();
    const pending = TIMERS - firedWhileScheduling;
    console.log(
      `  ${system}: scheduled ${TIMERS.toLocaleString('en-US')} in ${(sched.done.scheduleMs / 1000).toFixed(1)} s ` +
        `(lead ${LEAD_MS[system] / 1000} s, ${firedWhileScheduling} fired meanwhile), ` +
        `${((mem1.used - mem0.used) / pending).toFixed(1)} B per pending timer; firing for ${WINDOW_MS / 1000} s`,
    );

    // Firing.
    const lastDueMs = sched.firstDueMs + Math.floor(((TIMERS - 1) * WINDOW_MS) / TIMERS);
    const graceEnd = lastDueMs + GRACE_MS;
    let lastProgress = Date.now();
    let allFiredAt = null;
    while (Date.now() < graceEnd) {
      if (distinct === TIMERS) {
        allFiredAt ??= Date.now();
        if (Date.now() - allFiredAt >= SETTLE_MS) break;
      }
      if (Date.now() - lastProgress > 30_000) {
        lastProgress = Date.now();
        console.log(`  ${system}: ${distinct.toLocaleString('en-US')} of ${TIMERS.toLocaleString('en-US')} fired`);
      }
      await sleep(200);
    }
    const redisCpu2 = await redisCpuSeconds(admin);
    const workerCpu2 = await workerCpu();
    const mem2 = await usedMemory(admin);
    const keysLeft = await admin.dbsize();
    const finals = await Promise.all(workers.map((w) => w.close(20_000, 'stop')));

    const lateness = [];
    for (let i = 0; i < TIMERS; i++) {
      if (count[i] > 0) lateness.push(firstLateness[i]);
    }
    for (let w = 0; w < finals.length; w++) finals[w] ??= {};
    const result = {
      system,
      redisVersion,
      port: server.port,
      loadAtStart,
      loadAtEnd: os.loadavg().map((x) => Math.round(x * 100) / 100),
      payloadBytes: sched.payloadBytes,
      scheduleMs: sched.done.scheduleMs,
      scheduleRate: TIMERS / (sched.done.scheduleMs / 1000),
      schedulerCpuSeconds: sched.done.cpuMicros / 1e6,
      scheduleCallsRetried: sched.done.retries,
      scheduleWindow: sched.done.window,
      scheduleStartedAt: new Date(schedStart).toISOString(),
      firstDueAt: new Date(sched.firstDueMs).toISOString(),
      firedWhileScheduling,
      lost: TIMERS - distinct,
      duplicated: deliveries - distinct,
      timersFiredMoreThanOnce: count.reduce((n, c) => n + (c > 1 ? 1 : 0), 0),
      deliveriesOutOfRange: outOfRange,
      latenessMs: {
        min: percentile(lateness, 0),
        p50: percentile(lateness, 50),
        p99: percentile(lateness, 99),
        p999: percentile(lateness, 99.9),
        max: percentile(lateness, 100),
      },
      memory: {
        usedBefore: mem0.used,
        usedAfterSchedule: mem1.used,
        usedAtEnd: mem2.used,
        rssAfterSchedule: mem1.rss,
        bytesPerPendingTimer: (mem1.used - mem0.used) / pending,
        keysAfterSchedule: keysPending,
        keysAtEnd: keysLeft,
      },
      redisCpuSeconds: { scheduling: redisCpu1 - redisCpu0, firing: redisCpu2 - redisCpu1 },
      workerCpuSeconds: { scheduling: (workerCpu1 - workerCpu0) / 1e6, firing: (workerCpu2 - workerCpu1) / 1e6 },
      leadMs: LEAD_MS[system],
      scheduledAfterFirstDue: schedStart + sched.done.scheduleMs > sched.firstDueMs,
      allFiredAfterLastDueMs: allFiredAt === null ? null : allFiredAt - lastDueMs,
      workers: finals.map((f) => ({
        deliveries: f.deliveries,
        errors: f.errors,
        failed: f.failed,
        stale: f.stale,
        redisClockOffsetMs: f.offsetMs,
        worstClockRttMs: f.worstRttMs,
        rss: f.rss,
      })),
    };
    console.log(
      `  ${system}: lost ${result.lost}, duplicated ${result.duplicated}, lateness p50 ${result.latenessMs.p50.toFixed(1)} ms ` +
        `p99 ${result.latenessMs.p99.toFixed(1)} ms max ${result.latenessMs.max.toFixed(1)} ms, Redis CPU ` +
        `${result.redisCpuSeconds.scheduling.toFixed(1)} + ${result.redisCpuSeconds.firing.toFixed(1)} s, worker CPU ` +
        `${result.workerCpuSeconds.firing.toFixed(1)} s`,
    );
    return result;
  } finally {
    await Promise.all(workers.map((w) => w.close(5_000, 'stop')));
    admin.disconnect();
    await server.stop();
    servers.delete(server);
  }
}

// ---------------------------------------------------------------------------------------------
// Scenarios.

function scenarios(bySystem) {
  const one = (pick) =>
    Object.fromEntries(SYSTEMS.map((s) => [s, { median: pick(bySystem[s]), samples: [pick(bySystem[s])] }]));
  const common = { subject: 'tickwheel', baseline: 'bullmq' };
  const perTimer = (seconds) => (seconds * 1e6) / TIMERS;
  const scale = `${TIMERS.toLocaleString('en-US')} timers over ${WINDOW_MS % 60_000 === 0 ? `${WINDOW_MS / 60_000} min` : `${WINDOW_MS / 1000} s`}`;
  return [
    scenario({
      ...common,
      id: 'million-lost',
      title: `Timers lost (never fired), ${scale}`,
      unit: 'timers',
      higherIsBetter: false,
      results: one((r) => r.lost),
      target: { max: 0 },
    }),
    scenario({
      ...common,
      id: 'million-duplicated',
      title: 'Deliveries beyond the first (duplicates)',
      unit: 'deliveries',
      higherIsBetter: false,
      results: one((r) => r.duplicated),
      target: { max: 0 },
    }),
    scenario({
      ...common,
      id: 'million-lateness-p50',
      title: 'Lateness p50 (handler start − due, Redis clock)',
      unit: 'ms',
      higherIsBetter: false,
      results: one((r) => r.latenessMs.p50),
    }),
    scenario({
      ...common,
      id: 'million-lateness-p99',
      title: 'Lateness p99',
      unit: 'ms',
      higherIsBetter: false,
      results: one((r) => r.latenessMs.p99),
    }),
    scenario({
      ...common,
      id: 'million-lateness-max',
      title: 'Lateness max',
      unit: 'ms',
      higherIsBetter: false,
      results: one((r) => r.latenessMs.max),
    }),
    scenario({
      ...common,
      id: 'million-memory',
      title: 'Redis memory per pending timer (`used_memory` delta after `MEMORY PURGE`)',
      unit: 'bytes',
      higherIsBetter: false,
      results: one((r) => r.memory.bytesPerPendingTimer),
      target: { ratio: 2.5 },
      note: 'the target is issue 29\'s "at most 0.4× a BullMQ delayed job"',
    }),
    scenario({
      ...common,
      id: 'million-redis-cpu-schedule',
      title: 'Redis CPU per timer while scheduling',
      unit: 'µs',
      higherIsBetter: false,
      results: one((r) => perTimer(r.redisCpuSeconds.scheduling)),
    }),
    scenario({
      ...common,
      id: 'million-redis-cpu-fire',
      title: 'Redis CPU per timer while firing',
      unit: 'µs',
      higherIsBetter: false,
      results: one((r) => perTimer(r.redisCpuSeconds.firing)),
    }),
    scenario({
      ...common,
      id: 'million-worker-cpu-fire',
      title: `Worker CPU per timer while firing (${WORKERS} processes summed)`,
      unit: 'µs',
      higherIsBetter: false,
      results: one((r) => perTimer(r.workerCpuSeconds.firing)),
    }),
    scenario({
      ...common,
      id: 'million-worker-cpu-idle',
      title: `Worker CPU per second while the timers were being scheduled, none due (${WORKERS} processes summed)`,
      unit: 'ms/s',
      higherIsBetter: false,
      results: one((r) => (r.workerCpuSeconds.scheduling * 1000) / (r.scheduleMs / 1000)),
    }),
    scenario({
      ...common,
      id: 'million-scheduler-cpu',
      title: 'Scheduler process CPU per timer',
      unit: 'µs',
      higherIsBetter: false,
      results: one((r) => perTimer(r.schedulerCpuSeconds)),
    }),
    scenario({
      ...common,
      id: 'million-schedule-rate',
      title: `Scheduling rate (one process, one call per timer, at most ${MAX_IN_FLIGHT.toLocaleString('en-US')} in flight)`,
      unit: 'timers/s',
      higherIsBetter: true,
      results: one((r) => r.scheduleRate),
    }),
  ];
}

export async function run() {
  const budgetMs = SYSTEMS.reduce((sum, s) => sum + LEAD_MS[s] + WINDOW_MS + GRACE_MS + SETTLE_MS + 300_000, 0);
  const watchdog = setTimeout(() => {
    console.error(`redis-million: the suite's ${budgetMs} ms budget is spent; killing its children and servers`);
    killAll();
    process.exit(1);
  }, budgetMs);
  watchdog.unref();
  const loadAverageAtStart = os.loadavg().map((x) => Math.round(x * 100) / 100);
  const provenance = redisPackageProvenance();
  const t0 = performance.now();
  const bySystem = {};
  try {
    for (const system of SYSTEMS) {
      console.log(
        `  ${system}: ${TIMERS.toLocaleString('en-US')} timers over ${WINDOW_MS / 1000} s, ${WORKERS} workers`,
      );
      bySystem[system] = await runSystem(system);
    }
  } catch (error) {
    killAll();
    throw error;
  } finally {
    clearTimeout(watchdog);
  }
  const list = scenarios(bySystem);
  for (const sc of list) printScenario(sc);
  console.log(`  (redis-million suite took ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  return {
    scenarios: list,
    extra: {
      timers: TIMERS,
      windowMs: WINDOW_MS,
      leadMs: LEAD_MS,
      workers: WORKERS,
      concurrency: CONCURRENCY,
      maxInFlight: MAX_IN_FLIGHT,
      graceMs: GRACE_MS,
      settleMs: SETTLE_MS,
      loadAverageAtStart,
      note: process.env.BENCH_MILLION_NOTE ?? null,
      bullmq: createRequire(import.meta.url)('bullmq/package.json').version,
      ioredis: createRequire(import.meta.url)('ioredis/package.json').version,
      ...provenance,
      systems: bySystem,
    },
  };
}

if (isMain(import.meta.url)) {
  const { scenarios: list, extra } = await run();
  const command = IS_FULL
    ? 'npm run bench -- redis-million --node current'
    : `BENCH_MILLION_TIMERS=${TIMERS} BENCH_MILLION_WINDOW_MS=${WINDOW_MS} node --expose-gc suites/redis-million.mjs`;
  if (IS_FULL) {
    console.log(`  wrote ${writeResults('redis-million', { scenarios: list, command, repeats: 1, extra })}`);
  } else {
    const file = path.join(os.tmpdir(), `redis-million-${TIMERS}-${WINDOW_MS}.json`);
    const record = {
      suite: 'redis-million',
      runtime: runtimeInfo(),
      date: new Date().toISOString(),
      command,
      repeats: 1,
      machine: machineInfo(),
      scenarios: list,
      extra,
    };
    fs.writeFileSync(file, JSON.stringify({ suite: 'redis-million', runs: [record] }, null, 2) + '\n');
    console.log(`  scaled-down run: wrote ${file} (results/redis-million.json holds the full scale only)`);
  }
}
