/**
 * Many calls at once on a real redis-server, through a link slower than the calls come
 * (helpers/fault-proxy.ts throttles the client's commands): a caller that starts thousands of
 * schedules in a tight loop gets every one of them, each written once, and no try refused as
 * late. Without the gate (call-gate.ts) the tail of such a burst waited on the connection for
 * longer than a try may take, was abandoned, refused, retried at the back, and failed with
 * RedisUnavailableError while Redis answered all along.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_CALLS_IN_FLIGHT } from '../../src/call-gate.js';
import { RedisTimers } from '../../src/redis-timers.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { uniqueNamespace } from '../helpers/wait.js';

/** Sized so that the burst needs several try timeouts (2 s) to cross the link. */
const CALLS = 1_500;
const COMMAND_BYTES_PER_SECOND = 300_000;

describe('RedisTimers under backpressure', () => {
  const clients: Redis[] = [];
  const proxies: FaultProxy[] = [];
  const servers: RedisServer[] = [];

  afterEach(async () => {
    for (const c of clients.splice(0)) c.disconnect();
    await Promise.all(proxies.splice(0).map((p) => p.close()));
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  function client(url: string): Redis {
    const c = new Redis(url);
    c.on('error', () => undefined);
    clients.push(c);
    return c;
  }

  /** Script calls and error replies so far, from the server's own counters. */
  async function serverStats(direct: Redis): Promise<{ scripts: number; errors: number }> {
    const sum = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].reduce((n, m) => n + Number(m[1]), 0);
    return {
      scripts: sum(await direct.info('commandstats'), /cmdstat_(?:evalsha|eval):calls=(\d+)/g),
      errors: sum(await direct.info('errorstats'), /errorstat_\w+:count=(\d+)/g),
    };
  }

  it('a burst of schedules slower to send than a try may take all resolve, each written once', async () => {
    // Its own server: INFO's counters are server-wide, and other files run beside this one on the shared server.
    const server = await startRedisServer();
    servers.push(server);
    const url = server.url;
    const direct = client(url);
    const proxy = await startFaultProxy(Number(new URL(url).port));
    proxies.push(proxy);
    const namespace = uniqueNamespace('burst');
    const timers = new RedisTimers({ redis: client(proxy.url), namespace });
    await timers.schedule('warm-up', 3_600_000); // scripts loaded, the server clock's offset read
    const before = await serverStats(direct);
    proxy.commandBytesPerSecond = COMMAND_BYTES_PER_SECOND;
    const started = performance.now();
    const results = await Promise.allSettled(
      Array.from({ length: CALLS }, (_, i) => timers.schedule(`t${i}`, 3_600_000, { i })),
    );
    const elapsedMs = performance.now() - started;
    const after = await serverStats(direct);
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    // The link, not the gate, set the pace: the burst needed more than a try's 2 s to cross it.
    expect(elapsedMs).toBeGreaterThan(2_000);
    // One try per call: none was abandoned, refused as late (an error reply) and tried again.
    expect(after.errors - before.errors).toBe(0);
    expect(after.scripts - before.scripts).toBe(CALLS);
    const stored = await Promise.all([0, CALLS / 2, CALLS - 1].map((i) => timers.get(`t${i}`)));
    expect(stored.map((t) => t?.payload)).toEqual([{ i: 0 }, { i: CALLS / 2 }, { i: CALLS - 1 }]);
    expect(MAX_CALLS_IN_FLIGHT).toBeLessThan(CALLS);
  }, 60_000);
});
