import { describe, expect, it } from 'vitest';
import { callsOf, claim, client, newCall, nextAt, raw, record, schedule, shard } from './helpers/script-shard.js';

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
      expect(reply.slice(4, 8)).toEqual(['a', '4', '0', '1']); // a again (lease expired: a stall, same attempt); b waits
      expect(reply[1]).toBe('0');
    });

    it('hands out again what a claim whose reply was lost took, same token and attempt, lease renewed', async () => {
      const s = await shard();
      await schedule(s, 'a:1 x', 0, 0, { payload: '"p"' });
      await schedule(s, 'b', 0, 0);
      const lost = await claim(s, 10, 1_000, 10, { worker: 'w1', seq: 7, answered: 0 }); // applied; the worker never saw it
      await schedule(s, 'c', 0, 0);
      const again = await claim(s, 10, 1_000, 500, { worker: 'w1', seq: 8, answered: 0 });
      expect(again.slice(0, 4)).toEqual(['500', '', '1500', '1500']);
      // a and b as the lost reply had them (token, attempt 1), then c, newly claimed.
      expect(again.slice(4, 18)).toEqual(lost.slice(4, 18));
      expect(again[18]).toBe('c');
      expect(await client.zscore(s.keys[1], 'a:1 x')).toBe('1500');
      // Another worker, or a worker that saw its last claim's reply, gets nothing back.
      expect(await claim(s, 10, 1_000, 600, { worker: 'w2', seq: 1, answered: 0 })).toHaveLength(4);
      expect(await claim(s, 10, 1_000, 600, { worker: 'w1', seq: 9, answered: 8 })).toHaveLength(4);
    });

    it('hands out what a lost claim took even when the claim after it never landed', async () => {
      const s = await shard();
      await schedule(s, 'a', 0, 0);
      const lost = await claim(s, 10, 30_000, 10, { worker: 'w1', seq: 1, answered: 0 });
      // seq 2 was refused (CLUSTERDOWN, say): the worker still has seen no reply since seq 0.
      const again = await claim(s, 10, 30_000, 600, { worker: 'w1', seq: 3, answered: 0 });
      expect(again.slice(4, 11)).toEqual(lost.slice(4, 11));
      expect(again[3]).toBe('30600');
    });

    it('answers a claim that arrives a second time (ioredis sent it again) with what it took, and takes nothing new', async () => {
      const s = await shard();
      await schedule(s, 'a', 0, 0);
      const first = await claim(s, 10, 1_000, 10, { worker: 'w1', seq: 4, answered: 3 });
      await schedule(s, 'b', 0, 0);
      const second = await claim(s, 10, 1_000, 20, { worker: 'w1', seq: 4, answered: 3 });
      expect(second.slice(4)).toEqual(first.slice(4));
      expect(second[1]).toBe('0'); // b waits for the next claim
      expect((await claim(s, 10, 1_000, 30, { worker: 'w1', seq: 5, answered: 4 }))[4]).toBe('b');
    });

    it('does not hand back a timer acked, reclaimed or cancelled since the lost claim', async () => {
      const s = await shard();
      for (const id of ['a', 'b', 'c']) await schedule(s, id, 0, 0);
      const lost = await claim(s, 10, 100, 0, { worker: 'w1', seq: 1, answered: 0 });
      await client.tickwheelAck(...s.keys, 'a', lost[5]);
      await client.tickwheelCancel(...s.keys, 'b', '', '0');
      await claim(s, 10, 1_000, 200, { worker: 'w2', seq: 1 }); // c's lease expired: w2 has it now
      expect(await claim(s, 10, 1_000, 300, { worker: 'w1', seq: 2, answered: 0 })).toHaveLength(4);
    });

    it('takes nothing when it lands after a newer claim of the same worker (an abandoned try applied late)', async () => {
      const s = await shard();
      await claim(s, 10, 1_000, 0, { worker: 'w1', seq: 5, answered: 0 });
      await schedule(s, 'a', 0, 0);
      expect(await claim(s, 10, 1_000, 10, { worker: 'w1', seq: 4, answered: 0 })).toHaveLength(4);
      expect(await nextAt(s.keys, 'a')).toBe('0');
      expect((await claim(s, 10, 1_000, 10, { worker: 'w1', seq: 6, answered: 5 }))[4]).toBe('a');
    });

    it('delivers a timer whose lease expired again on the same attempt, and fails it once its stalls exceed maxStalledCount', async () => {
      const s = await shard();
      await client.tickwheelSchedule(...s.keys, 'a', 'in', '0', '', s.channel, '0', 'replace', '1', 'f5', '', '', '0');
      await claim(s, 10, 100, 0);
      const again = await claim(s, 10, 100, 500, { maxStalled: '1' });
      // Attempt 1 of 1 still, its backoff followed by its stall count (FiredTimer.stalls).
      expect(again.slice(4, 10)).toEqual(['a', again[5], '0', '1', '1', 'f5s1']);
      expect(await record(s.keys, 'a')).toMatch(/^\d+:0:1:1:f5s1:$/);
      expect(await claim(s, 10, 100, 1_000, { maxStalled: '1' })).toEqual(['1000', '', '', '1100']);
      expect(await client.zscore(s.keys[4], 'a')).toBe('1000');
      expect(await client.hget(s.keys[5], 'a')).toMatch(
        /^stalled more than maxStalledCount \(1\) times: its lease expired on attempt 1/,
      );
    });

    it('never fails a stalled timer with no maxStalledCount, and a reschedule or retry clears its stalls', async () => {
      const s = await shard();
      await schedule(s, 'a', 0, 0);
      for (let t = 0; t <= 1_000; t += 200) await claim(s, 10, 100, t, { maxStalled: '' });
      expect(await record(s.keys, 'a')).toMatch(/^\d+:0:1:3:f1000s5:/);
      await client.tickwheelReschedule(...s.keys, 'a', 'in', '0', s.channel, '0', '', '1100');
      expect(await record(s.keys, 'a')).toMatch(/^\d+:1100:0:3:f1000:/);
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
      // Gone: acked by another worker, or cancelled (a second try of this same ack answers as the first, see once).
      expect(await client.tickwheelAck(...s.keys, 'a', token)).toEqual(['a']);
    });

    it('refuses an ack once the timer was rescheduled, claimed again or cancelled', async () => {
      const s = await shard();
      for (const id of ['a', 'b', 'c']) await schedule(s, id, 0, 0);
      const reply = await claim(s, 10, 100, 0);
      const token = (id: string) => reply[reply.indexOf(id) + 1];
      await schedule(s, 'a', 0, 10);
      await client.tickwheelCancel(...s.keys, 'b', '', '0');
      await claim(s, 10, 100, 500); // c's lease expired: claimed again
      expect(await client.tickwheelAck(...s.keys, 'a', token('a'), 'b', token('b'), 'c', token('c'))).toEqual([
        'a',
        'b',
        'c',
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

    it('answers a second try of an extend from the first, and refuses one that arrives after its deadline', async () => {
      const s = await shard();
      await schedule(s, 'a', 0, 0);
      const [, , , , , token] = await claim(s, 10, 100, 0);
      const call = newCall();
      const extend = (now: string) =>
        raw.tickwheelExtend(...s.keys, callsOf(s.keys), 'a', token, '500', ...call, '', now);
      expect(await extend('50')).toBe('550');
      // Arriving again later, it does not move the lease on: it answers as the first did.
      expect(await extend('300')).toBe('550');
      expect(await client.zscore(s.keys[1], 'a')).toBe('550');
      await expect(
        raw.tickwheelExtend(...s.keys, callsOf(s.keys), 'a', token, '500', ...newCall(), '250', '300'),
      ).rejects.toThrow(/TICKWHEEL_LATE/);
      expect(await client.zscore(s.keys[1], 'a')).toBe('550');
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
