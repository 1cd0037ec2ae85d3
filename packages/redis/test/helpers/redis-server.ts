/**
 * Real redis-server processes for the tests: installed from Debian's package when missing, each
 * on a free loopback port with its own temporary directory, always stopped by the caller. The
 * start-up is the benchmarks' (benchmarks/lib/redis-servers.mjs), one implementation for both.
 */
import { ensureDebianPackages, onPath } from '../../../../scripts/ensure-debian-packages.mjs';
import {
  freePort,
  probeClient,
  slotMaster,
  startRedisCluster,
  startRedisServer,
  type RedisCluster,
  type RedisServer,
  type RedisServerOptions,
} from '../../../../benchmarks/lib/redis-servers.mjs';

export { freePort, startRedisCluster, startRedisServer };
export type { RedisCluster, RedisServer, RedisServerOptions };

/** Installs Debian's redis-server (which brings redis-cli) unless it is already there. */
export function ensureRedisInstalled(): void {
  ensureDebianPackages(['redis-server'], () => onPath('redis-server') && onPath('redis-cli'), 'the redis tests');
}

/**
 * Waits until `firstSlot` is served by a live master and every live node says cluster_state:ok
 * (the failover of a killed master is over); returns when that was seen. `killedBefore`: nodes
 * killed by earlier tests, not asked.
 */
export async function waitForFailover(
  cluster: RedisCluster,
  dead: RedisServer,
  firstSlot: number,
  timeoutMs: number,
  killedBefore: readonly RedisServer[] = [],
): Promise<number> {
  const alive = cluster.nodes.filter((n) => n !== dead && !killedBefore.includes(n));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const probe = probeClient(alive[0].port);
    try {
      await probe.connect();
      const nodesText = String(await probe.call('cluster', 'nodes'));
      const owner = slotMaster(nodesText, firstSlot);
      const states = await Promise.all(
        alive.map(async (n) => {
          const c = probeClient(n.port);
          try {
            await c.connect();
            return String(await c.call('cluster', 'info'));
          } finally {
            c.disconnect();
          }
        }),
      );
      if (
        owner !== undefined &&
        !owner[1].startsWith(`127.0.0.1:${dead.port}@`) &&
        states.every((s) => /cluster_state:ok/.test(s))
      )
        return Date.now();
    } catch {
      // a node is busy electing: ask again
    } finally {
      probe.disconnect();
    }
    if (Date.now() > deadline) throw new Error(`slot ${firstSlot} was not failed over within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
