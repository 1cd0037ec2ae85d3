/**
 * The public types of @tickwheel/fetch: options, retry options, the shapes of fetch it wraps.
 */
import type { TimingWheel } from '@tickwheel/core';

/**
 * Retries, as ky does them and named as ky names them: of attempts that timed out before their
 * response headers (with a per-attempt `totalMs`/`headersMs`), of responses whose status is in
 * `statusCodes` (honouring `Retry-After`), and, when asked, of network errors; bounded by
 * `budgetMs` and the ambient deadline. Only `methods` are retried, except after a connect
 * timeout (nothing was sent). The last response is returned as fetch returns it, never thrown.
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
  /** The longest backoff delay, in ms, applied after `jitter` (ky's `backoffLimit`). Default none (`0` or `Infinity`). */
  backoffLimit?: number;
  /**
   * Randomises each backoff delay (never a `Retry-After` delay): `true` draws uniformly from 0 to
   * the delay (full jitter); a function maps the delay to the one used (a result that is not a
   * finite number >= 0 is ignored). Default: none.
   */
  jitter?: boolean | ((delayMs: number) => number);
  /**
   * Methods that may be retried, upper case. Default: the idempotent methods GET, HEAD, OPTIONS,
   * PUT, DELETE and TRACE (RFC 9110 §9.2.2). POST and PATCH are never retried unless listed here
   * (a connect timeout excepted: nothing was sent).
   */
  methods?: readonly string[];
  /**
   * Response statuses that are retried (ky's list by default: 408, 413, 429, 500, 502, 503, 504).
   * 413 is retried only with a retry timing header. `[]`: no status is retried.
   */
  statusCodes?: readonly number[];
  /**
   * The statuses of `statusCodes` whose `Retry-After` (delay seconds or an HTTP date; or else
   * `RateLimit-Reset` and its aliases) sets the delay instead of the backoff. Default 413, 429 and 503.
   */
  afterStatusCodes?: readonly number[];
  /**
   * The longest `Retry-After` waited for, in ms: a response asking for longer is returned at once.
   * Default: none (`0` or `Infinity`); the budget and the ambient deadline still bound it.
   */
  maxRetryAfter?: number;
  /** Also retry fetch's network errors (`TypeError: fetch failed`: refused, reset, DNS). Default false. */
  retryOnNetworkError?: boolean;
  /**
   * Called before each retry, before the backoff delay; `attempt` counts from 1. `error` is the
   * attempt's TimeoutError or network error; for a retried status it is undefined and `response`
   * is the response (its body is cancelled once this returns).
   */
  onRetry?: (error: Error | undefined, attempt: number, response: ResponseLike | undefined) => void;
}

/**
 * Timeouts of {@link withTimeouts}, given when wrapping and overridable per request through
 * `init.timeouts`. Every limit is optional; `0` (or `Infinity`) switches it off, also for one
 * request a limit the wrapper was built with. `false` does the same but is deprecated (a one-time
 * warning; it stops working in 1.0).
 */
