/**
 * `@tickwheel/core/internal`: what the adapters share with core but users should not build on.
 * Must not depend on: anything outside core. Not public API (no semver promise).
 */
export { orDefault, describeValue, requireFunction } from './options-kit.js';
export { optionKit } from './wheel-option-kit.js';
export { copyJson } from './json-value.js';
export type { JsonRefusal } from './json-value.js';
export type { OptionKit } from './wheel-option-kit.js';
export { guardedPublisher, typedChannel } from './channel-kit.js';
export { scheduleTask, scheduleTaskAt } from './timer-task.js';
export type { TimerTask } from './timer-handle.js';
export { enableAmbientDeadlines, ownedDeadline } from './deadline.js';
export type { DeadlineOwner } from './deadline.js';
