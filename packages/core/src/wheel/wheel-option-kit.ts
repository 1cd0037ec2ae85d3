/**
 * The adapters' option kit: the leaf option checks plus the check of a `wheel` option.
 * Must not depend on: any adapter package (the leaf checks and the wheel's brand only).
 */
import { optionChecks, type OptionChecks } from '../kit/options-kit.js';
import { isTimingWheel, type TimingWheel } from './timing-wheel.js';

/** The checks of one package's options, a `wheel` option's included. */
export interface OptionKit extends OptionChecks {
  /** A `TimingWheel` from any copy of `@tickwheel/core` (brand check) that is still open. */
  wheel(value: unknown, path: string): TimingWheel;
}

/** The option kit of `pkg` (`'@tickwheel/ws'`): see `options-kit.ts` for the message shape. */
export function optionKit(pkg: string): OptionKit {
  const checks = optionChecks(pkg);
  return {
    ...checks,
    wheel(value, path) {
      if (!isTimingWheel(value)) throw checks.typeError(path, 'must be a TimingWheel from @tickwheel/core', value);
      if (value.isClosed) throw checks.rangeError(path, 'must be an open TimingWheel', value);
      return value;
    },
  };
}
