/**
 * The defaults of instrumentTickwheel and the resolution of its options.
 * Must not depend on: the adapters or the OpenTelemetry SDK (@tickwheel/core and @opentelemetry/api only).
 */
import { metrics, type MeterProvider } from '@opentelemetry/api';
import { describeValue, sharedWheel, TimingWheel } from '@tickwheel/core';
import type { InstrumentTickwheelOptions } from './types.js';

/** Every default in one place. */
export const DEFAULTS = Object.freeze({
  /** `undefined`: the global meter provider at the time of the call. */
  meterProvider: undefined,
  spanEvents: true,
  wheels: Object.freeze({ shared: sharedWheel }),
});

/** Options with every default filled in; each wheel as a function returning it. */
export interface ResolvedOptions {
  readonly meterProvider: MeterProvider;
  readonly spanEvents: boolean;
  readonly wheels: ReadonlyArray<readonly [name: string, wheel: () => TimingWheel]>;
}

const KEYS = new Set(['meterProvider', 'spanEvents', 'wheels']);

/**
 * Validates `options` and fills in defaults.
 * @throws TypeError naming the option and the offending value
 */
export function resolveOptions(options: InstrumentTickwheelOptions | undefined): ResolvedOptions {
  if (options === undefined) options = {};
  if (options === null || typeof options !== 'object')
    throw new TypeError(`@tickwheel/otel: options must be an object, got ${describeValue(options)}`);
  for (const key of Object.keys(options)) {
    if (!KEYS.has(key))
      throw new TypeError(`@tickwheel/otel: unknown option ${JSON.stringify(key)}; known: ${[...KEYS].join(', ')}`);
  }
  const meterProvider = options.meterProvider ?? metrics.getMeterProvider();
  if (meterProvider === null || typeof meterProvider !== 'object' || typeof meterProvider.getMeter !== 'function') {
    throw new TypeError(
      `@tickwheel/otel: meterProvider must be an object with a getMeter() method, got ${describeValue(meterProvider)}`,
    );
  }
  const spanEvents = options.spanEvents ?? DEFAULTS.spanEvents;
  if (typeof spanEvents !== 'boolean')
    throw new TypeError(`@tickwheel/otel: spanEvents must be a boolean, got ${describeValue(spanEvents)}`);
  const given = options.wheels ?? DEFAULTS.wheels;
  if (given === null || typeof given !== 'object') {
    throw new TypeError(`@tickwheel/otel: wheels must be an object of named TimingWheels, got ${describeValue(given)}`);
  }
  const wheels = Object.entries(given).map(([name, wheel]): [string, () => TimingWheel] => {
    if (wheel instanceof TimingWheel) return [name, () => wheel];
    if (typeof wheel === 'function') return [name, wheel];
    throw new TypeError(
      `@tickwheel/otel: wheels.${name} must be a TimingWheel or a function returning one, got ${describeValue(wheel)}`,
    );
  });
  return { meterProvider, spanEvents, wheels };
}
