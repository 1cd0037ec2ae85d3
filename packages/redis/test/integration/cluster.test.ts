/**
 * A 3-master Redis Cluster on loopback (`redis-cli --cluster create`): a namespace sharded over
 * several slots spreads its keys over the nodes, worker processes on ioredis Cluster clients
 * fire every timer once, and pub/sub wake-ups reach workers whichever node they listen on.
 */
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisTimers } from '../../src/redis-timers.js';
import type { FiredTimer } from '../../src/types.js';
import { startRedisCluster } from '../helpers/redis-server.js';
import { sleep, uniqueNamespace, until } from '../helpers/wait.js';
import { forkWorker, killAllWorkers } from '../helpers/workers.js';

describe('RedisTimers on a Redis Cluster', () => {
  let cluster: Awaited<ReturnType<typeof startRedisCluster>>;
  let ports: number[];
  const clients: Cluster[] = [];

  function client(): Cluster {
    const c = new Cluster(ports.map((port) => ({ host: '127.0.0.1', port })));
    c.on('error', () => undefined);
    clients.push(c);
    return c;
  }

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    ports = cluster.nodes.map((n) => n.port);
  });

  afterAll(async () => {
    await killAllWorkers();
    for (const c of clients.splice(0)) c.disconnect();
    await cluster?.stop();
  });

  it('spreads a sharded namespace over the nodes and fires every timer once across worker processes', async () => {
    const namespace = uniqueNamespace('cluster');
    const redis = client();
    const timers = new RedisTimers({ redis, namespace, shards: 6 });
    const ids = Array.from({ length: 2_000 }, (_, i) => `c${i}`);
    await Promise.all(ids.map((id, i) => timers.schedule(id, 1_000 + (i % 500), { i })));
    const keysPerNode = await Promise.all(redis.nodes('master').map((node) => node.dbsize()));
    expect(keysPerNode.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
    const workers = [forkWorker({ clusterPorts: ports, namespace, leaseMs: 30_000, shards: 6 }), forkWorker({ clusterPorts: ports, namespace, leaseMs: 30_000, shards: 6 })];
    await Promise.all(workers.map((w) => w.ready));
    const fired = () => workers.flatMap((w) => w.fired);
    await until(() => fired().length >= 2_000, '2 000 timers fired on the cluster', 30_000);
    await sleep(200);
    expect(fired()).toHaveLength(2_000);
    expect(new Set(fired().map(([id]) => id))).toEqual(new Set(ids));
    await Promise.all(workers.map((w) => w.stop()));
  });

  it('wakes a worker through pub/sub for an earlier timer scheduled by another client', async () => {
    const namespace = uniqueNamespace('cluster-wake');
    const worker = new RedisTimers({ redis: client(), namespace, shards: 3, pollIntervalMs: 600_000 });
    const scheduler = new RedisTimers({ redis: client(), namespace, shards: 3 });
    const fired: FiredTimer[] = [];
    await worker.start((timer) => {
      fired.push(timer);
    });
    await sleep(100);
    const dueAt = await scheduler.schedule('early', 50);
    await until(() => fired.length === 1, 'the wake-up', 5_000);
    expect(fired[0]).toMatchObject({ id: 'early', dueAt, attempts: 1 });
    expect(Date.now()).toBeGreaterThanOrEqual(dueAt);
    await worker.stop();
  });
});
