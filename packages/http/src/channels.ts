/**
 * @tickwheel/http's diagnostics channel: one message per limit that fired, and its publish helper.
 *
 * | channel | message | published when |
 * |---|---|---|
 * | `tickwheel:http:timeout` | {@link HttpTimeoutMessage} | one of `serverTimeouts`' limits (or a framework adapter's deadline) fired: the handler deadline, the head, the body's idle limit, the keep-alive limit or a drain's grace |
 * | `tickwheel:http:event-stream-end` | {@link HttpEventStreamEndMessage} | an event stream (`eventStream`, `eventStreamBody`) ended, for any reason |
 *
 * The message is serverTimeouts' `'timeout'` event itself, built once per timeout (timeouts are
 * rare). `@tickwheel/otel` counts the messages by `kind`; anyone may subscribe by name.
 * Messages carry `context`: what a subscriber of `tickwheel:core:capture-context` stored when the
 * request's deadline started (the OpenTelemetry bridge: the request's `Context`), for the kinds
 * that have a request.
 */
import type { TimeoutBudget } from '@tickwheel/core';
import { guardedPublisher, typedChannel } from '@tickwheel/core/internal';
import type { EventStreamEndReason, HttpTimeoutKind, TimedRequest, TimeoutEvent } from './types.js';

/** Name of the channel of {@link HttpTimeoutMessage}. */
export const HTTP_TIMEOUT_CHANNEL = 'tickwheel:http:timeout';

/** Published on `tickwheel:http:timeout` when a limit fires: the same object as serverTimeouts' `'timeout'` event. */
export type HttpTimeoutMessage = TimeoutEvent;

/** @internal */
export const timeoutChannel = typedChannel<HttpTimeoutMessage>(HTTP_TIMEOUT_CHANNEL);

/** Who hears a timeout besides the channel: serverTimeouts' controller, which emits it as its `'timeout'` event. */
export interface TimeoutListener {
  timedOut(event: TimeoutEvent): void;
}

/**
 * Reports a limit that fired: builds its event, the one place one is built, publishes it on the
 * channel when someone subscribes, and hands it to `listener`.
 */
export function reportTimeout(
  listener: TimeoutListener,
  kind: HttpTimeoutKind,
  limitMs: number,
  outcome: TimeoutEvent['outcome'],
  req: TimedRequest | undefined,
  propagated: boolean,
  budget: TimeoutBudget | undefined,
  context: unknown,
): void {
  const event: TimeoutEvent = { kind, limitMs, outcome, req, propagated, budget, context };
  if (timeoutChannel.hasSubscribers) timeoutChannel.publish(event);
  listener.timedOut(event);
}

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
