/**
 * The defaults of withTimeouts and the resolution of its options (and per-request `timeouts`) with core's option kit.
 */
import { sharedWheel, type TimingWheel } from '@tickwheel/core';
import { optionKit, orDefault } from '@tickwheel/core/internal';
import type { RetryOptions, StreamEvent, TimeoutOptions } from './types.js';

/** The idempotent methods of RFC 9110 §9.2.2: the ones retried by default. */
export const IDEMPOTENT_METHODS: readonly string[] = Object.freeze([
  'GET',
  'HEAD',
  'OPTIONS',
  'PUT',
  'DELETE',
  'TRACE',
]);

const kit = optionKit('@tickwheel/fetch');

/**
 * Every default in one place. A limit that is off is `0` here (the "off" of every tickwheel
 * limit; `Infinity` and the deprecated `false` mean the same) and `Infinity` once resolved.
 * `retry` is off unless given; a `retry` object fills what it leaves out from `retryDefaults`.
 */
export const DEFAULTS = Object.freeze({
  connectMs: 0,
  totalMs: 0,
  headersMs: 0,
  bodyIdleMs: 0,
  uploadIdleMs: 0,
  firstEventMs: 0,
  eventIdleMs: 0,
  reserveMs: 0,
  minBudgetMs: 0,
  deadlineHeader: false,
  retry: 0,
  retryDefaults: Object.freeze({
    limit: 2,
    backoffMs: 100,
    backoffFactor: 2,
    backoffLimit: 0,
    methods: IDEMPOTENT_METHODS,
    statusCodes: Object.freeze<readonly number[]>([408, 413, 429, 500, 502, 503, 504]),
    afterStatusCodes: Object.freeze<readonly number[]>([413, 429, 503]),
    maxRetryAfter: 0,
    retryOnNetworkError: false,
  }),
} as const);

/** Retry settings with every default filled in. */
export interface ResolvedRetry {
  readonly limit: number;
  /** Infinity when there is no budget. */
  readonly budgetMs: number;
  readonly backoffMs: number;
  readonly backoffFactor: number;
  /** Infinity when there is no cap. */
  readonly backoffLimit: number;
  readonly jitter: true | ((delayMs: number) => number) | undefined;
  readonly methods: ReadonlySet<string>;
  readonly statusCodes: ReadonlySet<number>;
  readonly afterStatusCodes: ReadonlySet<number>;
  /** Infinity when any Retry-After is waited for. */
  readonly maxRetryAfter: number;
  readonly retryOnNetworkError: boolean;
  readonly onRetry: RetryOptions['onRetry'];
}

/** Options with every default filled in; a limit that is off is Infinity. */
export interface ResolvedOptions {
  readonly connectMs: number;
  readonly totalMs: number;
  readonly headersMs: number;
  readonly bodyIdleMs: number;
  readonly uploadIdleMs: number;
  readonly firstEventMs: number;
  readonly eventIdleMs: number;
  /** Undefined: the default (every data-carrying SSE event, every non-blank line). */
  readonly isProgress: ((event: StreamEvent) => boolean) | undefined;
  /** True when firstEventMs or eventIdleMs is set: event streams are scanned. */
  readonly watchEvents: boolean;
  readonly reserveMs: number;
  readonly minBudgetMs: number;
  /** The header each attempt sends its remaining budget in, lower case; undefined when off. */
  readonly deadlineHeader: string | undefined;
  readonly wheel: TimingWheel;
  /** Undefined when requests are never retried. */
  readonly retry: ResolvedRetry | undefined;
  /** The retry budget across attempts (`retry.budgetMs`), even with a retry limit of 0; Infinity when none. */
  readonly budgetMs: number;
  /** The retry options as given (merged over the wrapper's), so a request can override single fields. */
  readonly retrySource: RetryOptions | undefined;
  /** True when no limit and no retry is configured: only an ambient deadline can time a request. */
  readonly untimed: boolean;
}

/** The most retries a request may make: far beyond any sane policy, low enough to never loop for ever. */
const MAX_RETRIES = 1_000;

