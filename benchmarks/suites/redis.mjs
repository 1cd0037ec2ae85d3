/**
 * The redis suite: @tickwheel/redis's RedisTimers against BullMQ 5 delayed jobs, on the same
 * real redis-server (started here on a free loopback port, no persistence), in this one process
 * run, candidates alternating round by round. Each run forks 4 worker processes of the candidate,
 * schedules timers from this process, and records when each handler starts.
 *
 * - throughput: N timers all due at the same instant T; fired/s = N / (last handler start - T).
 * - lateness: M timers spread one per ms over M ms (a steady rate well below either's capacity);
 *   lateness = handler start - due time, p50 and p99 over all timers of a run.
 * - commands: Redis commands per fired timer in the throughput runs, from `INFO commandstats`
 *   deltas (every command counts, including those a Lua script calls), scheduling included.
 * - memory: Redis bytes per pending timer, BENCH_REDIS_MEMORY_TIMERS (default 50 000) due in an
 *   hour with a 60-byte JSON payload, no workers: `MEMORY PURGE`, then the `used_memory` delta;
 *   once more with BENCH_REDIS_MEMORY_MILLION (default 1 000 000) timers, one round (0: skip);
 *   and with BENCH_REDIS_MEMORY_CLUSTER (default 50 000) timers on a Redis Cluster of 3 masters
 *   started for it (RedisTimers with 6 shards, BullMQ with the `{bull}` prefix Cluster needs),
 *   the deltas summed over the masters.
 *
 * Handlers are empty; both ack/complete and delete (BullMQ jobs use removeOnComplete). Both get
 * 4 workers with concurrency 100. RedisTimers claims in batches of 100.
 *
 *   node --expose-gc suites/redis.mjs          # or: npm run bench -- redis
 *
 * BENCH_REPEATS overrides the number of alternating rounds (default 3); BENCH_REDIS_SHARDS the
 * shards of RedisTimers (default 1: one redis-server has no slots to spread over).
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Cluster, Redis } from 'ioredis';
import { Queue, Worker } from 'bullmq';
import { RedisTimers } from '@tickwheel/redis';
import { startRedisCluster, startRedisServer } from '../lib/redis-servers.mjs';
import {
  alternate,
  commandCount,
  eventBatches,
  forkWorker,
  isMain,
  percentile,
  printScenario,
  runSuite,
  scenario,
  serveParent,
  sleep,
  summarize,
  usedMemory,
  waitUntil,
} from '../lib/harness.mjs';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const WORKERS = 4;
const CONCURRENCY = 100;
const SHARDS = Number(process.env.BENCH_REDIS_SHARDS ?? 1);
const THROUGHPUT_TIMERS = 10_000;
const LATENESS_TIMERS = 2_000;
/** How far ahead the throughput run's timers are due: scheduling must be over by then, on a loaded machine too. */
const LEAD_MS = 30_000;
const SELF = fileURLToPath(import.meta.url);

// ---------------------------------------------------------------------------------------------
// Worker processes: `node suites/redis.mjs --worker <candidate> <json>`. Each fired timer is
// reported as [dueAt, startedAt] (epoch ms; the due time the scheduler intended, from the payload).

async function workerMain(candidate, config) {
  const fired = eventBatches(25);
  let stop;
  if (candidate === 'tickwheel') {
    const redis = new Redis(config.url);
    const timers = new RedisTimers({
      redis,
      namespace: config.name,
      shards: SHARDS,
      leaseMs: 30_000,
      concurrency: CONCURRENCY,
      batchSize: 100,
    });
    await timers.start(({ payload }) => {
      fired.push([payload, Date.now()]);
    });
    stop = async () => {
      await timers.stop();
      redis.disconnect();
    };
  } else {
    const worker = new Worker(
      config.name,
      async (job) => {
        fired.push([job.data, Date.now()]);
      },
      { connection: { host: '127.0.0.1', port: config.port, maxRetriesPerRequest: null }, concurrency: CONCURRENCY },
    );
    await worker.waitUntilReady();
    stop = () => worker.close();
  }
  serveParent({
    async stop() {
      await stop();
      fired.stop();
      return true;
    },
  });
}

// ---------------------------------------------------------------------------------------------
// The redis-server and its command counter.

async function startRedis() {
  const server = await startRedisServer();
  const admin = new Redis({ port: server.port, host: '127.0.0.1', retryStrategy: (n) => (n > 100 ? null : 20) });
  admin.on('error', () => undefined);
  await admin.ping();
  const stop = async () => {
    admin.disconnect();
    await server.stop();
  };
  return {
    port: server.port,
    url: server.url,
    admin,
    stop,
    version: (await admin.info('server')).match(/redis_version:(\S+)/)[1],
  };
}

