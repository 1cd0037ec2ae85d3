/**
 * The presence suite: @tickwheel/redis's RedisPresence against the hand-written TTL-key pattern
 * (lib/ttl-presence.mjs: a key per member with a 30 s TTL refreshed every 15 s, and a
 * `setTimeout` for the grace), on the same real redis-server (started here on a free loopback
 * port, no persistence), in this one process run, candidates alternating round by round. Each
 * round runs two servers of the candidate in this process, each with its own Redis client, and
 * N members (BENCH_PRESENCE_MEMBERS, default 10 000), half joined on each server.
 *
 * - memory: Redis bytes per online member: `MEMORY PURGE`, then the `used_memory` delta after
 *   every member joined (with RedisPresence, the two servers' registrations and leases included).
 * - requests per join and per departure: the commands the servers' clients send (a script call
 *   is one; counted on each client's `sendCommand`), over the N joins and over the departures
 *   until every leave was delivered.
 * - commands per join and per departure: `INFO commandstats` deltas (every command counts,
 *   those a Lua script calls included), over the N joins, and over N departures until every
 *   leave was delivered (the grace timer's claim, its script and ack included for RedisPresence),
 *   over those N / 10 departures.
 * - leave lateness: with N online, N / 10 of them leave spread evenly over 2 s (500 a second at
 *   10 000), grace 1 s; lateness = when the leave was delivered - (when `leave()` was called +
 *   the grace), local clock; p50, p99, max.
 *
 * What neither figure shows: the TTL pattern's grace timeout dies with its server, so a killed
 * server's members never get a leave; RedisPresence's do, after nodeTtlMs + graceMs (see the
 * package's tests, presence-processes.test.ts).
 *
 *   node --expose-gc suites/presence.mjs          # or: npm run bench -- presence
 *
 * BENCH_REPEATS overrides the number of alternating rounds (default 3).
 */
import { Redis } from 'ioredis';
import { RedisPresence } from '@tickwheel/redis';
import { startRedisServer } from '../lib/redis-servers.mjs';
import {
  alternate,
  commandCount,
  isMain,
  percentile,
  printScenario,
  runSuite,
  scenario,
  sleep,
  usedMemory,
} from '../lib/harness.mjs';
import { TtlPresence } from '../lib/ttl-presence.mjs';

const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const MEMBERS = Number(process.env.BENCH_PRESENCE_MEMBERS ?? 10_000);
const GRACE_MS = 1_000;
const SPREAD_MS = 2_000;
/** Members that leave, spread over SPREAD_MS: a tenth of them (500 a second at 10 000). */
const LEAVERS = Math.floor(MEMBERS / 10);

let round = 0;

/**
 * A client whose requests are counted: every command ioredis sends (a script call, a command of a
 * pipeline) passes through `sendCommand`, on the client's own instance (nothing of ioredis is changed).
 */
function countedClient(url, counter) {
  const redis = new Redis(url);
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, stream) => {
    counter.requests++;
    return send(command, stream);
  };
  return redis;
}

/** Two servers of the candidate; `join`/`leave` route a member to its server; `leaves` collects [member, at]. */
async function servers(candidate, url) {
  const leaves = new Map();
  const counter = { requests: 0 };
  const clients = [countedClient(url, counter), countedClient(url, counter)];
  const onLeave = (member) => leaves.set(member, performance.now());
  if (candidate === 'tickwheel') {
    const namespace = `bench-presence-${process.pid}-${round++}`;
    const all = clients.map((redis) => new RedisPresence({ redis, namespace, graceMs: GRACE_MS, nodeTtlMs: 15_000 }));
    for (const p of all) p.on('leave', ({ member }) => onLeave(member));
    await Promise.all(all.map((p) => p.start()));
    return {
      leaves,
      counter,
      join: (i, member) => all[i % 2].join(member, `c${i}`),
      leave: (i, member) => all[i % 2].leave(member, `c${i}`),
      async stop() {
        await Promise.all(all.map((p) => p.stop()));
        for (const c of clients) c.disconnect();
      },
    };
  }
  const all = clients.map((redis) => new TtlPresence(redis, { graceMs: GRACE_MS, onLeave }));
  return {
    leaves,
    counter,
    join: (i, member) => all[i % 2].join(member),
    leave: (i, member) => all[i % 2].leave(member),
    async stop() {
      for (const p of all) p.stop();
      for (const c of clients) c.disconnect();
    },
  };
}

