import { describe, expect, it } from 'vitest';
import { NOW, once, WAKE } from '../src/lua-prelude.js';
import type { KeyList } from '../src/keys.js';
import { callsOf, client, shard } from './helpers/script-shard.js';

// The shared Lua, run on its own through EVAL on ioredis-mock (fengari), with the shard's nine KEYS.

const evalOn = (keys: KeyList, lua: string, ...args: string[]) => client.eval(lua, 9, ...keys, ...args);

describe('lua-prelude', () => {
  describe('NOW and F', () => {
    it('takes the time from the last ARGV when given, in whole ms, and prints numbers without exponents', async () => {
      const { keys } = await shard();
      expect(await evalOn(keys, `${NOW}\nreturn {F(now), F(1e15), F(12.0)}`, 'x', '1234.7')).toEqual([
        '1234',
        '1000000000000000',
        '12',
      ]);
    });

    it("reads the server's TIME when the last ARGV is empty", async () => {
      const { keys } = await shard();
      const [now] = (await evalOn(keys, `${NOW}\nreturn {F(now)}`, '')) as string[];
      expect(now).toMatch(/^\d+$/);
    });
  });

  describe('WAKE', () => {
    it('publishes "<shard>:<due>" only when the due time is earlier than the head it read, or there is none', async () => {
      const s = await shard();
      const lua = `${NOW}\n${WAKE}\nlocal head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')\nwake(head, tonumber(ARGV[1]), ARGV[2], ARGV[3])\nreturn 1`;
      await evalOn(s.keys, lua, '500', s.channel, '3', '0');
      await client.zadd(s.keys[0], '500', 'a');
      await evalOn(s.keys, lua, '700', s.channel, '3', '0');
      await evalOn(s.keys, lua, '200', s.channel, '3', '0');
      await new Promise((resolve) => setImmediate(resolve));
      expect(s.wakes).toEqual(['3:500', '3:200']);
    });
  });

  describe('once', () => {
    // A write that counts its runs in the seq key and returns a table, a string or a number.
    const body = once(`local n = redis.call('INCR', KEYS[4])
if ARGV[1] == 'table' then return {'a:b', '', string.format('%.0f', n)} end
if ARGV[1] == 'string' then return 'ran ' .. string.format('%.0f', n) end
return n`);
    const run = (keys: KeyList, kind: string, call: string, done = '') =>
      client.eval(body, 10, ...keys, callsOf(keys), kind, call, done, '60000', '', '0');

    it('runs a call once: a second try answers as the first (tables, strings, numbers) and writes nothing', async () => {
      const { keys } = await shard();
      expect(await run(keys, 'table', 'c1')).toEqual(['a:b', '', '1']);
      expect(await run(keys, 'table', 'c1')).toEqual(['a:b', '', '1']);
      expect(await run(keys, 'string', 'c2')).toBe('ran 2');
      expect(await run(keys, 'string', 'c2')).toBe('ran 2');
      expect(await run(keys, 'number', 'c3')).toBe(3);
      expect(await run(keys, 'number', 'c3')).toBe(3);
      expect(await client.get(keys[3])).toBe('3');
    });

    it('deletes the entries of the finished calls it is given, and keeps the hash for the time to live', async () => {
      const { keys } = await shard();
      await run(keys, 'number', 'c1');
      await run(keys, 'number', 'c2');
      await run(keys, 'number', 'c3', 'c1 c2');
      expect(await client.hkeys(callsOf(keys))).toEqual(['c3']);
      expect(await client.pttl(callsOf(keys))).toBeGreaterThan(59_000);
    });
  });
});
