import { describe, expect, it } from 'vitest';
import { claim, client, nextAt, record, schedule, shard } from './helpers/script-shard.js';

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
      expect(await nextAt(s.keys, 'a')).toBeNull();
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

    it('hands out again what a claim whose reply was lost took, same token and attempt, lease renewed', async () => {
      const s = await shard();
      await schedule(s, 'a:1 x', 0, 0, { payload: '"p"' });
      await schedule(s, 'b', 0, 0);
      const lost = await claim(s, 10, 1_000, 10, { worker: 'w1', seq: 7 }); // applied; the worker never saw it
      await schedule(s, 'c', 0, 0);
      const again = await claim(s, 10, 1_000, 500, { worker: 'w1', seq: 8, recover: '7' });
      expect(again.slice(0, 4)).toEqual(['500', '', '1500', '1500']);
      // a and b as the lost reply had them (token, attempt 1), then c, newly claimed.
      expect(again.slice(4, 18)).toEqual(lost.slice(4, 18));
      expect(again[18]).toBe('c');
      expect(await client.zscore(s.keys[1], 'a:1 x')).toBe('1500');
      // Another worker, or a recover naming a claim that did not land, gets nothing back.
      expect(await claim(s, 10, 1_000, 600, { worker: 'w2', seq: 1, recover: '8' })).toHaveLength(4);
      expect(await claim(s, 10, 1_000, 600, { worker: 'w1', seq: 9, recover: '5' })).toHaveLength(4);
    });

    it('does not hand back a timer acked, reclaimed or cancelled since the lost claim', async () => {
      const s = await shard();
      for (const id of ['a', 'b', 'c']) await schedule(s, id, 0, 0);
      const lost = await claim(s, 10, 100, 0, { worker: 'w1', seq: 1 });
      await client.tickwheelAck(...s.keys, 'a', lost[5]);
      await client.tickwheelCancel(...s.keys, 'b', '', '0');
      await claim(s, 10, 1_000, 200, { worker: 'w2', seq: 1 }); // c's lease expired: w2 has it now
      expect(await claim(s, 10, 1_000, 300, { worker: 'w1', seq: 2, recover: '1' })).toHaveLength(4);
    });

    it('takes nothing when it lands after a newer claim of the same worker (an abandoned try applied late)', async () => {
      const s = await shard();
      await claim(s, 10, 1_000, 0, { worker: 'w1', seq: 5 });
      await schedule(s, 'a', 0, 0);
      expect(await claim(s, 10, 1_000, 10, { worker: 'w1', seq: 4 })).toHaveLength(4);
      expect(await nextAt(s.keys, 'a')).toBe('0');
      expect((await claim(s, 10, 1_000, 10, { worker: 'w1', seq: 6 }))[4]).toBe('a');
    });

    it('moves a timer whose lease expired on its last attempt to the failed set, with the reason', async () => {
      const s = await shard();
      await client.tickwheelSchedule(...s.keys, 'a', 'in', '0', '', s.channel, '0', 'replace', '1', '', '', '', '0');
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
      expect(await record(s.keys, 'a')).toBeNull();
      // Gone: reported after '' (stale for a first try; a retry's own first try may have acked it).
      expect(await client.tickwheelAck(...s.keys, 'a', token)).toEqual(['', 'a']);
    });

    it('refuses an ack once the timer was rescheduled or claimed again, and lists a cancelled one as gone', async () => {
      const s = await shard();
      for (const id of ['a', 'b', 'c']) await schedule(s, id, 0, 0);
      const reply = await claim(s, 10, 100, 0);
      const token = (id: string) => reply[reply.indexOf(id) + 1];
      await schedule(s, 'a', 0, 10);
      await client.tickwheelCancel(...s.keys, 'b', '', '0');
      await claim(s, 10, 100, 500); // c's lease expired: claimed again
      expect(await client.tickwheelAck(...s.keys, 'a', token('a'), 'b', token('b'), 'c', token('c'))).toEqual([
        'a',
        'c',
        '',
        'b',
      ]);
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
      await client.tickwheelSchedule(
        ...s.keys,
        'a',
        'in',
        '0',
        '',
        s.channel,
        '0',
        'replace',
        '2',
        'f1000',
        '',
        '',
        '0',
      );
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
