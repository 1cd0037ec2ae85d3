// The package-exports test of every package's index.ts (issue 15: index.ts is named exports only,
// and nothing internal leaks): the exact runtime exports of each built entry, as `require` sees
// them. Type-only exports are checked by the consumer tests (tests/consumers), which compile
// snippets against each entry's declarations. Run after `npm run build`, as `npm test` does.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);

const EXPORTS: Record<string, string[]> = {
  '@tickwheel/core': [
    'CORE_CALLBACK_ERROR_CHANNEL',
    'CORE_CAPTURE_CONTEXT_CHANNEL',
    'CORE_TIMER_SET_EXPIRE_CHANNEL',
    'CORE_WAKE_CHANNEL',
    'LATE_TIMER_MS',
    'MAX_DELAY_MS',
    'ManualClock',
    'SystemClock',
    'TimerHandle',
    'TimerLoopError',
    'TimerSet',
    'TimingWheel',
    'captureContext',
    'createDeadline',
    'currentDeadline',
    'deadlineExceededReason',
    'describeBudget',
    'freshNow',
    'isTimingWheel',
    'sharedWheel',
    'systemClock',
    'withDeadline',
    'withoutDeadline',
  ],
  '@tickwheel/fetch': [
    'DEFAULTS',
    'FETCH_RETRY_CHANNEL',
    'FETCH_TIMEOUT_CHANNEL',
    'IDEMPOTENT_METHODS',
    'TimeoutError',
    'withTimeouts',
  ],
  '@tickwheel/grpc': [
    'DEFAULTS',
    'GRPC_DEADLINE_CHANNEL',
    'GRPC_HANDLER_ABORT_CHANNEL',
    'deadlineInterceptor',
    'serverDeadlineInterceptor',
  ],
  '@tickwheel/http': [
    'DEFAULTS',
    'EVENT_STREAM_DEFAULTS',
    'EVENT_STREAM_HEADERS',
    'HTTP_EVENT_STREAM_END_CHANNEL',
    'HTTP_TIMEOUT_CHANNEL',
    'eventStream',
    'eventStreamBody',
    'serverTimeouts',
  ],
  '@tickwheel/http/express': ['deadline'],
  '@tickwheel/http/fastify': ['deadlinePlugin'],
  '@tickwheel/http/koa': ['deadline'],
  '@tickwheel/otel': ['DEFAULTS', 'METRICS', 'TIMEOUT_EVENT', 'instrumentTickwheel'],
  '@tickwheel/redis': [
    'DEFAULTS',
    'PRESENCE_DEFAULTS',
    'PresenceNotRunningError',
    'REDIS_DUPLICATE_CHANNEL',
    'REDIS_FIRED_CHANNEL',
    'REDIS_LEASE_LOST_CHANNEL',
    'REDIS_NODE_REAPED_CHANNEL',
    'REDIS_PRESENCE_CHANNEL',
    'RedisPresence',
    'RedisTimers',
    'RedisUnavailableError',
  ],
  '@tickwheel/ws': [
    'DEFAULTS',
    'DEFAULT_DRAIN_TIMEOUT_MS',
    'DEFAULT_PONG_TIMEOUT_MS',
    'HeartbeatController',
    'WS_TERMINATE_CHANNEL',
    'heartbeat',
  ],
  '@tickwheel/ws/browser': ['DeadEvent', 'SilenceWatch', 'WATCH_DEFAULTS', 'watch'],
};

/** What no public entry may export: core's internal option kit, argument checks, adapter-only routes and wake-up machinery. */
const INTERNAL = [
  'optionKit',
  'orDefault',
  'describeValue',
  'requireFunction',
  'requireMs',
  'copyJson',
  'scheduleTask',
  'scheduleTaskAt',
  'ownedDeadline',
  'enableAmbientDeadlines',
  'enterDeadline',
  'NativeDriver',
  'MAX_NATIVE_DELAY_MS',
  'isDrivingClock',
];

describe('public API (every package’s index.ts, ws’s browser/index.ts and http’s framework entries)', () => {
  it.each(Object.entries(EXPORTS))('%s exports exactly its public names', (name, expected) => {
    const entry = require(name) as Record<string, unknown>;
    expect(Object.keys(entry).sort()).toEqual([...expected].sort());
    for (const internal of INTERNAL) expect(entry, internal).not.toHaveProperty(internal);
  });
});
