/**
 * TimeoutBudget: where a timeout's time went (which limit, whose budget, spent before, spent in the call, how late).
 */
import type { Deadline } from './deadline.js';

/**
 * What every timeout a tickwheel package reports says about its time: the same frozen shape from
 * fetch, gRPC, HTTP, ws and Redis, built only once a timeout happens, from numbers already kept.
 */
export interface TimeoutBudget {
  /**
   * The option that fired (`'totalMs'`, `'headersMs'`, `'bodyIdleMs'`, `'perAttemptMs'`,
   * `'timeoutMs'`, …), or `'deadline'` when the ambient deadline fired.
   */
  readonly limit: string;
  /** True when the ambient deadline (set outside this call) fired, false for the call's own limit. */
  readonly inherited: boolean;
  /**
   * Where the ambient deadline came from (`'withDeadline'`, `'grpc'`, `'header:grpc-timeout'`,
   * `'defaultTimeoutMs'`, …); `undefined` for a call's own limit.
   */
  readonly source: string | undefined;
  /** The whole budget at its source, in ms: the deadline's, or the call's own limit. */
  readonly budgetMs: number;
  /** How much of the budget was gone when this call started, in ms (0 for a call's own limit). */
  readonly spentBeforeMs: number;
  /** This call's own time until the timeout, in ms. */
  readonly elapsedMs: number;
  /** How long after its due time the expiry ran, in ms: large means the process, not the peer, was slow. */
  readonly lateMs: number;
}

/**
 * From this lateness on a message blames the event loop: far beyond the wheel's tick and libuv's
 * 1 ms timer grid, and beyond a young-generation GC pause, so only a blocked or starved process
 * makes a timer this late.
 */
export const LATE_TIMER_MS = 100;

/**
 * Makes a frozen {@link TimeoutBudget} (with any extra fields an adapter adds), its spans rounded
 * to 0.1 ms and never negative. Call it only when a timeout happens.
 */
export function timeoutBudget<T extends TimeoutBudget>(fields: T): Readonly<T> {
  return Object.freeze({
    ...fields,
    budgetMs: span(fields.budgetMs),
    spentBeforeMs: span(fields.spentBeforeMs),
    elapsedMs: span(fields.elapsedMs),
    lateMs: span(fields.lateMs),
  });
}

/** A span in ms, rounded to 0.1 ms, 0 when negative (or NaN); Infinity stays. */
function span(ms: number): number {
  if (!(ms > 0)) return 0;
  return ms === Infinity ? ms : Math.round(ms * 10) / 10;
}

/** Whole ms for a message. */
function ms(value: number): string {
  return `${Math.round(value)} ms`;
}

/**
 * The one-line part of a timeout's message that says where its time went, such as
 * `"the deadline of 2000 ms from header:grpc-timeout: 1200 ms spent before this call, 800 ms in it"`
 * or `"1003 ms in this call; the timer ran 600 ms late: the event loop was blocked"`. The lateness
 * is named from {@link LATE_TIMER_MS} on.
 */
export function describeBudget(budget: TimeoutBudget): string {
  const where = budget.inherited
    ? `the deadline of ${ms(budget.budgetMs)} from ${budget.source ?? 'an unknown source'}: ` +
      `${ms(budget.spentBeforeMs)} spent before this call, ${ms(budget.elapsedMs)} in it`
    : `${budget.limit} of ${ms(budget.budgetMs)}: ${ms(budget.elapsedMs)} in this call`;
  return budget.lateMs >= LATE_TIMER_MS
    ? `${where}; the timer ran ${ms(budget.lateMs)} late: the event loop was blocked`
    : where;
}

/**
 * The budget of a call that the ambient deadline ended: its source and whole budget, and what
 * was gone before the call, from what the deadline had left when the call started (so that a
 * call timed on another clock needs no reading of the deadline's).
 *
 * @param leftAtStartMs - `deadline.remaining()` when the call started
 * @param elapsedMs - the call's own time until the timeout
 * @param lateMs - how long after its due time the expiry ran
 */
export function inheritedBudget(
  deadline: Deadline,
  leftAtStartMs: number,
  elapsedMs: number,
  lateMs: number,
): TimeoutBudget {
  return timeoutBudget({
    limit: 'deadline',
    inherited: true,
    source: deadline.source,
    budgetMs: deadline.budgetMs,
    spentBeforeMs: deadline.budgetMs - leftAtStartMs,
    elapsedMs,
    lateMs,
  });
}

/** The budget of a call's own limit `limit` of `limitMs`, which fired after `elapsedMs`, `lateMs` after its due time. */
export function ownBudget(limit: string, limitMs: number, elapsedMs: number, lateMs: number): TimeoutBudget {
  return timeoutBudget({
    limit,
    inherited: false,
    source: undefined,
    budgetMs: limitMs,
    spentBeforeMs: 0,
    elapsedMs,
    lateMs,
  });
}
