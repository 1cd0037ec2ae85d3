/**
 * The public types of @tickwheel/fetch: options, retry options, timeout phases.
 * Must not depend on: runtime code (types only; options.ts has the defaults).
 */
import type { TimingWheel } from '@tickwheel/core';
import type { TimeoutError } from './timeout-error.js';

/** Which limit a {@link TimeoutError} reports. */
export type TimeoutPhase = 'headers' | 'body' | 'total';

/**
 * Retries of requests whose attempt timed out before the response headers arrived, with a
 * per-attempt timeout (`totalMs`, `headersMs`) and a budget across all attempts (`budgetMs`),
 * like ky v2's `timeout` and `totalTimeout`. Only idempotent methods are retried.
 */
export interface RetryOptions {
  /** Retries after the first attempt (an integer >= 0). Default 2 when `retry` is an object. */
  limit?: number;
  /**
   * Budget for the whole request across attempts and backoff delays, up to the end of the final
   * response's body. Default: none (each attempt is bounded by `totalMs`/`headersMs` only); `0` or `Infinity`: none.
   */
  budgetMs?: number;
  /** Delay before the first retry; each later retry waits `backoffFactor` times longer. Default 100. */
  backoffMs?: number;
  /** Multiplier of the backoff delay per retry, >= 1. Default 2. */
  backoffFactor?: number;
  /**
   * Methods that may be retried, upper case. Default: the idempotent methods GET, HEAD, OPTIONS,
   * PUT, DELETE and TRACE (RFC 9110 §9.2.2). POST and PATCH are never retried unless listed here.
   */
  methods?: readonly string[];
  /** Called before each retry (after the timeout, before the backoff delay); `attempt` counts from 1. */
  onRetry?: (error: TimeoutError, attempt: number) => void;
}

/**
 * Timeouts of {@link withTimeouts}, given when wrapping and overridable per request through
 * `init.timeouts`. Every limit is optional; `0` (or `Infinity`) switches it off, also for one
 * request a limit the wrapper was built with. `false` does the same but is deprecated (a one-time
 * warning; it stops working in 1.0).
 */
export interface TimeoutOptions {
  /** From the start of an attempt until its response body has fully arrived, in ms. */
  totalMs?: number | false;
  /** From the start of an attempt until the response headers arrive, in ms; at most `totalMs`. */
  headersMs?: number | false;
  /**
   * The longest the server may leave the body silent while fetch is ready for more of it, in ms.
   * Time your code spends not reading does not count once fetch's buffer is full (fetch then
   * pauses the connection, and the limit with it).
   */
  bodyIdleMs?: number | false;
  /** Retries on timeout: an options object, or a number (the `limit`; `0`: none, the default). `false` is deprecated. */
  retry?: RetryOptions | number | false;
  /** The wheel that times the requests. Default: the process-wide `sharedWheel()`. */
  wheel?: TimingWheel;
}

/** What the wrapped fetch accepts in its `init` on top of the fetch function's own options. */
export interface TimeoutsInit {
  /** Per-request overrides of the wrapper's {@link TimeoutOptions}; removed before fetch is called. */
  timeouts?: TimeoutOptions;
}

/** The parts of a fetch `Response` the wrapper reads. */
export interface ResponseLike {
  readonly body: ReadableStream<Uint8Array> | null;
  readonly status: number;
}

/**
 * Any function shaped like `fetch`: Node's global `fetch`, `undici.fetch`, or a wrapper of them.
 * (Parameters are `never` so that every such function, whatever its own input and init types,
 * satisfies the constraint; the wrapper hands them through unchanged.)
 */
export type FetchLike = (input: never, init?: never) => Promise<ResponseLike>;

/**
 * The function {@link withTimeouts} returns: the wrapped fetch's own signature, plus an
 * overload whose `init` may carry per-request `timeouts`. It is assignable wherever the
 * original fetch type is expected, and `Parameters`/`ReturnType` of it are the original's.
 */
export type TimedFetch<F extends FetchLike> = F extends (input: infer Input, init?: infer Init) => infer Result
  ? ((input: Input, init?: NonNullable<Init> & TimeoutsInit) => Result) & F
  : F;