// ---------------------------------------------------------------------------------------------
// One run of one candidate: 4 workers, N timers scheduled from here.

let runCounter = 0;

async function startWorkers(candidate, server, name) {
  const fired = [];
  const config = JSON.stringify({ url: server.url, port: server.port, name });
  const workers = Array.from({ length: WORKERS }, () =>
    forkWorker(SELF, ['--worker', candidate, config], {
      label: `${candidate} worker`,
      onEvent: (batch) => fired.push(...batch),
    }),
  );
  await Promise.all(workers.map((w) => w.ready));
  const stop = () => Promise.all(workers.map((w) => w.close(10_000, 'stop')));
  return { fired, stop };
}

/** A scheduler for the candidate: `add(items)` with items [dueAt (epoch ms), payload]. */
async function scheduler(candidate, server, name) {
  if (candidate === 'tickwheel') {
    const redis = new Redis(server.url);
    const timers = new RedisTimers({ redis, namespace: name, shards: SHARDS });
    return {
      async add(dues) {
        for (let i = 0; i < dues.length; i += 1_000)
          await Promise.all(dues.slice(i, i + 1_000).map((due, k) => timers.schedule(`t${i + k}`, { at: due }, due)));
      },
      close: () => redis.disconnect(),
    };
  }
  const queue = new Queue(name, { connection: { host: '127.0.0.1', port: server.port, maxRetriesPerRequest: null } });
  await queue.waitUntilReady();
  return {
    async add(dues) {
      for (let i = 0; i < dues.length; i += 1_000) {
        const now = Date.now();
        await queue.addBulk(
          dues.slice(i, i + 1_000).map((due, k) => ({
            name: 't',
            data: due,
            opts: { delay: Math.max(0, due - now), jobId: `t${i + k}`, removeOnComplete: true, removeOnFail: true },
          })),
        );
      }
    },
    close: () => queue.close(),
  };
}

/** Waits until `count` timers have fired, failing after `timeoutMs`. */
const waitFor = (fired, count, timeoutMs) =>
  waitUntil(
    () => fired.length >= count,
    timeoutMs,
    () => `${count} timers firing (${fired.length} fired)`,
    10,
  );

/** Throughput run: returns { firedPerSecond, commandsPerTimer }. */
async function throughputRun(candidate, server) {
  const name = `tp-${candidate}-${runCounter++}`;
  const workers = await startWorkers(candidate, server, name);
  const sched = await scheduler(candidate, server, name);
  try {
    await sleep(200);
    const before = await commandCount(server.admin);
    const dueAt = Date.now() + LEAD_MS;
    await sched.add(new Array(THROUGHPUT_TIMERS).fill(dueAt));
    if (Date.now() >= dueAt) throw new Error(`scheduling took longer than the ${LEAD_MS} ms lead time`);
    await waitFor(workers.fired, THROUGHPUT_TIMERS, 120_000);
    const last = Math.max(...workers.fired.map(([, at]) => at));
    await sleep(300); // acks and completions land
    const commands = (await commandCount(server.admin)) - before;
    if (workers.fired.length !== THROUGHPUT_TIMERS)
      throw new Error(`${candidate}: ${workers.fired.length} deliveries for ${THROUGHPUT_TIMERS} timers`);
    return {
      firedPerSecond: THROUGHPUT_TIMERS / (Math.max(1, last - dueAt) / 1000),
      commandsPerTimer: commands / THROUGHPUT_TIMERS,
    };
  } finally {
    await sched.close();
    await workers.stop();
    await server.admin.flushall();
  }
}

/** Lateness run: one timer per ms; returns { p50, p99 } in ms. */
async function latenessRun(candidate, server) {
  const name = `lt-${candidate}-${runCounter++}`;
  const workers = await startWorkers(candidate, server, name);
  const sched = await scheduler(candidate, server, name);
  try {
    await sleep(200);
    const start = Date.now() + 1_500;
    await sched.add(Array.from({ length: LATENESS_TIMERS }, (_, i) => start + i));
    await waitFor(workers.fired, LATENESS_TIMERS, 60_000);
    const lateness = workers.fired.map(([due, at]) => at - due);
    return { p50: percentile(lateness, 50), p99: percentile(lateness, 99) };
  } finally {
    await sched.close();
    await workers.stop();
    await server.admin.flushall();
  }
}

