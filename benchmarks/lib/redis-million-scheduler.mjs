/**
 * The scheduler process of the redis-million suite: schedules `n` timers with one ~60-byte JSON
 * payload each, due uniformly over `windowMs` starting `leadMs` after the Redis server's `TIME`
 * at start, the way each library's users batch their writes:
 *
 * - tickwheel: `RedisTimers.schedule(id, { at }, payload)`, `chunk` calls at a time under
 *   `Promise.all` (ioredis pipelines what is in flight on one connection);
 * - BullMQ: `Queue.addBulk` of `chunk` jobs with `jobId`, `delay` (from this process's clock, as
 *   BullMQ counts it) and `removeOnComplete`/`removeOnFail`: what a user who may cancel a timer by
 *   its id and does not keep finished jobs passes.
 *
 *   node lib/redis-million-scheduler.mjs <tickwheel|bullmq> '{"port":..,"name":..,"n":..,"windowMs":..,"leadMs":..,"chunk":..}'
 *
 * Timer i is `t<i>`, due at `firstDueMs + floor(i * windowMs / n)` (BullMQ's own due time,
 * its `timestamp` + `delay`, is a few ms later: `timestamp` is taken when it builds the job); the
 * parent gets `firstDueMs` first, progress every 5 s, and at the end the scheduling time and this
 * process's CPU time.
 */
import { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { RedisTimers } from '@tickwheel/redis';

const [system, configJson] = process.argv.slice(2);
const { port, name, n, windowMs, leadMs, chunk } = JSON.parse(configJson);

/** The same payload shape and size for both systems: 61 bytes of JSON. */
function payloadOf(i) {
  return { user: 1_000_000 + (i % 9_000_000), kind: 'session-expiry', region: 'eu-west-1' };
}

const redis = new Redis({ port, host: '127.0.0.1' });
const [seconds, micros] = await redis.time();
const firstDueMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) + leadMs;
const dueOf = (i) => firstDueMs + Math.floor((i * windowMs) / n);
process.send({ firstDueMs, payloadBytes: Buffer.byteLength(JSON.stringify(payloadOf(0))) });

let add;
let close;
if (system === 'tickwheel') {
  const timers = new RedisTimers({ redis, namespace: name });
  add = (from, to) => {
    const calls = [];
    for (let i = from; i < to; i++) calls.push(timers.schedule(`t${i}`, { at: dueOf(i) }, payloadOf(i)));
    return Promise.all(calls);
  };
  close = async () => redis.disconnect();
} else if (system === 'bullmq') {
  const queue = new Queue(name, { connection: { host: '127.0.0.1', port, maxRetriesPerRequest: null } });
  await queue.waitUntilReady();
  add = (from, to) => {
    const now = Date.now();
    const jobs = [];
    for (let i = from; i < to; i++) {
      const delay = Math.max(0, dueOf(i) - now);
      jobs.push({
        name: 'timer',
        data: payloadOf(i),
        opts: { jobId: `t${i}`, delay, removeOnComplete: true, removeOnFail: true },
      });
    }
    return queue.addBulk(jobs);
  };
  close = async () => {
    await queue.close();
    redis.disconnect();
  };
} else {
  throw new Error(`redis-million-scheduler: unknown system ${system}`);
}

const t0 = performance.now();
let lastReport = t0;
for (let from = 0; from < n; from += chunk) {
  await add(from, Math.min(n, from + chunk));
  if (performance.now() - lastReport > 5_000) {
    lastReport = performance.now();
    process.send({ scheduled: Math.min(n, from + chunk) });
  }
}
const scheduleMs = performance.now() - t0;
await close();
const cpu = process.cpuUsage();
process.send({ done: true, scheduleMs, cpuMicros: cpu.user + cpu.system }, () => process.exit(0));
