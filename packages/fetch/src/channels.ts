/**
 * @tickwheel/fetch's diagnostics channels: timeout and retry messages and their publish helpers.
 *
 * The `node:diagnostics_channel` channels of `@tickwheel/fetch`: a request that timed out, and a
 * retry. `@tickwheel/otel` turns them into metrics and span events; anyone may subscribe by name.
 *
 * | channel | message | published when |
 * |---|---|---|
 * | `tickwheel:fetch:timeout` | {@link FetchTimeoutMessage} | a limit fired and aborted an attempt (or its body) |
 * | `tickwheel:fetch:retry` | {@link FetchRetryMessage} | an attempt is retried (timeout, status or network error), before the backoff delay |
 *
 * A message is built only when the channel has subscribers, so with none a request pays one
 * property read per event. Both carry `context`: what a subscriber of
 * `tickwheel:core:capture-context` stored when the `fetch()` call started (the OpenTelemetry
 * bridge: the caller's `Context`, so the timeout lands on the request's own span).
 */
import { guardedPublisher, typedChannel } from '@tickwheel/core/internal';
import type { FetchTimeoutBudget, RequestRef, TimeoutError, TimeoutPhase } from './timeout-error.js';

/** Name of the channel of {@link FetchTimeoutMessage}. */
export const FETCH_TIMEOUT_CHANNEL = 'tickwheel:fetch:timeout';
/** Name of the channel of {@link FetchRetryMessage}. */
export const FETCH_RETRY_CHANNEL = 'tickwheel:fetch:retry';

/** Published on `tickwheel:fetch:timeout` when a limit ends an attempt. */
export interface FetchTimeoutMessage {
  /** Which limit fired. */
  readonly phase: TimeoutPhase;
  /** The request method, upper case. */
  readonly method: string;
  /** The request URL's origin (`'http://127.0.0.1:8080'`), never its path or query. */
  readonly origin: string;
  /** The limit that fired, in ms. */
  readonly limitMs: number;
  /** Time from the start of the attempt to the timeout, in ms (wheel clock). */
  readonly elapsedMs: number;
  /** Which attempt timed out: 0 for the first, 1 for the first retry, ... */
  readonly attempt: number;
  /** The error the attempt rejects (or its body errors) with. */
  readonly error: TimeoutError;
  /** Where the request's time went: the error's {@link TimeoutError.budget}. */
  readonly budget: FetchTimeoutBudget | undefined;
  /** The caller's context, from `tickwheel:core:capture-context` (undefined without a subscriber there). */
  readonly context: unknown;
}

/** Published on `tickwheel:fetch:retry` when an attempt is retried. */
export interface FetchRetryMessage {
  readonly method: string;
  /** The request URL's origin. */
  readonly origin: string;
  /** The retry about to be made, from 1 (as `retry.onRetry` counts). */
  readonly attempt: number;
  /** The backoff delay before it, in ms. */
  readonly delayMs: number;
  /** The TimeoutError or network error that ended the previous attempt; undefined when its status is retried. */
  readonly error: Error | undefined;
  /** The previous attempt's response status when that is what is retried; undefined otherwise. */
  readonly status?: number;
  /** As in {@link FetchTimeoutMessage}. */
  readonly context: unknown;
}

/** @internal */
export const timeoutChannel = typedChannel<FetchTimeoutMessage>(FETCH_TIMEOUT_CHANNEL);
/** @internal */
export const retryChannel = typedChannel<FetchRetryMessage>(FETCH_RETRY_CHANNEL);

/** Publishes a timeout when someone listens. `context`: the request's, from `captureContext`. */
export const publishTimeout = guardedPublisher(
  timeoutChannel,
  (error: TimeoutError, elapsedMs: number, attempt: number, context: unknown): FetchTimeoutMessage => ({
    phase: error.phase,
    method: error.method,
    origin: originOf(error.url),
    limitMs: error.timeoutMs,
    elapsedMs,
    attempt,
    error,
    budget: error.budget,
    context,
  }),
);

/** Publishes a retry when someone listens. */
export const publishRetry = guardedPublisher(
  retryChannel,
  (
    request: RequestRef,
    attempt: number,
    delayMs: number,
    error: Error | undefined,
    status: number | undefined,
    context: unknown,
  ): FetchRetryMessage => ({
    method: request.method,
    origin: originOf(request.url),
    attempt,
    delayMs,
    error,
    status,
    context,
  }),
);

/** The origin of a URL string, or `'null'` (as `URL#origin` says) when it does not parse. */
function originOf(url: string): string {
  return URL.canParse(url) ? new URL(url).origin : 'null';
}
