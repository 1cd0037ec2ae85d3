import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { RedisTimers } from '../../src/redis-timers.js';
import type { RedisClient } from '../../src/types.js';
import { describeRedisTimers } from '../helpers/behaviour.js';
import { freePort } from '../helpers/redis-server.js';

// The same behaviour as on ioredis-mock (test/redis-timers.test.ts), on Debian's redis-server.
describeRedisTimers('a real redis-server', () => new Redis(inject('redisUrl')));

describe('RedisTimers', () => {
  describe('#schedule', () => {
    it('rejects with the Redis error when the server cannot be reached', async () => {
      const port = await freePort(); // nothing listens there
      const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
      redis.on('error', () => undefined);
      const timers = new RedisTimers({ redis: redis as RedisClient, namespace: 'unreachable' });
      await expect(timers.schedule('a', 10)).rejects.toThrow(/enableOfflineQueue|Connection is closed|ECONNREFUSED/);
      await expect(timers.cancel('a')).rejects.toThrow();
      redis.disconnect();
    });
  });
});
