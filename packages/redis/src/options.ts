/**
 * Defaults and validation of RedisTimers's options and of schedule's per-timer options.
 */
import { sharedWheel, type TimingWheel } from '@tickwheel/core';
import { optionKit, orDefault } from '@tickwheel/core/internal';
import { encodeAttempts, encodeBackoff } from './backoff.js';
import type { IfExists, RedisClient, RedisPresenceOptions, RedisTimersOptions, ScheduleOptions } from './types.js';

/** Every default in one place (frozen): the README's options table lists the same values. */
export const DEFAULTS = Object.freeze({
  leaseMs: 30_000,
  shards: 1,
  pollIntervalMs: 5_000,
  batchSize: 100,
  concurrency: 100,
  keyPrefix: 'tickwheel',
  attempts: 3,
  backoff: Object.freeze({ type: 'exponential', delayMs: 1_000 } as const),
  ifExists: 'replace',
  maxWaitMs: Infinity,
  maxStalledCount: 1,
  failoverBudgetMs: 20_000,
  waitForReplicas: 0,
  waitForReplicasTimeoutMs: 1_000,
  timeSource: 'redis',
} as const);

/**
 * RedisPresence's own defaults (frozen); its other options default as in {@link DEFAULTS}. A
 * grace timer's handler is one short script, so its lease is shorter than a timer's default: a
 * server that dies holding one delays that leave by at most this long.
 */
export const PRESENCE_DEFAULTS = Object.freeze({
  graceMs: 10_000,
  nodeTtlMs: 15_000,
  leaseMs: 5_000,
} as const);

/** The RedisTimers options RedisPresence passes through to the timers it is built on. */
const PRESENCE_PASSED = [
  'keyPrefix',
  'shards',
  'wheel',
  'pollIntervalMs',
  'failoverBudgetMs',
  'waitForReplicas',
  'waitForReplicasTimeoutMs',
  'timeSource',
] as const;

/** Every check of this package's options and arguments, in the kit's one message shape. */
export const kit = optionKit('@tickwheel/redis');

const KNOWN: readonly string[] = ['redis', 'namespace', 'wheel', ...Object.keys(DEFAULTS)];
const SCHEDULE_KNOWN: readonly string[] = ['attempts', 'backoff', 'ifExists', 'maxWaitMs'];

/** The per-timer policy as the scripts take it. */
export interface Policy {
  maxAttempts: string;
  backoff: string;
  ifExists: IfExists;
  /** The debounce cap as the schedule script takes it: whole ms, or '' for none. */
  maxWaitMs: string;
}

export interface ResolvedOptions {
  redis: RedisClient;
  namespace: string;
  keyPrefix: string;
  leaseMs: number;
  shards: number;
  wheel: TimingWheel;
  pollIntervalMs: number;
  batchSize: number;
  concurrency: number;
  failoverBudgetMs: number;
  /** Infinity: no limit. */
  maxStalledCount: number;
  waitForReplicas: number;
  waitForReplicasTimeoutMs: number;
  localTime: boolean;
  policy: Policy;
}

function requireName(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '' || /[{}]/.test(value)) {
    throw kit.typeError(name, "must be a non-empty string without '{' or '}'", value);
  }
  return value;
}

function resolvePolicy(options: ScheduleOptions, defaults: Policy | undefined, prefix: string): Policy {
  const policy: Policy = {
    maxAttempts:
      options.attempts === undefined && defaults
        ? defaults.maxAttempts
        : String(encodeAttempts(orDefault(options.attempts, DEFAULTS.attempts), `${prefix}attempts`)),
    backoff:
      options.backoff === undefined && defaults
        ? defaults.backoff
        : encodeBackoff(orDefault<unknown>(options.backoff, DEFAULTS.backoff), `${prefix}backoff`),
    ifExists:
      options.ifExists === undefined && defaults
        ? defaults.ifExists
        : kit.oneOf(orDefault(options.ifExists, DEFAULTS.ifExists), `${prefix}ifExists`, ['replace', 'keep']),
    maxWaitMs:
      options.maxWaitMs === undefined && defaults
        ? defaults.maxWaitMs
        : encodeMaxWait(orDefault(options.maxWaitMs, DEFAULTS.maxWaitMs), `${prefix}maxWaitMs`),
  };
  // A kept timer is never pushed back, so a cap given with 'keep' in one options object is a mistake.
  if (options.maxWaitMs !== undefined && policy.maxWaitMs !== '' && options.ifExists === 'keep') {
    throw kit.typeError(
      `${prefix}maxWaitMs`,
      "needs ifExists 'replace' (a kept timer is never pushed back)",
      options.maxWaitMs,
    );
  }
  return policy;
}

/** `maxWaitMs`: 0 or Infinity (no cap) become '', else whole ms rounded down (never later than asked). */
function encodeMaxWait(value: unknown, name: string): string {
  const ms = kit.limitMs(value, name);
  return ms === Infinity ? '' : String(Math.floor(ms));
}

/** `maxStalledCount`: an integer from 0 (the first stall fails the timer), or Infinity (no limit). */
function maxStalledCount(value: unknown): number {
  return value === Number.POSITIVE_INFINITY ? Infinity : kit.integer(value, 'maxStalledCount', 0, 1_000_000_000);
}

