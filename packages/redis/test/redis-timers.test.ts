import RedisMock from 'ioredis-mock';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import { RedisTimers } from '../src/redis-timers.js';
import type { FiredTimer, RedisClient, RedisTimersOptions } from '../src/types.js';
import { describeRedisTimers } from './helpers/behaviour.js';
import { settle, uniqueNamespace, until } from './helpers/wait.js';

const mock = (): RedisClient => new RedisMock() as unknown as RedisClient;

// ioredis-mock's TIME is wrong (seconds rounded, microseconds from an unrelated counter): its
// limit, documented in the README; in-process fakes take this process's clock.
describeRedisTimers('ioredis-mock', mock, { timeSource: 'local' });

describe('RedisTimers', () => {
  describe('constructor', () => {
    const redis = mock();
    it.each([
      [{ redis: undefined }, TypeError, /redis must be an ioredis client or Cluster, got undefined/],
      [{ namespace: '' }, TypeError, /namespace must be a non-empty string without '\{' or '\}', got ""/],
      [{ namespace: 'a{b}' }, TypeError, /namespace must be/],
      [{ leaseMs: 0 }, RangeError, /^@tickwheel\/redis: leaseMs must be a finite number of ms >= 1, got 0$/],
      [{ leaseMs: Number.NaN }, RangeError, /leaseMs/],
      [{ shards: 0 }, RangeError, /shards must be an integer >= 1, got 0/],
      [{ shards: 1.5 }, RangeError, /shards/],
      [{ pollIntervalMs: -1 }, RangeError, /pollIntervalMs/],
      [{ batchSize: 1001 }, RangeError, /batchSize must be at most 1000, got 1001/],
      [{ concurrency: '4' }, TypeError, /concurrency/],
      [{ keyPrefix: '' }, TypeError, /keyPrefix/],
    ])('rejects %o', (bad, type, message) => {
      expect(() => new RedisTimers({ redis, namespace: 'ns', ...bad } as never)).toThrow(type);
      expect(() => new RedisTimers({ redis, namespace: 'ns', ...bad } as never)).toThrow(message);
    });
  });

  describe('#start', () => {
    /** A mock client whose claim calls are counted; the mock's "server" time is the (faked) Date. */
    function countingMock(): { redis: RedisClient; claims: () => number } {
      const redis = mock();
      const target = redis as unknown as { tickwheelClaim?: (...a: string[]) => Promise<string[]> };
      let claims = 0;
      const define = (redis as unknown as { defineCommand: (...a: unknown[]) => void }).defineCommand.bind(redis);
      (redis as unknown as { defineCommand: unknown }).defineCommand = (name: string, definition: unknown) => {
        define(name, definition);
        if (name !== 'tickwheelClaim') return;
        const claim = target.tickwheelClaim!.bind(redis);
        target.tickwheelClaim = (...args: string[]) => {
          claims++;
          return claim(...args);
        };
      };
      return { redis, claims: () => claims };
    }

    /** A RedisTimers on the mock with its worker's wheel on a ManualClock (the mock's "server" time is Date). */
    function onManualClock(options: Partial<RedisTimersOptions> & { redis?: RedisClient } = {}) {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const redis = options.redis ?? mock();
      const t = new RedisTimers({
        timeSource: 'local',
        namespace: uniqueNamespace(),
        wheel,
        pollIntervalMs: 60_000,
        ...options,
        redis,
      });
      return { clock, wheel, redis, t };
    }

    type Claim = (...args: string[]) => Promise<string[]>;

    /** Routes the client's claim command (defined by the RedisTimers constructor) through `wrap`. */
    function wrapClaim(redis: RedisClient, wrap: (claim: Claim, args: string[]) => Promise<string[]>): void {
      const target = redis as unknown as { tickwheelClaim: Claim };
      const claim = target.tickwheelClaim.bind(redis);
      target.tickwheelClaim = (...args: string[]) => wrap(claim, args);
    }

    afterEach(() => {
      vi.useRealTimers();
    });

    it('arms one wheel handle for the next due time and claims on that millisecond, not before', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(1_800_000_000_000);
      const { redis, claims } = countingMock();
      const { clock, wheel, t } = onManualClock({ redis, pollIntervalMs: 60_000 });
      const advance = (ms: number) => {
        vi.setSystemTime(Date.now() + ms);
        clock.advance(ms);
      };
      const dueAt = await t.schedule('a', 1_000, 'p');
      const fired: [number, unknown][] = [];
      await t.start(({ payload }) => {
        fired.push([Date.now(), payload]);
      });
      await until(() => claims() === 1, 'the first claim');
      await settle();
      expect(wheel.size).toBe(1); // one handle, whatever the number of timers
      advance(998);
      await settle();
      expect(claims()).toBe(1);
      advance(1);
      await settle();
      advance(1);
      await settle();
      expect(fired).toEqual([[dueAt, 'p']]);
      // At most one claim a millisecond early (the clock offset is bounded by the round trip), then the due one.
      expect(claims()).toBeLessThanOrEqual(3);
      await t.stop();
      wheel.close();
    });

    it('never starts a handler whose lease passed while the claim reply was on its way (fencing)', async () => {
      const { clock, wheel, redis, t } = onManualClock({ leaseMs: 1_000, pollIntervalMs: 60_000 });
      wrapClaim(redis, async (claim, args) => {
        const reply = await claim(...args);
        // The process stalls (GC, SIGSTOP) after the server replied and before the reply is read.
        if (reply.length > 4) clock.advance(1_001);
        return reply;
      });
      const stale: [string, string][] = [];
      t.on('stale', (timer: FiredTimer, stage: string) => stale.push([timer.id, stage]));
      const ran: string[] = [];
      await t.schedule('late', 0);
      await t.start(({ id }) => {
        ran.push(id);
      });
      await until(() => stale.length === 1, 'the dropped claim');
      expect(stale).toEqual([['late', 'start']]);
      expect(ran).toEqual([]);
      expect(await t.get('late')).toMatchObject({ state: 'claimed', attempts: 1 });
      await t.stop();
      wheel.close();
      redis.disconnect();
    });

    it('takes back a claim whose reply was lost with its next claim: same token and attempt, not after the lease', async () => {
      const { clock, wheel, redis, t } = onManualClock({ leaseMs: 60_000, pollIntervalMs: 60_000 });
      t.on('error', () => undefined);
      const replies: string[][] = [];
      wrapClaim(redis, async (claim, args) => {
        const reply = await claim(...args);
        replies.push(reply);
        // Redis applied the first claim; its reply is lost with the connection.
        if (replies.length === 1) throw new Error('Connection is closed.');
        return reply;
      });
      await t.schedule('a', 0, 'p');
      const fired: FiredTimer[] = [];
      await t.start((timer) => void fired.push(timer));
      for (let ms = 0; ms < 200 && fired.length === 0; ms++) {
        await settle();
        clock.advance(1);
      }
      expect(fired.map((f) => [f.id, f.attempts, f.token])).toEqual([['a', 1, replies[0][5]]]);
      expect(replies[1].slice(4, 6)).toEqual(['a', replies[0][5]]);
      await until(async () => (await t.get('a')) === undefined, 'the ack');
      await t.stop();
      wheel.close();
      redis.disconnect();
    });

    it('retries a failed claim after tens of ms, doubling, instead of a flat second', async () => {
      const { clock, wheel, redis, t } = onManualClock({ pollIntervalMs: 60_000 });
      t.on('error', () => undefined);
      const at: number[] = [];
      wrapClaim(redis, (claim, args) => {
        at.push(clock.now());
        return at.length <= 3 ? Promise.reject(new Error('CLUSTERDOWN The cluster is down')) : claim(...args);
      });
      await t.schedule('a', 0);
      const fired: string[] = [];
      await t.start(({ id }) => void fired.push(id));
      await until(() => at.length === 1, 'the first claim');
      for (let ms = 0; ms < 200 && fired.length === 0; ms++) {
        await settle();
        clock.advance(1);
      }
      expect(fired).toEqual(['a']);
      const gaps = at.slice(1).map((x, i) => x - at[i]);
      // retryDelayMs: 10-20 ms, then 20-40, then 40-80 (jittered), never the old flat 1 000 ms
      expect(gaps[0]).toBeGreaterThanOrEqual(10);
      expect(gaps[0]).toBeLessThanOrEqual(21);
      expect(gaps[1]).toBeGreaterThanOrEqual(20);
      expect(gaps[1]).toBeLessThanOrEqual(41);
      expect(gaps[2]).toBeGreaterThanOrEqual(40);
      expect(gaps[2]).toBeLessThanOrEqual(81);
      await t.stop();
      wheel.close();
      redis.disconnect();
    });

    it('costs no round trips while idle beyond the safety poll', async () => {
      const { clock, wheel, redis, t } = onManualClock({ pollIntervalMs: 5_000 });
      let claims = 0;
      wrapClaim(redis, (claim, args) => {
        claims++;
        return claim(...args);
      });
      await t.start(() => undefined);
      await until(() => claims === 1, 'the first claim');
      await settle();
      clock.advance(4_999);
      await settle();
      expect(claims).toBe(1);
      clock.advance(1);
      expect(claims).toBe(2);
      await settle();
      clock.advance(5_000);
      expect(claims).toBe(3);
      await t.stop();
      wheel.close();
      redis.disconnect();
    });
  });
});

