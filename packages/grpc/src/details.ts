/**
 * The status details of the DEADLINE_EXCEEDED statuses this package produces.
 *
 * The client's wording is stable and documented in the README: `Deadline exceeded after <budget> ms (<limit> limit) on <path>`,
 * so logs and tests can tell which limit fired. A server sends grpc-js's own text, which clients
 * match on, and carries the same facts in a trailer ({@link DEADLINE_TRAILER}).
 */

/** A limit fired while the call ran; `budgetMs` is what the call had when it started. */
export function expiredDetails(limit: string, budgetMs: number, path: string): string {
  return `Deadline exceeded after ${Math.round(budgetMs)} ms (${limit} limit) on ${path}`;
}

/** The budget was already spent when the call was made; nothing was sent. */
export function spentDetails(limit: string, path: string): string {
  return `Deadline exceeded before the call started (${limit} limit, 0 ms left) on ${path}`;
}

/** What was left of a propagated budget was below `minBudgetMs`; nothing was sent. */
export function belowMinBudgetDetails(leftMs: number, minBudgetMs: number, path: string): string {
  const left = leftMs > 0 ? Math.floor(leftMs) : 0;
  return `Deadline exceeded before the call started: ${left} ms left of the propagated budget, below minBudgetMs ${minBudgetMs}, on ${path}`;
}

/** A response stream went quiet for longer than its idle limit. */
export function idleDetails(idleMs: number, path: string): string {
  return `Deadline exceeded: no message for ${Math.round(idleMs)} ms (stream idle limit) on ${path}`;
}

/** The details grpc-js's server sends when a call's deadline passes; ours sends the same text. */
export const SERVER_DEADLINE_DETAILS = 'Deadline exceeded';

/**
 * The trailing-metadata entry of a DEADLINE_EXCEEDED our server sends: which limit fired, the
 * budget the call had, and the method, where nobody matching on the details text sees them.
 */
export const DEADLINE_TRAILER = 'tickwheel-deadline';

/** The value of {@link DEADLINE_TRAILER}: `limit=propagated; budget-ms=99; path=/pkg.Service/Method`. */
export function deadlineTrailer(limit: string, budgetMs: number, path: string): string {
  return `limit=${limit}; budget-ms=${Math.round(budgetMs)}; path=${path}`;
}

/** An attempt of a retried call had no response headers within `retry.perAttemptMs`. */
export function perAttemptDetails(perAttemptMs: number, attempt: number, path: string): string {
  return `Deadline exceeded: no response headers within ${Math.round(perAttemptMs)} ms (per-attempt limit, attempt ${attempt}) on ${path}`;
}