/** Validates and completes the constructor's options; every bad value throws here. */
export function resolveOptions(options: RedisTimersOptions): ResolvedOptions {
  if (options === undefined || options === null || typeof options !== 'object') {
    throw kit.typeError('options', 'must be an object', options);
  }
  kit.object(options, 'options', KNOWN);
  const { redis } = options;
  if (
    redis === null ||
    typeof redis !== 'object' ||
    typeof (redis as { defineCommand?: unknown }).defineCommand !== 'function'
  ) {
    throw kit.typeError('redis', 'must be an ioredis client or Cluster', redis);
  }
  const ms = (name: keyof typeof DEFAULTS & `${string}Ms`, min: number): number =>
    kit.durationMs(orDefault<unknown>(options[name], DEFAULTS[name]), name, min);
  const int = (name: 'shards' | 'batchSize' | 'concurrency' | 'waitForReplicas', min: number, max: number): number =>
    kit.integer(orDefault<unknown>(options[name], DEFAULTS[name]), name, min, max);
  return {
    redis,
    namespace: requireName(options.namespace, 'namespace'),
    keyPrefix: requireName(orDefault(options.keyPrefix, DEFAULTS.keyPrefix), 'keyPrefix'),
    leaseMs: Math.ceil(ms('leaseMs', 1)),
    shards: int('shards', 1, 1024),
    wheel: options.wheel === undefined ? sharedWheel() : kit.wheel(options.wheel, 'wheel'),
    pollIntervalMs: ms('pollIntervalMs', 1),
    batchSize: int('batchSize', 1, 1_000),
    concurrency: int('concurrency', 1, 1_000_000),
    // A budget, not a limit: 0 means no retries, and it must end (no "off").
    failoverBudgetMs: ms('failoverBudgetMs', 0),
    maxStalledCount: maxStalledCount(orDefault<unknown>(options.maxStalledCount, DEFAULTS.maxStalledCount)),
    waitForReplicas: int('waitForReplicas', 0, 100),
    waitForReplicasTimeoutMs: Math.ceil(ms('waitForReplicasTimeoutMs', 1)),
    localTime:
      kit.oneOf(orDefault(options.timeSource, DEFAULTS.timeSource), 'timeSource', ['redis', 'local']) === 'local',
    policy: resolvePolicy(options, undefined, ''),
  };
}

/** Validates schedule's per-timer options over the instance's defaults. */
export function resolveScheduleOptions(options: ScheduleOptions | undefined, defaults: Policy): Policy {
  if (options === undefined) return defaults;
  if (options === null || typeof options !== 'object') throw kit.typeError('options', 'must be an object', options);
  kit.object(options, 'options', SCHEDULE_KNOWN);
  return resolvePolicy(options, defaults, 'options.');
}

export function requireId(id: unknown): string {
  if (typeof id !== 'string' || id === '') throw kit.typeError('id', 'must be a non-empty string', id);
  return id;
}

/** The latest time a Date can hold (epoch ms); due times and delays beyond it are refused. */
const MAX_TIME_MS = 8_640_000_000_000_000;

/** Validates a due spec; returns the script's mode and whole ms (rounded up: never early). */
export function dueArgs(when: unknown, name: string): ['in' | 'at', string] {
  let mode: 'in' | 'at' = 'in';
  let ms: number;
  if (when !== null && typeof when === 'object' && !(when instanceof Date)) {
    const at = (when as { at?: unknown }).at;
    if (at instanceof Date && Number.isNaN(at.getTime()))
      throw new RangeError(`${kit.pkg}: ${name}.at must be a valid Date, got an Invalid Date`);
    mode = 'at';
    name = `${name}.at`;
    ms = kit.durationMs(at instanceof Date ? at.getTime() : at, name, 0, MAX_TIME_MS);
  } else {
    ms = kit.durationMs(when, name, 0, MAX_TIME_MS);
  }
  return [mode, String(Math.ceil(ms))];
}

/** RedisPresence's options, checked: its own, and the ones of the RedisTimers under it. */
export interface ResolvedPresenceOptions {
  graceMs: number;
  nodeTtlMs: number;
  /** What `new RedisTimers` takes for the grace timers and node leases. */
  timers: RedisTimersOptions;
  /** The same, resolved (for the scripts the presence runs itself). */
  resolved: ResolvedOptions;
}

/** Validates and completes RedisPresence's options; every bad value throws here, naming the option. */
export function resolvePresenceOptions(options: RedisPresenceOptions): ResolvedPresenceOptions {
  if (options === undefined || options === null || typeof options !== 'object') {
    throw kit.typeError('options', 'must be an object', options);
  }
  kit.object(options, 'options', ['redis', 'namespace', ...Object.keys(PRESENCE_DEFAULTS), ...PRESENCE_PASSED]);
  const graceMs = kit.durationMs(orDefault<unknown>(options.graceMs, PRESENCE_DEFAULTS.graceMs), 'graceMs', 0);
  // A renewal every nodeTtlMs / 3 must fit a round trip to Redis with room to spare.
  const nodeTtlMs = kit.durationMs(
    orDefault<unknown>(options.nodeTtlMs, PRESENCE_DEFAULTS.nodeTtlMs),
    'nodeTtlMs',
    300,
  );
  const timers: RedisTimersOptions = {
    redis: options.redis,
    namespace: options.namespace,
    leaseMs: orDefault(options.leaseMs, PRESENCE_DEFAULTS.leaseMs),
  };
  for (const name of PRESENCE_PASSED) {
    if (options[name] !== undefined) (timers as unknown as Record<string, unknown>)[name] = options[name];
  }
  return { graceMs: Math.ceil(graceMs), nodeTtlMs: Math.ceil(nodeTtlMs), timers, resolved: resolveOptions(timers) };
}
