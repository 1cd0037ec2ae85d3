import { describe, expect, it } from 'vitest';
import {
  callsOf,
  claim,
  client,
  dueCount,
  flush,
  newCall,
  nextAt,
  raw,
  record,
  schedule,
  shard,
  type Shard,
} from './helpers/script-shard.js';

// The Lua scripts run by ioredis-mock's Lua (fengari), with the time passed in as the last ARGV
// (`timeSource: 'local'`), so every due time and lease below is exact. The same scripts run on
// real Redis in test/integration (redis-timers.test.ts, cluster.test.ts).

describe('timer-scripts', () => {
  describe('SCHEDULE', () => {
    it('files a timer due at now + ms with a fresh token, and wakes the workers when it is the earliest', async () => {
      const s = await shard();
      expect(await schedule(s, 'a', 500, 10_000)).toEqual(['10500', '1', '1']);
      expect(await schedule(s, 'b', 900, 10_000)).toEqual(['10900', '2', '1']);
      expect(await schedule(s, 'c', 100, 10_000)).toEqual(['10100', '3', '1']);
      await flush();
      expect(s.wakes).toEqual(['0:10500', '0:10100']); // b was not the earliest: no message
      expect(await nextAt(s.keys, 'a')).toBe('10500');
      expect(await record(s.keys, 'a')).toBe('1:10500:0:3:f1000:{"n":1}');
    });

    it('takes an absolute due time with mode "at"', async () => {
      const s = await shard();
      const reply = await client.tickwheelSchedule(
        ...s.keys,
        'a',
        'at',
        '123456',
        '',
        s.channel,
        '0',
        'replace',
        '0',
        '',
        '',
        '',
        '1',
      );
      expect(reply).toEqual(['123456', '1', '1']);
    });

    it('replaces an existing timer (new token, due time and payload), or keeps it with ifExists keep', async () => {
      const s = await shard();
      await schedule(s, 'a', 500, 0);
      expect(await schedule(s, 'a', 50, 0, { ifExists: 'keep', payload: '"other"' })).toEqual(['500', '1', '0']);
      expect(await schedule(s, 'a', 50, 0, { payload: '"new"' })).toEqual(['50', '2', '1']);
      expect(await record(s.keys, 'a')).toBe('2:50:0:3:f1000:"new"');
      expect(await dueCount(s.keys)).toBe(1);
    });
  });

  describe('SCHEDULE with maxWait', () => {
    it('caps a replaced timer at the first schedule of its window plus maxWait, and says so in the reply', async () => {
      const s = await shard();
      expect(await schedule(s, 'd', 500, 1_000, { maxWaitMs: 2_000 })).toEqual(['1500', '1', '1']);
      expect(await record(s.keys, 'd')).toBe('1:1500:0:3:f1000w1000:{"n":1}');
      // Each replace pushes it back by 500 ms until the window (opened at 1 000) ends at 3 000.
      expect((await schedule(s, 'd', 500, 1_400, { maxWaitMs: 2_000 }))[0]).toBe('1900');
      expect((await schedule(s, 'd', 500, 2_300, { maxWaitMs: 2_000 }))[0]).toBe('2800');
      expect((await schedule(s, 'd', 500, 2_700, { maxWaitMs: 2_000 }))[0]).toBe('3000');
      expect((await schedule(s, 'd', 500, 2_900, { maxWaitMs: 2_000 }))[0]).toBe('3000');
      expect(await nextAt(s.keys, 'd')).toBe('3000');
      expect(await record(s.keys, 'd')).toBe('5:3000:0:3:f1000w1000:{"n":1}');
    });

    it('takes the earlier of the two for an absolute due time, and the window of the replaced record even when maxWait changes', async () => {
      const s = await shard();
      await schedule(s, 'd', 100, 0, { maxWaitMs: 1_000 });
      const at = await client.tickwheelSchedule(
        ...s.keys,
        'd',
        'at',
        '5000',
        '',
        s.channel,
        '0',
        'replace',
        '3',
        '',
        '400',
        '',
        '300',
      );
      expect(at[0]).toBe('400'); // window opened at 0, cap 0 + 400
    });

    it('opens a new window once the timer was claimed (it fired), and keeps none without maxWait', async () => {
      const s = await shard();
      await schedule(s, 'd', 100, 0, { maxWaitMs: 1_000 });
      await claim(s, 10, 5_000, 100);
      expect(await record(s.keys, 'd')).toMatch(/^\d+:100:1:3:f1000:/); // the window is gone
      expect((await schedule(s, 'd', 900, 800, { maxWaitMs: 1_000 }))[0]).toBe('1700');
      expect((await schedule(s, 'd', 900, 1_500, { maxWaitMs: 1_000 }))[0]).toBe('1800'); // window from 800
      expect((await schedule(s, 'd', 900, 1_600))[0]).toBe('2500'); // no cap asked: none applied
      expect(await record(s.keys, 'd')).toMatch(/:0:3:f1000:\{/);
    });

    it('leaves a kept timer and its window untouched', async () => {
      const s = await shard();
      await schedule(s, 'd', 500, 0, { maxWaitMs: 1_000 });
      expect(await schedule(s, 'd', 50, 100, { ifExists: 'keep' })).toEqual(['500', '1', '0']);
      expect(await record(s.keys, 'd')).toBe('1:500:0:3:f1000w0:{"n":1}');
    });
  });

  describe('GET, RESCHEDULE and CANCEL', () => {
    it('reads a timer’s record and where it is; reschedules it with attempts reset; cancels it', async () => {
      const s = await shard();
      expect(await client.tickwheelGet(...s.keys, 'a')).toBe('');
      await schedule(s, 'a', 500, 0);
      // The record keeps its due time in base 36, its payload beside it.
      expect(await client.tickwheelGet(...s.keys, 'a')).toEqual([
        `1:${(500).toString(36)}:0:3:f1000`,
        '{"n":1}',
        '500',
        '',
        '',
        '',
      ]);
      expect(await client.tickwheelReschedule(...s.keys, 'a', 'in', '2000', s.channel, '0', '', '100')).toBe('2100');
      expect(await client.tickwheelReschedule(...s.keys, 'none', 'in', '2000', s.channel, '0', '', '100')).toBe('');
      expect(await record(s.keys, 'a')).toBe('2:2100:0:3:f1000:{"n":1}');
      expect(await nextAt(s.keys, 'a')).toBe('2100');
      expect(await client.tickwheelCancel(...s.keys, 'a', '', '0')).toBe(1);
      expect(await client.tickwheelCancel(...s.keys, 'a', '', '0')).toBe(0);
      expect(await client.tickwheelGet(...s.keys, 'a')).toBe('');
    });
  });

  describe('LIST_FAILED, RETRY_FAILED and PURGE_FAILED', () => {
    async function failed(s: Shard, ids: string[]): Promise<void> {
      for (const [i, id] of ids.entries()) {
        await client.tickwheelSchedule(
          ...s.keys,
          id,
          'in',
          '0',
          `"${id}"`,
          s.channel,
          '0',
          'replace',
          '1',
          '',
          '',
          '',
          '0',
        );
        const [, , , , , token] = await claim(s, 1, 100, i);
        await client.tickwheelFail(...s.keys, id, token, '0', `reason ${id}`, s.channel, '0', String(100 + i));
      }
    }

    it('lists failed timers oldest first with their record and reason, a page at a time', async () => {
      const s = await shard();
      await failed(s, ['a', 'b', 'c']);
      const page = await client.tickwheelListFailed(...s.keys, '1', '2');
      expect(page).toEqual([
        'b',
        '101',
        expect.stringMatching(/^\d+:0:1:1:$/),
        '"b"',
        'reason b',
        'c',
        '102',
        expect.any(String),
        '"c"',
        'reason c',
      ]);
    });

    it('answers a second try of a retry or purge from the first, so it cannot act on a timer that failed since', async () => {
      const s = await shard();
      await failed(s, ['a', 'b']);
      const calls = callsOf(s.keys);
      const retry = newCall();
      const retryA = (now: string) =>
        raw.tickwheelRetryFailed(...s.keys, calls, 'a', '10', s.channel, '0', ...retry, '', now);
      expect(await retryA('5000')).toBe(1);
      // It fails again; then the first call's retry arrives a second time.
      const [, , , , , token] = await claim(s, 1, 100, 5_000);
      await client.tickwheelFail(...s.keys, 'a', token, '0', 'again', s.channel, '0', '5100');
      expect(await retryA('5200')).toBe(1);
      expect(await client.zscore(s.keys[4], 'a')).toBe('5100');
      // The same for a purge: 'b' is purged once, then failed anew under the same id.
      const purge = newCall();
      const purgeB = () => raw.tickwheelPurgeFailed(...s.keys, calls, 'b', '10', ...purge, '', '6000');
      expect(await purgeB()).toBe(1);
      await failed(s, ['b']);
      expect(await purgeB()).toBe(1);
      expect(await client.zscore(s.keys[4], 'b')).not.toBeNull();
    });

    it('refuses a retry or purge try that arrives after its deadline, changing nothing', async () => {
      const s = await shard();
      await failed(s, ['a']);
      const calls = callsOf(s.keys);
      const late = /TICKWHEEL_LATE/;
      await expect(
        raw.tickwheelRetryFailed(...s.keys, calls, 'a', '10', s.channel, '0', ...newCall(), '4000', '5000'),
      ).rejects.toThrow(late);
      await expect(raw.tickwheelPurgeFailed(...s.keys, calls, 'a', '10', ...newCall(), '4000', '5000')).rejects.toThrow(
        late,
      );
      expect(await client.zscore(s.keys[4], 'a')).not.toBeNull();
    });

    it('retries one or all failed timers, due now with zero attempts, and purges them', async () => {
      const s = await shard();
      await failed(s, ['a', 'b', 'c']);
      expect(await client.tickwheelRetryFailed(...s.keys, 'a', '10', s.channel, '0', '5000')).toBe(1);
      expect(await nextAt(s.keys, 'a')).toBe('5000');
      expect(await record(s.keys, 'a')).toMatch(/^\d+:0:0:1::"a"$/);
      expect(await client.hget(s.keys[5], 'a')).toBeNull();
      expect(await client.tickwheelRetryFailed(...s.keys, 'a', '10', s.channel, '0', '5000')).toBe(0);
      expect(await client.tickwheelPurgeFailed(...s.keys, 'b', '10')).toBe(1);
      expect(await client.tickwheelPurgeFailed(...s.keys, '', '10')).toBe(1);
      expect(await client.zcard(s.keys[4])).toBe(0);
      expect(await record(s.keys, 'c')).toBeNull();
      expect(await record(s.keys, 'a')).not.toBeNull();
    });
  });
});
