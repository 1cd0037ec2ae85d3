/**
 * The options of eventStream and eventStreamBody, their defaults and their checks with the package's option kit.
 */
import { sharedWheel, type TimingWheel } from '@tickwheel/core';
import { orDefault } from '@tickwheel/core/internal';
import { kit } from './options.js';
import type { EventStreamOptions } from './types.js';

/**
 * The event streams' defaults, in one place: a heartbeat comment after 15 s of silence (well
 * inside the 60 s idle timeout of nginx and most load balancers), no maximum age, and `retry:`
 * 3 s (the reconnection delay browsers use when none is sent). A slow consumer is cut once more
 * than 1 MiB has waited for it for 10 s: a server never buffers without bound for one client.
 */
export const EVENT_STREAM_DEFAULTS = Object.freeze({
  heartbeatMs: 15_000,
  maxStreamMs: Infinity,
  streamJitter: 0,
  retryMs: 3_000,
  maxBufferedBytes: 1_048_576,
  drainTimeoutMs: 10_000,
});

const KEYS: readonly (keyof EventStreamOptions)[] = [
  'heartbeatMs',
  'maxStreamMs',
  'streamJitter',
  'retryMs',
  'maxBufferedBytes',
  'drainTimeoutMs',
  'wheel',
];

/** An event stream's options, resolved: every "off" is Infinity. */
export interface StreamPlan {
  readonly heartbeatMs: number;
  readonly maxStreamMs: number;
  readonly streamJitter: number;
  readonly retryMs: number;
  readonly maxBufferedBytes: number;
  readonly drainTimeoutMs: number;
  readonly wheel: TimingWheel;
}

/** Checks an event stream's options. @throws TypeError/RangeError naming the option and the value */
export function streamPlan(options: unknown): StreamPlan {
  const o = kit.object(options, 'options', KEYS) as EventStreamOptions;
  const d = EVENT_STREAM_DEFAULTS;
  const maxStreamMs = o.maxStreamMs === undefined ? d.maxStreamMs : kit.limitMs(o.maxStreamMs, 'maxStreamMs');
  if (o.streamJitter !== undefined && maxStreamMs === Infinity) {
    throw kit.rangeError('streamJitter', 'needs maxStreamMs, which is off', o.streamJitter);
  }
  const maxBufferedBytes =
    o.maxBufferedBytes === 0 || o.maxBufferedBytes === Infinity
      ? Infinity
      : kit.integer(orDefault(o.maxBufferedBytes, d.maxBufferedBytes), 'maxBufferedBytes', 1);
  if (o.drainTimeoutMs !== undefined && maxBufferedBytes === Infinity) {
    throw kit.rangeError('drainTimeoutMs', 'needs maxBufferedBytes, which is off', o.drainTimeoutMs);
  }
  return {
    heartbeatMs: o.heartbeatMs === undefined ? d.heartbeatMs : kit.limitMs(o.heartbeatMs, 'heartbeatMs'),
    maxStreamMs,
    streamJitter: o.streamJitter === undefined ? d.streamJitter : kit.number(o.streamJitter, 'streamJitter', 0, 1),
    retryMs: kit.integer(orDefault(o.retryMs, d.retryMs), 'retryMs', 0),
    maxBufferedBytes,
    drainTimeoutMs:
      maxBufferedBytes === Infinity
        ? Infinity
        : kit.durationMs(orDefault(o.drainTimeoutMs, d.drainTimeoutMs), 'drainTimeoutMs', 1),
    wheel: o.wheel === undefined ? sharedWheel() : kit.wheel(o.wheel, 'wheel'),
  };
}
