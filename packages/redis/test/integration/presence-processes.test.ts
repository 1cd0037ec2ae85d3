/**
 * RedisPresence across server processes on a real redis-server: a server SIGKILLed and one
 * SIGSTOPped past its lease, their members leaving once each on the others; the frozen one
 * coming back and re-registering only its live connections; and 10 000 members with churn on a
 * private redis-server, with what each join and leave costs Redis (printed with the figures).
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { REDIS_PRESENCE_CHANNEL, type RedisPresenceMessage } from '../../src/channels.js';
import { RedisPresence } from '../../src/redis-presence.js';
import { channelListener } from '../../../../tests/helpers/channel-listener.js';
import { forkPresenceServer, type PresenceServer } from '../helpers/presence-servers.js';
import { killAllWorkers } from '../helpers/workers.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { sleep, uniqueNamespace, until } from '../helpers/wait.js';

const GRACE_MS = 500;
const TTL_MS = 1_200;
/** Extra room for a loaded 2-core box on top of the 1 s. */
const LOAD_MARGIN_MS = 1_000;

describe('RedisPresence across server processes', () => {
  const clients: Redis[] = [];
  const presences: RedisPresence[] = [];
  const servers: RedisServer[] = [];
  const listen = channelListener();

  afterEach(async () => {
    await killAllWorkers();
    await Promise.allSettled(presences.splice(0).map((p) => p.stop()));
    for (const c of clients.splice(0)) c.disconnect();
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });

  function reader(namespace: string, url = inject('redisUrl')): RedisPresence {
    const redis = new Redis(url);
    redis.on('error', () => undefined);
    clients.push(redis);
    return new RedisPresence({ redis, namespace });
  }

  async function fork(namespace: string, count: number): Promise<PresenceServer[]> {
    const forked = Array.from({ length: count }, () =>
      forkPresenceServer({ url: inject('redisUrl'), namespace, graceMs: GRACE_MS, nodeTtlMs: TTL_MS }),
    );
    await Promise.all(forked.map((s) => s.ready));
    return forked;
  }

  const leavesOf = (all: PresenceServer[]) => all.flatMap((s) => s.events.filter(([event]) => event === 'leave'));
  const range = (prefix: string, from: number, to: number): string[] =>
    Array.from({ length: to - from }, (_, i) => `${prefix}${from + i}`);

  // phoenix_pubsub test/phoenix/tracker/shard_replication_test.exs, "detects nodedown and locally broadcasts leaves"
  it('lets the members of a SIGKILLed server leave once each, on the others, within nodeTtlMs + graceMs + 1 s', async () => {
    const namespace = uniqueNamespace('presence-kill');
    const [doomed, b, c] = await fork(namespace, 3);
    const only = range('u', 0, 30);
    const shared = range('u', 30, 40);
    await doomed.join([...only, ...shared].map((m) => [m, 'a']));
    await b.join(shared.map((m) => [m, 'b']));
    await c.join([['local', 'c']]);
    await doomed.kill();
    const killedAt = Date.now();
    await until(() => leavesOf([b, c]).length >= only.length, "the killed server's members leave", 10_000);
    await sleep(GRACE_MS + 300); // nothing else comes
    const leaves = leavesOf([b, c]);
    expect(leaves.map(([, member]) => member).sort()).toEqual([...only].sort());
    for (const [, , at] of leaves) {
      // Its last renewal came up to nodeTtlMs / 3 before the kill.
      expect(at - killedAt).toBeGreaterThanOrEqual((TTL_MS * 2) / 3 + GRACE_MS - 5);
      expect(at - killedAt).toBeLessThan(TTL_MS + GRACE_MS + 1_000 + LOAD_MARGIN_MS);
    }
    const listed = new Set<string>();
    for await (const page of reader(namespace).members()) for (const m of page) listed.add(m);
    expect(listed).toEqual(new Set([...shared, 'local']));
  });

  // phoenix_pubsub shard_replication_test.exs, "old pids from a node are permdowned when the node
  // comes back up"; socket.io-redis-adapter#367 (fetchSockets hangs while a node is down)
  it('reaps a SIGSTOPped server, answers members() meanwhile, and lets it re-register only its live connections on SIGCONT', async () => {
    const namespace = uniqueNamespace('presence-stop');
    const [frozen, other] = await fork(namespace, 2);
    const members = range('s', 0, 10);
    await frozen.join(members.map((m) => [m, 'x']));
    const before = frozen.nodeId();
    frozen.signal('SIGSTOP');
    const started = Date.now();
    const pages: string[][] = [];
    for await (const page of reader(namespace).members()) pages.push(page);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(new Set(pages.flat())).toEqual(new Set(members));
    await until(() => leavesOf([other]).length >= members.length, "the frozen server's members leave", 10_000);
    frozen.signal('SIGCONT');
    // Back: its renewal finds the lease gone; it registers anew and joins its live connections again.
    await until(
      () => frozen.events.filter(([event]) => event === 'join').length >= 2 * members.length,
      'the members join again',
      10_000,
    );
    expect((await frozen.leave([['s0', 'x']]))[0]).toBe(true); // its last connection: no stale one was resurrected
    expect(frozen.nodeId()).not.toBe(before);
    await until(() => leavesOf([frozen, other]).length >= members.length + 1, 's0 leaves again', 10_000);
    await sleep(GRACE_MS + 300);
    const leaves = leavesOf([frozen, other]).map(([, member]) => member);
    expect(leaves.sort()).toEqual([...members, 's0'].sort());
    const r = reader(namespace);
    expect(await r.online('s0')).toBe(false);
    expect(await r.online('s1')).toBe(true);
  });

  it('carries 10 000 members with churn and lets each leave once; figures: rates and what each costs Redis', async () => {
    const redisServer = await startRedisServer();
    servers.push(redisServer);
    const url = redisServer.url;
    const namespace = uniqueNamespace('presence-churn');
    const make = (): RedisPresence => {
      const redis = new Redis(url);
      redis.on('error', () => undefined);
      clients.push(redis);
      // A grace far above a call's time on a loaded box: a mover's leave and join both land within it.
      const p = new RedisPresence({ redis, namespace, graceMs: 4_000, nodeTtlMs: 15_000 });
      presences.push(p);
      return p;
    };
    const [a, b] = [make(), make()];
    const leaves: string[] = [];
    for (const p of [a, b]) p.on('leave', ({ member }: { member: string }) => leaves.push(member));
    await Promise.all([a.start(), b.start()]);
    const admin = new Redis(url);
    clients.push(admin);
    const members = range('member:', 0, 10_000);
    const memoryBefore = await usedMemory(admin);
    await admin.config('RESETSTAT');
    let t = performance.now();
    await Promise.all(members.map((m, i) => (i % 2 === 0 ? a : b).join(m, `conn${i}`)));
    const joinMs = performance.now() - t;
    const joinStats = await commandStats(admin);
    const bytesPerMember = ((await usedMemory(admin)) - memoryBefore) / members.length;
    // Churn: 2 000 move to the other server within the grace (no leave), 1 000 leave for good.
    await admin.config('RESETSTAT');
    t = performance.now();
    const movers = members.slice(0, 2_000);
    await Promise.all(
      movers.map(async (m, i) => {
        await (i % 2 === 0 ? a : b).leave(m, `conn${i}`);
        await (i % 2 === 0 ? b : a).join(m, `moved${i}`);
      }),
    );
    const churnMs = performance.now() - t;
    const churnStats = await commandStats(admin);
    const messages = listen(REDIS_PRESENCE_CHANNEL) as RedisPresenceMessage[];
    await admin.config('RESETSTAT');
    t = performance.now();
    const gone = members.slice(2_000, 3_000);
    await Promise.all(gone.map((m, i) => ((2_000 + i) % 2 === 0 ? a : b).leave(m, `conn${2_000 + i}`)));
    const leaveMs = performance.now() - t;
    await until(() => leaves.length >= gone.length, '1 000 leaves', 20_000);
    await sleep(500);
    const leaveStats = await commandStats(admin);
    expect(leaves.sort()).toEqual([...gone].sort());
    expect(await a.online('member:0')).toBe(true);
    const lateness = messages
      .filter((m) => m.event === 'leave')
      .map((m) => m.lateMs)
      .sort((x, y) => x - y);
    const q = (p: number) => lateness[Math.min(lateness.length - 1, Math.floor(p * lateness.length))];
    console.log(
      `presence, 10 000 members over 2 servers: ${Math.round(members.length / (joinMs / 1_000))} joins/s ` +
        `(${(joinStats.scripts / members.length).toFixed(2)} script calls, ${(joinStats.calls / members.length).toFixed(1)} Redis commands in all per join); ` +
        `${Math.round(bytesPerMember)} bytes of Redis memory per online member; ` +
        `2 000 moves (leave + join elsewhere within the grace) in ${Math.round(churnMs)} ms, ${(churnStats.calls / 4_000).toFixed(1)} Redis commands per call, no leave; ` +
        `1 000 leaves in ${Math.round(leaveMs)} ms, ${(leaveStats.scripts / 1_000).toFixed(2)} script calls and ${(leaveStats.calls / 1_000).toFixed(1)} Redis commands per departure (leave, claim, grace end, ack); ` +
        `leave lateness after the grace p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${lateness.at(-1)} ms`,
    );
    expect(lateness).toHaveLength(1_000);
    expect(lateness.at(-1)).toBeLessThan(5_000);
  });
});

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)![1]);
}

/** Commands since the last RESETSTAT: all (those run inside scripts included) and script calls (EVALSHA/EVAL), minus the test's own INFO/CONFIG. */
async function commandStats(redis: Redis): Promise<{ calls: number; scripts: number }> {
  const info = await redis.info('commandstats');
  let calls = 0;
  let scripts = 0;
  for (const [, name, n] of info.matchAll(/cmdstat_([a-z|]+):calls=(\d+)/g)) {
    if (name === 'info' || name.startsWith('config')) continue;
    calls += Number(n);
    if (name === 'evalsha' || name === 'eval') scripts += Number(n);
  }
  return { calls, scripts };
}
