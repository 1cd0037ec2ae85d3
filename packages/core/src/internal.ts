/**
 * `@tickwheel/core/internal`: what the adapters share with core but users should not build on; not public API (no semver promise).
 */
export { orDefault, describeValue, requireFunction } from './kit/options-kit.js';
export { optionKit } from './wheel/wheel-option-kit.js';
export { copyJson } from './kit/json-value.js';
export type { JsonRefusal } from './kit/json-value.js';
export type { OptionKit } from './wheel/wheel-option-kit.js';
export { guardedPublisher, typedChannel } from './kit/channel-kit.js';
export { scheduleTask, scheduleTaskAt } from './wheel/timer-task.js';
export type { TimerTask } from './wheel/timer-handle.js';
export { enableAmbientDeadlines, enterDeadline, ownedDeadline } from './deadlines/deadline.js';
export type { DeadlineOwner } from './deadlines/deadline.js';
export { inheritedBudget, ownBudget, timeoutBudget } from './deadlines/timeout-budget.js';
// The wheel's wake-up machinery: how a clock drives a wheel (the native driver on the system clock).
export { holdReading, isDrivingClock, releaseReading } from './clocks/clock.js';
export type { DrivingClock, WakeupDriver } from './clocks/clock.js';
export { NativeDriver, MAX_NATIVE_DELAY_MS } from './wheel/native-driver.js';
export type { NativeDriverOptions } from './wheel/native-driver.js';
