/**
 * RedisTimers, the public entry of @tickwheel/redis: durable timers in Redis shared by the processes of a namespace.
 */
// Node's own types (node:http, node:events…), stated here for consumers that list no types (TypeScript 7's default).
/// <reference types="node" preserve="true" />
import { EventEmitter } from 'node:events';
import type { TimingWheel } from '@tickwheel/core';
import { publishStale } from './channels.js';
import { listFailed, purgeFailed, retryFailed } from './failed-set.js';
import { dueArgs, kit, requireId, resolveOptions, resolveScheduleOptions, type Policy } from './options.js';
import { decodePayload, encodePayload } from './payload.js';
import { parseRecord } from './record.js';
import { RETRY_SAFE, ShardCalls } from './shard-calls.js';
import type {
  DueSpec,
  FailedTimer,
  RedisTimersOptions,
  ScheduleOptions,
  StaleStage,
  TimerHandler,
  TimerInfo,
} from './types.js';
import { Worker } from './worker.js';

/**
 * Durable timers in Redis, shared by every process of a namespace and fired with the local
 * timing wheel's precision.
 *
 * Any process may schedule; processes that call {@link RedisTimers.start} are workers. Each due
 * timer is claimed atomically by one worker for `leaseMs` under a fresh fencing token and acked
 * when its handler resolves; a rejected attempt is retried after its backoff until its attempts
 * run out, then it moves to the failed set. Delivery is at least once (see the package README
 * for the precise guarantee). Due times and leases follow the Redis server's clock.
 *
 * Events:
 * - `'failed'` `(timer, error)` for every failed attempt, as BullMQ's worker emits `(job, err)`;
 *   the failure is final (the timer goes to the failed set) when `timer.attempts >= timer.maxAttempts`.
 * - `'stale'` `(timer, stage)` when this worker lost a claim: its lease passed before the handler
 *   could start (`'start'`; the handler did not run), or its ack or failure report was refused
 *   because the timer was claimed again, rescheduled or cancelled since (`'ack'`, `'fail'`). A
 *   retried ack whose first try was applied is not reported.
 * - `'error'` `(error)` for Redis errors in the background worker (without a listener they are
 *   printed with `console.error`, like ioredis does).
 *
 * @example
 * ```ts
 * import Redis from 'ioredis';
 * import { RedisTimers } from '@tickwheel/redis';
 *
 * const timers = new RedisTimers({ redis: new Redis(), namespace: 'buffs', leaseMs: 10_000 });
 * await timers.schedule('buff:42', 30_000, { player: 42 }, { attempts: 5 });
 * await timers.start(async ({ id, payload, dueAt }) => expireBuff(payload));
 * ```
 */
export class RedisTimers<P = unknown> extends EventEmitter {
  /** The namespace, as given. */
  readonly namespace: string;
  /** See {@link RedisTimersOptions.leaseMs}. */
  readonly leaseMs: number;
  /** See {@link RedisTimersOptions.shards}. */
  readonly shards: number;
  private readonly calls: ShardCalls;
  private readonly wheel: TimingWheel;
  private readonly options: ReturnType<typeof resolveOptions>;
  private readonly policy: Policy;
  private worker: Worker | undefined;

  /**
   * @param options - see {@link RedisTimersOptions}; every bad value throws here
   * @throws TypeError or RangeError naming the option and the value
   */
  constructor(options: RedisTimersOptions) {
    super();
    this.options = resolveOptions(options);
    this.namespace = this.options.namespace;
    this.leaseMs = this.options.leaseMs;
    this.shards = this.options.shards;
    this.wheel = this.options.wheel;
    this.policy = this.options.policy;
    this.calls = new ShardCalls(this.options);
  }

  /**
   * Schedules a timer. With an existing id (scheduled, claimed or failed) `ifExists` decides:
   * `'replace'` (default) writes the new timer over it (a claimed one's ack is then refused:
   * it is a new timer), `'keep'` leaves it untouched, like BullMQ's `add` with an existing jobId.
   * Everything is validated before anything is written; Redis errors during a failover are
   * retried within `failoverBudgetMs`.
   *
   * @param id - non-empty string, unique within the namespace
   * @param when - delay in ms from the Redis server's now, or `{ at }`: epoch ms or a Date
   * @param payload - any JSON value; it must survive a JSON round trip unchanged
   * @param options - `attempts`, `backoff`, `ifExists`, `maxWaitMs` for this timer (defaults: the constructor's)
   * @returns the due time, epoch ms on the server's clock (the existing timer's when kept; the
   *   capped one when `maxWaitMs` moved it earlier)
   * @throws TypeError/RangeError for bad input; `RedisUnavailableError` when the budget is spent
   * @example
   * ```ts
   * await timers.schedule('session:7', 15 * 60_000, { user: 7 });
   * await timers.schedule('mail:1', { at: new Date('2030-01-01T09:00:00Z') }, undefined, { attempts: 5, backoff: { type: 'exponential', delayMs: 1_000 } });
   * // Reindex once edits are quiet for 5 s, but no later than 60 s after the first edit:
   * await timers.schedule('reindex:doc7', 5_000, { doc: 7 }, { ifExists: 'replace', maxWaitMs: 60_000 });
   * ```
   */
  async schedule(id: string, when: DueSpec, payload?: P, options?: ScheduleOptions): Promise<number> {
    requireId(id);
    const [mode, ms] = dueArgs(when, 'delayMs');
    const json = encodePayload(payload);
    const policy = resolveScheduleOptions(options, this.policy);
    const { index } = this.calls.shardOf(id);
    const args = [
      id,
      mode,
      ms,
      json,
      this.calls.channel,
      String(index),
      policy.ifExists,
      policy.maxAttempts,
      policy.backoff,
      policy.maxWaitMs,
    ];
    const [dueAt] = await this.calls.write<[string, string, string]>(
      'tickwheelSchedule',
      index,
      args,
      `schedule(${JSON.stringify(id)})`,
      RETRY_SAFE.schedule,
    );
    return Number(dueAt);
  }

