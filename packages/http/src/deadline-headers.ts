/**
 * Reading a caller's deadline from the request headers: whole ms, or gRPC's `grpc-timeout` format.
 */
import type { IncomingHttpHeaders } from 'node:http';

/**
 * `grpc-timeout`'s syntax (gRPC over HTTP/2): 1 to 8 digits, then `H`, `M`, `S`, `m`, `u` or `n`.
 * grpc-js ignores a value that does not match, and so do we.
 */
const GRPC_TIMEOUT = /^(\d{1,8})([HMSmun])$/;
const GRPC_UNIT_MS: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 1e-3, n: 1e-6 };
/** Whole ms, as Connect's `connect-timeout-ms` (at most 10 digits) and Envoy's header say it. */
const WHOLE_MS = /^\d{1,15}$/;

/**
 * The caller's budget in ms from the first of `names` present with a valid value, or `Infinity`.
 * Malformed values are skipped, never thrown on; a header sent twice (an array, or joined by
 * Node with `, `) is malformed.
 */
export function callerBudgetMs(headers: IncomingHttpHeaders, names: readonly string[]): number {
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    const value = headers[name];
    if (typeof value !== 'string') continue;
    if (name === 'grpc-timeout') {
      const match = GRPC_TIMEOUT.exec(value);
      if (match !== null) return Number(match[1]) * GRPC_UNIT_MS[match[2]];
    } else if (WHOLE_MS.test(value)) {
      return Number(value);
    }
  }
  return Infinity;
}