export interface TimeoutOptions {
  /**
   * From the start of an attempt until a connection can carry it (DNS, TCP and TLS, or a
   * pooled connection at once), in ms. With it, `headersMs` counts from the send. Needs a fetch
   * that sends through `init.dispatcher` (Node's fetch, `undici.fetch`).
   */
  connectMs?: number | false;
  /** From the start of an attempt until its response body has fully arrived, in ms. */
  totalMs?: number | false;
  /**
   * Until the response headers arrive, in ms: from the end of the request body's upload for a
   * request with a body (the upload is not the server's answer being late; see `uploadIdleMs`),
   * else from the send with `connectMs`, else from the start of the attempt; at most `totalMs`.
   */
  headersMs?: number | false;
  /**
   * The longest the server or the network may leave the upload of a request body stalled while
   * the body has data ready to send, in ms; past it the request fails with a TimeoutError of
   * phase `'upload'`. Time your own body stream spends producing its next chunk does not count,
   * and an upload that keeps moving lives as long as it moves. Needs a fetch that sends through
   * `init.dispatcher` (Node's fetch, `undici.fetch`).
   */
  uploadIdleMs?: number | false;
  /**
   * The longest the server may leave the body silent while fetch is ready for more of it, in ms.
   * Time your code spends not reading does not count once fetch's buffer is full (fetch then
   * pauses the connection, and the limit with it).
   */
  bodyIdleMs?: number | false;
  /**
   * For an event stream (`text/event-stream`, `application/x-ndjson`, `application/jsonl`): from
   * the response headers until the first progress event (see `isProgress`), in ms; past it the
   * body fails with a TimeoutError of phase `'first-event'`. Other responses ignore it.
   */
  firstEventMs?: number | false;
  /**
   * For an event stream: the longest silence between two progress events, in ms (and from the
   * headers to the first one when `firstEventMs` is off); past it the body fails with a
   * TimeoutError of phase `'event-idle'`. Keep-alive comments and blank lines keep `bodyIdleMs`
   * satisfied but not this. Other responses ignore it.
   */
  eventIdleMs?: number | false;
  /**
   * Which events of an event stream count as progress for `firstEventMs` and `eventIdleMs`.
   * Default: every SSE event the EventSource parser dispatches (one with a `data` field) and
   * every non-blank NDJSON line; comments and blank lines never reach it.
   */
  isProgress?: (event: StreamEvent) => boolean;
  /**
   * Held back from an ambient deadline's remaining time, in ms, so the caller has time left to
   * answer: the request gets what is left less this. Default 0.
   */
  reserveMs?: number;
  /**
   * When less than this is left of the ambient deadline (after `reserveMs`) as an attempt would
   * start, it rejects at once with a TimeoutError (phase `'total'`) without calling fetch. Default 0.
   */
  minBudgetMs?: number;
  /**
   * The request header each attempt sends its remaining budget in, in whole ms rounded down (for
   * example `'connect-timeout-ms'`, Connect RPC's; `'x-envoy-expected-rq-timeout-ms'`, Envoy's), so a
   * service that reads it (such as `@tickwheel/http`) works within the time this caller still
   * waits, as gRPC services do with `grpc-timeout`. The budget is the time left of the attempt's
   * `totalMs`, the retry budget and the ambient deadline (less `reserveMs`), whichever ends first;
   * with none of them, no header is sent. A value of the same header set by the caller is kept
   * when it is a smaller whole number of ms. Default `false` (off).
   */
  deadlineHeader?: string | false;
  /** Retries: an options object, or a number (the `limit`; `0`: none, the default). `false` is deprecated. */
  retry?: RetryOptions | number | false;
  /** The wheel that times the requests. Default: the process-wide `sharedWheel()`. */
  wheel?: TimingWheel;
}

/**
 * An event of a response body that is an event stream, as `isProgress` gets it: for SSE, the
 * event as the WHATWG EventSource parser dispatches it (`event` is its type, `'message'` unless
 * an `event:` field set it; `id` the last event ID so far, `''` without one); for NDJSON and
 * JSON Lines, `{ data }` with one line (without its line end).
 */
export interface StreamEvent {
  /** The SSE event's data (its `data:` lines joined by LF), or the NDJSON line. */
  readonly data: string;
  /** The SSE event type; absent for an NDJSON line. */
  readonly event?: string;
  /** The SSE last event ID; absent for an NDJSON line. */
  readonly id?: string;
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
  /** Read for retry timing headers (`Retry-After`) when a status is retried. */
  readonly headers?: { get(name: string): string | null };
}

/**
 * Any function shaped like `fetch`: Node's global `fetch`, `undici.fetch`, or a wrapper of them.
 * (Parameters are `never` so that every such function, whatever its own input and init types,
 * satisfies the constraint; the wrapper hands them through unchanged. The response's `body` is
 * only required to be an object: with the DOM lib loaded, as TypeScript 7's defaults do, the
 * global `ReadableStream` is the DOM's, to which undici's `node:stream/web` one is not assignable.)
 */
export type FetchLike = (
  input: never,
  init?: never,
) => Promise<Omit<ResponseLike, 'body'> & { readonly body: object | null }>;

/**
 * The function {@link withTimeouts} returns: the wrapped fetch's own signature, plus an
 * overload whose `init` may carry per-request `timeouts`. It is assignable wherever the
 * original fetch type is expected, and `Parameters`/`ReturnType` of it are the original's.
 */
export type TimedFetch<F extends FetchLike> = F extends (input: infer Input, init?: infer Init) => infer Result
  ? ((input: Input, init?: NonNullable<Init> & TimeoutsInit) => Result) & F
  : F;
