// The public API of @tickwheel/redis: named exports only.
export { RedisTimers } from './redis-timers.js';
export { RedisPresence, PresenceNotRunningError } from './redis-presence.js';
export { RedisUnavailableError } from './failover.js';
export { DEFAULTS, PRESENCE_DEFAULTS } from './options.js';

export type {
  BackoffOptions,
  DueSpec,
  FailedTimer,
  FiredTimer,
  IfExists,
  PresenceConnection,
  PresenceEvent,
  RedisPresenceOptions,
  StaleStage,
  RedisClient,
  RedisTimersOptions,
  ScheduleOptions,
  TimerHandler,
  TimerInfo,
} from './types.js';
export {
  REDIS_FIRED_CHANNEL,
  REDIS_LEASE_LOST_CHANNEL,
  REDIS_DUPLICATE_CHANNEL,
  REDIS_PRESENCE_CHANNEL,
  REDIS_NODE_REAPED_CHANNEL,
} from './channels.js';
export type {
  RedisFiredMessage,
  RedisLeaseLostMessage,
  RedisDuplicateMessage,
  RedisPresenceMessage,
  RedisNodeReapedMessage,
} from './channels.js';
