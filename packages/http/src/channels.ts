/**
 * @tickwheel/http's diagnostics channel: one message per limit that fired, and its publish helper.
 *
 * | channel | message | published when |
 * |---|---|---|
 * | `tickwheel:http:timeout` | {@link HttpTimeoutMessage} | one of `serverTimeouts`' limits (or a framework adapter's deadline) fired: the handler deadline, the head, the body's idle limit, the keep-alive limit or a drain's grace |
 * | `tickwheel:http:event-stream-end` | {@link HttpEventStreamEndMessage} | an event stream (`eventStream`, `eventStreamBody`) ended, for any reason |
 *
 * A message is built only when the channel has subscribers, so with none a timeout pays one
 * property read. `@tickwheel/otel` counts the messages by `kind`; anyone may subscribe by name.
 * Messages carry `context`: what a subscriber of `tickwheel:core:capture-context` stored when the
 * request's deadline started (the OpenTelemetry bridge: the request's `Context`), for the kinds
 * that have a request.
 */
import { guardedPublisher, typedChannel } from '@tickwheel/core/internal';
import type { EventStreamEndReason, HttpTimeoutKind, TimeoutEvent } from './types.js';

/** Name of the channel of {@link HttpTimeoutMessage}. */
export const HTTP_TIMEOUT_CHANNEL = 'tickwheel:http:timeout';

/** Published on `tickwheel:http:timeout` when a limit fires. */
export interface HttpTimeoutMessage {
  readonly kind: HttpTimeoutKind;
  /** The limit that fired, in ms, as in the controller's `'timeout'` event. */
  readonly limitMs: number;
  /** What the connection got, as in the controller's `'timeout'` event. */
  readonly outcome: TimeoutEvent['outcome'];
  /** True when a `'handler'` deadline came from the caller's deadline header. */
  readonly propagated: boolean;
  /** The request's context, from `tickwheel:core:capture-context` (undefined without a subscriber there or a request). */
  readonly context: unknown;
}

/** @internal */
export const timeoutChannel = typedChannel<HttpTimeoutMessage>(HTTP_TIMEOUT_CHANNEL);

/** Publishes a timeout when someone listens. */
export const publishTimeout = guardedPublisher(
  timeoutChannel,
  (
    kind: HttpTimeoutKind,
    limitMs: number,
    outcome: TimeoutEvent['outcome'],
    propagated: boolean,
    context: unknown,
  ): HttpTimeoutMessage => ({ kind, limitMs, outcome, propagated, context }),
);

/** Name of the channel of {@link HttpEventStreamEndMessage}. */
export const HTTP_EVENT_STREAM_END_CHANNEL = 'tickwheel:http:event-stream-end';

/** Published on `tickwheel:http:event-stream-end` when an event stream ends. */
export interface HttpEventStreamEndMessage {
  /** Why it ended, as the stream's `ended` says. */
  readonly reason: EventStreamEndReason;
  /** How long it was open, in ms. */
  readonly ageMs: number;
}

/** @internal */
export const streamEndChannel = typedChannel<HttpEventStreamEndMessage>(HTTP_EVENT_STREAM_END_CHANNEL);

/** Publishes a stream's end when someone listens. */
export const publishStreamEnd = guardedPublisher(
  streamEndChannel,
  (reason: EventStreamEndReason, ageMs: number): HttpEventStreamEndMessage => ({ reason, ageMs }),
);
