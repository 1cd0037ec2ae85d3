import diagnosticsChannel from 'node:diagnostics_channel';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import {
  REDIS_FIRED_CHANNEL,
  REDIS_LEASE_LOST_CHANNEL,
  RedisTimers,
  type RedisFiredMessage,
  type RedisLeaseLostMessage,
} from '../../src/index.js';
import { sleep, uniqueNamespace, until } from '../helpers/wait.js';

const cleanups: Array<() => unknown> = [];

function listen<T>(name: string): T[] {
  const seen: T[] = [];
  const listener = (message: unknown) => seen.push(message as T);
  diagnosticsChannel.subscribe(name, listener);
  cleanups.push(() => diagnosticsChannel.unsubscribe(name, listener));
  return seen;
}

function timers(options: Partial<ConstructorParameters<typeof RedisTimers>[0]> = {}): RedisTimers {
  const redis = new Redis(inject('redisUrl'));
  const instance = new RedisTimers({ redis, namespace: uniqueNamespace('channels'), ...options });
  cleanups.push(async () => {
    await instance.stop();
    redis.disconnect();
  });
  return instance;
}

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('channels, published by RedisTimers on a real redis-server', () => {
  it('publishes each claimed timer with its lateness on the server clock', { timeout: 15_000 }, async () => {
    const fired = listen<RedisFiredMessage>(REDIS_FIRED_CHANNEL);
    const t = timers();
    const dueAt = await t.schedule('a', 50);
    const handled: string[] = [];
    await t.start(({ id }) => {
      handled.push(id);
    });
    await until(() => handled.length === 1, 'the timer to fire');
    expect(fired).toHaveLength(1);
    expect(fired[0]).toMatchObject({ namespace: t.namespace, id: 'a', dueAt, attempts: 1 });
    expect(fired[0].lateMs).toBeGreaterThanOrEqual(0);
    expect(fired[0].lateMs).toBeLessThan(1_000);
  });

  it('publishes a lost lease when a handler outlives it and its ack is refused', { timeout: 15_000 }, async () => {
    const fired = listen<RedisFiredMessage>(REDIS_FIRED_CHANNEL);
    const lost = listen<RedisLeaseLostMessage>(REDIS_LEASE_LOST_CHANNEL);
    const t = timers({ leaseMs: 100, pollIntervalMs: 50 });
    await t.schedule('slow', 0);
    // The first delivery takes 600 ms; its lease ends at 100 ms and the timer is claimed again.
    let first = true;
    await t.start(async () => {
      if (first) {
        first = false;
        await sleep(600);
      }
    });
    await until(() => lost.length === 1, 'the stale ack');
    expect(lost[0]).toEqual({ namespace: t.namespace, id: 'slow', attempts: 1, stage: 'ack' });
    expect(fired.map((m) => [m.id, m.attempts])).toEqual([
      ['slow', 1],
      ['slow', 1],
    ]);
    expect(fired[1].lateMs).toBeGreaterThanOrEqual(0);
  });
});
