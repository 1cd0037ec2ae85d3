/**
 * instrumentTickwheel: the entry function that subscribes to every tickwheel channel and records metrics.
 *
 * # The OpenTelemetry bridge
 *
 * Every tickwheel package publishes what its timers did on named `node:diagnostics_channel`
 * channels (`tickwheel:core:wake`, `tickwheel:fetch:timeout`, ...; see each package's
 * `channels.ts`). This package subscribes to them by name and records OpenTelemetry metrics, so
 * it needs none of the adapters at run time: a channel whose package is not installed simply
 * never publishes. The subscription is the whole cost model: before `instrumentTickwheel()`
 * every publishing site reads one `hasSubscribers` getter and moves on; after it, each event
 * builds one small message and records one or two instruments.
 *
 * A recorder never throws into the code that published: diagnostics_channel would turn that
 * into an uncaught exception on the next tick, so a metrics fault would crash the service it
 * observes. Errors go to OpenTelemetry's `diag` logger instead, as the SDK's own do.
 *
 * This file resolves the options and creates the instruments; what one instrumentation holds
 * while it is enabled, and its `disable()`, is `instrumentation.ts`.
 */
import { createInstruments } from './instruments.js';
import { Instrumentation } from './instrumentation.js';
import { resolveOptions } from './options.js';
import type { InstrumentTickwheelOptions, TickwheelInstrumentation } from './types.js';

const PACKAGE_NAME = '@tickwheel/otel';
const PACKAGE_VERSION = '0.1.0';

/**
 * Turns tickwheel's diagnostics channels into OpenTelemetry metrics and span events: counters
 * and elapsed-time histograms of timeouts (fetch, gRPC, HTTP server, WebSocket heartbeat) by package, phase
 * and method, histograms of how late wheels and Redis timers fire, a gauge of pending timers per
 * wheel, and a `tickwheel.timeout` event on the span a timeout ended. The README lists every
 * metric and attribute.
 *
 * Each call subscribes once more (two calls count every event twice); `disable()` on the
 * returned handle unsubscribes everything.
 *
 * @param options - see {@link InstrumentTickwheelOptions}; all optional
 * @returns the handle whose `disable()` turns it off
 * @throws TypeError, naming the option, for a bad option
 * @example
 * ```ts
 * const meterProvider = new MeterProvider({ readers: [new PrometheusExporter({ port: 9464 })] });
 * const instrumentation = instrumentTickwheel({ meterProvider });
 * // ... on shutdown:
 * instrumentation.disable();
 * ```
 */
export function instrumentTickwheel(options?: InstrumentTickwheelOptions): TickwheelInstrumentation {
  const resolved = resolveOptions(options);
  const meter = resolved.meterProvider.getMeter(PACKAGE_NAME, PACKAGE_VERSION);
  return new Instrumentation(createInstruments(meter), resolved);
}
