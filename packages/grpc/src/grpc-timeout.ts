import type { Deadline } from '@grpc/grpc-js';

/** The header that carries a call's deadline to the server (gRPC over HTTP/2 spec). */
export const GRPC_TIMEOUT_HEADER = 'grpc-timeout';

/** Units the header may use, coarsest last; the value is at most 8 digits. */
const UNITS: ReadonlyArray<readonly [string, number]> = [
  ['m', 1],
  ['S', 1_000],
  ['M', 60_000],
  ['H', 3_600_000],
];

/**
 * Encodes a relative timeout as a `grpc-timeout` value, the way grpc-js does: whole
 * milliseconds rounded up, switching to a coarser unit when the figure needs more than 8 digits.
 *
 * @example
 * ```ts
 * grpcTimeoutValue(1500.2); // '1501m'
 * ```
 */
export function grpcTimeoutValue(timeoutMs: number): string {
  const ms = timeoutMs > 0 ? timeoutMs : 0;
  for (const [unit, factor] of UNITS) {
    const amount = Math.ceil(ms / factor);
    if (amount < 1e8) return `${amount}${unit}`;
  }
  return '99999999H';
}

/**
 * The milliseconds left until a grpc-js `Deadline` (a `Date` or epoch milliseconds, read on the
 * wall clock), `Infinity` for none. May be negative when the deadline has passed.
 */
export function msUntil(deadline: Deadline | undefined, wallNowMs: number): number {
  if (deadline === undefined) return Infinity;
  const at = typeof deadline === 'number' ? deadline : deadline.getTime();
  // An invalid Date sets no deadline rather than failing every call.
  return Number.isNaN(at) ? Infinity : at - wallNowMs;
}
