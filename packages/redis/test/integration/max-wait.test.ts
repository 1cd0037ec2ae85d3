/**
 * maxWaitMs on Debian's redis-server: four clients replace one timer every few ms (concurrent
 * schedulers); the cap, decided in the script, holds whatever order their calls land in. The
 * same scenario on a Redis Cluster is in cluster.test.ts.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, inject, it } from 'vitest';
import type { RedisClient } from '../../src/types.js';
import { debounceUnderLoad } from '../helpers/debounce-load.js';

describe('RedisTimers#schedule with maxWaitMs on a real redis-server', () => {
  const clients: Redis[] = [];
  afterEach(() => {
    for (const c of clients.splice(0)) c.disconnect();
  });
  const client = (): RedisClient => {
    const c = new Redis(inject('redisUrl'));
    clients.push(c);
    return c;
  };

  it('fires at most maxWaitMs after the first schedule of each window, under four concurrent schedulers', async () => {
    const { fires, calls } = await debounceUnderLoad(client);
    console.log(`maxWait on redis-server: ${calls} schedule() calls in 1.6 s fired ${fires.length} times`);
  });
});
