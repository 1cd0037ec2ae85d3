/**
 * scheduleTask, scheduleTaskAt: timers that run a {@link TimerTask} object instead of a callback (adapters only).
 *
 * A per-request owner (a deadline scope, a gRPC call) that gives the wheel a callback must make
 * one per request: a bound method or a closure and its context, held as long
 * as the timer is pending. Passing the owner itself as a task costs nothing: the wheel's fire
 * path calls `task.timerFired(handle)` when the handle holds an object. This is not public API
 * (`@tickwheel/core/internal`): users pass callbacks, and `schedule()` refuses anything else.
 */
import type { TimerHandle, TimerTask } from './timer-handle.js';
import type { TimingWheel } from './timing-wheel.js';

/**
 * Like `wheel.schedule(delayMs, ...)`, running `task.timerFired(handle)` when the timer fires.
 * A wheel of another copy of core that has no task path (the shared wheel is shared by every
 * copy in the process) gets a callback that calls the task instead.
 *
 * @throws TypeError/RangeError for a bad `delayMs`, as `schedule()`; Error when the wheel is closed
 */
export function scheduleTask(wheel: TimingWheel, delayMs: number, task: TimerTask): TimerHandle {
  if (typeof wheel._scheduleTask === 'function') return wheel._scheduleTask(delayMs, task);
  return wheel.schedule(delayMs, (handle) => task.timerFired(handle));
}

/** Like `wheel.scheduleAt(timeMs, ...)` for a task; see {@link scheduleTask}. */
export function scheduleTaskAt(wheel: TimingWheel, timeMs: number, task: TimerTask): TimerHandle {
  if (typeof wheel._scheduleTaskAt === 'function') return wheel._scheduleTaskAt(timeMs, task);
  return wheel.scheduleAt(timeMs, (handle) => task.timerFired(handle));
}
