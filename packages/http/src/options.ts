/**
 * The options of serverTimeouts and of the framework adapters, checked once with core's option kit.
 */
import { sharedWheel, type TimingWheel } from '@tickwheel/core';
import { optionKit, orDefault } from '@tickwheel/core/internal';
import type { DeadlineMiddlewareOptions, ServerTimeoutsOptions, TimedRequest } from './types.js';

export const kit = optionKit('@tickwheel/http');

/**
 * The defaults, in one place: every limit is off (`Infinity`) until set, the caller's deadline
 * headers are read, and a handler deadline answers 503.
 */
export const DEFAULTS = Object.freeze({
  defaultTimeoutMs: Infinity,
  maxTimeoutMs: Infinity,
  /** Connect RPC's header, gRPC's, and the one Envoy sets from its route timeout. */
  deadlineHeaders: Object.freeze(['connect-timeout-ms', 'grpc-timeout', 'x-envoy-expected-rq-timeout-ms']),
  headersMs: Infinity,
  bodyIdleMs: Infinity,
  keepAliveMs: Infinity,
  timeoutStatus: 503,
  /** `close()`'s grace. */
  graceMs: 30_000,
});

const SERVER_KEYS: readonly (keyof ServerTimeoutsOptions)[] = [
  'defaultTimeoutMs',
  'maxTimeoutMs',
  'timeoutFor',
  'deadlineHeaders',
  'headersMs',
  'bodyIdleMs',
  'keepAliveMs',
  'timeoutStatus',
  'wheel',
];
const MIDDLEWARE_KEYS: readonly (keyof DeadlineMiddlewareOptions)[] = [
  'timeoutMs',
  'maxTimeoutMs',
  'deadlineHeaders',
  'timeoutStatus',
  'wheel',
];

/** What decides a request's handler deadline, shared by every request of one server or middleware. */
export interface DeadlinePlan {
  /** The handler deadline when neither `timeoutFor` nor the caller says otherwise (Infinity: none). */
  readonly limitMs: number;
  /** The cap on every handler deadline (`maxTimeoutMs`). */
  readonly maxLimitMs: number;
  readonly timeoutFor: ((req: TimedRequest) => number | undefined) | undefined;
  /** Lower-case header names, in order. */
  readonly deadlineHeaders: readonly string[];
  readonly timeoutStatus: number;
  readonly wheel: TimingWheel;
}

/** serverTimeouts' options, resolved. */
export interface ServerPlan extends DeadlinePlan {
  readonly headersMs: number;
  readonly bodyIdleMs: number;
  readonly keepAliveMs: number;
}

/** A header name as Node delivers it: lower case, an HTTP token. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;

function deadlineHeaders(value: unknown): readonly string[] {
  if (value === undefined) return DEFAULTS.deadlineHeaders;
  if (!Array.isArray(value)) throw kit.typeError('deadlineHeaders', 'must be an array of header names', value);
  return Object.freeze(
    value.map((name: unknown, i) => {
      if (typeof name !== 'string') throw kit.typeError(`deadlineHeaders[${i}]`, 'must be a string', name);
      if (!HEADER_NAME.test(name))
        throw kit.rangeError(`deadlineHeaders[${i}]`, 'must be a lower-case header name', name);
      return name;
    }),
  );
}

function status(value: unknown): number {
  return kit.integer(orDefault(value, DEFAULTS.timeoutStatus), 'timeoutStatus', 400, 599);
}

function wheel(value: unknown): TimingWheel {
  return value === undefined ? sharedWheel() : kit.wheel(value, 'wheel');
}

function limit(value: unknown, name: string): number {
  return value === undefined ? Infinity : kit.limitMs(value, name);
}

/** Checks serverTimeouts' options. @throws TypeError/RangeError naming the option and the value */
export function serverPlan(options: unknown): ServerPlan {
  const o = kit.object(options, 'options', SERVER_KEYS) as ServerTimeoutsOptions;
  return {
    limitMs: limit(o.defaultTimeoutMs, 'defaultTimeoutMs'),
    maxLimitMs: limit(o.maxTimeoutMs, 'maxTimeoutMs'),
    timeoutFor:
      o.timeoutFor === undefined
        ? undefined
        : kit.function<(req: TimedRequest) => number | undefined>(o.timeoutFor, 'timeoutFor'),
    deadlineHeaders: deadlineHeaders(o.deadlineHeaders),
    timeoutStatus: status(o.timeoutStatus),
    wheel: wheel(o.wheel),
    headersMs: limit(o.headersMs, 'headersMs'),
    bodyIdleMs: limit(o.bodyIdleMs, 'bodyIdleMs'),
    keepAliveMs: limit(o.keepAliveMs, 'keepAliveMs'),
  };
}

/** Checks a framework adapter's options. */
export function middlewarePlan(options: unknown, path = 'options'): DeadlinePlan {
  const o = kit.object(options, path, MIDDLEWARE_KEYS) as DeadlineMiddlewareOptions;
  const name = (key: string): string => (path === 'options' ? key : `${path}.${key}`);
  return {
    limitMs: limit(o.timeoutMs, name('timeoutMs')),
    maxLimitMs: limit(o.maxTimeoutMs, name('maxTimeoutMs')),
    timeoutFor: undefined,
    deadlineHeaders: o.deadlineHeaders === undefined ? DEFAULTS.deadlineHeaders : deadlineHeaders(o.deadlineHeaders),
    timeoutStatus: status(o.timeoutStatus),
    wheel: wheel(o.wheel),
  };
}

/** `close()`'s options. */
export function graceMs(options: unknown): number {
  const o = kit.object(options, 'close options', ['graceMs']);
  return o.graceMs === undefined ? DEFAULTS.graceMs : kit.limitMs(o.graceMs, 'graceMs');
}
