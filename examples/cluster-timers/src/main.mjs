/**
 * cluster-timers: several worker processes share one namespace of durable timers in Redis. The
 * parent schedules a burst of timers, SIGKILLs one worker in the middle of a handler, and checks
 * that every timer still fired: the dead worker's unacknowledged timer is taken over by another
 * worker once its lease expires.
 *
 * Run: `node examples/cluster-timers/src/main.mjs` (uses REDIS_URL, or starts a private
 * redis-server on a free loopback port).
 */
import { fork } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { RedisTimers } from '@tickwheel/redis';
import { provideRedis } from './redis-server.mjs';

const WORKER_PATH = fileURLToPath(new URL('./worker.mjs', import.meta.url));

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Forks a worker and resolves once it is subscribed and claiming. */
function startWorker(name, env, onMessage) {
  const child = fork(WORKER_PATH, [], {
    env: { ...process.env, ...env, WORKER: name },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise((resolve, reject) => {
    const timeout = setTimeout(() => reject(new Error(`worker ${name} did not start within 15 s`)), 15_000);
    child.on('message', (message) => {
      if (message.type === 'ready') {
        clearTimeout(timeout);
        resolve();
      }
      onMessage(message);
    });
    child.once('exit', () => {
      clearTimeout(timeout);
      reject(new Error(`worker ${name} exited before it was ready`));
    });
  });
  return { name, child, ready, exited };
}

/**
 * Runs the cluster scenario.
 *
 * @param {object} [options]
 * @param {string} [options.redisUrl] - a Redis to use; default `process.env.REDIS_URL`, else a private redis-server
 * @param {number} [options.workers] - worker processes, default 3
 * @param {number} [options.timers] - timers scheduled, default 60
 * @param {number} [options.spreadMs] - the timers' due times are spread over this window, default 1200
 * @param {number} [options.leaseMs] - how long a claim waits for its ack, default 800
 * @param {(line: string) => void} [options.print] - default console.log
 * @returns {Promise<object>} what fired where, what was taken over, what was lost (or why it was skipped)
 */
export async function main({
  redisUrl = process.env.REDIS_URL,
  workers = 3,
  timers: count = 60,
  spreadMs = 1_200,
  leaseMs = 800,
  print = console.log,
} = {}) {
  const redis = await provideRedis({ redisUrl });
  if ('skipped' in redis) {
    print(`cluster-timers skipped: ${redis.skipped}`);
    return { skipped: redis.skipped, summary: `skipped: ${redis.skipped}` };
  }
  const namespace = `cluster-timers-${process.pid}-${Date.now()}`;
  const env = { REDIS_URL: redis.url, NAMESPACE: namespace, LEASE_MS: String(leaseMs), WORK_MS: '100' };
  const deliveries = [];
  const errors = [];
  let onFired = () => undefined;
  const pool = [];
  const client = new Redis(redis.url, { maxRetriesPerRequest: 2 });
  const scheduler = new RedisTimers({ redis: client, namespace, leaseMs });
  try {
    print(`Redis: ${redis.source}; namespace ${namespace}`);
    for (let i = 1; i <= workers; i++) {
      pool.push(
        startWorker(`w${i}`, env, (message) => {
          if (message.type === 'fired') {
            deliveries.push(message);
            onFired(message);
          } else if (message.type === 'error') errors.push(message);
        }),
      );
    }
    await Promise.all(pool.map((w) => w.ready));
    print(
      `${workers} worker processes ready (pids ${pool.map((w) => w.child.pid).join(', ')}), lease ${leaseMs} ms, each handler works 100 ms`,
    );

    const t0 = Date.now();
    const ids = Array.from({ length: count }, (_, i) => `job:${String(i).padStart(3, '0')}`);
    const dueAt = new Map();
    await Promise.all(
      ids.map(async (id, i) =>
        dueAt.set(id, await scheduler.schedule(id, 100 + Math.round((i * spreadMs) / count), { n: i })),
      ),
    );
    print(`scheduled ${count} timers due over ${spreadMs} ms, from a process that is not a worker`);

    // Kill the first worker that starts a handler after the first third of the window: that timer
    // is claimed, its handler has begun, and its ack will never come. (Whichever worker it is: the
    // workers race for claims, so a chosen one may get none in a given window on a busy machine.)
    let victim = pool[1];
    const killed = await new Promise((resolve) => {
      const kill = (name, id) => {
        onFired = () => undefined;
        clearTimeout(fallback);
        victim = pool.find((w) => w.name === name) ?? victim;
        victim.child.kill('SIGKILL');
        resolve({ worker: victim.name, pid: victim.child.pid, at: Date.now() - t0, duringHandlerOf: id });
      };
      const fallback = setTimeout(() => kill(victim.name, undefined), 100 + spreadMs / 3 + 500);
      onFired = (message) => {
        if (Date.now() - t0 >= spreadMs / 3) kill(message.worker, message.id);
      };
    });
    await victim.exited;
    print(
      `SIGKILL ${killed.worker} (pid ${killed.pid}) at ${killed.at} ms` +
        (killed.duringHandlerOf ? `, in the middle of ${killed.duringHandlerOf}'s handler (claimed, not acked)` : ''),
    );

    // Wait until every timer fired and the killed worker's leases have run out and been taken over.
    const firedIds = () => new Set(deliveries.map((d) => d.id));
    const waitUntil = Date.now() + spreadMs + leaseMs + 10_000;
    const settle = killed.at + leaseMs + 300;
    while ((firedIds().size < count || Date.now() - t0 < settle) && Date.now() < waitUntil) await sleep(20);

    const survivors = pool.filter((w) => w !== victim);
    for (const w of survivors) w.child.send('stop');
    await Promise.all(survivors.map((w) => w.exited));

    const leftInRedis = [];
    for (const id of ids) if ((await scheduler.get(id)) !== undefined) leftInRedis.push(id);
    // Drop what is left of the namespace (its sequence counter), in case REDIS_URL is a Redis that stays.
    const keys = await client.keys(`tickwheel:{${namespace}:*`);
    if (keys.length > 0) await client.del(...keys);
    const lost = ids.filter((id) => !firedIds().has(id));
    const byWorker = Object.fromEntries(
      pool.map((w) => [w.name, deliveries.filter((d) => d.worker === w.name).length]),
    );
    // A timer's first delivery, by time; any later one is a takeover (a stall: it keeps its attempt).
    const firstOf = new Map();
    for (const d of [...deliveries].sort((a, b) => a.firedAt - b.firedAt)) if (!firstOf.has(d.id)) firstOf.set(d.id, d);
    const takenOver = deliveries
      .filter((d) => firstOf.get(d.id) !== d)
      .map((d) => ({
        id: d.id,
        by: d.worker,
        attempts: d.attempts,
        firstBy: firstOf.get(d.id).worker,
        lateMs: d.firedAt - dueAt.get(d.id),
      }));
    const onTime = [...firstOf.values()].map((d) => d.firedAt - dueAt.get(d.id)).sort((a, b) => a - b);
    const duplicates = ids.filter((id) => deliveries.filter((d) => d.id === id).length > 1);

    print(
      `fired per worker: ${Object.entries(byWorker)
        .map(([w, n]) => `${w} ${n}`)
        .join(', ')} (${killed.worker} died at ${killed.at} ms)`,
    );
    for (const t of takenOver) {
      print(
        `  ${t.id}: ${t.firstBy ?? 'a worker'} died before acking it; ${t.by} took it over when the lease expired (still attempt ${t.attempts}: a stall uses none, ${t.lateMs} ms after due)`,
      );
    }
    print(
      `first deliveries fired ${onTime[0]}..${onTime[onTime.length - 1]} ms after their due time (median ${onTime[Math.floor(onTime.length / 2)]} ms)`,
    );
    print(
      `lost: ${lost.length} of ${count}; left in Redis: ${leftInRedis.length}; delivered twice: ${duplicates.length} (${duplicates.join(', ') || 'none'})`,
    );

    return {
      summary: `${count} timers over ${workers} processes, ${killed.worker} SIGKILLed mid-handler: ${count - lost.length}/${count} fired, ${takenOver.length} taken over after the lease, ${lost.length} lost`,
      redis: redis.source,
      killed,
      byWorker,
      takenOver,
      lost,
      leftInRedis,
      duplicates,
      firstDeliveryLateMs: onTime,
      errors,
    };
  } finally {
    for (const w of pool) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    await Promise.all(pool.map((w) => w.exited));
    await client.quit().catch(() => client.disconnect());
    await redis.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
