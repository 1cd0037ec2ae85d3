/**
 * Cancels the outgoing calls a handler made when the handler's own call is cancelled.
 *
 * Each outgoing call inherits the ambient deadline's signal. Rather than one 'abort' listener
 * per call (Node warns past 10 on one signal, and each costs a few hundred bytes), each signal
 * gets one listener and a set of the calls still running under it.
 */

/** A call that can be told its parent was cancelled. */
export interface ParentAbortListener {
  onParentAbort(): void;
}

const running = new WeakMap<AbortSignal, Set<ParentAbortListener>>();

/** Tells `call` when `signal` aborts for any reason but its deadline passing. */
export function watchParentAbort(signal: AbortSignal, call: ParentAbortListener): void {
  let calls = running.get(signal);
  if (calls === undefined) {
    const set = new Set<ParentAbortListener>();
    calls = set;
    running.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        running.delete(signal);
        // A deadline that passed is each call's own deadline too (never later): their timers report it.
        if (isTimeout(signal.reason)) return;
        for (const each of set) each.onParentAbort();
      },
      { once: true },
    );
  }
  calls.add(call);
}

/** Stops watching for `call` (its status arrived). */
export function unwatchParentAbort(signal: AbortSignal, call: ParentAbortListener): void {
  running.get(signal)?.delete(call);
}

/** True for the `TimeoutError` a deadline's signal aborts with. */
export function isTimeout(reason: unknown): boolean {
  return reason instanceof DOMException && reason.name === 'TimeoutError';
}
