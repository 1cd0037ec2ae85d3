// The public API of @tickwheel/redis: named exports only.
export { RedisTimers } from './redis-timers.js';
export { RedisUnavailableError } from './failover.js';
export { DEFAULTS } from './options.js';

export type {
  BackoffOptions,
  DueSpec,
  FailedTimer,
  FiredTimer,
  IfExists,
  StaleStage,
  RedisClient,
  RedisTimersOptions,
  ScheduleOptions,
  TimerHandler,
  TimerInfo,
} from './types.js';
export { REDIS_FIRED_CHANNEL, REDIS_LEASE_LOST_CHANNEL, REDIS_DUPLICATE_CHANNEL } from './channels.js';
export type { RedisFiredMessage, RedisLeaseLostMessage, RedisDuplicateMessage } from './channels.js';
