/**
 * The status details of the DEADLINE_EXCEEDED statuses this package produces.
 * Must not depend on: grpc-js, the wheel or the interceptors (plain string formatting).
 *
 * The wording is stable and documented in the README: `Deadline exceeded after <budget> ms (<limit> limit) on <path>`,
 * so logs and tests can tell which limit fired.
 */

/** A limit fired while the call ran; `budgetMs` is what the call had when it started. */
export function expiredDetails(limit: string, budgetMs: number, path: string): string {
  return `Deadline exceeded after ${Math.round(budgetMs)} ms (${limit} limit) on ${path}`;
}

/** The budget was already spent when the call was made; nothing was sent. */
export function spentDetails(limit: string, path: string): string {
  return `Deadline exceeded before the call started (${limit} limit, 0 ms left) on ${path}`;
}

/** A response stream went quiet for longer than its idle limit. */
export function idleDetails(idleMs: number, path: string): string {
  return `Deadline exceeded: no message for ${Math.round(idleMs)} ms (stream idle limit) on ${path}`;
}
