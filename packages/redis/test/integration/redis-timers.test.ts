import { Redis } from 'ioredis';
import { inject } from 'vitest';
import type { RedisClient } from '../../src/types.js';
import { describeRedisTimers } from '../helpers/behaviour.js';

// The same behaviour as on ioredis-mock (test/redis-timers.test.ts), on Debian's redis-server.
describeRedisTimers('a real redis-server', () => new Redis(inject('redisUrl')));
