export { RedisTimers } from './redis-timers.js';
export type { DueSpec, FiredTimer, RedisClient, RedisTimersOptions, TimerHandler, TimerInfo } from './types.js';
export { REDIS_FIRED_CHANNEL, REDIS_LEASE_LOST_CHANNEL, REDIS_DUPLICATE_CHANNEL } from './channels.js';
export type { RedisFiredMessage, RedisLeaseLostMessage, RedisDuplicateMessage } from './channels.js';
