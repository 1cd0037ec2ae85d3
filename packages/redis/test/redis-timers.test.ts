import RedisMock from 'ioredis-mock';
import { describe, expect, it } from 'vitest';
import { ManualClock, TimingWheel } from '@tickwheel/core';
import { RedisTimers } from '../src/redis-timers.js';
import type { RedisClient } from '../src/types.js';
import { describeRedisTimers } from './helpers/behaviour.js';
import { uniqueNamespace, until } from './helpers/wait.js';

const mock = (): RedisClient => new RedisMock() as unknown as RedisClient;

describeRedisTimers('ioredis-mock', mock);

describe('RedisTimers', () => {
  describe('constructor', () => {
    const redis = mock();
    it.each([
      [{ redis: undefined }, TypeError, /redis must be an ioredis client or Cluster, got undefined/],
      [{ namespace: '' }, TypeError, /namespace must be a non-empty string without '\{' or '\}', got ""/],
      [{ namespace: 'a{b}' }, TypeError, /namespace must be/],
      [{ leaseMs: 0 }, RangeError, /leaseMs must be a finite number >= 1, got 0/],
      [{ leaseMs: Number.NaN }, RangeError, /leaseMs/],
      [{ shards: 0 }, RangeError, /shards must be an integer from 1 to 1024, got 0/],
      [{ shards: 1.5 }, RangeError, /shards/],
      [{ pollIntervalMs: -1 }, RangeError, /pollIntervalMs/],
      [{ batchSize: 1001 }, RangeError, /batchSize must be an integer from 1 to 1000, got 1001/],
      [{ concurrency: '4' }, TypeError, /concurrency/],
      [{ keyPrefix: '' }, TypeError, /keyPrefix/],
    ])('rejects %o', (bad, type, message) => {
      expect(() => new RedisTimers({ redis, namespace: 'ns', ...bad } as never)).toThrow(type);
      expect(() => new RedisTimers({ redis, namespace: 'ns', ...bad } as never)).toThrow(message);
    });
  });

  describe('#start', () => {
    it('costs no round trips while idle beyond the safety poll', async () => {
      const clock = new ManualClock(0);
      const wheel = new TimingWheel({ clock });
      const redis = mock() as RedisClient & { tickwheelClaim?: unknown };
      const t = new RedisTimers({ redis, namespace: uniqueNamespace(), wheel, pollIntervalMs: 5_000 });
      let claims = 0;
      const claim = (redis as unknown as { tickwheelClaim: (...a: string[]) => Promise<string[]> }).tickwheelClaim.bind(redis);
      (redis as unknown as { tickwheelClaim: unknown }).tickwheelClaim = (...args: string[]) => {
        claims++;
        return claim(...args);
      };
      await t.start(() => undefined);
      await until(() => claims === 1, 'the first claim');
      await new Promise((resolve) => setTimeout(resolve, 20));
      clock.advance(4_999);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(claims).toBe(1);
      clock.advance(1);
      expect(claims).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 20));
      clock.advance(5_000);
      expect(claims).toBe(3);
      await t.stop();
      wheel.close();
      redis.disconnect();
    });
  });
});
