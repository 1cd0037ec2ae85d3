/**
 * The OpenTelemetry instruments @tickwheel/otel records: names, units and descriptions.
 */
import type { Counter, Histogram, Meter, ObservableGauge } from '@opentelemetry/api';

/**
 * The metrics, named and unitised after the OpenTelemetry semantic conventions: dot-separated
 * lower-case names under a `tickwheel.` namespace, durations in seconds (`s`, as
 * `http.client.request.duration`), counts with a curly-brace annotation unit (`{timeout}`),
 * counters named by what they count rather than with a `_total` suffix (a Prometheus exporter
 * adds that). The README lists them with their attributes.
 */
export const METRICS = Object.freeze({
  timeouts: 'tickwheel.timeouts',
  timeoutElapsed: 'tickwheel.timeout.elapsed',
  fetchRetries: 'tickwheel.fetch.retries',
  grpcHandlerAborts: 'tickwheel.grpc.handler.aborts',
  httpEventStreamEnds: 'tickwheel.http.event_stream.ends',
  wheelLateness: 'tickwheel.wheel.lateness',
  wheelFired: 'tickwheel.wheel.fired',
  wheelCallbackDuration: 'tickwheel.wheel.callback.duration',
  wheelCallbackErrors: 'tickwheel.wheel.callback.errors',
  wheelPending: 'tickwheel.wheel.pending',
  timerSetExpirations: 'tickwheel.timer_set.expirations',
  redisLateness: 'tickwheel.redis.lateness',
  redisLeasesLost: 'tickwheel.redis.leases_lost',
  redisDuplicates: 'tickwheel.redis.duplicates',
  presenceEvents: 'tickwheel.presence.events',
  presenceNodesReaped: 'tickwheel.presence.nodes_reaped',
} as const);

/**
 * Histogram buckets in seconds. Lateness: a healthy wheel is within a tick (1 ms), a busy event
 * loop adds milliseconds, a blocked one seconds. Elapsed at timeout: the limits people set, from
 * a 10 ms cache lookup to a 5-minute job (the HTTP duration buckets of the semantic conventions,
 * extended). Callback duration: one wake-up's callbacks, from microseconds up.
 */
const LATENESS_BUCKETS_S = [0, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const ELAPSED_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 120, 300];
const CALLBACK_BUCKETS_S = [0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1];

/** The instruments one instrumentation records into. */
export interface Instruments {
  readonly timeouts: Counter;
  readonly timeoutElapsed: Histogram;
  readonly fetchRetries: Counter;
  readonly grpcHandlerAborts: Counter;
  readonly httpEventStreamEnds: Counter;
  readonly wheelLateness: Histogram;
  readonly wheelFired: Counter;
  readonly wheelCallbackDuration: Histogram;
  readonly wheelCallbackErrors: Counter;
  readonly wheelPending: ObservableGauge;
  readonly timerSetExpirations: Counter;
  readonly redisLateness: Histogram;
  readonly redisLeasesLost: Counter;
  readonly redisDuplicates: Counter;
  readonly presenceEvents: Counter;
  readonly presenceNodesReaped: Counter;
}

/** Creates every instrument on `meter`. */
export function createInstruments(meter: Meter): Instruments {
  const seconds = (name: string, description: string, buckets: number[]): Histogram =>
    meter.createHistogram(name, { description, unit: 's', advice: { explicitBucketBoundaries: buckets } });
  return {
    timeouts: meter.createCounter(METRICS.timeouts, {
      description:
        'Operations ended by a tickwheel limit: fetch timeouts, gRPC deadlines, HTTP server limits, WebSocket heartbeat terminations',
      unit: '{timeout}',
    }),
    timeoutElapsed: seconds(
      METRICS.timeoutElapsed,
      'Time from the start of the operation (or of the quiet stretch) to the timeout',
      ELAPSED_BUCKETS_S,
    ),
    fetchRetries: meter.createCounter(METRICS.fetchRetries, {
      description: 'Fetch attempts retried after a timeout',
      unit: '{retry}',
    }),
    grpcHandlerAborts: meter.createCounter(METRICS.grpcHandlerAborts, {
      description: 'gRPC server handlers whose deadline signal aborted, by reason',
      unit: '{call}',
    }),
    httpEventStreamEnds: meter.createCounter(METRICS.httpEventStreamEnds, {
      description: 'Server-Sent Events streams of @tickwheel/http that ended, by reason',
      unit: '{stream}',
    }),
    wheelLateness: seconds(
      METRICS.wheelLateness,
      'How long after its armed time a timing wheel woke up',
      LATENESS_BUCKETS_S,
    ),
    wheelFired: meter.createCounter(METRICS.wheelFired, {
      description: 'Timer callbacks run by timing wheels',
      unit: '{timer}',
    }),
    wheelCallbackDuration: seconds(
      METRICS.wheelCallbackDuration,
      "Time one wake-up's timer callbacks ran",
      CALLBACK_BUCKETS_S,
    ),
    wheelCallbackErrors: meter.createCounter(METRICS.wheelCallbackErrors, {
      description: 'Timer callbacks that threw',
      unit: '{error}',
    }),
    wheelPending: meter.createObservableGauge(METRICS.wheelPending, {
      description: 'Timers pending on a timing wheel',
      unit: '{timer}',
    }),
    timerSetExpirations: meter.createCounter(METRICS.timerSetExpirations, {
      description: 'TimerSet stacks that expired',
      unit: '{expiration}',
    }),
    redisLateness: seconds(
      METRICS.redisLateness,
      "How long after its due time a Redis timer was claimed, on the Redis server's clock",
      LATENESS_BUCKETS_S,
    ),
    redisLeasesLost: meter.createCounter(METRICS.redisLeasesLost, {
      description: "Redis timer deliveries whose ack found the worker's lease expired",
      unit: '{delivery}',
    }),
    redisDuplicates: meter.createCounter(METRICS.redisDuplicates, {
      description: 'Redis timer deliveries dropped as duplicates',
      unit: '{delivery}',
    }),
    presenceEvents: meter.createCounter(METRICS.presenceEvents, {
      description: "RedisPresence joins and leaves delivered to this server, by event ('join' or 'leave')",
      unit: '{event}',
    }),
    presenceNodesReaped: meter.createCounter(METRICS.presenceNodesReaped, {
      description: 'RedisPresence servers whose lease expired and whose connections this server ended',
      unit: '{node}',
    }),
  };
}
