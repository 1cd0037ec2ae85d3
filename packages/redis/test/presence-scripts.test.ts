import { describe, expect, it } from 'vitest';
import { callsOf, claim, flush, newCall, raw, record, shard, type Shard } from './helpers/script-shard.js';

// The presence scripts run by ioredis-mock's Lua (fengari) with the time passed in as the last
// ARGV, so every grace due time is exact. The same scripts run on real Redis and a Redis Cluster
// in test/integration (presence*.test.ts).

type Name =
  | 'tickwheelPresenceHello'
  | 'tickwheelPresenceJoin'
  | 'tickwheelPresenceLeave'
  | 'tickwheelPresenceLeft'
  | 'tickwheelPresenceReap'
  | 'tickwheelPresenceRenew';

const POLICY = '3:f1000';

function run<T = string>(s: Shard, name: Name, args: string[], now: number): Promise<T> {
  const commands = raw as unknown as Record<Name, (...a: string[]) => Promise<T>>;
  return commands[name](...s.keys, callsOf(s.keys), ...args, ...newCall(), '', String(now));
}

const hello = (s: Shard, node: string, now = 0) => run<number>(s, 'tickwheelPresenceHello', [node], now);
const join = (s: Shard, node: string, member: string, conn: string, now = 0) =>
  run(s, 'tickwheelPresenceJoin', [node, member, conn], now);
const leave = (s: Shard, node: string, member: string, conn: string, now: number, graceMs = 1_000) =>
  run(s, 'tickwheelPresenceLeave', [node, member, conn, String(graceMs), POLICY, s.channel, '0'], now);
const left = (s: Shard, member: string, token: string, now: number) =>
  run(s, 'tickwheelPresenceLeft', [member, token], now);
const reap = (s: Shard, node: string, limit: number, now: number, graceMs = 1_000) =>
  run(s, 'tickwheelPresenceReap', [node, String(limit), String(graceMs), POLICY, s.channel, '0'], now);
const renew = (s: Shard, id: string, ttlMs: number, now: number) =>
  run(s, 'tickwheelPresenceRenew', [id, String(ttlMs), POLICY, s.channel, '0'], now);

/** The shard's present hash: member -> connection count. */
async function present(s: Shard): Promise<Record<string, string>> {
  return raw.hgetall(`${s.keys[8].slice(0, -1)}present`);
}

/** Claims the due grace timer of `member` and returns its token. */
async function claimGrace(s: Shard, member: string, now: number): Promise<string> {
  const reply = await claim(s, 10, 5_000, now);
  const at = reply.indexOf(`g:${member}`);
  expect(at).toBeGreaterThanOrEqual(4);
  return reply[at + 1];
}

describe('presence-scripts', () => {
  describe('JOIN and LEAVE', () => {
    it('counts a member up from its first connection and starts its grace when the last one goes', async () => {
      const s = await shard();
      await hello(s, 'A');
      await hello(s, 'B');
      expect(await join(s, 'A', 'm', 'c1')).toBe('joined');
      expect(await join(s, 'B', 'm', 'c1')).toBe('more'); // the same id on another node is another connection
      expect(await join(s, 'A', 'm', 'c1')).toBe('known');
      expect(await present(s)).toEqual({ m: '2' });
      expect(await leave(s, 'A', 'm', 'c1', 100)).toBe('more');
      expect(await leave(s, 'A', 'm', 'c1', 100)).toBe('unknown');
      expect(await leave(s, 'B', 'm', 'c1', 200, 1_000)).toBe('1200');
      expect(await present(s)).toEqual({ m: '0' });
      expect(await record(s.keys, 'g:m')).toBe('1:1200:0:3:f1000:');
      await flush();
      expect(s.wakes).toEqual(['0:1200']);
    });

    it('drops the grace timer when the member comes back within it, on any node', async () => {
      const s = await shard();
      await hello(s, 'A');
      await hello(s, 'B');
      await join(s, 'A', 'm', 'c');
      await leave(s, 'A', 'm', 'c', 0);
      expect(await join(s, 'B', 'm', 'c')).toBe('back');
      expect(await record(s.keys, 'g:m')).toBeNull();
      expect(await present(s)).toEqual({ m: '1' });
    });

    it('refuses joins under a node that is not registered on the shard (it lost its lease)', async () => {
      const s = await shard();
      expect(await join(s, 'ghost', 'm', 'c')).toBe('gone');
      expect(await present(s)).toEqual({});
    });
  });

  describe('LEFT', () => {
    it('lets the member leave once, only under the grace timer claim that is still current', async () => {
      const s = await shard();
      await hello(s, 'A');
      await join(s, 'A', 'm', 'c');
      await leave(s, 'A', 'm', 'c', 0, 500);
      const token = await claimGrace(s, 'm', 500);
      expect(await left(s, 'm', String(Number(token) + 1), 510)).toBe(''); // not this claim's token
      expect(await left(s, 'm', token, 510)).toBe('510');
      expect(await left(s, 'm', token, 520)).toBe(''); // a second delivery of the same claim
      expect(await present(s)).toEqual({});
    });

    it('changes nothing for a claim overtaken by a re-join and a newer leave: the newer grace decides', async () => {
      const s = await shard();
      await hello(s, 'A');
      await join(s, 'A', 'm', 'c');
      await leave(s, 'A', 'm', 'c', 0, 500);
      const old = await claimGrace(s, 'm', 500);
      await join(s, 'A', 'm', 'c', 501);
      await leave(s, 'A', 'm', 'c', 502, 500);
      expect(await left(s, 'm', old, 503)).toBe('');
      expect(await present(s)).toEqual({ m: '0' });
      const fresh = await claimGrace(s, 'm', 1_002);
      expect(await left(s, 'm', fresh, 1_002)).toBe('1002');
    });
  });

  describe('REAP', () => {
    it('unregisters a node, then removes its connections in batches, starting the grace of each member left without one', async () => {
      const s = await shard();
      await hello(s, 'dead');
      await hello(s, 'live');
      for (const m of ['a', 'b', 'c']) await join(s, 'dead', m, `x${m}`);
      await join(s, 'live', 'b', 'y');
      expect(await reap(s, 'dead', 2, 1_000)).toMatch(/^1:2$/);
      expect(await join(s, 'dead', 'z', 'z')).toBe('gone');
      expect(await reap(s, 'dead', 2, 1_000)).toBe('0:1');
      expect(await reap(s, 'dead', 2, 1_000)).toBe('0:0');
      expect(await present(s)).toEqual({ a: '0', b: '1', c: '0' });
      expect(await record(s.keys, 'g:a')).toMatch(/^\d+:2000:0:3:f1000:$/);
      expect(await record(s.keys, 'g:b')).toBeNull();
    });
  });

  describe('RENEW', () => {
    it('pushes a scheduled lease back, and answers empty once it was claimed (expired) or is gone', async () => {
      const s = await shard();
      await leave(s, 'A', 'nobody', 'c', 0); // a no-op, for a shard with calls
      expect(await renew(s, 'n:A', 900, 0)).toBe('');
      const put = await raw.tickwheelSchedule(
        ...s.keys,
        callsOf(s.keys),
        'n:A',
        'in',
        '900',
        '',
        s.channel,
        '0',
        'replace',
        '3',
        'f1000',
        '',
        ...newCall(),
        '',
        '0',
      );
      expect(put[0]).toBe('900');
      expect(await renew(s, 'n:A', 900, 300)).toBe('1200');
      await claim(s, 10, 5_000, 1_200);
      expect(await renew(s, 'n:A', 900, 1_300)).toBe('');
    });
  });
});
