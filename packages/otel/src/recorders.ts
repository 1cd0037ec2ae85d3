/**
 * The recorders: one per channel, turning its messages into metric records and span events.
 */
import { context, type Attributes, type Context } from '@opentelemetry/api';
import {
  CORE_CAPTURE_CONTEXT_CHANNEL,
  CORE_CALLBACK_ERROR_CHANNEL,
  CORE_TIMER_SET_EXPIRE_CHANNEL,
  CORE_WAKE_CHANNEL,
  type CallbackErrorMessage,
  type ContextCarrier,
  type TimerSetExpireMessage,
  type WheelWakeMessage,
} from '@tickwheel/core';
// Type-only: the adapters are not loaded by this package, their channels are found by name. The
// names below are typed as the adapters' own constants, so a renamed channel fails the build.
import type {
  FETCH_RETRY_CHANNEL,
  FETCH_TIMEOUT_CHANNEL,
  FetchRetryMessage,
  FetchTimeoutMessage,
} from '@tickwheel/fetch';
import type {
  GRPC_DEADLINE_CHANNEL,
  GRPC_HANDLER_ABORT_CHANNEL,
  GrpcDeadlineMessage,
  GrpcHandlerAbortMessage,
} from '@tickwheel/grpc';
import type {
  HTTP_EVENT_STREAM_END_CHANNEL,
  HTTP_TIMEOUT_CHANNEL,
  HttpEventStreamEndMessage,
  HttpTimeoutMessage,
} from '@tickwheel/http';
import type {
  REDIS_DUPLICATE_CHANNEL,
  REDIS_FIRED_CHANNEL,
  REDIS_LEASE_LOST_CHANNEL,
  REDIS_NODE_REAPED_CHANNEL,
  REDIS_PRESENCE_CHANNEL,
  RedisDuplicateMessage,
  RedisFiredMessage,
  RedisLeaseLostMessage,
  RedisNodeReapedMessage,
  RedisPresenceMessage,
} from '@tickwheel/redis';
import type { WS_TERMINATE_CHANNEL, WsTerminateMessage } from '@tickwheel/ws';
import { errorType, httpAttributes, rpcAttributes } from './attributes.js';
import type { Instruments } from './instruments.js';
import { addTimeoutEvent, budgetAttributes } from './span-events.js';

const FETCH_TIMEOUT: typeof FETCH_TIMEOUT_CHANNEL = 'tickwheel:fetch:timeout';
const FETCH_RETRY: typeof FETCH_RETRY_CHANNEL = 'tickwheel:fetch:retry';
const GRPC_DEADLINE: typeof GRPC_DEADLINE_CHANNEL = 'tickwheel:grpc:deadline';
const GRPC_HANDLER_ABORT: typeof GRPC_HANDLER_ABORT_CHANNEL = 'tickwheel:grpc:handler-abort';
const HTTP_TIMEOUT: typeof HTTP_TIMEOUT_CHANNEL = 'tickwheel:http:timeout';
const HTTP_EVENT_STREAM_END: typeof HTTP_EVENT_STREAM_END_CHANNEL = 'tickwheel:http:event-stream-end';
const WS_TERMINATE: typeof WS_TERMINATE_CHANNEL = 'tickwheel:ws:terminate';
const REDIS_FIRED: typeof REDIS_FIRED_CHANNEL = 'tickwheel:redis:fired';
const REDIS_LEASE_LOST: typeof REDIS_LEASE_LOST_CHANNEL = 'tickwheel:redis:lease-lost';
const REDIS_DUPLICATE: typeof REDIS_DUPLICATE_CHANNEL = 'tickwheel:redis:duplicate';
const REDIS_PRESENCE: typeof REDIS_PRESENCE_CHANNEL = 'tickwheel:redis:presence';
const REDIS_NODE_REAPED: typeof REDIS_NODE_REAPED_CHANNEL = 'tickwheel:redis:node-reaped';

/** Handles one channel's message. */
export type Recorder = (message: never) => void;

/**
 * What each channel's message records: channel name -> recorder. Times arrive in ms and are
 * recorded in seconds.
 */
