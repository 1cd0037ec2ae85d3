import { describe, expect, it } from 'vitest';
import { NOW, WAKE } from '../src/lua-prelude.js';
import type { KeyList } from '../src/keys.js';
import { client, shard } from './helpers/script-shard.js';

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
});
