/**
 * Reading and writing the `grpc-timeout` header, and tickwheel's header for longer deadlines.
 */
import type { Deadline } from '@grpc/grpc-js';

/**
 * Writing and reading the `grpc-timeout` header (gRPC over HTTP/2: `TimeoutValue TimeoutUnit`,
 * at most 8 ASCII digits, then `H`, `M`, `S`, `m`, `u` or `n`), and the limit grpc-js puts on it.
 *
 * grpc-js's server reads the header as `(digits * unit) | 0` and arms a `setTimeout` with the
 * result: anything past 2^31 - 1 ms wraps round, to a negative figure (the call fails at once
 * with DEADLINE_EXCEEDED) or to a small one (the call ends early). Our client therefore sends
 * `grpc-timeout` only for budgets a grpc-js server reads correctly, and carries longer ones in
 * {@link TICKWHEEL_TIMEOUT_HEADER}, which our server interceptor reads; the client's own wheel
 * timer ends the call at its deadline either way.
 */

/** The header that carries a call's deadline to the server (gRPC over HTTP/2 spec). */
export const GRPC_TIMEOUT_HEADER = 'grpc-timeout';

/**
 * Carries a budget too long for `grpc-timeout` on a grpc-js server, in the same syntax. Our
 * server interceptor reads it and removes it, so handlers never see it.
 */
export const TICKWHEEL_TIMEOUT_HEADER = 'tickwheel-timeout';

/**
 * The longest budget sent as `grpc-timeout`: 2,147,483,000 ms (24 days, 20:31:23), written
 * `2147483S`, the largest value grpc-js's server reads without passing 2^31 - 1 ms. Anything
 * up to it is exact or rounded up to at most this figure; anything longer goes in
 * {@link TICKWHEEL_TIMEOUT_HEADER}.
 */
export const MAX_GRPC_TIMEOUT_MS = 2_147_483_000;

/** The longest budget the header can say at all: 99999999H, about 11,400 years. */
export const MAX_ENCODABLE_MS = 99_999_999 * 3_600_000;

/** Units, coarsest first, with their length in ms. */
const UNITS: ReadonlyArray<readonly [unit: string, ms: number]> = [
  ['H', 3_600_000],
  ['M', 60_000],
  ['S', 1_000],
  ['m', 1],
  ['u', 1e-3],
  ['n', 1e-6],
];
const UNIT_MS: Readonly<Record<string, number>> = Object.fromEntries(UNITS);
/** The units a whole number of milliseconds is written in, coarsest first. */
const MS_UNITS = UNITS.slice(0, 4);
const MAX_AMOUNT = 99_999_999;
const VALUE = /^(\d{1,8})([HMSmun])$/;

/**
 * The last value written and the whole milliseconds it says: a client with one timeout per
 * method sends the same figure call after call (its budget rounded up to whole ms): writing it
 * once saves the formatting and a string per call.
 */
let lastMs = -1;
let lastValue = '';

/**
 * Encodes a relative timeout as a `grpc-timeout` value: the budget rounded up to whole
 * milliseconds (as grpc-js's own client sends it), in the coarsest unit that says that exactly in
 * at most 8 digits, or, when none does, in the finest unit that fits, rounded up (the server
 * sees at most one unit more than the budget, never less). Past `99999999H` it says that.
 *
 * Whole milliseconds rather than `u` or `n`: a grpc-js server reads a value as
 * `(digits * unit) | 0` ms, so `1500200u` would give it 1500 ms, less than the budget.
 *
 * @example
 * ```ts
 * grpcTimeoutValue(30_000); // '30S'
 * grpcTimeoutValue(1500.2); // '1501m'
 * grpcTimeoutValue(30 * 86_400_000); // '720H'
 * ```
 */
export function grpcTimeoutValue(timeoutMs: number): string {
  if (!(timeoutMs > 0)) return '0m';
  const ms = Math.ceil(timeoutMs);
  if (ms === lastMs) return lastValue;
  let value = '99999999H';
  if (ms < MAX_ENCODABLE_MS) value = encodeWholeMs(ms);
  lastMs = ms;
  lastValue = value;
  return value;
}

function encodeWholeMs(ms: number): string {
  for (const [unit, unitMs] of MS_UNITS) {
    const amount = ms / unitMs;
    if (amount <= MAX_AMOUNT && Number.isInteger(amount)) return `${amount}${unit}`;
  }
  for (let i = MS_UNITS.length - 1; i >= 0; i--) {
    const [unit, unitMs] = MS_UNITS[i];
    const amount = Math.ceil(ms / unitMs);
    if (amount <= MAX_AMOUNT) return `${amount}${unit}`;
  }
  return '99999999H';
}

/**
 * The milliseconds a `grpc-timeout` value stands for, computed in floating point so that no
 * value overflows (`99999999H` is 3.6e14 ms), or `undefined` when it is not a valid value.
 *
 * @example
 * ```ts
 * parseGrpcTimeout('720H'); // 2_592_000_000
 * ```
 */
export function parseGrpcTimeout(value: string): number | undefined {
  const match = VALUE.exec(value);
  return match === null ? undefined : Number(match[1]) * UNIT_MS[match[2]];
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
