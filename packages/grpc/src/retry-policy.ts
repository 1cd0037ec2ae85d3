/**
 * The `retry` option of the client interceptor: its checks, and the backoff arithmetic of gRFC A6.
 *
 * The names map onto gRFC A6's `retryPolicy` (github:grpc/proposal, A6-client-retries.md):
 *
 * | ours | gRFC A6 | note |
 * |---|---|---|
 * | `limit` | `maxAttempts` | retries after the first attempt: `maxAttempts = limit + 1` |
 * | `statusCodes` | `retryableStatusCodes` | names (`'UNAVAILABLE'`) or numbers |
 * | `backoff.initialMs` | `initialBackoff` | the base delay before the first retry |
 * | `backoff.maxMs` | `maxBackoff` | the cap on the base delay |
 * | `backoff.multiplier` | `backoffMultiplier` | the base grows by this after each retry |
 * | `backoff.jitter` | (A6's ±20 %) | each delay is the base times a random factor in [1 - jitter, 1 + jitter] |
 * | `perAttemptMs` | (none; grpc-java's unapplied `perAttemptRecvTimeout`) | ends an attempt that has no response headers yet |
 */
import { status as Status } from '@grpc/grpc-js';
import { optionKit } from '@tickwheel/core/internal';
import { DEFAULTS } from './options.js';

const kit = optionKit('@tickwheel/grpc');

/** A unary method's retry settings, checked. */
export interface RetryPlan {
  /** Retries after the first attempt (A6's `maxAttempts` - 1). */
  readonly limit: number;
  /** The longest an attempt may wait for its response headers; `Infinity` for none. */
  readonly perAttemptMs: number;
  /** The status codes an uncommitted attempt is retried on. */
  readonly statusCodes: ReadonlySet<number>;
  readonly initialMs: number;
  readonly maxMs: number;
  readonly multiplier: number;
  readonly jitter: number;
}

const RETRY_KEYS = ['limit', 'perAttemptMs', 'statusCodes', 'backoff'] as const;
const BACKOFF_KEYS = ['initialMs', 'maxMs', 'multiplier', 'jitter'] as const;
const CODE_NAMES = Object.keys(Status).filter((key) => Number.isNaN(Number(key)) && key !== 'OK');

/**
 * Checks a `retry` option (top-level or in an override).
 * @throws TypeError/RangeError naming the option and the value
 */
export function parseRetry(value: unknown, name: string): RetryPlan {
  const raw = kit.object(value, name, RETRY_KEYS);
  const limit = raw.limit === undefined ? DEFAULTS.retry.limit : kit.integer(raw.limit, `${name}.limit`, 0, 1_000);
  const perAttemptMs =
    raw.perAttemptMs === undefined
      ? DEFAULTS.retry.perAttemptMs
      : kit.limitMs(raw.perAttemptMs, `${name}.perAttemptMs`);
  const codes = raw.statusCodes === undefined ? DEFAULTS.retry.statusCodes : raw.statusCodes;
  if (!Array.isArray(codes)) throw kit.typeError(`${name}.statusCodes`, 'must be an array of status codes', codes);
  const statusCodes = new Set<number>();
  codes.forEach((code: unknown, i) => statusCodes.add(statusCode(code, `${name}.statusCodes[${i}]`)));
  const backoff = kit.object(raw.backoff, `${name}.backoff`, BACKOFF_KEYS);
  const defaults = DEFAULTS.retry.backoff;
  const initialMs =
    backoff.initialMs === undefined
      ? defaults.initialMs
      : kit.durationMs(backoff.initialMs, `${name}.backoff.initialMs`);
  const maxMs =
    backoff.maxMs === undefined
      ? Math.max(defaults.maxMs, initialMs)
      : kit.durationMs(backoff.maxMs, `${name}.backoff.maxMs`);
  if (maxMs < initialMs) {
    throw kit.rangeError(`${name}.backoff.maxMs`, `must be at least backoff.initialMs (${initialMs})`, maxMs);
  }
  const multiplier =
    backoff.multiplier === undefined
      ? defaults.multiplier
      : kit.number(backoff.multiplier, `${name}.backoff.multiplier`, 1, 1_000);
  const jitter =
    backoff.jitter === undefined ? defaults.jitter : kit.number(backoff.jitter, `${name}.backoff.jitter`, 0, 1);
  return { limit, perAttemptMs, statusCodes, initialMs, maxMs, multiplier, jitter };
}

/** A status code given by name (`'UNAVAILABLE'`) or number (`14`); OK is never retried. */
function statusCode(value: unknown, name: string): number {
  if (typeof value === 'string') {
    if (!CODE_NAMES.includes(value))
      throw kit.rangeError(name, `must be a grpc status name other than OK (${CODE_NAMES.join(', ')})`, value);
    return Status[value as keyof typeof Status];
  }
  return kit.integer(value, name, 1, 16);
}

/**
 * The base delay before retry `n` (1 for the first): `initialMs * multiplier^(n-1)`, capped at
 * `maxMs`, as A6's schedule grows it.
 */
export function baseBackoffMs(plan: RetryPlan, n: number): number {
  const base = plan.initialMs * plan.multiplier ** (n - 1);
  return base < plan.maxMs ? base : plan.maxMs;
}

/** The delay before retry `n`: the base times a factor in [1 - jitter, 1 + jitter] drawn from `random` (in [0, 1)). */
export function backoffMs(plan: RetryPlan, n: number, random: number): number {
  return baseBackoffMs(plan, n) * (1 + plan.jitter * (2 * random - 1));
}

/** The trailer a server sets to tell the client when (or whether) to retry (gRFC A6). */
export const PUSHBACK_TRAILER = 'grpc-retry-pushback-ms';

/**
 * What a `grpc-retry-pushback-ms` value says: `undefined` when there is none (use the backoff),
 * a delay in ms when it is a non-negative integer, `-1` for anything else (do not retry, as A6 says).
 */
export function pushbackMs(values: readonly unknown[]): number | undefined {
  if (values.length === 0) return undefined;
  const text = String(values[0]);
  return /^\d+$/.test(text) ? Number(text) : -1;
}
