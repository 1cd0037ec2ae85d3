/**
 * RedisPresence on a real redis-server, several servers in one process (each its own
 * RedisPresence and client): joins and leaves across servers, the grace period, members(),
 * online(), a graceful stop, and a server cut off from Redis past its lease. The cases follow
 * Phoenix's tracker and presence tests and socket.io-redis-adapter's, named on each test; the
 * killed and frozen server processes are in presence-processes.test.ts.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { RedisPresence } from '../../src/redis-presence.js';
import type { RedisPresenceOptions } from '../../src/types.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { sleep, uniqueNamespace, until } from '../helpers/wait.js';

const GRACE_MS = 400;
const TTL_MS = 900;

interface Server {
  presence: RedisPresence;
  joins: string[];
  leaves: { member: string; at: number }[];
  errors: unknown[];
}

describe('RedisPresence on a real redis-server', () => {
  const clients: Redis[] = [];
  const presences: RedisPresence[] = [];
  const proxies: FaultProxy[] = [];

  afterEach(async () => {
    await Promise.allSettled(presences.splice(0).map((p) => p.stop()));
    for (const c of clients.splice(0)) c.disconnect();
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });

  function client(url = inject('redisUrl')): Redis {
    const c = new Redis(url);
    c.on('error', () => undefined);
    clients.push(c);
    return c;
  }

  async function server(namespace: string, options: Partial<RedisPresenceOptions> = {}, url?: string): Promise<Server> {
    const presence = new RedisPresence({
      redis: client(url),
      namespace,
      graceMs: GRACE_MS,
      nodeTtlMs: TTL_MS,
      ...options,
    });
    presences.push(presence);
    const s: Server = { presence, joins: [], leaves: [], errors: [] };
    presence.on('join', ({ member }: { member: string }) => s.joins.push(member));
    presence.on('leave', ({ member }: { member: string }) => s.leaves.push({ member, at: Date.now() }));
    presence.on('error', (error: unknown) => s.errors.push(error));
    await presence.start();
    return s;
  }

  const allLeaves = (servers: Server[]) => servers.flatMap((s) => s.leaves);
  const allJoins = (servers: Server[]) => servers.flatMap((s) => s.joins);

  async function listed(presence: RedisPresence, count?: number): Promise<string[][]> {
    const pages: string[][] = [];
    for await (const page of presence.members(count === undefined ? undefined : { count })) pages.push(page);
    return pages;
  }

  // phoenix_pubsub test/phoenix/tracker/shard_replication_test.exs, "node detects and locally broadcasts presence_join/leave"
  it('joins a member once, keeps it while any connection is left, and delivers one leave after the grace', async () => {
    const namespace = uniqueNamespace('presence');
    const servers = await Promise.all([server(namespace), server(namespace), server(namespace)]);
    const [a, b] = servers;
    expect(await a.presence.join('alice', 'a1')).toBe(true);
    expect(await b.presence.join('alice', 'b1')).toBe(false);
    expect(await a.presence.join('alice', 'a2')).toBe(false);
    expect(allJoins(servers)).toEqual(['alice']);
    expect(await a.presence.leave('alice', 'a1')).toBe(false);
    expect(await b.presence.leave('alice', 'b1')).toBe(false);
    const left = Date.now();
    expect(await a.presence.leave('alice', 'a2')).toBe(true);
    expect(await b.presence.online('alice')).toBe(true); // in its grace period
    await until(() => allLeaves(servers).length > 0, 'the leave', 5_000);
    const [leave] = allLeaves(servers);
    expect(leave.member).toBe('alice');
    expect(leave.at - left).toBeGreaterThanOrEqual(GRACE_MS - 5); // the server clock vs ours: a few ms
    expect(leave.at - left).toBeLessThan(GRACE_MS + 1_000);
    await sleep(GRACE_MS);
    expect(allLeaves(servers)).toHaveLength(1);
    expect(await a.presence.online('alice')).toBe(false);
  });

  // The issue's own case: a browser tab that reconnects to another server within the grace.
  it('produces no leave and no second join when the last connection moves to another server within the grace', async () => {
    const namespace = uniqueNamespace('presence-move');
    const servers = await Promise.all([server(namespace), server(namespace)]);
    const [a, b] = servers;
    await a.presence.join('bob', 'tab');
    expect(await a.presence.leave('bob', 'tab')).toBe(true);
    await sleep(GRACE_MS / 2);
    expect(await b.presence.join('bob', 'tab')).toBe(false);
    await sleep(GRACE_MS + 500);
    expect(allLeaves(servers)).toEqual([]);
    expect(allJoins(servers)).toEqual(['bob']);
    // And after the move, a real departure still leaves once.
    await b.presence.leave('bob', 'tab');
    await until(() => allLeaves(servers).length === 1, 'the leave after the move', 5_000);
    await sleep(200);
    expect(allLeaves(servers).map((l) => l.member)).toEqual(['bob']);
  });

  // phoenix_pubsub shard_replication_test.exs, "duplicate tracking" and "untrack with no tracked topic is a noop"
  it('treats a second join of the same connection and a leave of an unknown one as no-ops', async () => {
    const namespace = uniqueNamespace('presence-dup');
    const a = await server(namespace);
    const socket = {};
    expect(await a.presence.join('carol', socket)).toBe(true);
    expect(await a.presence.join('carol', socket)).toBe(false);
    expect(await a.presence.join('carol', 'other')).toBe(false);
    expect(await a.presence.leave('carol', {})).toBe(false);
    expect(await a.presence.leave('nobody', 'x')).toBe(false);
    expect(await a.presence.leave('carol', socket)).toBe(false);
    expect(await a.presence.leave('carol', socket)).toBe(false);
    expect(await a.presence.leave('carol', 'other')).toBe(true);
    await until(() => a.leaves.length === 1, 'the leave', 5_000);
  });

  // socket.io-redis-adapter test/index.ts, "fetchSockets" > "returns all socket instances", and
  // test/specifics.ts, "allRooms" > "returns all rooms across several nodes"; phoenix
  // test/phoenix/presence_test.exs, "list/1 lists presences from tracker" and "get_by_key/2 returns metadata for key"
  it('lists the members of every server, page by page over every shard, and answers online()', async () => {
    const namespace = uniqueNamespace('presence-list');
    const [a, b] = await Promise.all([server(namespace, { shards: 4 }), server(namespace, { shards: 4 })]);
    const members = Array.from({ length: 300 }, (_, i) => `m${i}`);
    await Promise.all(members.map((m, i) => (i % 2 === 0 ? a : b).presence.join(m, `c${i}`)));
    const pages = await listed(b.presence, 50);
    expect(pages.length).toBeGreaterThanOrEqual(4);
    expect(new Set(pages.flat())).toEqual(new Set(members));
    expect(await a.presence.online('m299')).toBe(true);
    expect(await a.presence.online('m300')).toBe(false);
    // A reader that never started sees the same.
    const reader = new RedisPresence({ redis: client(), namespace, shards: 4 });
    expect(new Set((await listed(reader)).flat())).toEqual(new Set(members));
  });

  // phoenix_pubsub shard_replication_test.exs, "graceful exits with permdown"
  it('lets the members of a server that stops leave after the grace, on another server', async () => {
    const namespace = uniqueNamespace('presence-stop');
    const [a, b] = await Promise.all([server(namespace), server(namespace)]);
    await a.presence.join('dave', 'd1');
    await a.presence.join('erin', 'e1');
    await b.presence.join('erin', 'e2');
    const stopped = Date.now();
    await a.presence.stop();
    await until(() => b.leaves.length > 0, 'dave leaves', 5_000);
    expect(b.leaves[0].at - stopped).toBeGreaterThanOrEqual(GRACE_MS - 5);
    await sleep(GRACE_MS + 300);
    expect(b.leaves.map((l) => l.member)).toEqual(['dave']);
    expect(await b.presence.online('erin')).toBe(true);
    await expect(a.presence.join('dave', 'd1')).rejects.toThrow(/call start\(\) first/);
  });

  // phoenix_pubsub shard_replication_test.exs, "detects nodedown and locally broadcasts leaves" and
  // "old pids from a node are permdowned when the node comes back up", with the node cut off from
  // Redis (its commands dropped) rather than killed.
  it('reaps a server cut off from Redis past its lease, then re-registers only its live connections when it is back', async () => {
    const namespace = uniqueNamespace('presence-cut');
    const proxy = await startFaultProxy(Number(new URL(inject('redisUrl')).port));
    proxies.push(proxy);
    const cut = await server(namespace, { failoverBudgetMs: 300 }, proxy.url);
    const other = await server(namespace);
    await cut.presence.join('frank', 'f1'); // stays connected through the outage
    await cut.presence.join('gina', 'g1'); // leaves during the outage
    await other.presence.join('hank', 'h1');
    const oldNode = cut.presence.nodeId;
    proxy.dropCommands = true;
    const lost = Date.now();
    await expect(cut.presence.leave('gina', 'g1')).rejects.toThrow(/unavailable/);
    // Reaped after nodeTtlMs; both leave after the grace, once each, on the other server.
    await until(() => other.leaves.length >= 2, 'the reaped members leave', 10_000);
    const elapsed = Math.max(...other.leaves.map((l) => l.at)) - lost;
    // The last renewal came up to nodeTtlMs / 3 before the cut.
    expect(elapsed).toBeGreaterThanOrEqual((TTL_MS * 2) / 3 + GRACE_MS - 5);
    expect(elapsed).toBeLessThan(TTL_MS + GRACE_MS + 2_000);
    expect(other.leaves.map((l) => l.member).sort()).toEqual(['frank', 'gina']);
    expect(await other.presence.online('hank')).toBe(true);
    // Back: the cut server finds its lease gone and joins frank again under a new id; gina stays gone.
    proxy.dropCommands = false;
    proxy.cut();
    await until(() => cut.joins.filter((m) => m === 'frank').length === 2, 'frank joins again', 10_000);
    expect(cut.presence.nodeId).not.toBe(oldNode);
    await sleep(TTL_MS);
    expect(await other.presence.online('frank')).toBe(true);
    expect(await other.presence.online('gina')).toBe(false);
    expect(cut.joins).toEqual(['frank', 'gina', 'frank']);
    expect(
      allLeaves([cut, other])
        .map((l) => l.member)
        .sort(),
    ).toEqual(['frank', 'gina']);
    expect(cut.errors.length).toBeGreaterThan(0);
  });
});