const OPTION_KEYS = [
  'connectMs',
  'totalMs',
  'headersMs',
  'bodyIdleMs',
  'uploadIdleMs',
  'firstEventMs',
  'eventIdleMs',
  'isProgress',
  'reserveMs',
  'minBudgetMs',
  'retry',
  'wheel',
  'deadlineHeader',
];
const RETRY_KEYS = [
  'limit',
  'budgetMs',
  'backoffMs',
  'backoffFactor',
  'backoffLimit',
  'jitter',
  'methods',
  'statusCodes',
  'afterStatusCodes',
  'maxRetryAfter',
  'retryOnNetworkError',
  'onRetry',
];

/**
 * Validates `options` and fills in defaults, or, with `base`, applies them as per-request
 * overrides of the wrapper's resolved options.
 *
 * @param prefix - prepended to option names in error messages (`'timeouts.'` per request)
 * @throws TypeError/RangeError naming the option and the offending value
 */
export function resolveOptions(
  options: TimeoutOptions,
  base: ResolvedOptions | undefined,
  prefix: string,
): ResolvedOptions {
  if (options === undefined || options === null || typeof options !== 'object') {
    throw kit.typeError(prefix ? prefix.slice(0, -1) : 'options', 'must be an object', options);
  }
  kit.object(options, prefix ? prefix.slice(0, -1) : 'options', OPTION_KEYS);
  const connectMs = limit(options.connectMs, base?.connectMs, `${prefix}connectMs`);
  const totalMs = limit(options.totalMs, base?.totalMs, `${prefix}totalMs`);
  const headersMs = limit(options.headersMs, base?.headersMs, `${prefix}headersMs`);
  const bodyIdleMs = limit(options.bodyIdleMs, base?.bodyIdleMs, `${prefix}bodyIdleMs`);
  const uploadIdleMs = limit(options.uploadIdleMs, base?.uploadIdleMs, `${prefix}uploadIdleMs`);
  const firstEventMs = limit(options.firstEventMs, base?.firstEventMs, `${prefix}firstEventMs`);
  const eventIdleMs = limit(options.eventIdleMs, base?.eventIdleMs, `${prefix}eventIdleMs`);
  const isProgress =
    options.isProgress === undefined
      ? base?.isProgress
      : kit.function<(event: StreamEvent) => boolean>(options.isProgress, `${prefix}isProgress`);
  const watchEvents = firstEventMs !== Infinity || eventIdleMs !== Infinity;
  if (headersMs !== Infinity && headersMs > totalMs) {
    throw kit.rangeError(`${prefix}headersMs`, `must not exceed totalMs (${totalMs})`, headersMs);
  }
  if (connectMs !== Infinity && connectMs > totalMs) {
    throw kit.rangeError(`${prefix}connectMs`, `must not exceed totalMs (${totalMs})`, connectMs);
  }
  const reserveMs =
    options.reserveMs === undefined ? (base?.reserveMs ?? 0) : kit.durationMs(options.reserveMs, `${prefix}reserveMs`);
  const minBudgetMs =
    options.minBudgetMs === undefined
      ? (base?.minBudgetMs ?? 0)
      : kit.durationMs(options.minBudgetMs, `${prefix}minBudgetMs`);
  const deadlineHeader =
    options.deadlineHeader === undefined
      ? base?.deadlineHeader
      : headerName(options.deadlineHeader, `${prefix}deadlineHeader`);
  let wheel = base?.wheel;
  if (options.wheel !== undefined || wheel === undefined) {
    wheel = options.wheel === undefined ? sharedWheel() : kit.wheel(options.wheel, `${prefix}wheel`);
  }
  let retrySource = base?.retrySource;
  if (options.retry !== undefined) retrySource = mergeRetry(options.retry, retrySource, `${prefix}retry`);
  const retry = retrySource === undefined ? undefined : resolveRetry(retrySource, `${prefix}retry.`);
  return {
    connectMs,
    totalMs,
    headersMs,
    bodyIdleMs,
    uploadIdleMs,
    firstEventMs,
    eventIdleMs,
    isProgress,
    watchEvents,
    reserveMs,
    minBudgetMs,
    deadlineHeader,
    wheel,
    retry: retry !== undefined && retry.limit > 0 ? retry : undefined,
    budgetMs: retry?.budgetMs ?? Infinity,
    retrySource,
    untimed:
      connectMs === Infinity &&
      totalMs === Infinity &&
      headersMs === Infinity &&
      bodyIdleMs === Infinity &&
      uploadIdleMs === Infinity &&
      !watchEvents &&
      (retry === undefined || retry.limit === 0) &&
      (retry?.budgetMs ?? Infinity) === Infinity,
  };
}

