import { describe, expect, it } from 'vitest';
import { LOAD } from '../src/buckets.js';
import { claim, client, dueCount, nextAt, record, schedule, shard, type Shard } from './helpers/script-shard.js';

// The bucketed layout (buckets.ts) through the scripts that use it, on ioredis-mock's Lua
// (fengari) with the time passed in; test/integration/buckets.test.ts checks the encodings and
// the migration on a real redis-server.

const state = async (s: Shard) => client.hgetall(s.keys[8]);

/** Writes a timer the way the previous layout did: one record hash and one due ZSET per shard. */
async function writeOld(s: Shard, id: string, record: string, due?: number): Promise<void> {
  await client.hset(s.keys[2], id, record);
  if (due !== undefined) await client.zadd(s.keys[0], String(due), id);
}

describe('buckets', () => {
  describe('linear hashing', () => {
    it('splits one bucket at a time as timers come, and every timer stays readable and claimable', async () => {
      const s = await shard();
      const n = LOAD * 9 + 5;
      for (let i = 0; i < n; i++) await schedule(s, `t${i}`, 1_000 + i, 0);
      // 9 * LOAD + 5 timers need 10 buckets: level 3 (8 buckets) with the split pointer at 2.
      expect(await state(s)).toEqual({ l: '3', s: '2', c: String(n) });
      expect(await client.zcard(s.keys[7])).toBe(10);
      expect(await dueCount(s.keys)).toBe(n);
      for (const i of [0, 17, 150, n - 1]) expect(await nextAt(s.keys, `t${i}`)).toBe(String(1_000 + i));
      const reply = await claim(s, 1_000, 100, 5_000);
      const ids = reply.slice(4).filter((_, k) => k % 7 === 0);
      expect(new Set(ids).size).toBe(n);
      expect(await client.zcard(s.keys[7])).toBe(0);
    });

    it('counts timers out when they are acked, cancelled or purged, and replacing one adds none', async () => {
      const s = await shard();
      await schedule(s, 'a', 0, 0);
      await schedule(s, 'a', 10, 0);
      await schedule(s, 'b', 0, 0);
      await schedule(s, 'c', 1_000, 0);
      expect((await state(s)).c).toBe('3');
      const reply = await claim(s, 10, 100, 50);
      const tokenOf = (id: string) => reply[reply.indexOf(id) + 1];
      expect(await client.tickwheelAck(...s.keys, 'a', tokenOf('a'))).toEqual([]);
      expect(await client.tickwheelCancel(...s.keys, 'c', '', '60')).toBe(1);
      expect(await client.tickwheelFail(...s.keys, 'b', tokenOf('b'), '0', 'no', s.channel, '0', '60')).toBe('60');
      expect((await state(s)).c).toBe('1');
    });
  });

  describe('the previous layout', () => {
    it('reads its records in place, and moves a due one into a bucket when a claim comes', async () => {
      const s = await shard();
      await client.set(s.keys[3], '41');
      await writeOld(s, 'old', '41:500:0:3:f1000:{"v":1}', 500);
      expect(await record(s.keys, 'old')).toBe('41:500:0:3:f1000:{"v":1}');
      expect(await nextAt(s.keys, 'old')).toBe('500');
      expect(await client.hlen(s.keys[2])).toBe(1); // get moved nothing
      const reply = await claim(s, 10, 1_000, 600);
      expect(reply.slice(4)).toEqual(['old', '42', '500', '1', '3', 'f1000', '{"v":1}']);
      expect([await client.hlen(s.keys[2]), await client.zcard(s.keys[0])]).toEqual([0, 0]);
      expect(await client.tickwheelAck(...s.keys, 'old', '42')).toEqual([]);
      expect(await record(s.keys, 'old')).toBeNull();
      expect((await state(s)).c).toBe('0');
    });

    it('tells the next claim about an old timer due later, and keeps it with ifExists keep', async () => {
      const s = await shard();
      await writeOld(s, 'later', '7:9000:0:3::', 9000);
      expect((await claim(s, 10, 1_000, 600))[1]).toBe('9000');
      expect(await schedule(s, 'later', 50, 0, { ifExists: 'keep' })).toEqual(['9000', '7', '0']);
      expect(await nextAt(s.keys, 'later')).toBe('9000');
    });

    it('acks, extends and fails a timer that an old worker claimed, fenced by its token', async () => {
      const s = await shard();
      await writeOld(s, 'held', '12:100:1:3:f1000:"p"');
      await client.zadd(s.keys[1], '5000', 'held');
      expect(await client.tickwheelExtend(...s.keys, 'held', '11', '1000', '200')).toBe('');
      expect(await client.tickwheelExtend(...s.keys, 'held', '12', '1000', '200')).toBe('1200');
      expect(await client.tickwheelFail(...s.keys, 'held', '12', '100', 'boom', s.channel, '0', '300')).toBe('400');
      expect(await record(s.keys, 'held')).toBe('12:100:1:3:f1000:"p"');
      expect(await nextAt(s.keys, 'held')).toBe('400');
    });

    it('lists, retries and purges an old failed timer', async () => {
      const s = await shard();
      await writeOld(s, 'f', '3:100:3:3::"x"');
      await client.zadd(s.keys[4], '150', 'f');
      await client.hset(s.keys[5], 'f', 'broke');
      expect(await client.tickwheelListFailed(...s.keys, '0', '10')).toEqual([
        'f',
        '150',
        `3:${(100).toString(36)}:3:3:`,
        '"x"',
        'broke',
      ]);
      expect(await client.tickwheelRetryFailed(...s.keys, 'f', '10', s.channel, '0', '700')).toBe(1);
      expect(await nextAt(s.keys, 'f')).toBe('700');
      await writeOld(s, 'g', '4:100:3:3::');
      await client.zadd(s.keys[4], '150', 'g');
      expect(await client.tickwheelPurgeFailed(...s.keys, 'g', '10')).toBe(1);
      expect(await record(s.keys, 'g')).toBeNull();
    });

    it('keeps the record with the higher token when an old process wrote an id the new layout holds', async () => {
      const s = await shard();
      await schedule(s, 'a', 100, 0); // token 1
      await client.set(s.keys[3], '5');
      await writeOld(s, 'a', '5:300:0:3::"older version, written later"', 300);
      expect(await record(s.keys, 'a')).toBe('5:300:0:3::"older version, written later"');
      expect(await schedule(s, 'a', 50, 0, { ifExists: 'keep' })).toEqual(['300', '5', '0']);
      expect(await nextAt(s.keys, 'a')).toBe('300');
      expect(await dueCount(s.keys)).toBe(1);
      await writeOld(s, 'a', '2:900:0:3::"stale"', 900);
      expect(await schedule(s, 'a', 50, 0, { ifExists: 'keep' })).toEqual(['300', '5', '0']);
      expect([await client.hlen(s.keys[2]), await client.zcard(s.keys[0])]).toEqual([0, 0]);
    });
  });
});