/** Pending timers per memory run, and their payload: 60 bytes of JSON. */
const MEMORY_TIMERS = Number(process.env.BENCH_REDIS_MEMORY_TIMERS ?? 50_000);
const MEMORY_MILLION = Number(process.env.BENCH_REDIS_MEMORY_MILLION ?? 1_000_000);
const MEMORY_CLUSTER = Number(process.env.BENCH_REDIS_MEMORY_CLUSTER ?? 50_000);
/** RedisTimers's shards on the 3-master cluster, as in the redis-cluster suite. */
const CLUSTER_SHARDS = 6;
const MEMORY_PAYLOAD = { user: 'u-0000000042', kind: 'session-expiry', region: 'e' };

/** Memory run: `count` pending timers due in an hour, no workers; Redis bytes per timer. */
async function memoryRun(candidate, server, count) {
  const name = `mem-${candidate}-${runCounter++}`;
  try {
    await sleep(100);
    const { used: before } = await usedMemory(server.admin);
    const due = Date.now() + 3_600_000;
    const items = new Array(count).fill(due);
    if (candidate === 'tickwheel') {
      const redis = new Redis(server.url);
      const timers = new RedisTimers({ redis, namespace: name, shards: SHARDS });
      for (let i = 0; i < items.length; i += 1_000)
        await Promise.all(
          items.slice(i, i + 1_000).map((at, k) => timers.schedule(`t${i + k}`, { at }, MEMORY_PAYLOAD)),
        );
      redis.disconnect();
    } else {
      const queue = new Queue(name, {
        connection: { host: '127.0.0.1', port: server.port, maxRetriesPerRequest: null },
      });
      for (let i = 0; i < items.length; i += 1_000)
        await queue.addBulk(
          items.slice(i, i + 1_000).map((at, k) => ({
            name: 't',
            data: MEMORY_PAYLOAD,
            // BullMQ's defaults, as the figure was taken: the remove options add to each job's hash.
            opts: { delay: at - Date.now(), jobId: `t${i + k}` },
          })),
        );
      await queue.close();
    }
    return ((await usedMemory(server.admin)).used - before) / count;
  } finally {
    await server.admin.flushall();
  }
}

/** What the memory rows measure, for their notes. */
const MEMORY_NOTE =
  'Target: at most 0.4x a BullMQ delayed job (issue 29). A timer is a field in two small listpack hashes (record, payload) and a member of a small listpack due ZSET, in buckets of about 32 (packages/redis/src/buckets.ts), on a redis-server with its default listpack limits. BullMQ jobs are added with its default options.';

/** Memory run on a Redis Cluster: MEMORY_CLUSTER pending timers; bytes per timer over all masters. */
async function clusterMemoryRun(candidate, cluster) {
  const name = `cmem-${candidate}-${runCounter++}`;
  const admins = cluster.nodes.map((n) => new Redis(n.url));
  const total = async () => (await Promise.all(admins.map(usedMemory))).reduce((sum, m) => sum + m.used, 0);
  const client = new Cluster(cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })));
  try {
    await sleep(100);
    const before = await total();
    const due = Date.now() + 3_600_000;
    const ids = Array.from({ length: MEMORY_CLUSTER }, (_, i) => `t${i}`);
    if (candidate === 'tickwheel') {
      const timers = new RedisTimers({ redis: client, namespace: name, shards: CLUSTER_SHARDS });
      for (let i = 0; i < ids.length; i += 1_000)
        await Promise.all(ids.slice(i, i + 1_000).map((id) => timers.schedule(id, { at: due }, MEMORY_PAYLOAD)));
    } else {
      const queue = new Queue(name, { connection: client, prefix: '{bull}' });
      for (let i = 0; i < ids.length; i += 1_000)
        await queue.addBulk(
          ids
            .slice(i, i + 1_000)
            .map((jobId) => ({ name: 't', data: MEMORY_PAYLOAD, opts: { delay: due - Date.now(), jobId } })),
        );
      await queue.close();
    }
    return ((await total()) - before) / MEMORY_CLUSTER;
  } finally {
    client.disconnect();
    await Promise.all(admins.map((a) => a.flushall()));
    for (const a of admins) a.disconnect();
  }
}

