/**
 * The process-wide shared TimingWheel every adapter uses unless given a wheel.
 * Must not depend on: any adapter package (timing-wheel.ts only); adapters never configure it.
 */
import { TimingWheel } from './timing-wheel.js';

/**
 * The process-wide wheel lives on `globalThis` under a registered symbol, so that two copies of
 * this package in one process (a nested node_modules) still share one wheel and one native timer.
 * The version in the key keeps an incompatible future major from picking it up.
 */
const SHARED_WHEEL_KEY = Symbol.for('@tickwheel/core.sharedWheel@0');

type GlobalWithWheel = typeof globalThis & { [SHARED_WHEEL_KEY]?: TimingWheel };

/**
 * The one process-wide wheel (tickMs 1, wheelSize 64, system clock) that every adapter uses
 * unless given another. Created on first use; if it was closed, the next call creates a new one.
 *
 * @example
 * ```ts
 * const h = sharedWheel().schedule(1_000, () => console.log('one second'));
 * ```
 */
export function sharedWheel(): TimingWheel {
  const global = globalThis as GlobalWithWheel;
  let wheel = global[SHARED_WHEEL_KEY];
  if (wheel === undefined || wheel.isClosed) {
    wheel = new TimingWheel();
    global[SHARED_WHEEL_KEY] = wheel;
  }
  return wheel;
}
