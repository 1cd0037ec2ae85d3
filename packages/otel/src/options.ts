/**
 * The defaults of instrumentTickwheel and the resolution of its options with core's option kit.
 */
import { metrics, type MeterProvider } from '@opentelemetry/api';
import { isTimingWheel, sharedWheel, type TimingWheel } from '@tickwheel/core';
import { optionKit, orDefault } from '@tickwheel/core/internal';
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

const kit = optionKit('@tickwheel/otel');
const KNOWN: readonly string[] = Object.keys(DEFAULTS);

/**
 * Validates `options` and fills in defaults.
 * @throws TypeError naming the option and the offending value
 */
export function resolveOptions(options: InstrumentTickwheelOptions | undefined): ResolvedOptions {
  const given = kit.object(options, 'options', KNOWN) as InstrumentTickwheelOptions;
  const meterProvider = orDefault<unknown>(given.meterProvider, metrics.getMeterProvider());
  if (
    meterProvider === null ||
    typeof meterProvider !== 'object' ||
    typeof (meterProvider as { getMeter?: unknown }).getMeter !== 'function'
  ) {
    throw kit.typeError('meterProvider', 'must be an object with a getMeter() method', meterProvider);
  }
  const spanEvents = kit.boolean(orDefault<unknown>(given.spanEvents, DEFAULTS.spanEvents), 'spanEvents');
  const named = orDefault<unknown>(given.wheels, DEFAULTS.wheels);
  if (named === null || typeof named !== 'object' || Array.isArray(named)) {
    throw kit.typeError('wheels', 'must be an object of named TimingWheels', named);
  }
  const wheels = Object.entries(named).map(([name, wheel]): [string, () => TimingWheel] => {
    // The brand check, not instanceof: a wheel from a second copy of @tickwheel/core counts too.
    if (isTimingWheel(wheel)) return [name, () => wheel];
    if (typeof wheel === 'function') return [name, wheel as () => TimingWheel];
    throw kit.typeError(`wheels.${name}`, 'must be a TimingWheel or a function returning one', wheel);
  });
  return { meterProvider: meterProvider as MeterProvider, spanEvents, wheels };
}