export async function run() {
  const server = await startRedis();
  const t0 = performance.now();
  try {
    const commands = { tickwheel: [], bullmq: [] };
    const throughput = await alternate(
      Object.fromEntries(
        ['tickwheel', 'bullmq'].map((c) => [
          c,
          async () => {
            const r = await throughputRun(c, server);
            commands[c].push(r.commandsPerTimer);
            return r.firedPerSecond;
          },
        ]),
      ),
      REPEATS,
    );
    const p50 = { tickwheel: [], bullmq: [] };
    const p99 = await alternate(
      Object.fromEntries(
        ['tickwheel', 'bullmq'].map((c) => [
          c,
          async () => {
            const r = await latenessRun(c, server);
            p50[c].push(r.p50);
            return r.p99;
          },
        ]),
      ),
      REPEATS,
    );
    const memory = await alternate(
      Object.fromEntries(['tickwheel', 'bullmq'].map((c) => [c, () => memoryRun(c, server, MEMORY_TIMERS)])),
      REPEATS,
    );
    const memoryMillion =
      MEMORY_MILLION > 0
        ? await alternate(
            Object.fromEntries(['tickwheel', 'bullmq'].map((c) => [c, () => memoryRun(c, server, MEMORY_MILLION)])),
            1,
          )
        : undefined;
    const cluster = await startRedisCluster(3, 0);
    let memoryCluster;
    try {
      memoryCluster = await alternate(
        Object.fromEntries(['tickwheel', 'bullmq'].map((c) => [c, () => clusterMemoryRun(c, cluster)])),
        REPEATS,
      );
    } finally {
      await cluster.stop();
    }
    const common = { subject: 'tickwheel', baseline: 'bullmq' };
    const scenarios = [
      scenario({
        ...common,
        id: 'redis-fired-throughput',
        title: `Timers fired per second, ${THROUGHPUT_TIMERS.toLocaleString('en-US')} due at once, ${WORKERS} worker processes`,
        unit: 'timers/s',
        higherIsBetter: true,
        results: throughput,
        target: { ratio: 2 },
      }),
      scenario({
        ...common,
        id: 'redis-lateness-p50',
        title: `Fire lateness p50, ${LATENESS_TIMERS.toLocaleString('en-US')} timers at 1 per ms, ${WORKERS} workers`,
        unit: 'ms',
        higherIsBetter: false,
        results: summarize(p50),
      }),
      scenario({
        ...common,
        id: 'redis-lateness-p99',
        title: `Fire lateness p99, ${LATENESS_TIMERS.toLocaleString('en-US')} timers at 1 per ms, ${WORKERS} workers`,
        unit: 'ms',
        higherIsBetter: false,
        results: p99,
        target: { max: 10 },
      }),
      scenario({
        ...common,
        id: 'redis-commands-per-timer',
        title: 'Redis commands per fired timer (INFO commandstats, scheduling included, Lua-internal calls counted)',
        unit: 'commands',
        higherIsBetter: false,
        results: summarize(commands),
      }),
      scenario({
        ...common,
        id: 'redis-memory-per-timer',
        title: `Redis memory per pending timer, ${MEMORY_TIMERS.toLocaleString('en-US')} due in an hour, 60-byte JSON payload (MEMORY PURGE, used_memory delta)`,
        unit: 'bytes',
        higherIsBetter: false,
        results: memory,
        target: { ratio: 2.5 },
        note: MEMORY_NOTE,
      }),
      ...(memoryMillion === undefined
        ? []
        : [
            scenario({
              ...common,
              id: 'redis-memory-per-timer-million',
              title: `Redis memory per pending timer, ${MEMORY_MILLION.toLocaleString('en-US')} due in an hour, 60-byte JSON payload (one round)`,
              unit: 'bytes',
              higherIsBetter: false,
              results: memoryMillion,
              target: { ratio: 2.5 },
              note: MEMORY_NOTE,
            }),
          ]),
      scenario({
        ...common,
        id: 'redis-memory-per-timer-cluster',
        title: `Redis Cluster of 3 masters: memory per pending timer, ${MEMORY_CLUSTER.toLocaleString('en-US')} due in an hour, 60-byte JSON payload, summed over the masters (RedisTimers ${CLUSTER_SHARDS} shards)`,
        unit: 'bytes',
        higherIsBetter: false,
        results: memoryCluster,
        target: { ratio: 2.5 },
        note: MEMORY_NOTE,
      }),
    ];
    for (const sc of scenarios) printScenario(sc);
    console.log(
      `  (redis suite took ${((performance.now() - t0) / 1000).toFixed(0)} s, redis-server ${server.version})`,
    );
    return { scenarios, redisVersion: server.version };
  } finally {
    await server.stop();
  }
}

if (isMain(import.meta.url) && process.argv[2] === '--worker') {
  await workerMain(process.argv[3], JSON.parse(process.argv[4]));
} else if (isMain(import.meta.url)) {
  await runSuite('redis', run, {
    repeats: REPEATS,
    needsGc: false,
    extra: ({ redisVersion }) => ({
      redisVersion,
      workers: WORKERS,
      concurrency: CONCURRENCY,
      shards: SHARDS,
      bullmq: createRequire(import.meta.url)('bullmq/package.json').version,
    }),
  });
}
