// The public API of @tickwheel/core: named exports only, no `export *`.
// Must not depend on: any adapter package. Nothing internal: the option kit and its checks are in internal.ts.
export { TimingWheel, isTimingWheel } from './timing-wheel.js';
export { TimerLoopError } from './wheel-pass.js';
export { MAX_DELAY_MS } from './tick-scale.js';
export type { TimingWheelOptions, WheelStats } from './wheel-types.js';
export { TimerHandle } from './timer-handle.js';
export type { TimerCallback, TimerState } from './timer-handle.js';
export { ManualClock } from './manual-clock.js';
export { SystemClock, systemClock, isDrivingClock, freshNow } from './clock.js';
export type { SystemClockOptions } from './clock.js';
export type { Clock, DrivingClock, WakeupDriver } from './clock.js';
export { NativeDriver, MAX_NATIVE_DELAY_MS } from './native-driver.js';
export type { NativeDriverOptions } from './native-driver.js';
export { sharedWheel } from './shared-wheel.js';
export { withDeadline, withoutDeadline, currentDeadline, createDeadline, deadlineExceededReason } from './deadline.js';
export type { Deadline, DeadlineOptions, DeadlineScope } from './deadline.js';
export { TimerSet } from './timer-set/timer-set.js';
export type {
  TimerPolicy,
  TimerSetOptions,
  TimerSetConstructorOptions,
  TimerSetRestoreOptions,
  ExpireInfo,
  ExpireCallback,
} from './timer-set/timer-set.js';
export type { TimerSetSnapshot, SavedTimer, SnapshotKey } from './timer-set/snapshot.js';
export {
  CORE_WAKE_CHANNEL,
  CORE_CALLBACK_ERROR_CHANNEL,
  CORE_TIMER_SET_EXPIRE_CHANNEL,
  CORE_CAPTURE_CONTEXT_CHANNEL,
  captureContext,
} from './channels.js';
export type {
  WheelWakeMessage,
  CallbackErrorMessage,
  TimerSetExpireMessage,
  ContextCarrier,
  TypedChannel,
} from './channels.js';
