/**
 * The retry rules as ky has them: which failures and statuses are retried, the backoff, and the server's retry timing headers.
 */
import type { ResolvedRetry } from './options.js';

/** The headers of a response, as far as the retry rules read them. */
export interface HeadersLike {
  get(name: string): string | null;
}

/**
 * The backoff before retry number `attempt + 1` (`attempt` from 0): `backoffMs × backoffFactor^attempt`,
 * jittered (`jitter: true`: a uniform draw from 0 to it; a function: its result, unless that
 * is not a finite number >= 0), then capped at `backoffLimit`, in ky's order.
 */
export function backoffDelay(retry: ResolvedRetry, attempt: number): number {
  const delay = retry.backoffMs * retry.backoffFactor ** attempt;
  let jittered = delay;
  if (retry.jitter === true) {
    jittered = Math.random() * delay;
  } else if (retry.jitter !== undefined) {
    jittered = retry.jitter(delay);
    if (!Number.isFinite(jittered) || jittered < 0) jittered = delay;
  }
  return jittered < retry.backoffLimit ? jittered : retry.backoffLimit;
}

/** A retry timing header's value, and whether it may be a Unix time in seconds (the rate-limit reset headers). */
export interface RetryTiming {
  readonly value: string;
  readonly mayBeTimestamp: boolean;
}

/**
 * The server's word on when to retry, in ky's order: `Retry-After`, then `RateLimit-Reset`,
 * `X-RateLimit-Retry-After`, `X-RateLimit-Reset` and `X-Rate-Limit-Reset`.
 */
export function retryTimingHeader(headers: HeadersLike): RetryTiming | undefined {
  const retryAfter = headers.get('retry-after');
  if (retryAfter !== null) return { value: retryAfter, mayBeTimestamp: false };
  const reset = headers.get('ratelimit-reset');
  if (reset !== null) return { value: reset, mayBeTimestamp: true };
  const symfony = headers.get('x-ratelimit-retry-after');
  if (symfony !== null) return { value: symfony, mayBeTimestamp: false };
  const alias = headers.get('x-ratelimit-reset') ?? headers.get('x-rate-limit-reset');
  if (alias !== null) return { value: alias, mayBeTimestamp: true };
  return undefined;
}

/** Seconds values at least this large in a reset header are Unix times, as ky reads them (2024-01-01). */
const TIMESTAMP_THRESHOLD_MS = Date.UTC(2024, 0, 1);
const DELAY_SECONDS = /^\d+$/;

/**
 * How long a retry timing header asks to wait, in ms, from `nowMs` (wall clock, ms since the
 * epoch): delay seconds, or an HTTP date (RFC 9110 §5.6.7, as `Date.parse` reads IMF-fixdate
 * and the obsolete forms); never negative. Undefined for a value that is neither: the usual
 * backoff then applies, as in ky.
 */
export function retryTimingDelay(timing: RetryTiming, nowMs: number): number | undefined {
  const value = timing.value.trim();
  if (DELAY_SECONDS.test(value)) {
    let delay = Number(value) * 1000;
    if (timing.mayBeTimestamp && delay >= TIMESTAMP_THRESHOLD_MS) delay -= nowMs;
    return delay > 0 ? delay : 0;
  }
  if (!/GMT$|\d{4}$/.test(value)) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return at > nowMs ? at - nowMs : 0;
}

/** The messages fetch implementations reject with on a network error (undici, Chromium, Firefox, Safari), as ky lists them. */
const NETWORK_ERROR_MESSAGES = new Set([
  'fetch failed',
  'Failed to fetch',
  'NetworkError when attempting to fetch resource.',
  'Load failed',
  'Network request failed',
]);

/** True for fetch's own network error (`TypeError: fetch failed` in Node): nothing else is retried as one. */
export function isNetworkError(error: unknown): boolean {
  return error instanceof TypeError && NETWORK_ERROR_MESSAGES.has(error.message);
}
