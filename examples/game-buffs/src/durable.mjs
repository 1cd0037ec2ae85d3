/**
 * Durable buffs: wall-clock effects that must outlive the game server process (an XP boost a
 * player bought, a rested bonus). They live in Redis through @tickwheel/redis, so a server that
 * goes down before they are due loses nothing: the next server process, a new RedisTimers on the
 * same Redis, fires them on time.
 *
 * Without a Redis URL the two "servers" talk to ioredis-mock, an in-memory Redis stand-in whose
 * instances share their data (as two connections to one server do).
 */
import { Redis } from 'ioredis';
import RedisMock from 'ioredis-mock';
import { RedisTimers } from '@tickwheel/redis';

/** Opens a connection: to `redisUrl` when given, else to the embedded stand-in. */
function connect(redisUrl) {
  return redisUrl ? new Redis(redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 }) : new RedisMock();
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Schedules three durable buffs on "server 1", cancels one, shuts server 1 down before any is
 * due, then starts "server 2" (a new client and a new RedisTimers) which fires the other two.
 *
 * @param {{ redisUrl?: string }} options - `redisUrl` of a real Redis; the stand-in without it
 * @returns what each server did, with times in ms since the buffs were scheduled
 */
export async function runDurable({ redisUrl } = {}) {
  const namespace = `game-buffs-${process.pid}-${Date.now()}`;
  // ioredis-mock's TIME is wrong (a documented limit of the mock): the stand-in runs in this
  // process, so its timers follow this process's clock instead.
  const options = { namespace, leaseMs: 5_000, pollIntervalMs: 250, timeSource: redisUrl ? 'redis' : 'local' };
  const events = [];
  const fired = [];
  const t0 = Date.now();
  const at = () => Date.now() - t0;

  const client1 = connect(redisUrl);
  const server1 = new RedisTimers({ redis: client1, ...options });
  try {
    // Over 2 s out, so that server 1 is gone before the first is due even on a busy machine (on
    // the stand-in each call runs its script in a Lua VM written in JavaScript, which a loaded
    // machine slows to a fraction of a second per call).
    // The earlier one first: each call takes time, so the one scheduled later is also due later.
    await server1.schedule('player:7:rested', 2_200, { player: 7, effect: 'rested bonus' });
    await server1.schedule('player:42:xp-boost', 2_400, { player: 42, effect: 'XP x2' });
    await server1.schedule('player:9:curse', 2_300, { player: 9, effect: 'curse' });
    events.push({
      t: at(),
      server: 1,
      text: 'schedules player:7:rested (2.2 s), player:42:xp-boost (2.4 s), player:9:curse (2.3 s)',
    });
    const cancelled = await server1.cancel('player:9:curse');
    events.push({ t: at(), server: 1, text: `a priest lifts the curse: cancel(player:9:curse) = ${cancelled}` });
    await server1.start((timer) => {
      fired.push({ id: timer.id, server: 1, t: at() });
    });
    await sleep(100);
  } finally {
    await server1.stop();
    await client1.quit();
  }
  events.push({ t: at(), server: 1, text: `server 1 shuts down (a deploy) after firing ${fired.length} timer(s)` });

  const client2 = connect(redisUrl);
  const server2 = new RedisTimers({ redis: client2, ...options });
  try {
    const pending = [];
    for (const id of ['player:42:xp-boost', 'player:7:rested', 'player:9:curse']) {
      const info = await server2.get(id);
      pending.push({ id, state: info?.state ?? 'none' });
    }
    events.push({
      t: at(),
      server: 2,
      text: `server 2 starts and finds ${pending.map((p) => `${p.id}: ${p.state}`).join(', ')}`,
    });
    await server2.start((timer) => {
      const t = at();
      fired.push({
        id: timer.id,
        server: 2,
        t,
        lateMs: Date.now() - timer.dueAt,
        payload: timer.payload,
        attempts: timer.attempts,
      });
      events.push({
        t,
        server: 2,
        text: `${timer.id} expires (${timer.payload.effect} of player ${timer.payload.player} ends), ${Date.now() - timer.dueAt} ms after its due time`,
      });
    });
    // Wait for both, and until past the cancelled curse's due time, to show that it never fires.
    const waitUntil = Date.now() + 5_000;
    while ((fired.length < 2 || at() < 2_450) && Date.now() < waitUntil) await sleep(10);
    return { backend: redisUrl ? 'redis' : 'ioredis-mock', events, fired, pending };
  } finally {
    await server2.stop();
    // Every timer has been acked; drop what is left of the namespace (its sequence counter).
    const keys = await client2.keys(`tickwheel:{${namespace}:*`);
    if (keys.length > 0) await client2.del(...keys);
    await client2.quit();
  }
}