/** An HTTP field name (RFC 9110 §5.1: a token), lower case; `false`: off. */
function headerName(value: unknown, name: string): string | undefined {
  if (value === false) return undefined;
  if (typeof value !== 'string' || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(value)) {
    throw kit.typeError(name, 'must be an HTTP header name (such as connect-timeout-ms) or false (off)', value);
  }
  return value.toLowerCase();
}

/** A limit in ms: the given value (0, Infinity and deprecated false: off), or the inherited value when undefined. */
function limit(value: unknown, inherited: number | undefined, name: string): number {
  if (value === undefined) return inherited ?? Infinity;
  return kit.limitMs(value, name);
}

function mergeRetry(value: unknown, inherited: RetryOptions | undefined, name: string): RetryOptions | undefined {
  if (value === false) {
    kit.limitMs(false, name); // the one-time deprecation warning
    return undefined;
  }
  if (typeof value === 'number') return { ...inherited, limit: value };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw kit.typeError(name, 'must be an object or a number (0: no retries)', value);
  }
  return { ...inherited, ...(value as RetryOptions) };
}

function resolveRetry(retry: RetryOptions, prefix: string): ResolvedRetry {
  kit.object(retry, prefix.slice(0, -1), RETRY_KEYS);
  const defaults = DEFAULTS.retryDefaults;
  const methods = orDefault(retry.methods, defaults.methods);
  if (!Array.isArray(methods) || !methods.every((m) => typeof m === 'string')) {
    throw kit.typeError(`${prefix}methods`, 'must be an array of method names', methods);
  }
  const jitter = retry.jitter;
  if (jitter !== undefined && typeof jitter !== 'boolean' && typeof jitter !== 'function') {
    throw kit.typeError(`${prefix}jitter`, 'must be a boolean or a function (delayMs) => delayMs', jitter);
  }
  return {
    limit: kit.integer(orDefault(retry.limit, defaults.limit), `${prefix}limit`, 0, MAX_RETRIES),
    budgetMs: retry.budgetMs === undefined ? Infinity : kit.limitMs(retry.budgetMs, `${prefix}budgetMs`),
    backoffMs: kit.durationMs(orDefault(retry.backoffMs, defaults.backoffMs), `${prefix}backoffMs`),
    backoffFactor: kit.number(
      orDefault(retry.backoffFactor, defaults.backoffFactor),
      `${prefix}backoffFactor`,
      1,
      1_000,
    ),
    backoffLimit: kit.limitMs(orDefault(retry.backoffLimit, defaults.backoffLimit), `${prefix}backoffLimit`),
    jitter: jitter === true ? true : jitter === false ? undefined : jitter,
    methods: new Set(methods.map((m: string) => m.toUpperCase())),
    statusCodes: statusSet(orDefault(retry.statusCodes, defaults.statusCodes), `${prefix}statusCodes`),
    afterStatusCodes: statusSet(
      orDefault(retry.afterStatusCodes, defaults.afterStatusCodes),
      `${prefix}afterStatusCodes`,
    ),
    maxRetryAfter: kit.limitMs(orDefault(retry.maxRetryAfter, defaults.maxRetryAfter), `${prefix}maxRetryAfter`),
    retryOnNetworkError: kit.boolean(
      orDefault(retry.retryOnNetworkError, defaults.retryOnNetworkError),
      `${prefix}retryOnNetworkError`,
    ),
    onRetry:
      retry.onRetry === undefined
        ? undefined
        : kit.function<NonNullable<RetryOptions['onRetry']>>(retry.onRetry, `${prefix}onRetry`),
  };
}

/** An array of HTTP statuses (integers 100 to 599) as a set. */
function statusSet(value: unknown, name: string): ReadonlySet<number> {
  if (!Array.isArray(value)) throw kit.typeError(name, 'must be an array of HTTP status codes', value);
  return new Set(value.map((status: unknown, i) => kit.integer(status, `${name}[${i}]`, 100, 599)));
}
