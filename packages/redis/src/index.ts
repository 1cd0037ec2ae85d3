export { RedisTimers } from './redis-timers.js';
export type { DueSpec, FiredTimer, RedisClient, RedisTimersOptions, TimerHandler, TimerInfo } from './types.js';
