/**
 * The redis-cluster suite: @tickwheel/redis against BullMQ 5 on real Redis Clusters started here
 * (`redis-server --cluster-enabled yes` on free loopback ports, AOF fsync every second,
 * `cluster-node-timeout` 1.5 s), candidates alternating round by round.
 *
 * - scale: 4 000 timers due at one instant on a cluster of 1 master and of 3 masters, with 1 and
 *   with 3 worker processes: fired/s, Redis CPU per fired timer (`INFO cpu` deltas summed over the
 *   masters, scheduling included) and worker CPU per fired timer (`process.cpuUsage()` of the
 *   workers). Where CPU per timer is spent says where the limit is: one Redis master is one core,
 *   one worker process is one core, so `masters used x 10^6 / Redis µs` (a BullMQ queue uses one
 *   master, its slot's) and `workers x 10^6 / worker µs` are the rates each side allows; the lower one is the bottleneck on a machine with a core
 *   per process (this one has 2 cores for everything, so measured fired/s sits below both).
 * - failover: 3 masters with a replica each, 3 workers, a stream of 1 000 schedules (one per
 *   5 ms, each due 300 ms later); 1.5 s in, the master holding the candidate's keys (tickwheel: the
 *   master of shard 0 of 6; BullMQ: the master of its queue's slot) is SIGKILLed. Reported: the
 *   stall (worst lateness of a timer's first delivery, minus nothing: it includes the failover),
 *   the failover time itself, schedules rejected, timers never fired, duplicate deliveries. Each
 *   candidate gets a fresh cluster per round. Both run with their defaults, except tickwheel's
 *   `waitForReplicas: 1` (BullMQ has no such option).
 *
 *   node --expose-gc suites/redis-cluster.mjs     # or: npm run bench -- redis-cluster
 *
 * BENCH_REPEATS overrides the rounds of the scale runs (default 3); BENCH_FAILOVER_REPEATS those
 * of the failover runs (default 2). The machine is shared: read ratios from one run, not figures.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Cluster } from 'ioredis';
import { Queue, Worker } from 'bullmq';
import { RedisTimers } from '@tickwheel/redis';
import { redisCli, startRedisCluster } from '../lib/redis-servers.mjs';
import {
  alternate,
  cpuMicros,
  eventBatches,
  forkWorker,
  isMain,
  median,
  printScenario,
  redisCpuSeconds,
  runSuite,
  scenario,
  serveParent,
  sleep,
  summarize,
  waitUntil,
} from '../lib/harness.mjs';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const FAILOVER_REPEATS = Number(process.env.BENCH_FAILOVER_REPEATS ?? 2);
const SCALE_TIMERS = 4_000;
const STREAM = 1_000;
const CONCURRENCY = 100;
const NODE_TIMEOUT_MS = 1_500;
const SELF = fileURLToPath(import.meta.url);
const CANDIDATES = ['tickwheel', 'bullmq'];

const clusterClient = (ports, extra = {}) => {
  const c = new Cluster(
    ports.map((port) => ({ host: '127.0.0.1', port })),
    extra,
  );
  c.on('error', () => undefined);
  return c;
};
const shardsFor = (masters) => (masters === 1 ? 1 : 6);

// ---------------------------------------------------------------------------------------------
// Worker processes: `node suites/redis-cluster.mjs --worker <candidate> <json>`. Each handler
// start is reported as [id, dueAt, startedAt]; at stop, the process's CPU time in µs.

async function workerMain(candidate, config) {
  const fired = eventBatches(25);
  let stop;
  if (candidate === 'tickwheel') {
    const redis = clusterClient(config.ports);
    const timers = new RedisTimers({
      redis,
      namespace: config.name,
      shards: config.shards,
      leaseMs: 30_000,
      concurrency: CONCURRENCY,
    });
    timers.on('error', () => undefined);
    await timers.start(({ id, payload }) => {
      fired.push([id, payload, Date.now()]);
    });
    stop = async () => {
      await timers.stop();
      redis.disconnect();
    };
  } else {
    const connection = clusterClient(config.ports, { redisOptions: { maxRetriesPerRequest: null } });
    const worker = new Worker(config.name, async (job) => void fired.push([job.id, job.data, Date.now()]), {
      connection,
      prefix: '{bull}',
      concurrency: CONCURRENCY,
    });
    worker.on('error', () => undefined);
    await worker.waitUntilReady();
    stop = async () => {
      await worker.close();
      connection.disconnect();
    };
  }
  const cpu0 = process.cpuUsage();
  serveParent({
    /** Stops the worker; answers with its CPU time in µs up to the stop. */
    async stop() {
      const used = cpuMicros(cpu0);
      await stop();
      fired.stop();
      return used;
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Clusters.

const cli = redisCli;

/** A cluster of `masters` masters (1 is made by hand: redis-cli wants 3), with `replicas` each. */
async function startCluster(masters, replicas) {
  const cluster = await startRedisCluster(masters, replicas, NODE_TIMEOUT_MS);
  return { ...cluster, ports: cluster.nodes.map((n) => n.port) };
}

/** used_cpu_sys + used_cpu_user of every live master, in µs (redis-cli: a killed node only fails its own read). */
async function redisCpuMicros(cluster) {
  let total = 0;
  for (const n of cluster.nodes) {
    if (!/role:master/.test(cli(n.port, 'info', 'replication'))) continue;
    total += (await redisCpuSeconds({ info: async (section) => cli(n.port, 'info', section) })) * 1e6;
  }
  return total;
}

// ---------------------------------------------------------------------------------------------
// One candidate's workers and scheduler.

let runCounter = 0;

async function startWorkers(candidate, cluster, name, count, shards) {
  const fired = [];
  const config = JSON.stringify({ ports: cluster.ports, name, shards });
  const workers = Array.from({ length: count }, () =>
    forkWorker(SELF, ['--worker', candidate, config], {
      label: `${candidate} worker`,
      onEvent: (batch) => fired.push(...batch),
    }),
  );
  await Promise.all(workers.map((w) => w.ready));
  let stopped;
  // Their CPU time summed; a worker killed before it answered (a failover run) counts 0.
  const stop = () =>
    (stopped ??= Promise.all(workers.map((w) => w.close(15_000, 'stop'))).then((used) =>
      used.reduce((sum, micros) => sum + (micros ?? 0), 0),
    ));
  return { fired, stop };
}

/** `add(id, dueAt)` resolves or rejects as the candidate's own call does (no retries of ours). */
async function scheduler(candidate, cluster, name, shards) {
  if (candidate === 'tickwheel') {
    const redis = clusterClient(cluster.ports);
    const timers = new RedisTimers({ redis, namespace: name, shards, waitForReplicas: 1 });
    return { add: (id, due) => timers.schedule(id, { at: due }, due), close: () => redis.disconnect() };
  }
  const connection = clusterClient(cluster.ports);
  const queue = new Queue(name, { connection, prefix: '{bull}' });
  queue.on('error', () => undefined);
  await queue.waitUntilReady();
  return {
    add: (id, due) =>
      queue.add('t', due, {
        delay: Math.max(0, due - Date.now()),
        jobId: id,
        removeOnComplete: true,
        removeOnFail: true,
      }),
    close: async () => {
      await queue.close();
      connection.disconnect();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The runs.

/** Scale run on an existing cluster: returns { firedPerSecond, redisMicrosPerTimer, workerMicrosPerTimer }. */
async function scaleRun(candidate, cluster, masters, workerCount) {
  const name = `sc-${candidate}-${runCounter++}`;
  const shards = shardsFor(masters);
  const workers = await startWorkers(candidate, cluster, name, workerCount, shards);
  const sched = await scheduler(candidate, cluster, name, shards);
  try {
    await sleep(200);
    const cpu0 = await redisCpuMicros(cluster);
    const dueAt = Date.now() + 3_000;
    for (let i = 0; i < SCALE_TIMERS; i += 500)
      await Promise.all(
        Array.from({ length: Math.min(500, SCALE_TIMERS - i) }, (_, k) => sched.add(`t${i + k}`, dueAt)),
      );
    if (Date.now() >= dueAt) throw new Error('scheduling took longer than the 3 s lead time');
    await waitUntil(
      () => workers.fired.length >= SCALE_TIMERS,
      120_000,
      () => `${candidate}: ${SCALE_TIMERS} fired (only ${workers.fired.length})`,
      10,
    );
    const last = Math.max(...workers.fired.map(([, , at]) => at));
    await sleep(300);
    const redisMicros = (await redisCpuMicros(cluster)) - cpu0;
    const workerMicros = await workers.stop();
    return {
      firedPerSecond: SCALE_TIMERS / (Math.max(1, last - dueAt) / 1000),
      redisMicrosPerTimer: redisMicros / SCALE_TIMERS,
      workerMicrosPerTimer: workerMicros / SCALE_TIMERS,
    };
  } finally {
    await sched.close();
    await workers.stop();
  }
}

/** Failover run on a fresh 3+3 cluster. */
async function failoverRun(candidate) {
  const cluster = await startCluster(3, 1);
  const name = `fo-${candidate}-${runCounter++}`;
  let workers;
  try {
    workers = await startWorkers(candidate, cluster, name, 3, 6);
    const sched = await scheduler(candidate, cluster, name, 6);
    const accepted = new Set();
    let rejected = 0;
    const calls = [];
    const stream = (async () => {
      for (let i = 0; i < STREAM; i++) {
        const id = `f${i}`;
        calls.push(
          Promise.resolve(sched.add(id, Date.now() + 300)).then(
            () => accepted.add(id),
            () => rejected++,
          ),
        );
        await sleep(5);
      }
    })();
    await sleep(1_500);
    // tickwheel's shard 0 lives at tag {name:0}; BullMQ's queue at {bull}.
    const slot = Number(
      cli(cluster.ports[0], 'cluster', 'keyslot', candidate === 'tickwheel' ? `{${name}:0}` : '{bull}').trim(),
    );
    const victim = cluster.masterOf(slot);
    const killedAt = Date.now();
    await victim.kill();
    let failoverMs = NaN;
    while (Date.now() - killedAt < 30_000) {
      const owner = cluster.masterOf(slot, victim);
      if (
        owner &&
        owner !== victim &&
        cluster.nodes.filter((n) => n !== victim).every((n) => /cluster_state:ok/.test(cli(n.port, 'cluster', 'info')))
      ) {
        failoverMs = Date.now() - killedAt;
        break;
      }
      await sleep(20);
    }
    await stream;
    await Promise.all(calls);
    // What has not fired by then is lost (counted below), not an error.
    await waitUntil(
      () => [...accepted].every((id) => workers.fired.some(([x]) => x === id)),
      30_000,
      'every accepted timer firing',
      10,
    ).catch(() => undefined);
    const first = new Map();
    for (const [id, due, at] of workers.fired) if (!first.has(id)) first.set(id, at - due);
    const lost = [...accepted].filter((id) => !first.has(id)).length;
    await sched.close();
    await workers.stop();
    return {
      stallMs: Math.max(0, ...first.values()),
      failoverMs,
      rejected,
      lost,
      duplicates: workers.fired.length - first.size,
    };
  } finally {
    await workers?.stop();
    await cluster.stop();
  }
}

const perCandidate = () => Object.fromEntries(CANDIDATES.map((c) => [c, []]));

export async function run() {
  const t0 = performance.now();
  const scenarios = [];
  const common = { subject: 'tickwheel', baseline: 'bullmq' };
  for (const masters of [1, 3]) {
    const cluster = await startCluster(masters, 0);
    try {
      for (const workerCount of [1, 3]) {
        const redisCpu = perCandidate();
        const workerCpu = perCandidate();
        const throughput = await alternate(
          Object.fromEntries(
            CANDIDATES.map((c) => [
              c,
              async () => {
                const r = await scaleRun(c, cluster, masters, workerCount);
                redisCpu[c].push(r.redisMicrosPerTimer);
                workerCpu[c].push(r.workerMicrosPerTimer);
                return r.firedPerSecond;
              },
            ]),
          ),
          REPEATS,
        );
        const where = `${masters} master${masters > 1 ? 's' : ''}, ${workerCount} worker${workerCount > 1 ? 's' : ''}`;
        // Where the limit is: the rate the CPU per timer allows when each master / each worker
        // process has one core to itself (medians of this configuration's runs). A BullMQ queue
        // lives in one hash slot, so on one master whatever the cluster's size.
        const bound = (samples, cores) =>
          Object.fromEntries(
            CANDIDATES.map((c) => [
              c,
              { median: (cores(c) * 1e6) / median(samples[c]), samples: samples[c].map((us) => (cores(c) * 1e6) / us) },
            ]),
          );
        scenarios.push(
          scenario({
            ...common,
            id: `cluster-throughput-m${masters}-w${workerCount}`,
            title: `Cluster, ${where}: timers fired per second, ${SCALE_TIMERS.toLocaleString('en-US')} due at once`,
            unit: 'timers/s',
            higherIsBetter: true,
            results: throughput,
          }),
          scenario({
            ...common,
            id: `cluster-redis-cpu-m${masters}-w${workerCount}`,
            title: `Cluster, ${where}: Redis CPU per fired timer (all masters, scheduling included)`,
            unit: 'µs',
            higherIsBetter: false,
            results: summarize(redisCpu),
          }),
          scenario({
            ...common,
            id: `cluster-worker-cpu-m${masters}-w${workerCount}`,
            title: `Cluster, ${where}: worker CPU per fired timer (all worker processes)`,
            unit: 'µs',
            higherIsBetter: false,
            results: summarize(workerCpu),
          }),
          scenario({
            ...common,
            id: `cluster-redis-bound-m${masters}-w${workerCount}`,
            title: `Cluster, ${where}: fired/s the masters' CPU allows (a core per master used: tickwheel spreads over all, a BullMQ queue is on one)`,
            unit: 'timers/s',
            higherIsBetter: true,
            results: bound(redisCpu, (c) => (c === 'bullmq' ? 1 : masters)),
          }),
          scenario({
            ...common,
            id: `cluster-worker-bound-m${masters}-w${workerCount}`,
            title: `Cluster, ${where}: fired/s the workers' CPU allows (a core each: workers x 10^6 / worker µs per timer)`,
            unit: 'timers/s',
            higherIsBetter: true,
            results: bound(workerCpu, () => workerCount),
          }),
        );
      }
    } finally {
      await cluster.stop();
    }
  }
  const fo = {
    stallMs: perCandidate(),
    failoverMs: perCandidate(),
    rejected: perCandidate(),
    lost: perCandidate(),
    duplicates: perCandidate(),
  };
  for (let round = 0; round < FAILOVER_REPEATS; round++) {
    for (const c of round % 2 ? [...CANDIDATES].reverse() : CANDIDATES) {
      const r = await failoverRun(c);
      for (const key of Object.keys(fo)) fo[key][c].push(r[key]);
    }
  }
  const foTitle = `Failover (3 masters + 3 replicas, 3 workers, master of the candidate's keys SIGKILLed, ${STREAM.toLocaleString('en-US')} schedules)`;
  scenarios.push(
    scenario({
      ...common,
      id: 'failover-stall',
      title: `${foTitle}: worst lateness of a first delivery`,
      unit: 'ms',
      higherIsBetter: false,
      results: summarize(fo.stallMs),
      note: 'the failover time itself is the next row; tickwheel should stall at most that + 1 s',
    }),
    scenario({
      ...common,
      id: 'failover-time',
      title: `${foTitle}: failover time (kill to slot served again), for reference`,
      unit: 'ms',
      higherIsBetter: false,
      results: summarize(fo.failoverMs),
    }),
    scenario({
      ...common,
      id: 'failover-rejected',
      title: `${foTitle}: schedules rejected`,
      unit: 'calls',
      higherIsBetter: false,
      results: summarize(fo.rejected),
      target: { max: 0 },
    }),
    scenario({
      ...common,
      id: 'failover-lost',
      title: `${foTitle}: accepted timers never fired`,
      unit: 'timers',
      higherIsBetter: false,
      results: summarize(fo.lost),
      target: { max: 0 },
    }),
    scenario({
      ...common,
      id: 'failover-duplicates',
      title: `${foTitle}: duplicate deliveries`,
      unit: 'deliveries',
      higherIsBetter: false,
      results: summarize(fo.duplicates),
    }),
  );
  for (const sc of scenarios) printScenario(sc);
  console.log(`  (redis-cluster suite took ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  return { scenarios };
}

if (isMain(import.meta.url) && process.argv[2] === '--worker') {
  await workerMain(process.argv[3], JSON.parse(process.argv[4]));
} else if (isMain(import.meta.url)) {
  await runSuite('redis-cluster', run, {
    repeats: REPEATS,
    needsGc: false,
    extra: () => ({
      redisVersion: spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout.match(/v=(\S+)/)?.[1],
      failoverRepeats: FAILOVER_REPEATS,
      timers: SCALE_TIMERS,
      concurrency: CONCURRENCY,
      clusterNodeTimeoutMs: NODE_TIMEOUT_MS,
      bullmq: createRequire(import.meta.url)('bullmq/package.json').version,
      ioredis: createRequire(import.meta.url)('ioredis/package.json').version,
    }),
  });
}
