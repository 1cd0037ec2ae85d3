/**
 * Defaults and validation of RedisTimers's options and of schedule's per-timer options.
 * Depends on @tickwheel/core's validators and backoff.ts.
 */
import { describeValue, requireMs, sharedWheel, type TimingWheel } from '@tickwheel/core';
import { encodeAttempts, encodeBackoff } from './backoff.js';
import type { IfExists, RedisClient, RedisTimersOptions, ScheduleOptions } from './types.js';

export const DEFAULTS = {
  leaseMs: 30_000,
  shards: 1,
  pollIntervalMs: 5_000,
  batchSize: 100,
  concurrency: 100,
  keyPrefix: 'tickwheel',
  attempts: 3,
  backoff: { type: 'exponential', delayMs: 1_000 },
  ifExists: 'replace',
  failoverBudgetMs: 20_000,
  waitForReplicas: 0,
  waitForReplicasTimeoutMs: 1_000,
  timeSource: 'redis',
} as const;

const KNOWN = new Set(['redis', 'namespace', 'wheel', ...Object.keys(DEFAULTS)]);
const SCHEDULE_KNOWN = new Set(['attempts', 'backoff', 'ifExists']);

/** The per-timer policy as the scripts take it. */
export interface Policy {
  maxAttempts: string;
  backoff: string;
  ifExists: IfExists;
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
  waitForReplicas: number;
  waitForReplicasTimeoutMs: number;
  localTime: boolean;
  policy: Policy;
}

export function requireInteger(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number')
    throw new TypeError(`${name} must be an integer from ${min} to ${max}, got ${describeValue(value)}`);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${describeValue(value)}`);
  return value;
}

function requireName(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '' || /[{}]/.test(value)) {
    throw new TypeError(`${name} must be a non-empty string without '{' or '}', got ${describeValue(value)}`);
  }
  return value;
}

function requireOneOf<T extends string>(value: unknown, name: string, allowed: readonly T[]): T {
  if (!allowed.includes(value as T))
    throw new TypeError(`${name} must be ${allowed.map((a) => `'${a}'`).join(' or ')}, got ${describeValue(value)}`);
  return value as T;
}

function refuseUnknown(options: object, known: Set<string>, what: string): void {
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw new TypeError(`${what} has an unknown option ${describeValue(key)}`);
  }
}

function resolvePolicy(options: ScheduleOptions, defaults: Policy | undefined, prefix: string): Policy {
  return {
    maxAttempts:
      options.attempts === undefined && defaults
        ? defaults.maxAttempts
        : String(encodeAttempts(options.attempts ?? DEFAULTS.attempts, `${prefix}attempts`)),
    backoff:
      options.backoff === undefined && defaults
        ? defaults.backoff
        : encodeBackoff(options.backoff ?? DEFAULTS.backoff, `${prefix}backoff`),
    ifExists:
      options.ifExists === undefined && defaults
        ? defaults.ifExists
        : requireOneOf(options.ifExists ?? DEFAULTS.ifExists, `${prefix}ifExists`, ['replace', 'keep']),
  };
}

/** Validates and completes the constructor's options; every bad value throws here. */
export function resolveOptions(options: RedisTimersOptions): ResolvedOptions {
  if (options === null || typeof options !== 'object')
    throw new TypeError(`options must be an object, got ${describeValue(options)}`);
  refuseUnknown(options, KNOWN, 'RedisTimers');
  const { redis } = options;
  if (
    redis === null ||
    typeof redis !== 'object' ||
    typeof (redis as { defineCommand?: unknown }).defineCommand !== 'function'
  ) {
    throw new TypeError(`redis must be an ioredis client or Cluster, got ${describeValue(redis)}`);
  }
  return {
    redis,
    namespace: requireName(options.namespace, 'namespace'),
    keyPrefix: requireName(options.keyPrefix ?? DEFAULTS.keyPrefix, 'keyPrefix'),
    leaseMs: Math.ceil(requireMs(options.leaseMs ?? DEFAULTS.leaseMs, 'leaseMs', 1)),
    shards: requireInteger(options.shards ?? DEFAULTS.shards, 'shards', 1, 1024),
    wheel: options.wheel ?? sharedWheel(),
    pollIntervalMs: requireMs(options.pollIntervalMs ?? DEFAULTS.pollIntervalMs, 'pollIntervalMs', 1),
    batchSize: requireInteger(options.batchSize ?? DEFAULTS.batchSize, 'batchSize', 1, 1_000),
    concurrency: requireInteger(options.concurrency ?? DEFAULTS.concurrency, 'concurrency', 1, 1_000_000),
    failoverBudgetMs: requireMs(options.failoverBudgetMs ?? DEFAULTS.failoverBudgetMs, 'failoverBudgetMs'),
    waitForReplicas: requireInteger(options.waitForReplicas ?? DEFAULTS.waitForReplicas, 'waitForReplicas', 0, 100),
    waitForReplicasTimeoutMs: Math.ceil(
      requireMs(options.waitForReplicasTimeoutMs ?? DEFAULTS.waitForReplicasTimeoutMs, 'waitForReplicasTimeoutMs', 1),
    ),
    localTime: requireOneOf(options.timeSource ?? DEFAULTS.timeSource, 'timeSource', ['redis', 'local']) === 'local',
    policy: resolvePolicy(options, undefined, ''),
  };
}

/** Validates schedule's per-timer options over the instance's defaults. */
export function resolveScheduleOptions(options: ScheduleOptions | undefined, defaults: Policy): Policy {
  if (options === undefined) return defaults;
  if (options === null || typeof options !== 'object')
    throw new TypeError(`options must be an object, got ${describeValue(options)}`);
  refuseUnknown(options, SCHEDULE_KNOWN, 'schedule');
  return resolvePolicy(options, defaults, 'options.');
}

export function requireId(id: unknown): string {
  if (typeof id !== 'string' || id === '')
    throw new TypeError(`id must be a non-empty string, got ${describeValue(id)}`);
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
      throw new RangeError(`${name}.at must be a valid Date, got an Invalid Date`);
    mode = 'at';
    name = `${name}.at`;
    ms = requireMs(at instanceof Date ? at.getTime() : at, name);
  } else {
    ms = requireMs(when, name);
  }
  if (ms > MAX_TIME_MS) throw new RangeError(`${name} must be at most ${MAX_TIME_MS} (the last valid Date), got ${ms}`);
  return [mode, String(Math.ceil(ms))];
}
