/**
 * The public types of @tickwheel/otel: its options and the instrumentation handle.
 */
// Disposable and Symbol.dispose, stated here for consumers whose lib and types lack them (TypeScript 7 defaults to no @types).
/// <reference lib="esnext.disposable" preserve="true" />
import type { MeterProvider } from '@opentelemetry/api';
import type { TimingWheel } from '@tickwheel/core';

/**
 * Options of {@link instrumentTickwheel}. Every one is optional; the defaults are listed in one
 * place, `DEFAULTS` in `options.ts`, and in the README's options table.
 */
export interface InstrumentTickwheelOptions {
  /** Where the metrics go. Default: the global `metrics.getMeterProvider()` (a no-op until an SDK registers one). */
  meterProvider?: MeterProvider;
  /**
   * Add a `tickwheel.timeout` event to the active span of a fetch request or gRPC client call that
   * one of our limits ended (the span of the request's own async context; a server deadline, a
   * heartbeat kill or a Redis event has no span of its own and adds none). Default true.
   */
  spanEvents?: boolean;
  /**
   * The wheels whose pending timers the `tickwheel.wheel.pending` gauge reports, by the name put
   * in its `tickwheel.wheel` attribute. A function is called at each collection (so a wheel that
   * is replaced is followed). Default `{ shared: sharedWheel }`: the process-wide wheel every
   * adapter uses unless given another.
   */
  wheels?: Readonly<Record<string, TimingWheel | (() => TimingWheel)>>;
}

/** What {@link instrumentTickwheel} returns: the switch that turns the instrumentation off. */
export interface TickwheelInstrumentation {
  /** True until {@link TickwheelInstrumentation.disable} is called. */
  readonly enabled: boolean;
  /**
   * Unsubscribes from every channel and removes the gauge's callback. Metrics recorded so far stay
   * with the meter provider. Calling it again does nothing.
   */
  disable(): void;
  /** Same as `disable()`, for `using instrumentation = instrumentTickwheel()`. */
  [Symbol.dispose](): void;
}
