/**
 * The scheduler process of the redis-million suite: schedules `n` timers with one ~60-byte JSON
 * payload each, due uniformly over `windowMs` starting `leadMs` after the Redis server's `TIME`
 * at start, one call per timer, driven the same way for both systems:
 *
 * - tickwheel: `RedisTimers.schedule(id, { at }, payload)`;
 * - BullMQ: `Queue.add('timer', payload, { jobId, delay, removeOnComplete, removeOnFail })`
 *   (`delay` from this process's clock, as BullMQ counts it): what a user who may cancel a timer
 *   by its id and does not keep finished jobs passes.
 *
 * The calls in flight are capped by a window that adapts like TCP's congestion window (AIMD): it
 * grows by one per window of calls answered within `targetMs`, and halves (at most once per
 * window, down to `minWindow`) when a call took longer. So the scheduler pushes as hard as the
 * server and the machine allow, and a loaded machine slows it down instead of piling up calls
 * that time out; a call that fails anyway is tried again (both systems' adds are idempotent by
 * id) after the window halved, and counted.
 *
 *   node lib/redis-million-scheduler.mjs <tickwheel|bullmq> '{"port":..,"name":..,"n":..,"windowMs":..,"leadMs":..,"maxInFlight":..}'
 *
 * Timer i is `t<i>`, due at `firstDueMs + floor(i * windowMs / n)` (BullMQ's own due time,
 * its `timestamp` + `delay`, is a few ms later: `timestamp` is taken when it builds the job); the
 * parent gets `firstDueMs` first, progress every 5 s, and at the end the scheduling time, the
 * window's range, the calls tried again and this process's CPU time.
 */
import { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { RedisTimers } from '@tickwheel/redis';
import { answerParent, cpuMicros, tellParent } from './harness.mjs';

const [system, configJson] = process.argv.slice(2);
const { port, name, n, windowMs, leadMs, maxInFlight } = JSON.parse(configJson);
/** A call answered later than this shrinks the window. */
const TARGET_MS = 250;
const MIN_WINDOW = 4;
/** Tries per timer before the scheduler gives up (and the run fails). */
const MAX_TRIES = 5;

/** The same payload shape and size for both systems: 61 bytes of JSON. */
function payloadOf(i) {
  return { user: 1_000_000 + (i % 9_000_000), kind: 'session-expiry', region: 'eu-west-1' };
}

const redis = new Redis({ port, host: '127.0.0.1' });
const [seconds, micros] = await redis.time();
const firstDueMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) + leadMs;
const dueOf = (i) => firstDueMs + Math.floor((i * windowMs) / n);
tellParent({ firstDueMs, payloadBytes: Buffer.byteLength(JSON.stringify(payloadOf(0))) });

let add;
let close;
if (system === 'tickwheel') {
  const timers = new RedisTimers({ redis, namespace: name });
  add = (i) => timers.schedule(`t${i}`, { at: dueOf(i) }, payloadOf(i));
  close = async () => redis.disconnect();
} else if (system === 'bullmq') {
  const queue = new Queue(name, { connection: { host: '127.0.0.1', port, maxRetriesPerRequest: null } });
  await queue.waitUntilReady();
  add = (i) =>
    queue.add('timer', payloadOf(i), {
      jobId: `t${i}`,
      delay: Math.max(0, dueOf(i) - Date.now()),
      removeOnComplete: true,
      removeOnFail: true,
    });
  close = async () => {
    await queue.close();
    redis.disconnect();
  };
} else {
  throw new Error(`redis-million-scheduler: unknown system ${system}`);
}

let window = MIN_WINDOW;
let minSeen = Infinity;
let maxSeen = 0;
let inFlight = 0;
let next = 0;
let done = 0;
let retries = 0;
/** Calls started before this one was last halved do not halve it again (once per window). */
let startedCount = 0;
let halvedAt = 0;
const again = [];
const tries = new Map();

function shrink(startIndex) {
  if (startIndex < halvedAt) return;
  window = Math.max(MIN_WINDOW, window / 2);
  halvedAt = startedCount;
}

const t0 = performance.now();
let lastReport = t0;
await new Promise((resolve, reject) => {
  const pump = () => {
    while (inFlight < Math.floor(window) && (again.length > 0 || next < n)) {
      const i = again.length > 0 ? again.shift() : next++;
      const startIndex = startedCount++;
      const sent = performance.now();
      inFlight++;
      add(i).then(
        () => {
          inFlight--;
          done++;
          if (performance.now() - sent > TARGET_MS) shrink(startIndex);
          else window = Math.min(maxInFlight, window + 1 / window);
          minSeen = Math.min(minSeen, Math.floor(window));
          maxSeen = Math.max(maxSeen, Math.floor(window));
          if (done === n) resolve();
          else pump();
        },
        (error) => {
          inFlight--;
          const count = (tries.get(i) ?? 1) + 1;
          if (count > MAX_TRIES) {
            reject(new Error(`redis-million-scheduler: t${i} failed ${MAX_TRIES} times: ${error.message}`));
            return;
          }
          tries.set(i, count);
          retries++;
          shrink(startIndex);
          again.push(i);
          pump();
        },
      );
    }
    if (performance.now() - lastReport > 5_000) {
      lastReport = performance.now();
      tellParent({ scheduled: done, window: Math.floor(window) });
    }
  };
  pump();
});
const scheduleMs = performance.now() - t0;
await close();
answerParent({
  scheduleMs,
  cpuMicros: cpuMicros(),
  retries,
  window: { min: minSeen, max: maxSeen, final: Math.floor(window) },
});
