import { describe, expect, it } from 'vitest';
import { claim, client, schedule, shard } from './helpers/script-shard.js';

// The Lua scripts run by ioredis-mock's Lua (fengari), with the time passed in as the last ARGV
// (`timeSource: 'local'`), so every due time and lease below is exact. The same scripts run on
// real Redis in test/integration (redis-timers.test.ts, cluster.test.ts).

describe('worker-scripts', () => {
  describe('CLAIM', () => {
    it('claims due timers under a lease with a new token and one more attempt, and reports what comes next', async () => {
      const s = await shard();
      await schedule(s, 'a', 100, 0, { payload: '{"x":"a:b"}' });
      await schedule(s, 'b', 300, 0);
      expect(await claim(s, 10, 1_000, 99)).toEqual(['99', '100', '', '1099']);
      expect(await claim(s, 10, 1_000, 200)).toEqual([
        '200',
        '300',
        '1200',
        '1200',
        'a',
        '3',
        '100',
        '1',
        '3',
        'f1000',
        '{"x":"a:b"}',
      ]);
      expect(await client.zscore(s.keys[1], 'a')).toBe('1200');
      expect(await client.zscore(s.keys[0], 'a')).toBeNull();
    });

    it('takes expired leases first, up to the limit', async () => {
      const s = await shard();
      await schedule(s, 'a', 0, 0);
      await claim(s, 10, 100, 0);
      await schedule(s, 'b', 0, 0);
      const reply = await claim(s, 1, 100, 150);
      expect(reply.slice(4, 8)).toEqual(['a', '4', '0', '2']); // a again (lease expired), attempt 2; b waits
      expect(reply[1]).toBe('0');
    });

    it('moves a timer whose lease expired on its last attempt to the failed set, with the reason', async () => {
      const s = await shard();
      await client.tickwheelSchedule(...s.keys, 'a', 'in', '0', '', s.channel, '0', 'replace', '1', '', '', '0');
      await claim(s, 10, 100, 0);
      expect(await claim(s, 10, 100, 500)).toEqual(['500', '', '', '600']);
      expect(await client.zscore(s.keys[4], 'a')).toBe('500');
      expect(await client.hget(s.keys[5], 'a')).toMatch(/^lease expired on attempt 1 of 1/);
    });
  });

  describe('ACK, EXTEND and FAIL (fenced by the claim’s token)', () => {
    it('acks a claimed timer under its token only, and refuses a stale one', async () => {
      const s = await shard();
      await schedule(s, 'a', 0, 0);
      const [, , , , , token] = await claim(s, 10, 100, 0);
      expect(await client.tickwheelAck(...s.keys, 'a', String(Number(token) - 1))).toEqual(['a']);
      expect(await client.tickwheelAck(...s.keys, 'a', token)).toEqual([]);
      expect(await client.hget(s.keys[2], 'a')).toBeNull();
      expect(await client.tickwheelAck(...s.keys, 'a', token)).toEqual(['a']);
    });

    it('extends a lease while it is held, and refuses once the token changed', async () => {
      const s = await shard();
      await schedule(s, 'a', 0, 0);
      const [, , , , , token] = await claim(s, 10, 100, 0);
      expect(await client.tickwheelExtend(...s.keys, 'a', token, '500', '50')).toBe('550');
      expect(await client.zscore(s.keys[1], 'a')).toBe('550');
      await claim(s, 10, 100, 600); // the lease passed: claimed again, new token
      expect(await client.tickwheelExtend(...s.keys, 'a', token, '500', '650')).toBe('');
    });

    it('puts a failed attempt back after the delay, and fails it for good on its last attempt', async () => {
      const s = await shard();
      await client.tickwheelSchedule(...s.keys, 'a', 'in', '0', '', s.channel, '0', 'replace', '2', 'f1000', '', '0');
      let [, , , , , token] = await claim(s, 10, 100, 0);
      expect(await client.tickwheelFail(...s.keys, 'a', token, '1000', 'boom', s.channel, '0', '10')).toBe('1010');
      expect(await client.hget(s.keys[5], 'a')).toBe('boom');
      expect(await client.tickwheelFail(...s.keys, 'a', token, '1000', 'again', s.channel, '0', '20')).toBe('');
      [, , , , , token] = await claim(s, 10, 100, 1010);
      expect(await client.tickwheelFail(...s.keys, 'a', token, '1000', 'boom 2', s.channel, '0', '1020')).toBe(
        'failed',
      );
      expect(await client.zscore(s.keys[4], 'a')).toBe('1020');
    });
  });
});
