import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { provideRedis } from '../src/redis-server.mjs';

describe('redis-server', () => {
  describe('provideRedis', () => {
    it('uses REDIS_URL as given', async () => {
      const redis = await provideRedis({ redisUrl: 'redis://127.0.0.1:6390' });
      expect(redis.url).toBe('redis://127.0.0.1:6390');
      expect(redis.source).toBe('REDIS_URL');
    });

    it('starts a private redis-server on loopback and stops it', async () => {
      const redis = await provideRedis({ redisUrl: undefined });
      try {
        expect(redis.url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
        expect(redis.source).toBe(`private redis-server on ${redis.url.slice('redis://'.length)}`);
        const client = new Redis(redis.url);
        try {
          expect(await client.ping()).toBe('PONG');
        } finally {
          await client.quit();
        }
      } finally {
        await redis.stop();
      }
    });
  });
});
