// The public API of @tickwheel/core: named exports only, no `export *`.
// Nothing internal here: the option kit, the drivers and the driving clocks are in internal.ts.
export { TimingWheel, isTimingWheel } from './wheel/timing-wheel.js';
export { TimerLoopError } from './wheel/timer-loop-error.js';
export { MAX_DELAY_MS } from './kit/options-kit.js';
export type { TimingWheelOptions, WheelStats } from './wheel/wheel-types.js';
export { TimerHandle } from './wheel/timer-handle.js';
export type { TimerCallback, TimerState } from './wheel/timer-handle.js';
export { ManualClock } from './clocks/manual-clock.js';
export { SystemClock, systemClock, freshNow } from './clocks/clock.js';
export type { SystemClockOptions } from './clocks/clock.js';
export type { Clock } from './clocks/clock.js';
export { sharedWheel } from './wheel/shared-wheel.js';
export {
  withDeadline,
  withoutDeadline,
  currentDeadline,
  createDeadline,
  deadlineExceededReason,
} from './deadlines/deadline.js';
export type { Deadline, DeadlineOptions, DeadlineScope } from './deadlines/deadline.js';
export { describeBudget, LATE_TIMER_MS } from './deadlines/timeout-budget.js';
export type { TimeoutBudget } from './deadlines/timeout-budget.js';
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
