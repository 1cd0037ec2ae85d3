/**
 * Checks shared by both interceptors' options, with core's option kit.
 */
import type { TimingWheel } from '@tickwheel/core';
import { optionKit } from '@tickwheel/core/internal';

const kit = optionKit('@tickwheel/grpc');

/**
 * The defaults of both interceptors, in one place: every limit is off (`Infinity`) until set, so
 * installing an interceptor alone changes nothing; `wheel` defaults to `sharedWheel()`.
 */
export const DEFAULTS = Object.freeze({
  /** `deadlineInterceptor`: the budget of a call that has no deadline of its own. */
  timeoutMs: Infinity,
  /** `deadlineInterceptor`: the longest a streaming response may stay silent. */
  streamIdleMs: Infinity,
  /** `deadlineInterceptor`: the headroom taken off a propagated budget (none). */
  reserveMs: 0,
  /** `deadlineInterceptor`: the least propagated budget worth sending (any that is not spent). */
  minBudgetMs: 0,
  /**
   * `deadlineInterceptor`: what a `retry` option leaves out (retries are off until `retry` is
   * given): two retries on UNAVAILABLE, no per-attempt limit, and gRFC A6's backoff shape.
   */
  retry: Object.freeze({
    limit: 2,
    perAttemptMs: Infinity,
    statusCodes: Object.freeze<string[]>(['UNAVAILABLE']),
    backoff: Object.freeze({ initialMs: 100, maxMs: 1_000, multiplier: 2, jitter: 0.2 }),
  }),
  /** `serverDeadlineInterceptor`: the budget of a call whose client sent no `grpc-timeout`. */
  defaultTimeoutMs: Infinity,
  /** `serverDeadlineInterceptor`: the cap on any client's budget. */
  maxTimeoutMs: Infinity,
});

/**
 * Checks shared by both interceptors' options. Everything is checked when the interceptor is
 * built, so a typo in a method key or a NaN timeout fails at startup, not on the first call.
 */

/** `'/pkg.Service'`: the leading slash, then the fully qualified service name. */
const SERVICE_KEY = /^\/[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;
/** `'/pkg.Service/Method'`: the path grpc-js puts in `method_definition.path`. */
const METHOD_KEY = /^\/[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\/[A-Za-z_][A-Za-z0-9_]*$/;

/** Overrides split by the kind of key, ready for lookups by call path. */
export interface Overrides<T> {
  readonly services: ReadonlyMap<string, T>;
  readonly methods: ReadonlyMap<string, T>;
}

/**
 * Throws unless `value` is a limit in ms: `0` and `Infinity` (and the deprecated `false`) mean no
 * limit and read as `Infinity`.
 * @returns the value, or `undefined` when it was not given
 */
export function optionalLimitMs(value: unknown, name: string): number | undefined {
  return value === undefined ? undefined : kit.limitMs(value, name);
}

/**
 * Throws unless `value` is a finite number of ms >= 0 (an amount, not a limit: `0` is none).
 * @returns the value, or `undefined` when it was not given
 */
export function optionalAmountMs(value: unknown, name: string): number | undefined {
  return value === undefined ? undefined : kit.durationMs(value, name);
}

/**
 * Throws a TypeError unless `value` is an options object (or `undefined`, read as `{}`) whose
 * keys are all in `known`, so that a misspelt option fails instead of being ignored.
 */
export function optionsObject(value: unknown, name: string, known?: readonly string[]): Record<string, unknown> {
  if (value === null || (value !== undefined && typeof value !== 'object') || Array.isArray(value)) {
    throw kit.typeError(name, 'must be an object', value);
  }
  return known === undefined ? ((value ?? {}) as Record<string, unknown>) : kit.object(value, name, known);
}

/** Throws unless `value` is an open `TimingWheel` from any copy of core (or is `undefined`). */
export function optionalWheel(value: unknown, name: string): TimingWheel | undefined {
  return value === undefined ? undefined : kit.wheel(value, name);
}

/**
 * Validates an `overrides` option: each key must be `'/pkg.Service'` or `'/pkg.Service/Method'`
 * and each value is checked by `parse`.
 */
export function parseOverrides<T>(
  value: unknown,
  name: string,
  parse: (entry: unknown, entryName: string) => T,
): Overrides<T> {
  const services = new Map<string, T>();
  const methods = new Map<string, T>();
  for (const [key, entry] of Object.entries(optionsObject(value, name))) {
    const entryName = `${name}[${JSON.stringify(key)}]`;
    if (METHOD_KEY.test(key)) methods.set(key, parse(entry, entryName));
    else if (SERVICE_KEY.test(key)) services.set(key, parse(entry, entryName));
    else {
      throw kit.rangeError(
        `${name} keys`,
        `must be '/package.Service' or '/package.Service/Method' (as in method_definition.path)`,
        key,
      );
    }
  }
  return { services, methods };
}

/** The service key of a call path: `'/pkg.Service/Method'` → `'/pkg.Service'`. */
export function serviceKeyOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash > 0 ? path.slice(0, slash) : path;
}