export function createRecorders(m: Instruments, spanEvents: boolean): ReadonlyMap<string, Recorder> {
  const recorders: Array<[string, Recorder]> = [
    [
      CORE_WAKE_CHANNEL,
      (message: WheelWakeMessage) => {
        m.wheelLateness.record(message.lateMs / 1000);
        if (message.fired === 0) return;
        m.wheelFired.add(message.fired);
        m.wheelCallbackDuration.record(message.callbackMs / 1000);
      },
    ],
    [
      CORE_CALLBACK_ERROR_CHANNEL,
      (message: CallbackErrorMessage) => m.wheelCallbackErrors.add(1, { 'error.type': errorType(message.error) }),
    ],
    [
      CORE_TIMER_SET_EXPIRE_CHANNEL,
      (message: TimerSetExpireMessage) =>
        m.timerSetExpirations.add(1, { 'tickwheel.stacks_left': message.stacksLeft > 0 }),
    ],
    [
      FETCH_TIMEOUT,
      (message: FetchTimeoutMessage) => {
        const attributes: Attributes = {
          'tickwheel.package': 'fetch',
          'tickwheel.phase': message.phase,
          ...httpAttributes(message.method, message.origin),
        };
        recordTimeout(m, attributes, message.elapsedMs, message.context);
        if (spanEvents)
          addTimeoutEvent(message.context, attributes, message.limitMs, message.elapsedMs, {
            'tickwheel.attempt': message.attempt,
            ...budgetAttributes(message.budget),
          });
      },
    ],
    [
      FETCH_RETRY,
      (message: FetchRetryMessage) => m.fetchRetries.add(1, httpAttributes(message.method, message.origin)),
    ],
    [
      GRPC_DEADLINE,
      (message: GrpcDeadlineMessage) => {
        const attributes: Attributes = {
          'tickwheel.package': 'grpc',
          'tickwheel.phase': message.limit,
          'tickwheel.side': message.side,
          'tickwheel.propagated': message.propagated,
          ...rpcAttributes(message.path),
        };
        recordTimeout(m, attributes, message.elapsedMs, message.side === 'client' ? message.context : undefined);
        // A server call's captured context is the one its connection arrived in (the server's
        // listen, say), not a span of the call: grpc-js starts the handler's span later. So only
        // the client side, whose context is the caller's, adds an event (span-events.ts).
        if (spanEvents && message.side === 'client')
          addTimeoutEvent(
            message.context,
            attributes,
            message.budgetMs,
            message.elapsedMs,
            budgetAttributes(message.budget),
          );
      },
    ],
    [
      GRPC_HANDLER_ABORT,
      (message: GrpcHandlerAbortMessage) =>
        m.grpcHandlerAborts.add(1, { 'tickwheel.reason': message.reason, ...rpcAttributes(message.path) }),
    ],
    [
      HTTP_TIMEOUT,
      (message: HttpTimeoutMessage) => {
        const attributes: Attributes = {
          'tickwheel.package': 'http',
          'tickwheel.phase': message.kind,
          'tickwheel.side': 'server',
          'tickwheel.outcome': message.outcome,
          'tickwheel.propagated': message.propagated,
        };
        // The message carries the limit, not a start time: each limit fires its own length after
        // what it times began (the request's arrival, the quiet stretch, close()), never early
        // (body-idle up to a quarter of its length late). So the limit is the elapsed time, as a
        // heartbeat's quiet time is for ws.
        recordTimeout(m, attributes, message.limitMs);
        // No span event: when a request arrives, the active context is the one its server or
        // connection was set up in (unless an HTTP instrumentation wraps the server's emit), so
        // as for a gRPC server deadline an event there could land on a span that is not the
        // request's.
      },
    ],
    [
      HTTP_EVENT_STREAM_END,
      (message: HttpEventStreamEndMessage) =>
        m.httpEventStreamEnds.add(1, { 'tickwheel.package': 'http', 'tickwheel.reason': message.reason }),
    ],
    [
      WS_TERMINATE,
      (message: WsTerminateMessage) =>
        recordTimeout(
          m,
          { 'tickwheel.package': 'ws', 'tickwheel.phase': message.reason, 'tickwheel.side': message.side },
          message.quietMs,
        ),
    ],
    [
      REDIS_FIRED,
      (message: RedisFiredMessage) =>
        m.redisLateness.record(message.lateMs / 1000, { 'tickwheel.redis.namespace': message.namespace }),
    ],
    [
      REDIS_LEASE_LOST,
      (message: RedisLeaseLostMessage) =>
        m.redisLeasesLost.add(1, {
          'tickwheel.redis.namespace': message.namespace,
          'tickwheel.redis.stage': message.stage,
        }),
    ],
    [
      REDIS_DUPLICATE,
      (message: RedisDuplicateMessage) => m.redisDuplicates.add(1, { 'tickwheel.redis.namespace': message.namespace }),
    ],
    [
      REDIS_PRESENCE,
      // No member id: it would make one time series per user.
      (message: RedisPresenceMessage) =>
        m.presenceEvents.add(1, {
          'tickwheel.redis.namespace': message.namespace,
          'tickwheel.presence.event': message.event,
        }),
    ],
    [
      REDIS_NODE_REAPED,
      (message: RedisNodeReapedMessage) =>
        m.presenceNodesReaped.add(1, { 'tickwheel.redis.namespace': message.namespace }),
    ],
  ];
  // Span events need the caller's context when a request starts (core's channels.ts, "Context").
  if (spanEvents) {
    recorders.push([
      CORE_CAPTURE_CONTEXT_CHANNEL,
      (carrier: ContextCarrier) => {
        carrier.context = context.active();
      },
    ]);
  }
  return new Map(recorders);
}

/**
 * Records a timeout under the request's context when it has one, so that an SDK that samples
 * exemplars links the count to the request's trace rather than to whatever armed the wheel.
 */
function recordTimeout(m: Instruments, attributes: Attributes, elapsedMs: number, requestContext?: unknown): void {
  const linked = requestContext as Context | undefined;
  m.timeouts.add(1, attributes, linked);
  m.timeoutElapsed.record(elapsedMs / 1000, attributes, linked);
}
