/**
 * Messages as the packages publish them, for the otel tests: every channel the instrumentation
 * subscribes to, a publisher, and a fetch timeout message with overridable fields.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import {
  CORE_CALLBACK_ERROR_CHANNEL,
  CORE_CAPTURE_CONTEXT_CHANNEL,
  CORE_TIMER_SET_EXPIRE_CHANNEL,
  CORE_WAKE_CHANNEL,
} from '@tickwheel/core';
import { FETCH_RETRY_CHANNEL, FETCH_TIMEOUT_CHANNEL, TimeoutError, type FetchTimeoutMessage } from '@tickwheel/fetch';
import { GRPC_DEADLINE_CHANNEL, GRPC_HANDLER_ABORT_CHANNEL } from '@tickwheel/grpc';
import { HTTP_EVENT_STREAM_END_CHANNEL, HTTP_TIMEOUT_CHANNEL } from '@tickwheel/http';
import { REDIS_DUPLICATE_CHANNEL, REDIS_FIRED_CHANNEL, REDIS_LEASE_LOST_CHANNEL } from '@tickwheel/redis';
import { WS_TERMINATE_CHANNEL } from '@tickwheel/ws';

/** Every channel the instrumentation subscribes to. */
export const CHANNELS = [
  CORE_CAPTURE_CONTEXT_CHANNEL,
  CORE_WAKE_CHANNEL,
  CORE_CALLBACK_ERROR_CHANNEL,
  CORE_TIMER_SET_EXPIRE_CHANNEL,
  FETCH_TIMEOUT_CHANNEL,
  FETCH_RETRY_CHANNEL,
  GRPC_DEADLINE_CHANNEL,
  GRPC_HANDLER_ABORT_CHANNEL,
  HTTP_TIMEOUT_CHANNEL,
  HTTP_EVENT_STREAM_END_CHANNEL,
  WS_TERMINATE_CHANNEL,
  REDIS_FIRED_CHANNEL,
  REDIS_LEASE_LOST_CHANNEL,
  REDIS_DUPLICATE_CHANNEL,
];

/** Publishes `message` on the channel `name`, as the package that owns it would. */
export function publish<T>(name: string, message: T): void {
  diagnosticsChannel.channel(name).publish(message);
}

/** A `tickwheel:fetch:timeout` message: a GET whose headers took longer than 200 ms. */
export function fetchTimeout(overrides: Partial<FetchTimeoutMessage> = {}): FetchTimeoutMessage {
  const error = new TimeoutError(
    'GET http://127.0.0.1:8080/slow: no response headers within 200 ms (headersMs)',
    'headers',
    200,
    'http://127.0.0.1:8080/slow',
    'GET',
  );
  return {
    phase: 'headers',
    method: 'GET',
    origin: 'http://127.0.0.1:8080',
    limitMs: 200,
    elapsedMs: 201,
    attempt: 0,
    error,
    budget: error.budget,
    context: undefined,
    ...overrides,
  };
}