  /**
   * Cancels a timer, wherever it is (scheduled, claimed or failed).
   *
   * @returns true when the timer existed; it will not be delivered again. A handler already
   *   running is not interrupted (its ack is refused). A call retried through a failover answers
   *   as its first try that landed.
   * @example
   * ```ts
   * if (await timers.cancel('session:7')) console.log('logout timer dropped');
   * ```
   */
  async cancel(id: string): Promise<boolean> {
    requireId(id);
    const reply = await this.calls.write<number>(
      'tickwheelCancel',
      this.calls.shardOf(id).index,
      [id],
      `cancel(${JSON.stringify(id)})`,
      RETRY_SAFE.cancel,
    );
    return reply === 1;
  }

  /**
   * Moves an existing timer (scheduled, claimed or failed) to a new due time, keeping its payload
   * and retry policy and resetting its attempts.
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
    const { index } = this.calls.shardOf(id);
    const dueAt = await this.calls.write<string>(
      'tickwheelReschedule',
      index,
      [id, mode, ms, this.calls.channel, String(index)],
      `reschedule(${JSON.stringify(id)})`,
      RETRY_SAFE.other,
    );
    return dueAt === '' ? undefined : Number(dueAt);
  }

  /**
   * Reads a timer.
   *
   * @returns its state, times, attempts, last error and payload, or undefined when there is none
   * @example
   * ```ts
   * const t = await timers.get('session:7'); // { state: 'scheduled', dueAt: 1767225600000, ... }
   * ```
   */
  async get(id: string): Promise<TimerInfo<P> | undefined> {
    requireId(id);
    const reply = await this.calls.run<string | string[]>(
      'tickwheelGet',
      this.calls.shardOf(id).keys,
      [id],
      `get(${JSON.stringify(id)})`,
      RETRY_SAFE.other,
      false,
    );
    if (!Array.isArray(reply)) return undefined;
    const [record, payload, due, lease, failed, reason] = reply as [string, string, string, string, string, string];
    const r = parseRecord(record, payload);
    const at = (s: string) => (s === '' ? undefined : Number(s));
    return {
      id,
      payload: decodePayload<P>(r.payload),
      dueAt: r.dueAt,
      attempts: r.attempts,
      maxAttempts: r.maxAttempts === 0 ? Infinity : r.maxAttempts,
      state: failed !== '' ? 'failed' : lease !== '' ? 'claimed' : 'scheduled',
      nextAttemptAt: at(due),
      leaseExpiresAt: at(lease),
      failedAt: at(failed),
      lastError: reason === '' ? undefined : reason,
    };
  }

  /**
   * Lists timers in the failed set (out of attempts), oldest failure first within each shard.
   *
   * @param limit - most timers returned, 1 to 10 000 (default 100)
   * @example
   * ```ts
   * for (const f of await timers.listFailed()) console.log(f.id, f.attempts, f.reason);
   * ```
   */
  listFailed(limit = 100): Promise<FailedTimer<P>[]> {
    return listFailed<P>(this.calls, limit);
  }

  /**
   * Gives failed timers a fresh start: due now, attempts 0, same payload and policy (BullMQ's
   * `job.retry()` / `queue.retryJobs()`).
   *
   * @param id - one timer; omitted: every failed timer of the namespace
   * @returns how many were moved back
   */
  retryFailed(id?: string): Promise<number> {
    return retryFailed(this.calls, id);
  }

  /**
   * Deletes failed timers for good (BullMQ's `queue.clean(0, n, 'failed')`).
   *
   * @param id - one timer; omitted: every failed timer of the namespace
   * @returns how many were deleted
   */
  purgeFailed(id?: string): Promise<number> {
    return purgeFailed(this.calls, id);
  }

  /**
   * Makes this process a worker of the namespace: it claims due timers and runs `handler` for
   * each. Resolving acks the timer (deletes it); rejecting is a failed attempt (retried after its
   * backoff, or moved to the failed set after its last attempt).
   *
   * @returns once subscribed to wake-up messages
   * @throws Error when already started
   * @example
   * ```ts
   * await timers.start(async ({ id, payload, attempts, extendLease }) => {
   *   await expire(payload);
   * });
   * ```
   */
  async start(handler: TimerHandler<P>): Promise<void> {
    kit.function(handler, 'handler');
    if (this.worker !== undefined)
      throw new Error('RedisTimers.start: this instance is already a worker; call stop() first');
    const { pollIntervalMs, batchSize, concurrency, failoverBudgetMs, maxStalledCount } = this.options;
    const worker = new Worker({
      client: this.calls.client,
      shards: this.calls.keys,
      channel: this.calls.channel,
      wheel: this.wheel,
      leaseMs: this.leaseMs,
      pollIntervalMs,
      batchSize,
      concurrency,
      failoverBudgetMs,
      maxStalledCount,
      write: (command, index, args, what) =>
        this.calls.write(command, index, args, what, 'the timer is redelivered after its lease', false),
      namespace: this.namespace,
      now: () => this.calls.now(),
      handler: handler as TimerHandler,
      onError: (error) => {
        if (this.listenerCount('error') > 0) this.emit('error', error);
        else console.error('[@tickwheel/redis] worker error:', error);
      },
      onFailed: (timer, error) => this.emit('failed', timer, error),
      onStale: (timer, stage: StaleStage) => {
        publishStale(this.namespace, timer.id, timer.attempts, stage);
        this.emit('stale', timer, stage);
      },
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
