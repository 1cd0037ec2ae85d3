import { trace, type Attributes } from '@opentelemetry/api';

/** The name of the span event a timeout adds. */
export const TIMEOUT_EVENT = 'tickwheel.timeout';

/**
 * Adds a `tickwheel.timeout` event to the active span, if one is recording. The adapters publish
 * a timeout in the async context of the request or call it ended, so the active span here is
 * that request's (an HTTP client span, a gRPC client or server span, or the user's own), not the
 * span of whatever code last armed the wheel's native timer. A request that started before the
 * instrumentation was enabled is published in the empty context and adds no event.
 *
 * @param attributes - the timeout's metric attributes, repeated on the event
 * @param limitMs - the limit that fired
 * @param elapsedMs - time from the start to the timeout
 */
export function addTimeoutEvent(
  attributes: Attributes,
  limitMs: number,
  elapsedMs: number,
  extra: Attributes | undefined,
): void {
  const span = trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return;
  span.addEvent(TIMEOUT_EVENT, {
    ...attributes,
    'tickwheel.limit_ms': limitMs,
    'tickwheel.elapsed_ms': elapsedMs,
    ...extra,
  });
}
