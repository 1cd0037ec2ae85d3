/**
 * The public types of @tickwheel/grpc: both interceptors' options with their defaults tables.
 */
import type { TimingWheel } from '@tickwheel/core';

/**
 * Which limit ended a client call; it is named in the status details.
 *
 * - `default`: the interceptor's `timeoutMs`
 * - `service`: an override keyed `'/pkg.Service'`
 * - `method`: an override keyed `'/pkg.Service/Method'`
 * - `explicit`: the caller's own `deadline` call option
 * - `propagated`: the deadline of the server call this one is made for, from the `parent` call
 *   option or the ambient {@link @tickwheel/core#currentDeadline}
 */
export type DeadlineLimit = 'default' | 'service' | 'method' | 'explicit' | 'propagated';

/**
 * Which limit ended a server call; it is named in the status details.
 *
 * - `propagated`: the client's deadline, sent in the `grpc-timeout` header
 * - `default`: `defaultTimeoutMs`, for a call that came without a deadline
 * - `max`: `maxTimeoutMs`, which caps whatever the client asked for
 */
export type ServerDeadlineLimit = 'propagated' | 'default' | 'max';

/** Per-service or per-method settings of {@link DeadlineInterceptorOptions.overrides}. */
export interface MethodDeadlineOptions {
  /** Timeout of each call of the method(s), from the call's start. `Infinity` lifts the default. */
  timeoutMs?: number;
  /** Idle limit between two received messages of a server-streaming or bidi call. `Infinity` lifts the default. */
  streamIdleMs?: number;
  /**
   * Headroom kept from a propagated budget (the `parent` call's or the ambient deadline): the
   * call gets that budget minus this, so the handler making it has time left to answer. An
   * explicit `deadline` call option and the configured timeouts are not shortened. `0`: none.
   */
  reserveMs?: number;
  /**
   * When less than this is left of a propagated budget (after `reserveMs`), the call fails at
   * once with `DEADLINE_EXCEEDED` and is never sent. `0`: only a spent budget fails at once.
   */
  minBudgetMs?: number;
  /**
   * Retries of unary calls inside the deadline (gRFC A6's semantics); see {@link RetryOptions}.
   * Streaming calls are never retried. `{ limit: 0 }` lifts a retry set above.
   */
  retry?: RetryOptions;
}

/**
 * Unary retries inside the call's deadline. Names map onto gRFC A6's `retryPolicy`:
 * `limit` = `maxAttempts - 1`, `statusCodes` = `retryableStatusCodes`, `backoff` =
 * `initialBackoff`, `maxBackoff`, `backoffMultiplier` and A6's jitter.
 *
 * | option | default | meaning |
 * |---|---|---|
 * | `limit` | `2` | retries after the first attempt |
 * | `perAttemptMs` | none (`Infinity`) | an attempt with no response headers by then is ended with `DEADLINE_EXCEEDED` (retried if listed) |
 * | `statusCodes` | `['UNAVAILABLE']` | the codes an uncommitted attempt is retried on, by name or number |
 * | `backoff.initialMs` | `100` | base delay before the first retry |
 * | `backoff.maxMs` | `1000` | cap on the base delay |
 * | `backoff.multiplier` | `2` | growth of the base delay per retry |
 * | `backoff.jitter` | `0.2` | each delay is the base times a random factor in [1 - jitter, 1 + jitter] |
 */
export interface RetryOptions {
  limit?: number;
  perAttemptMs?: number;
  statusCodes?: ReadonlyArray<string | number>;
  backoff?: { initialMs?: number; maxMs?: number; multiplier?: number; jitter?: number };
}

/**
 * Options of {@link deadlineInterceptor}. Every one is optional; without any, the interceptor
 * still enforces explicit and propagated deadlines on the wheel.
 *
 * | option | default | meaning |
 * |---|---|---|
 * | `timeoutMs` | none (`Infinity`) | timeout of every call, from its start |
 * | `streamIdleMs` | none (`Infinity`) | longest silence between received messages of a response stream |
 * | `reserveMs` | `0` | headroom taken off a propagated budget before the call is sent |
 * | `minBudgetMs` | `0` | the least propagated budget worth sending; below it the call fails at once |
 * | `retry` | none | unary retries inside the deadline ({@link RetryOptions}) |
 * | `overrides` | `{}` | per-service (`'/pkg.Service'`) and per-method (`'/pkg.Service/Method'`) settings; a number is a `timeoutMs` |
 * | `wheel` | `sharedWheel()` | the timing wheel that times the calls |
 */
export interface DeadlineInterceptorOptions extends MethodDeadlineOptions {
  /**
   * Settings by service (`'/pkg.Service'`) or method (`'/pkg.Service/Method'`), the same paths
   * grpc-js uses. A method key wins over its service key, which wins over the top-level options;
   * each setting falls back separately. A number is shorthand for `{ timeoutMs }`.
   */
  overrides?: Readonly<Record<string, number | MethodDeadlineOptions>>;
  /** The wheel that times the calls. Default: `sharedWheel()`. */
  wheel?: TimingWheel;
}

/** Per-service or per-method settings of {@link ServerDeadlineInterceptorOptions.overrides}. */
export interface ServerMethodDeadlineOptions {
  /** Deadline of a call that arrives without one (no `grpc-timeout` header). `Infinity`: none. */
  defaultTimeoutMs?: number;
  /** The most any call may take, whatever the client asked for. `Infinity`: no cap. */
  maxTimeoutMs?: number;
}

/**
 * Options of {@link serverDeadlineInterceptor}. Every one is optional; without any, the
 * interceptor enforces the client's `grpc-timeout` only.
 *
 * | option | default | meaning |
 * |---|---|---|
 * | `defaultTimeoutMs` | none (`Infinity`) | deadline of calls that arrive without one |
 * | `maxTimeoutMs` | none (`Infinity`) | cap on every call's deadline |
 * | `overrides` | `{}` | per-service and per-method settings, keyed like the client's |
 * | `wheel` | `sharedWheel()` | the timing wheel that times the calls |
 */
export interface ServerDeadlineInterceptorOptions extends ServerMethodDeadlineOptions {
  /** Settings by service (`'/pkg.Service'`) or method (`'/pkg.Service/Method'`); method keys win. */
  overrides?: Readonly<Record<string, ServerMethodDeadlineOptions>>;
  /** The wheel that times the calls. Default: `sharedWheel()`. */
  wheel?: TimingWheel;
}
