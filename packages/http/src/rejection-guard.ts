/**
 * Keeps a rejection that a request's ended deadline causes in its handler from crashing the process.
 *
 * node:http ignores what an async `'request'` listener returns (unless the server captures
 * rejections), and so does express 4 with an async handler: once the deadline answered the
 * request, or its client went away, the handler's `await timedFetch(…)` rejects with a
 * `TimeoutError` or `AbortError` that nothing catches, and Node's default is to exit on an
 * unhandled rejection. The middleware caused that rejection, so it takes it back: a process
 * `'unhandledRejection'` listener, added at the first request a deadline ends, drops a rejection
 * when it happened in that request's async context (`currentDeadline()` is a deadline ended here)
 * and its reason is an abort, a timeout or a write after the answer, at any depth of `cause`.
 * Every other rejection is left to Node as if the listener were not there: when it is the only
 * listener it throws the reason, which Node reports and exits on as it would have; when the
 * process has listeners of its own, they decide. Only under the default mode
 * (`--unhandled-rejections=throw`): the other modes never exit on a rejection (or exit first).
 */
import type { Deadline } from '@tickwheel/core';
import { currentDeadline } from '@tickwheel/core';

/** The deadlines of requests that a limit ended or whose client went away. */
const ended = new WeakSet<Deadline>();

/** The error names and codes of what an ended request's handler meets: an abort, a timeout, a late write. */
const ENDED_NAMES = new Set(['AbortError', 'TimeoutError']);
const ENDED_CODES = new Set([
  'ABORT_ERR',
  'ERR_HTTP_HEADERS_SENT',
  'ERR_STREAM_WRITE_AFTER_END',
  'ERR_STREAM_DESTROYED',
]);

/** Where the listener is kept, so that two copies of this package add one. */
const GUARD_KEY = Symbol.for('@tickwheel/http.rejectionGuard@0');
type GlobalWithGuard = typeof globalThis & { [GUARD_KEY]?: (reason: unknown) => void };

/** Marks `deadline` as ended by us (a limit, or the client gone); adds the listener once. */
export function deadlineEnded(deadline: Deadline): void {
  ended.add(deadline);
  const global = globalThis as GlobalWithGuard;
  if (global[GUARD_KEY] !== undefined || !exitsOnRejection()) return;
  global[GUARD_KEY] = onUnhandledRejection;
  process.on('unhandledRejection', onUnhandledRejection);
}

function onUnhandledRejection(reason: unknown): void {
  if (causedByEndedDeadline(reason)) return;
  // Alone, this listener must not be what keeps the process alive: Node would have exited.
  if (process.listenerCount('unhandledRejection') === 1) throw reason;
}

/** True when the rejection happened in an ended request's context and is what the end causes. */
export function causedByEndedDeadline(reason: unknown): boolean {
  const deadline = currentDeadline();
  if (deadline === undefined || !ended.has(deadline)) return false;
  for (let error = reason, depth = 0; typeof error === 'object' && error !== null && depth < 8; depth++) {
    const { name, code } = error as { name?: unknown; code?: unknown };
    if (ENDED_NAMES.has(name as string) || ENDED_CODES.has(code as string)) return true;
    error = (error as { cause?: unknown }).cause;
  }
  return false;
}

/** True under Node's default `--unhandled-rejections=throw`, the one mode where a rejection alone exits. */
function exitsOnRejection(): boolean {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  let mode = 'throw';
  for (const flag of flags) if (flag.startsWith('--unhandled-rejections=')) mode = flag.slice(23);
  return mode === 'throw';
}
