import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { RedisUnavailableError } from '../../src/failover.js';
import { RedisTimers } from '../../src/redis-timers.js';
import type { RedisClient } from '../../src/types.js';
import { describeRedisTimers } from '../helpers/behaviour.js';
import { freePort } from '../helpers/redis-server.js';

// The same behaviour as on ioredis-mock (test/redis-timers.test.ts), on Debian's redis-server.
describeRedisTimers('a real redis-server', () => new Redis(inject('redisUrl')));

describe('RedisTimers', () => {
  describe('#schedule', () => {
    async function unreachable(failoverBudgetMs: number): Promise<{ timers: RedisTimers; redis: Redis }> {
      const port = await freePort(); // nothing listens there
      const redis = new Redis({
        port,
        host: '127.0.0.1',
        lazyConnect: true,
        enableOfflineQueue: false,
        retryStrategy: () => null,
      });
      redis.on('error', () => undefined);
      return {
        redis,
        timers: new RedisTimers({ redis: redis as RedisClient, namespace: 'unreachable', failoverBudgetMs }),
      };
    }

    it('rejects with the Redis error at once when failoverBudgetMs is 0', async () => {
      const { timers, redis } = await unreachable(0);
      await expect(timers.schedule('a', 10)).rejects.toThrow(/enableOfflineQueue|Connection is closed|ECONNREFUSED/);
      await expect(timers.cancel('a')).rejects.toThrow();
      redis.disconnect();
    });

    it('retries within failoverBudgetMs, then rejects saying what happened and that a retry is safe', async () => {
      const { timers, redis } = await unreachable(300);
      const started = performance.now();
      const error = await timers.schedule('a', 10).catch((e: unknown) => e);
      const elapsed = performance.now() - started;
      expect(error).toBeInstanceOf(RedisUnavailableError);
      expect((error as Error).message).toMatch(
        /^@tickwheel\/redis: schedule\("a"\) failed: Redis was unavailable for the whole failoverBudgetMs \(300 ms, \d+ tries; last error: .+\)\. It may or may not have been applied; retrying is safe: schedule is idempotent by id$/,
      );
      expect((error as RedisUnavailableError).attempts).toBeGreaterThan(2);
      expect(elapsed).toBeGreaterThanOrEqual(290);
      expect(elapsed).toBeLessThan(1_500);
      await expect(timers.cancel('a')).rejects.toThrow(
        /cancel\("a"\) failed: .* retrying is safe: cancel is idempotent/,
      );
      redis.disconnect();
    });
  });
});

describe('RedisUnavailableError', () => {
  it('names the connection error (ECONNREFUSED) when every try went unanswered while ioredis reconnected', async () => {
    const port = await freePort(); // nothing listens there
    // ioredis's defaults: commands wait in its offline queue while it reconnects, so no try is refused outright.
    const redis = new Redis({ port, host: '127.0.0.1' });
    redis.on('error', () => undefined);
    const timers = new RedisTimers({ redis: redis as RedisClient, namespace: 'refused', failoverBudgetMs: 600 });
    const error = await timers.schedule('a', 10).catch((e: unknown) => e);
    redis.disconnect();
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect((error as Error).message).toMatch(
      /last error: Redis did not answer within \d+ ms; last connection error: connect ECONNREFUSED 127\.0\.0\.1:\d+\)/,
    );
    expect((error as RedisUnavailableError).connectionError).toMatchObject({ code: 'ECONNREFUSED', port });
  });
});
