/**
 * One worker process of the redis-million suite (suites/redis-million.mjs forks three per system):
 * a @tickwheel/redis `RedisTimers.start()` or a BullMQ `Worker`, with an empty handler that only
 * records when it started, on the Redis server's clock.
 *
 *   node lib/redis-million-worker.mjs <tickwheel|bullmq> '{"port":..,"name":..,"concurrency":..}'
 *
 * Each handler start is sent to the parent as (timer index, lateness): the start on the Redis
 * clock minus the due time the system itself holds: tickwheel's `dueAt` (Redis clock), BullMQ's
 * `timestamp + opts.delay` (its `delay` field is 0 once a job is promoted; the scheduling
 * process's clock, on one machine the same clock as Redis's `TIME`). The Redis clock is this
 * process's `performance.timeOrigin + performance.now()` plus an offset read from `TIME` every
 * 2 s (the sample of the last five with the shortest round trip, taken at its midpoint), so
 * the handler itself pays one clock read, not a round trip. The parent asks for the process's CPU
 * time (`process.cpuUsage()`, user + system) at each phase boundary and stops it with 'stop'.
 */
import { Redis } from 'ioredis';
import { Worker } from 'bullmq';
import { RedisTimers } from '@tickwheel/redis';
import { cpuMicros, eventBatches, serveParent } from './harness.mjs';

const [system, configJson] = process.argv.slice(2);
const config = JSON.parse(configJson);

// ---------------------------------------------------------------------------------------------
// The Redis clock.

const clockClient = new Redis({ port: config.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
clockClient.on('error', () => undefined);
/** Recent samples `[rttMs, offsetMs]`, newest last. */
const samples = [];
let offsetMs = 0;
let worstRttMs = 0;

async function sampleClock() {
  const t0 = performance.now();
  const [seconds, micros] = await clockClient.time();
  const t1 = performance.now();
  const redisMs = Number(seconds) * 1000 + Number(micros) / 1000;
  samples.push([t1 - t0, redisMs - (performance.timeOrigin + (t0 + t1) / 2)]);
  if (samples.length > 5) samples.shift();
  worstRttMs = Math.max(worstRttMs, t1 - t0);
  offsetMs = samples.reduce((best, s) => (s[0] < best[0] ? s : best))[1];
}

const redisNow = () => performance.timeOrigin + performance.now() + offsetMs;

// ---------------------------------------------------------------------------------------------
// Deliveries, sent in batches: [index, latenessMs, index, latenessMs, ...].

const fired = eventBatches(200);
let deliveries = 0;
const counters = { errors: 0, failed: 0, stale: 0 };
const record = (id, dueMs) => {
  fired.push(Number(id.slice(1)), Math.round((redisNow() - dueMs) * 100) / 100);
  deliveries++;
};

let stopSystem;
if (system === 'tickwheel') {
  const redis = new Redis({ port: config.port, host: '127.0.0.1' });
  const timers = new RedisTimers({ redis, namespace: config.name, concurrency: config.concurrency });
  timers.on('error', () => counters.errors++);
  timers.on('failed', () => counters.failed++);
  timers.on('stale', () => counters.stale++);
  await timers.start(({ id, dueAt }) => record(id, dueAt));
  stopSystem = async () => {
    await timers.stop();
    redis.disconnect();
  };
} else if (system === 'bullmq') {
  const worker = new Worker(config.name, async (job) => record(job.id, job.timestamp + (job.opts.delay ?? 0)), {
    connection: { host: '127.0.0.1', port: config.port, maxRetriesPerRequest: null },
    concurrency: config.concurrency,
  });
  worker.on('error', () => counters.errors++);
  worker.on('failed', () => counters.failed++);
  worker.on('stalled', () => counters.stale++);
  await worker.waitUntilReady();
  stopSystem = () => worker.close();
} else {
  throw new Error(`redis-million-worker: unknown system ${system}`);
}

await sampleClock();
const clockTimer = setInterval(() => sampleClock().catch(() => counters.errors++), 2_000);
serveParent(
  {
    /** This process's CPU time so far, in µs. */
    cpu: () => cpuMicros(),
    /** Stops the system; answers with the worker's final figures. */
    async stop() {
      clearInterval(clockTimer);
      await stopSystem();
      fired.stop();
      clockClient.disconnect();
      return {
        cpuMicros: cpuMicros(),
        deliveries,
        ...counters,
        offsetMs,
        worstRttMs,
        rss: process.memoryUsage().rss,
      };
    },
  },
  { hello: cpuMicros() },
);
