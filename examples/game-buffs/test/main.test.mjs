import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The cluster-timers example already knows how to start a private redis-server on loopback.
import { provideRedis } from '../../cluster-timers/src/redis-server.mjs';
import { main } from '../src/main.mjs';

describe('main', () => {
  describe('durable buffs', () => {
    function expectSurvivedRestart(durable) {
      expect(durable.pending).toEqual([
        { id: 'player:42:xp-boost', state: 'scheduled' },
        { id: 'player:7:rested', state: 'scheduled' },
        { id: 'player:9:curse', state: 'none' },
      ]);
      expect(durable.fired.map((f) => [f.id, f.server, f.attempts])).toEqual([
        ['player:7:rested', 2, 1],
        ['player:42:xp-boost', 2, 1],
      ]);
      expect(durable.fired[1].payload).toEqual({ player: 42, effect: 'XP x2' });
      for (const f of durable.fired) {
        expect(f.lateMs).toBeGreaterThanOrEqual(0);
        expect(f.lateMs).toBeLessThan(1_000);
      }
    }

    it('fire after a restart on the embedded stand-in when no Redis URL is given', async () => {
      const lines = [];
      const result = await main({ redisUrl: undefined, print: (line) => lines.push(line) });
      expect(result.durable.backend).toBe('ioredis-mock');
      expectSurvivedRestart(result.durable);
      expect(result.summary).toBe(
        '27 deterministic combat events in 161 steps; 2/2 durable buffs fired after a restart (ioredis-mock)',
      );
      expect(lines.join('\n')).toContain('server 2 starts and finds player:42:xp-boost: scheduled');
    });

    describe('on a real redis-server', () => {
      let redis;

      beforeAll(async () => {
        redis = await provideRedis({ redisUrl: '' });
        if ('skipped' in redis) throw new Error(`no redis-server for this test: ${redis.skipped}`);
      });

      afterAll(async () => {
        if (redis && !('skipped' in redis)) await redis.stop();
      });

      it('fire after a restart when REDIS_URL points at it, and leave no keys behind', async () => {
        const redisUrl = redis.url;
        const result = await main({ redisUrl, print: () => undefined });
        expect(result.durable.backend).toBe('redis');
        expectSurvivedRestart(result.durable);
        const client = new Redis(redisUrl);
        try {
          expect(await client.keys('*')).toEqual([]);
        } finally {
          await client.quit();
        }
      });
    });
  });
});
