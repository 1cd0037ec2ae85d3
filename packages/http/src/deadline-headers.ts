/**
 * Reading a caller's deadline from the request headers: whole ms, or gRPC's `grpc-timeout` format.
 */

/**
 * `grpc-timeout`'s syntax (gRPC over HTTP/2): 1 to 8 digits, then `H`, `M`, `S`, `m`, `u` or `n`.
 * grpc-js ignores a value that does not match, and so do we.
 */
const GRPC_TIMEOUT = /^(\d{1,8})([HMSmun])$/;
const GRPC_UNIT_MS: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 1e-3, n: 1e-6 };
/** Whole ms, as Connect's `connect-timeout-ms` (at most 10 digits) and Envoy's header say it. */
const WHOLE_MS = /^\d{1,15}$/;

/**
 * The caller's deadline in ms from the first of `names` (lower case) present with a valid value,
 * or `Infinity`. Malformed values are skipped, never thrown on; a header sent twice is malformed
 * (node:http would join it with `, `). Read from the request's `rawHeaders` (name, value, ...):
 * node:http builds `req.headers` only when something first reads it, and a server whose handlers
 * never do would otherwise build it on every request for this alone.
 */
export function callerLimitFromRaw(rawHeaders: readonly string[], names: readonly string[]): number {
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    const value = onlyValue(rawHeaders, name);
    if (value === undefined) continue;
    const limitMs = limitOf(name, value);
    if (limitMs !== undefined) return limitMs;
  }
  return Infinity;
}

/** The value of the header `name` (lower case) in `rawHeaders` when it was sent exactly once. */
function onlyValue(rawHeaders: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i];
    if (raw.length !== name.length || raw.toLowerCase() !== name) continue;
    if (value !== undefined) return undefined;
    value = rawHeaders[i + 1];
  }
  return value;
}

/** The limit one header's value gives, in ms, or undefined when it is malformed. */
function limitOf(name: string, value: string): number | undefined {
  if (name === 'grpc-timeout') {
    const match = GRPC_TIMEOUT.exec(value);
    return match === null ? undefined : Number(match[1]) * GRPC_UNIT_MS[match[2]];
  }
  return WHOLE_MS.test(value) ? Number(value) : undefined;
}
