/**
 * Per-test resources of the integration tests that fork workers: Redis clients and private
 * redis-servers, all closed after each test, and every worker process still running SIGKILLed
 * by pid.
 */
import { Redis } from 'ioredis';
import { afterEach } from 'vitest';
import type { RedisServer } from './redis-server.js';
import { killAllWorkers } from './workers.js';

export function useRedisResources(): { client: (url: string) => Redis; servers: RedisServer[] } {
  const clients: Redis[] = [];
  const servers: RedisServer[] = [];
  afterEach(async () => {
    await killAllWorkers();
    for (const c of clients.splice(0)) c.disconnect();
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });
  return {
    client: (url) => {
      const c = new Redis(url);
      c.on('error', () => undefined);
      clients.push(c);
      return c;
    },
    servers,
  };
}