/** One round of one candidate: memory and commands per join, then the spread departures. */
async function runOnce(candidate, url, admin) {
  await admin.flushall('SYNC');
  const s = await servers(candidate, url);
  const { used: before } = await usedMemory(admin);
  const members = Array.from({ length: MEMBERS }, (_, i) => `user:${i}`);
  await admin.config('RESETSTAT');
  s.counter.requests = 0;
  for (let i = 0; i < MEMBERS; i += 1_000)
    await Promise.all(members.slice(i, i + 1_000).map((m, k) => s.join(i + k, m)));
  const joinCommands = (await commandCount(admin)) / MEMBERS;
  const joinRequests = s.counter.requests / MEMBERS;
  const bytes = ((await usedMemory(admin)).used - before) / MEMBERS;
  await admin.config('RESETSTAT');
  s.counter.requests = 0;
  const calledAt = new Map();
  const start = performance.now();
  const calls = [];
  for (let i = 0; i < LEAVERS; i++) {
    const due = start + (i * SPREAD_MS) / LEAVERS;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    calledAt.set(members[i], performance.now());
    calls.push(s.leave(i, members[i]));
  }
  await Promise.all(calls);
  const deadline = performance.now() + 60_000;
  while (s.leaves.size < LEAVERS && performance.now() < deadline) await sleep(20);
  if (s.leaves.size < LEAVERS) throw new Error(`${candidate}: only ${s.leaves.size} of ${LEAVERS} leaves in 60 s`);
  await sleep(GRACE_MS); // no other member leaves
  if (s.leaves.size !== LEAVERS) throw new Error(`${candidate}: ${s.leaves.size} leaves for ${LEAVERS} departures`);
  const leaveCommands = (await commandCount(admin)) / LEAVERS;
  const leaveRequests = s.counter.requests / LEAVERS;
  const late = members.slice(0, LEAVERS).map((m) => s.leaves.get(m) - calledAt.get(m) - GRACE_MS);
  await s.stop();
  return {
    bytes,
    joinCommands,
    leaveCommands,
    joinRequests,
    leaveRequests,
    p50: percentile(late, 50),
    p99: percentile(late, 99),
    max: Math.max(...late),
  };
}

async function run() {
  const server = await startRedisServer();
  const admin = new Redis(server.url);
  try {
    const version = (await admin.info('server')).match(/redis_version:(\S+)/)[1];
    const t0 = performance.now();
    const samples = { tickwheel: [], 'ttl-keys': [] };
    await alternate(
      Object.fromEntries(
        Object.keys(samples).map((c) => [
          c,
          async () => {
            const r = await runOnce(c, server.url, admin);
            samples[c].push(r);
            return r.bytes;
          },
        ]),
      ),
      REPEATS,
    );
    const of = (field) =>
      Object.fromEntries(
        Object.entries(samples).map(([c, rs]) => {
          const values = rs.map((r) => r[field]);
          return [c, { median: percentile(values, 50), samples: values }];
        }),
      );
    const common = { subject: 'tickwheel', baseline: 'ttl-keys', higherIsBetter: false };
    const n = MEMBERS.toLocaleString('en-US');
    const scenarios = [
      scenario({
        ...common,
        id: 'presence-memory-per-member',
        title: `Redis memory per online member, ${n} members on 2 servers (MEMORY PURGE, used_memory delta)`,
        unit: 'bytes',
        results: of('bytes'),
        note: 'RedisPresence keeps a connection count, the connection in its server set and, while a member is in its grace, its timer; the TTL pattern one key',
      }),
      scenario({
        ...common,
        id: 'presence-commands-per-join',
        title: `Redis commands per join (INFO commandstats, Lua-internal calls counted), ${n} members`,
        unit: 'commands',
        results: of('joinCommands'),
      }),
      scenario({
        ...common,
        id: 'presence-commands-per-leave',
        title: `Redis commands per departure, until its leave is delivered (grace ${GRACE_MS} ms), ${n} members online`,
        unit: 'commands',
        results: of('leaveCommands'),
      }),
      scenario({
        ...common,
        id: 'presence-requests-per-join',
        title: `Requests to Redis per join (commands sent by the servers' clients; a script call is one), ${n} members`,
        unit: 'requests',
        results: of('joinRequests'),
      }),
      scenario({
        ...common,
        id: 'presence-requests-per-leave',
        title: `Requests to Redis per departure, until its leave is delivered, ${n} members online`,
        unit: 'requests',
        results: of('leaveRequests'),
      }),
      ...['p50', 'p99', 'max'].map((q) =>
        scenario({
          ...common,
          id: `presence-leave-lateness-${q}`,
          title: `Leave lateness ${q} after the grace, ${n} members online, ${LEAVERS.toLocaleString('en-US')} leaving over ${SPREAD_MS / 1_000} s`,
          unit: 'ms',
          results: of(q),
          ...(q === 'max' ? { target: { max: 1_000 } } : {}),
        }),
      ),
    ];
    for (const sc of scenarios) printScenario(sc);
    console.log(`  (presence suite took ${((performance.now() - t0) / 1000).toFixed(0)} s, redis-server ${version})`);
    return { scenarios, redisVersion: version };
  } finally {
    admin.disconnect();
    await server.stop();
  }
}

if (isMain(import.meta.url)) {
  await runSuite('presence', run, {
    repeats: REPEATS,
    needsGc: false,
    extra: ({ redisVersion }) => ({
      redisVersion,
      members: MEMBERS,
      leavers: LEAVERS,
      graceMs: GRACE_MS,
      spreadMs: SPREAD_MS,
    }),
  });
}
