import { EventEmitter } from 'node:events';
import { describeValue, requireFunction, requireMs, sharedWheel, type TimingWheel } from '@tickwheel/core';
import { shardKeys, shardOf, wakeChannel, type ShardKeys } from './keys.js';
import { decodePayload, encodePayload } from './payload.js';
import { defineScripts, parseRecord, type ScriptCommands } from './scripts.js';
import type { DueSpec, FiredTimer, RedisClient, RedisTimersOptions, TimerHandler, TimerInfo } from './types.js';
import { Worker } from './worker.js';

const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_POLL_INTERVAL_MS = 5_000;
const DEFAULT_BATCH_SIZE = 100;
const DEFAULT_CONCURRENCY = 100;
const DEFAULT_KEY_PREFIX = 'tickwheel';

function requireInteger(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number') throw new TypeError(`${name} must be an integer from ${min} to ${max}, got ${describeValue(value)}`);
  if (!Number.isInteger(value) || value < min || value > max) throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${describeValue(value)}`);
  return value;
}

function requireName(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '' || /[{}]/.test(value)) {
    throw new TypeError(`${name} must be a non-empty string without '{' or '}', got ${describeValue(value)}`);
  }
  return value;
}

function requireId(id: unknown): string {
  if (typeof id !== 'string' || id === '') throw new TypeError(`id must be a non-empty string, got ${describeValue(id)}`);
  return id;
}

/** The latest time a Date can hold (epoch ms); due times and delays beyond it are refused. */
const MAX_TIME_MS = 8_640_000_000_000_000;

/** Validates a due spec; returns the script's mode and whole ms (rounded up: never early). */
function dueArgs(when: unknown, name: string): ['in' | 'at', string] {
  let mode: 'in' | 'at' = 'in';
  let ms: number;
  if (when !== null && typeof when === 'object' && !(when instanceof Date)) {
    const at = (when as { at?: unknown }).at;
    if (at instanceof Date && Number.isNaN(at.getTime())) throw new RangeError(`${name}.at must be a valid Date, got an Invalid Date`);
    mode = 'at';
    name = `${name}.at`;
    ms = requireMs(at instanceof Date ? at.getTime() : at, name);
  } else {
    ms = requireMs(when, name);
  }
  if (ms > MAX_TIME_MS) throw new RangeError(`${name} must be at most ${MAX_TIME_MS} (the last valid Date), got ${ms}`);
  return [mode, String(Math.ceil(ms))];
}

/**
 * Durable timers in Redis, shared by every process of a namespace and fired with the local
 * timing wheel's precision.
 *
 * Any process may schedule; processes that call {@link RedisTimers.start} are workers. Each due
 * timer is claimed atomically by one worker for `leaseMs` and acked when its handler resolves;
 * if the worker dies or the handler rejects, another claim takes it after the lease. Delivery is
 * therefore at least once (see the package README for the precise guarantee). Due times and
 * leases are read from the Redis server's clock, so client clock skew does not matter.
 *
 * Events: `'failed'` `(error, timer)` when a handler rejects (the timer is retried after its
 * lease); `'error'` `(error)` for Redis errors in the background worker (without a listener
 * they are printed with `console.error`, like ioredis does).
 *
 * @example
 * ```ts
 * import Redis from 'ioredis';
 * import { RedisTimers } from '@tickwheel/redis';
 *
 * const timers = new RedisTimers({ redis: new Redis(), namespace: 'buffs', leaseMs: 10_000 });
 * await timers.schedule('buff:42', 30_000, { player: 42 });
 * timers.start(async ({ id, payload, dueAt }) => expireBuff(payload));
 * ```
 */
export class RedisTimers<P = unknown> extends EventEmitter {
  /** The namespace, as given. */
  readonly namespace: string;
  /** See {@link RedisTimersOptions.leaseMs}. */
  readonly leaseMs: number;
  /** See {@link RedisTimersOptions.shards}. */
  readonly shards: number;
  private readonly client: RedisClient & ScriptCommands;
  private readonly keys: ShardKeys[];
  private readonly channel: string;
  private readonly wheel: TimingWheel;
  private readonly pollIntervalMs: number;
  private readonly batchSize: number;
  private readonly concurrency: number;
  private worker: Worker | undefined;
  /** ioredis-mock runs in this process and its TIME is broken: it gets this process's clock. */
  private readonly localTime: boolean;

  /**
   * @param options - see {@link RedisTimersOptions}; every bad value throws here
   * @throws TypeError or RangeError naming the option and the value
   */
  constructor(options: RedisTimersOptions) {
    super();
    if (options === null || typeof options !== 'object') throw new TypeError(`options must be an object, got ${describeValue(options)}`);
    const { redis } = options;
    if (redis === null || typeof redis !== 'object' || typeof (redis as { defineCommand?: unknown }).defineCommand !== 'function') {
      throw new TypeError(`redis must be an ioredis client or Cluster, got ${describeValue(redis)}`);
    }
    this.namespace = requireName(options.namespace, 'namespace');
    const prefix = requireName(options.keyPrefix ?? DEFAULT_KEY_PREFIX, 'keyPrefix');
    this.leaseMs = Math.ceil(requireMs(options.leaseMs ?? DEFAULT_LEASE_MS, 'leaseMs', 1));
    this.shards = requireInteger(options.shards ?? 1, 'shards', 1, 1024);
    this.pollIntervalMs = requireMs(options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS, 'pollIntervalMs', 1);
    this.batchSize = requireInteger(options.batchSize ?? DEFAULT_BATCH_SIZE, 'batchSize', 1, 1_000);
    this.concurrency = requireInteger(options.concurrency ?? DEFAULT_CONCURRENCY, 'concurrency', 1, 1_000_000);
    this.wheel = options.wheel ?? sharedWheel();
    this.client = defineScripts(redis);
    this.localTime = /RedisMock/.test((redis as object).constructor?.name ?? '');
    this.keys = Array.from({ length: this.shards }, (_, shard) => shardKeys(prefix, this.namespace, shard));
    this.channel = wakeChannel(prefix, this.namespace);
  }

  /** The scripts' trailing time argument (see scripts.ts). */
  private now(): string {
    return this.localTime ? String(Date.now()) : '';
  }

  private keysOf(id: string): [string, string, string, string] {
    const k = this.keys[shardOf(id, this.shards)]!;
    return [k.due, k.lease, k.timers, k.seq];
  }

  /**
   * Schedules a timer, replacing any timer with the same id (pending or claimed: a claimed one's
   * ack then no longer deletes it). Everything is validated before anything is written.
   *
   * @param id - non-empty string, unique within the namespace
   * @param when - delay in ms from the Redis server's now, or `{ at }`: epoch ms or a Date
   * @param payload - any JSON value; it must survive a JSON round trip unchanged
   * @returns the due time, epoch ms on the server's clock
   * @throws TypeError/RangeError for a bad id, delay or payload; rejects with the Redis error
   * @example
   * ```ts
   * await timers.schedule('session:7', 15 * 60_000, { user: 7 });
   * await timers.schedule('reminder:1', { at: new Date('2030-01-01T09:00:00Z') });
   * ```
   */
  async schedule(id: string, when: DueSpec, payload?: P): Promise<number> {
    requireId(id);
    const [mode, ms] = dueArgs(when, 'delayMs');
    const json = encodePayload(payload);
    const [dueAt] = await this.client.tickwheelSchedule(...this.keysOf(id), id, mode, ms, json, this.channel, String(shardOf(id, this.shards)), this.now());
    return Number(dueAt);
  }

  /**
   * Cancels a timer.
   *
   * @returns true when the timer existed and was not yet acked (scheduled, or claimed and awaiting
   *   its ack or a retry); it will not fire again. A handler already running is not interrupted.
   * @example
   * ```ts
   * if (await timers.cancel('session:7')) console.log('logout timer dropped');
   * ```
   */
  async cancel(id: string): Promise<boolean> {
    requireId(id);
    return (await this.client.tickwheelCancel(...this.keysOf(id), id)) === 1;
  }

  /**
   * Moves an existing timer to a new due time, keeping its payload and resetting its attempts.
   *
   * @returns the new due time (epoch ms), or undefined when there is no such timer (none is created)
   * @example
   * ```ts
   * await timers.reschedule('session:7', 15 * 60_000); // user was active: push the logout back
   * ```
   */
  async reschedule(id: string, when: DueSpec): Promise<number | undefined> {
    requireId(id);
    const [mode, ms] = dueArgs(when, 'delayMs');
    const dueAt = await this.client.tickwheelReschedule(...this.keysOf(id), id, mode, ms, this.channel, String(shardOf(id, this.shards)), this.now());
    return dueAt === '' ? undefined : Number(dueAt);
  }

  /**
   * Reads a timer.
   *
   * @returns its state, due time, attempts and payload, or undefined when there is none
   * @example
   * ```ts
   * const t = await timers.get('session:7'); // { state: 'scheduled', dueAt: 1767225600000, ... }
   * ```
   */
  async get(id: string): Promise<TimerInfo<P> | undefined> {
    requireId(id);
    const reply = await this.client.tickwheelGet(...this.keysOf(id), id);
    if (!Array.isArray(reply)) return undefined;
    const [record, lease] = reply;
    const { dueAt, attempts, payload } = parseRecord(record);
    return {
      id,
      payload: decodePayload<P>(payload),
      dueAt,
      attempts,
      state: lease === '' ? 'scheduled' : 'claimed',
      leaseExpiresAt: lease === '' ? undefined : Number(lease),
    };
  }

  /**
   * Makes this process a worker of the namespace: it claims due timers and runs `handler` for
   * each. When the handler's promise resolves the timer is acked (deleted); when it rejects, the
   * timer is delivered again after its lease, to whichever worker claims it.
   *
   * @returns once subscribed to wake-up messages
   * @throws Error when already started
   * @example
   * ```ts
   * await timers.start(async ({ id, payload, dueAt, attempts }) => {
   *   await expire(payload);
   * });
   * ```
   */
  async start(handler: TimerHandler<P>): Promise<void> {
    requireFunction(handler, 'handler');
    if (this.worker !== undefined) throw new Error('RedisTimers.start: this instance is already a worker; call stop() first');
    const worker = new Worker({
      client: this.client,
      shards: this.keys,
      channel: this.channel,
      wheel: this.wheel,
      leaseMs: this.leaseMs,
      pollIntervalMs: this.pollIntervalMs,
      batchSize: this.batchSize,
      concurrency: this.concurrency,
      now: () => this.now(),
      handler: handler as TimerHandler,
      onError: (error) => {
        if (this.listenerCount('error') > 0) this.emit('error', error);
        else console.error('[@tickwheel/redis] worker error:', error);
      },
      onFailed: (error, timer) => this.emit('failed', error, timer as FiredTimer<P>),
    });
    this.worker = worker;
    try {
      await worker.start();
    } catch (error) {
      this.worker = undefined;
      await worker.stop();
      throw error;
    }
  }

  /**
   * Stops claiming, then waits for running handlers and their acks. The Redis client stays open.
   * A no-op when not started.
   */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.stop();
  }
}