// lodash's debounce maxWait tests (lodash/lodash, test/debounce.spec.js), translated: a call of
// the debounced function is `schedule(id, wait, undefined, { ifExists: 'replace', maxWaitMs })`,
// an invocation is the timer firing. Run on ioredis-mock with the server's clock (the faked Date)
// and the worker's wheel (a ManualClock) moved together, one millisecond at a time. lodash's
// `leading` tests have no counterpart: a Redis timer has no leading edge.
describe('RedisTimers#schedule with maxWaitMs (lodash debounce maxWait)', () => {
  const origin = 1_800_000_000_000;
  const running: Array<{ t: RedisTimers; wheel: TimingWheel; redis: RedisClient }> = [];

  afterEach(async () => {
    for (const { t, wheel, redis } of running.splice(0)) {
      await t.stop();
      wheel.close();
      redis.disconnect();
    }
    vi.useRealTimers();
  });

  /** A started worker on both clocks; `to(ms)` moves them to `ms` after the start, `fired(id)` lists when `id` fired. */
  async function debounced() {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(origin);
    const clock = new ManualClock(0);
    const wheel = new TimingWheel({ clock });
    const redis = mock();
    const t = new RedisTimers({ redis, namespace: uniqueNamespace('debounce'), timeSource: 'local', wheel });
    running.push({ t, wheel, redis });
    const fires: Array<[string, number]> = [];
    // When it fired: the claim's server time, which its lease end carries.
    await t.start(({ id, leaseExpiresAt }) => void fires.push([id, leaseExpiresAt - t.leaseMs - origin]));
    await settle();
    return {
      t,
      call: (id: string, wait: number, maxWaitMs?: number) =>
        t.schedule(id, wait, undefined, maxWaitMs === undefined ? undefined : { ifExists: 'replace', maxWaitMs }),
      async to(ms: number) {
        while (Date.now() - origin < ms) {
          vi.setSystemTime(Date.now() + 1);
          clock.advance(1);
          for (let i = 0; i < 4; i++) await new Promise((resolve) => setImmediate(resolve));
        }
        await settle();
      },
      fired: (id: string) => fires.filter(([x]) => x === id).map(([, at]) => at),
    };
  }

  it('should support a `maxWait` option', async () => {
    const d = await debounced();
    expect(await d.call('d', 32, 64)).toBe(origin + 32);
    await d.call('d', 32, 64);
    expect(d.fired('d')).toEqual([]);
    await d.to(128);
    expect(d.fired('d')).toEqual([32]);
    await d.call('d', 32, 64);
    await d.call('d', 32, 64);
    expect(d.fired('d')).toHaveLength(1);
    await d.to(256);
    expect(d.fired('d')).toEqual([32, 160]);
  });

  it('should support `maxWait` in a tight loop', async () => {
    const d = await debounced();
    // A call every 8 ms (lodash's loop calls as fast as it can; the fake server's Lua is slow).
    for (let ms = 0; ms < 320; ms = Date.now() - origin) {
      await Promise.all([d.call('with', 64, 128), d.call('without', 96)]);
      await d.to(ms + 8);
    }
    // lodash checks [Boolean(withoutCount), Boolean(withCount)] is [false, true]; the cap also
    // says when: each window is 128 ms, the first opened at 0, the next by the first call after a fire.
    expect(d.fired('without')).toEqual([]);
    const withFires = d.fired('with');
    expect(withFires.length).toBeGreaterThanOrEqual(2);
    expect(withFires[0]).toBe(128);
    expect(withFires[1]).toBeGreaterThanOrEqual(256);
    expect(withFires[1]).toBeLessThanOrEqual(256 + 8);
    await d.to(320 + 96);
    expect(d.fired('without')).toHaveLength(1);
  });

  it('should queue a trailing call for subsequent debounced calls after `maxWait`', async () => {
    const d = await debounced();
    await d.call('d', 200, 200);
    await d.to(190);
    expect(await d.call('d', 200, 200)).toBe(origin + 200); // capped: the window opened at 0
    await d.to(200);
    await d.call('d', 200, 200);
    await d.to(210);
    await d.call('d', 200, 200);
    await d.to(500);
    expect(d.fired('d')).toHaveLength(2);
    expect(d.fired('d')[0]).toBe(200);
  });

  it('should cancel `maxDelayed` when `delayed` is invoked', async () => {
    const d = await debounced();
    await d.call('d', 32, 64);
    await d.to(128);
    await d.call('d', 32, 64);
    expect(d.fired('d')).toEqual([32]);
    await d.to(192);
    expect(d.fired('d')).toEqual([32, 160]);
    await d.to(300);
    expect(d.fired('d')).toHaveLength(2); // the first window's cap (64) never fired on its own
  });
});
