/**
 * A real Redis Cluster on loopback: 6 `redis-server --cluster-enabled yes` processes, 3 masters
 * with a replica each, AOF, `cluster-node-timeout` 1.5 s. A namespace sharded over several slots
 * spreads over the nodes; worker processes on ioredis Cluster clients fire every timer once;
 * pub/sub wake-ups reach workers whichever node they listen on; and a master SIGKILLed in the
 * middle of a run is failed over without a lost schedule or timer. The failover test runs last:
 * it leaves one shard without a replica.
 */
import { Cluster } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisTimers } from '../../src/redis-timers.js';
import type { FiredTimer } from '../../src/types.js';
import { debounceUnderLoad } from '../helpers/debounce-load.js';
import { startRedisCluster, waitForFailover, type RedisCluster } from '../helpers/redis-server.js';
import { sleep, uniqueNamespace, until } from '../helpers/wait.js';
import { forkWorker, killAllWorkers, type Start } from '../helpers/workers.js';

const NODE_TIMEOUT_MS = 1_500;

describe('RedisTimers on a Redis Cluster (3 masters, 3 replicas)', () => {
  let cluster: RedisCluster;
  let ports: number[];
  const clients: Cluster[] = [];

  function client(): Cluster {
    const c = new Cluster(ports.map((port) => ({ host: '127.0.0.1', port })));
    c.on('error', () => undefined);
    clients.push(c);
    return c;
  }

  beforeAll(async () => {
    cluster = await startRedisCluster(3, 1, NODE_TIMEOUT_MS);
    ports = cluster.nodes.map((n) => n.port);
  }, 60_000);

  afterEach(async () => {
    await killAllWorkers();
  });

  afterAll(async () => {
    for (const c of clients.splice(0)) c.disconnect();
    await cluster?.stop();
  });

  it(
    'spreads a sharded namespace over the nodes and fires every timer once across worker processes',
    { timeout: 40_000 },
    async () => {
      const namespace = uniqueNamespace('cluster');
      const redis = client();
      const timers = new RedisTimers({ redis, namespace, shards: 6 });
      const ids = Array.from({ length: 2_000 }, (_, i) => `c${i}`);
      await Promise.all(ids.map((id, i) => timers.schedule(id, 1_000 + (i % 500), { i })));
      const keysPerNode = await Promise.all(redis.nodes('master').map((node) => node.dbsize()));
      expect(keysPerNode.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
      const workers = [
        forkWorker({ clusterPorts: ports, namespace, leaseMs: 30_000, shards: 6 }),
        forkWorker({ clusterPorts: ports, namespace, leaseMs: 30_000, shards: 6 }),
      ];
      await Promise.all(workers.map((w) => w.ready));
      const fired = () => workers.flatMap((w) => w.fired);
      await until(() => fired().length >= 2_000, '2 000 timers fired on the cluster', 30_000);
      await sleep(200);
      expect(fired()).toHaveLength(2_000);
      expect(new Set(fired().map(([id]) => id))).toEqual(new Set(ids));
      await Promise.all(workers.map((w) => w.stop()));
    },
  );

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

  it('caps a debounced timer at maxWaitMs under four concurrent schedulers on Cluster clients', async () => {
    const { fires, calls } = await debounceUnderLoad(client, { shards: 3 });
    console.log(`maxWait on the cluster: ${calls} schedule() calls in 1.6 s fired ${fires.length} times`);
  });

  it(
    'a master SIGKILLed mid-run: no schedule rejected or lost, no timer lost, firing stalls at most the failover time + 1 s',
    { timeout: 50_000 },
    async () => {
      const namespace = uniqueNamespace('failover');
      const shards = 6;
      const workers = [0, 1, 2].map(() => forkWorker({ clusterPorts: ports, namespace, leaseMs: 5_000, shards }));
      await Promise.all(workers.map((w) => w.ready));
      const timers = new RedisTimers({ redis: client(), namespace, shards, waitForReplicas: 1 });
      const victim = cluster.shards[0];

      // A steady stream: a timer every 5 ms for 5 s, each due 300 ms after its schedule() call.
      const accepted: string[] = [];
      const rejected: unknown[] = [];
      const calls: Promise<void>[] = [];
      const stream = (async () => {
        for (let i = 0; i < 1_000; i++) {
          const id = `f${i}`;
          calls.push(
            timers.schedule(id, 300).then(
              () => void accepted.push(id),
              (error: unknown) => void rejected.push(error),
            ),
          );
          await sleep(5);
        }
      })();
      await sleep(1_500);
      const killedAt = Date.now();
      await victim.master.kill();
      const failedOverAt = await waitForFailover(cluster, victim.master, victim.firstSlot, 30_000);
      const failoverMs = failedOverAt - killedAt;
      await stream;
      await Promise.all(calls);
      expect(rejected.map((e) => String(e))).toEqual([]);
      expect(accepted).toHaveLength(1_000);

      const fired = (): Start[] => workers.flatMap((w) => w.fired);
      await until(() => new Set(fired().map(([id]) => id)).size === 1_000, 'every accepted timer fired', 30_000);
      const first = new Map<string, number>();
      for (const [id, , lateness] of fired()) if (!first.has(id)) first.set(id, lateness);
      const stall = Math.max(...first.values());
      const duplicates = fired().length - 1_000;
      console.log(
        `failover: ${failoverMs} ms (cluster-node-timeout ${NODE_TIMEOUT_MS} ms); schedules rejected 0 of 1 000; worst lateness ${stall} ms; ${duplicates} duplicate deliveries`,
      );
      expect(stall).toBeLessThanOrEqual(failoverMs + 1_000);
      await Promise.all(workers.map((w) => w.stop()));
    },
  );
});
