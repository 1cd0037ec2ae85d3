/**
 * How an event stream joins serverTimeouts: it leaves its request's handler deadline and reports to the server's controller.
 */
import { enterDeadline } from '@tickwheel/core/internal';
import { recordOf } from './request-deadline.js';
import type { StreamOwner } from './timed-stream.js';
import type { TimedResponse } from './types.js';

/**
 * Takes `res`'s request out of the handler deadline serverTimeouts (or a framework adapter) gave
 * it, since a healthy stream outlives any handler deadline, and returns the controller that
 * drains its streams (undefined on a server without serverTimeouts).
 */
export function adoptStream(res: TimedResponse): StreamOwner | undefined {
  const record = recordOf(res);
  if (record === undefined) return undefined;
  const owner = record.owner;
  record.detach();
  // The rest of this run (the handler after eventStream()) is no longer under the deadline.
  enterDeadline(undefined);
  return isStreamOwner(owner) ? owner : undefined;
}

function isStreamOwner(owner: object): owner is StreamOwner {
  return typeof (owner as Partial<StreamOwner>).streamStarted === 'function';
}
