// The public API of @tickwheel/redis: named exports only.
// Nothing internal: scripts, keys and options stay unexported.
export { RedisTimers } from './redis-timers.js';
export { RedisUnavailableError } from './failover.js';
export type { StaleStage } from './worker.js';
export type {
  BackoffOptions,
  DueSpec,
  FailedTimer,
  FiredTimer,
  IfExists,
  RedisClient,
  RedisTimersOptions,
  ScheduleOptions,
  TimerHandler,
  TimerInfo,
} from './types.js';
