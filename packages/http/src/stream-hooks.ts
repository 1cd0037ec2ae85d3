/**
 * Internal hooks for responses that outlive a handler deadline on purpose (an event stream): leaving the deadline, and ending at a drain.
 */
import { recordOf } from './request-deadline.js';
import type { TimedResponse } from './types.js';

/**
 * Takes `res`'s request out of its handler deadline (serverTimeouts' or an adapter's): the
 * deadline is disposed, so no timeout answers or cuts it and its signal never aborts from it,
 * and `currentDeadline()` is none for the rest of this run and the work it starts. The request
 * stays in flight for `close({ graceMs })`, and the connection's limits still apply.
 * @returns false when no deadline of ours is on `res`
 */
export function releaseDeadline(res: TimedResponse): boolean {
  const record = recordOf(res);
  if (record === undefined) return false;
  record.release();
  return true;
}

/**
 * Makes `close({ graceMs })` call `end` as soon as the drain begins, so that the response ends
 * at once instead of waiting out the grace (an event stream that would never end on its own).
 * Called at once when the drain has already begun. One hook per response; a later call replaces the earlier one.
 * @returns false when no deadline of ours is on `res`
 */
export function onDrain(res: TimedResponse, end: () => void): boolean {
  const record = recordOf(res);
  if (record === undefined) return false;
  record.drain = end;
  if (record.owner.draining) end();
  return true;
}
