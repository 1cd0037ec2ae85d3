/**
 * HandlePool: unref'ed wheel handles that finished requests hand back and later requests re-arm.
 * Must not depend on: fetch, the request's phases or its errors (it only lends handles).
 */
import type { TimerHandle, TimingWheel } from '@tickwheel/core';

/**
 * Why requests share handles: a fresh handle per request costs, besides the handle and its
 * callback, a `schedule()` that makes a wheel of unref'ed timers ref'ed for an instant and an
 * `unref()` that takes it back, each flip telling the native driver (a queued microtask). On
 * Node 22 that was a fifth of the wrapper's own CPU per request against a local server
 * (`--cpu-prof`). A handle a finished request gave back is cancelled and still unref'ed:
 * `refresh(delay)` files it again without a flip and without allocating.
 *
 * A lent handle calls its current owner; a returned one has none, and is cancelled first, so a
 * request can never be woken by a handle it gave back. The pool keeps at most
 * {@link MAX_POOLED} handles per wheel; a wheel that is no longer used takes its pool with it
 * (except the last one used, whose pool stays at hand).
 */

/** Who a lent handle wakes. */
export interface HandleOwner {
  onTimer(): void;
}

/** A handle and who it wakes now: undefined while it waits in the pool. */
export interface LentHandle {
  readonly handle: TimerHandle;
  owner: HandleOwner | undefined;
}

/** Handles kept per wheel: enough for the requests one process has in flight at a time. */
export const MAX_POOLED = 256;

const pools = new WeakMap<TimingWheel, LentHandle[]>();
// The last wheel's pool, so that the common case (one shared wheel) skips the WeakMap.
let lastWheel: TimingWheel | undefined;
let lastPool: LentHandle[] = [];

function poolOf(wheel: TimingWheel): LentHandle[] {
  if (wheel === lastWheel) return lastPool;
  let pool = pools.get(wheel);
  if (pool === undefined) {
    pool = [];
    pools.set(wheel, pool);
  }
  lastWheel = wheel;
  lastPool = pool;
  return pool;
}

/** An unref'ed handle on `wheel` armed `delayMs` from now, that calls `owner.onTimer()` when it fires. */
export function lendHandle(wheel: TimingWheel, delayMs: number, owner: HandleOwner): LentHandle {
  const pooled = poolOf(wheel).pop();
  if (pooled !== undefined) {
    pooled.owner = owner;
    pooled.handle.refresh(delayMs);
    return pooled;
  }
  const lent: { handle: TimerHandle | undefined; owner: HandleOwner | undefined } = { handle: undefined, owner };
  // Timeouts never hold the process open on their own: the socket does while it matters.
  lent.handle = wheel.schedule(delayMs, () => lent.owner?.onTimer()).unref();
  return lent as LentHandle;
}

/** Cancels `lent` and keeps it for a later request; its owner is never called again. */
export function returnHandle(wheel: TimingWheel, lent: LentHandle): void {
  lent.handle.cancel();
  lent.owner = undefined;
  if (lent.handle.hasRef()) lent.handle.unref(); // a backoff ref'ed it
  const pool = poolOf(wheel);
  if (pool.length < MAX_POOLED) pool.push(lent);
}
