/**
 * One worker process of the cluster: a RedisTimers worker on the shared namespace. It reports
 * each timer it fires to the parent over IPC, and stops cleanly when told to.
 *
 * Environment: REDIS_URL, NAMESPACE, WORKER (its name), LEASE_MS, WORK_MS (how long a handler works).
 */
import { Redis } from 'ioredis';
import { RedisTimers } from '@tickwheel/redis';

const name = process.env.WORKER;
const workMs = Number(process.env.WORK_MS);
const redis = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: 2 });
const timers = new RedisTimers({
  redis,
  namespace: process.env.NAMESPACE,
  leaseMs: Number(process.env.LEASE_MS),
  pollIntervalMs: 250,
});

timers.on('error', (error) => process.send({ type: 'error', worker: name, message: String(error) }));

await timers.start(async ({ id, dueAt, attempts }) => {
  // Tell the parent as the handler starts: a worker killed now has run it but not acked it.
  process.send({ type: 'fired', worker: name, id, dueAt, attempts, firedAt: Date.now() });
  await new Promise((resolve) => setTimeout(resolve, workMs));
});
process.send({ type: 'ready', worker: name, pid: process.pid });

process.on('message', async (message) => {
  if (message !== 'stop') return;
  await timers.stop();
  await redis.quit();
  process.disconnect();
});
