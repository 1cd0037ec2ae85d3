import { describeValue, isTimingWheel, requireFunction, requireMs, sharedWheel, type TimingWheel } from '@tickwheel/core';
import type { RetryOptions, TimeoutOptions } from './types.js';

/** The idempotent methods of RFC 9110 §9.2.2: the ones retried by default. */
export const IDEMPOTENT_METHODS: readonly string[] = Object.freeze([
  'GET',
  'HEAD',
  'OPTIONS',
  'PUT',
  'DELETE',
  'TRACE',
]);

/**
 * Every default in one place. A limit that is off is `false` here and `Infinity` once resolved.
 * `retry` is off unless given; a `retry` object fills what it leaves out from `retryDefaults`.
 */
export const DEFAULTS = Object.freeze({
  totalMs: false,
  headersMs: false,
  bodyIdleMs: false,
  retry: false,
  retryDefaults: Object.freeze({ limit: 2, backoffMs: 100, backoffFactor: 2, methods: IDEMPOTENT_METHODS }),
} as const);

/** Retry settings with every default filled in. */
export interface ResolvedRetry {
  readonly limit: number;
  /** Infinity when there is no budget. */
  readonly budgetMs: number;
  readonly backoffMs: number;
  readonly backoffFactor: number;
  readonly methods: ReadonlySet<string>;
  readonly onRetry: RetryOptions['onRetry'];
}

/** Options with every default filled in; a limit that is off is Infinity. */
export interface ResolvedOptions {
  readonly totalMs: number;
  readonly headersMs: number;
  readonly bodyIdleMs: number;
  readonly wheel: TimingWheel;
  /** Undefined when requests are never retried. */
  readonly retry: ResolvedRetry | undefined;
  /** The retry budget across attempts (`retry.budgetMs`), even with a retry limit of 0; Infinity when none. */
  readonly budgetMs: number;
  /** The retry options as given (merged over the wrapper's), so a request can override single fields. */
  readonly retrySource: RetryOptions | undefined;
  /** True when no limit is configured: only an ambient deadline can time a request. */
  readonly untimed: boolean;
}

const OPTION_KEYS = new Set(['totalMs', 'headersMs', 'bodyIdleMs', 'retry', 'wheel']);
const RETRY_KEYS = new Set(['limit', 'budgetMs', 'backoffMs', 'backoffFactor', 'methods', 'onRetry']);

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
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${prefix || 'options'} must be an object, got ${describeValue(options)}`);
  }
  checkKeys(options, OPTION_KEYS, prefix);
  const totalMs = limit(options.totalMs, base?.totalMs, `${prefix}totalMs`);
  const headersMs = limit(options.headersMs, base?.headersMs, `${prefix}headersMs`);
  const bodyIdleMs = limit(options.bodyIdleMs, base?.bodyIdleMs, `${prefix}bodyIdleMs`);
  if (headersMs !== Infinity && headersMs > totalMs) {
    throw new RangeError(`${prefix}headersMs must not exceed totalMs (${totalMs}), got ${headersMs}`);
  }
  let wheel = base?.wheel;
  if (options.wheel !== undefined || wheel === undefined) {
    wheel = options.wheel ?? sharedWheel();
    if (!isTimingWheel(wheel)) {
      throw new TypeError(`${prefix}wheel must be a TimingWheel, got ${describeValue(wheel)}`);
    }
  }
  let retrySource = base?.retrySource;
  if (options.retry !== undefined) retrySource = mergeRetry(options.retry, retrySource, `${prefix}retry`);
  const retry = retrySource === undefined ? undefined : resolveRetry(retrySource, `${prefix}retry.`);
  return {
    totalMs,
    headersMs,
    bodyIdleMs,
    wheel,
    retry: retry !== undefined && retry.limit > 0 ? retry : undefined,
    budgetMs: retry?.budgetMs ?? Infinity,
    retrySource,
    untimed:
      totalMs === Infinity &&
      headersMs === Infinity &&
      bodyIdleMs === Infinity &&
      (retry?.budgetMs ?? Infinity) === Infinity,
  };
}

function checkKeys(options: object, allowed: ReadonlySet<string>, prefix: string): void {
  for (const key of Object.keys(options)) {
    if (!allowed.has(key)) {
      throw new TypeError(
        `unknown option ${prefix}${key}; expected one of ${[...allowed].map((k) => prefix + k).join(', ')}`,
      );
    }
  }
}

/** A limit in ms: the given value, `false` (off, Infinity), or the inherited value when undefined. */
function limit(value: unknown, inherited: number | undefined, name: string): number {
  if (value === undefined) return inherited ?? Infinity;
  if (value === false) return Infinity;
  return requireMs(value, name);
}

function mergeRetry(value: unknown, inherited: RetryOptions | undefined, name: string): RetryOptions | undefined {
  if (value === false) return undefined;
  if (typeof value === 'number') return { ...inherited, limit: value };
  if (value === null || typeof value !== 'object') {
    throw new TypeError(`${name} must be an object, a number or false, got ${describeValue(value)}`);
  }
  return { ...inherited, ...(value as RetryOptions) };
}

function resolveRetry(retry: RetryOptions, prefix: string): ResolvedRetry {
  checkKeys(retry, RETRY_KEYS, prefix);
  const defaults = DEFAULTS.retryDefaults;
  const limit = requireMs(retry.limit ?? defaults.limit, `${prefix}limit`);
  if (!Number.isInteger(limit)) throw new RangeError(`${prefix}limit must be an integer >= 0, got ${limit}`);
  const backoffFactor = requireMs(retry.backoffFactor ?? defaults.backoffFactor, `${prefix}backoffFactor`, 1);
  const methods = retry.methods ?? defaults.methods;
  if (!Array.isArray(methods) || !methods.every((m) => typeof m === 'string')) {
    throw new TypeError(`${prefix}methods must be an array of method names, got ${describeValue(methods)}`);
  }
  return {
    limit,
    budgetMs: retry.budgetMs === undefined ? Infinity : requireMs(retry.budgetMs, `${prefix}budgetMs`),
    backoffMs: requireMs(retry.backoffMs ?? defaults.backoffMs, `${prefix}backoffMs`),
    backoffFactor,
    methods: new Set(methods.map((m: string) => m.toUpperCase())),
    onRetry:
      retry.onRetry === undefined
        ? undefined
        : requireFunction<NonNullable<RetryOptions['onRetry']>>(retry.onRetry, `${prefix}onRetry`),
  };
}
