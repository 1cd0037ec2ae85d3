/**
 * The public types of @tickwheel/redis.
 */
import type { Cluster, Redis } from 'ioredis';
import type { TimingWheel } from '@tickwheel/core';
import type { BackoffOptions } from './backoff.js';

export type { BackoffOptions } from './backoff.js';

/**
 * The client {@link RedisTimers} talks through: an ioredis `Redis`, an ioredis `Cluster`, or an
 * `ioredis-mock` instance (which mirrors the `Redis` API; pass `timeSource: 'local'` with it).
 */
export type RedisClient = Redis | Cluster;

/** When a timer is due: a delay in ms from now (the Redis server's now), or an absolute epoch-ms time. */
export type DueSpec = number | { at: number | Date };

/** What `schedule` does when a timer with the same id exists (scheduled, claimed or failed). */
export type IfExists = 'replace' | 'keep';

/** Per-timer options of {@link RedisTimers.schedule}; each defaults to the option of the same name. */
export interface ScheduleOptions {
  /** Deliveries a timer gets before it moves to the failed set: an integer >= 1, or Infinity. */
  attempts?: number;
  /** The wait before a retry: ms (fixed), or `{ type: 'fixed' | 'exponential', delayMs, jitter? }`. 0: none. */
  backoff?: number | BackoffOptions;
  /** `'replace'` the existing timer (new due time, payload, policy, attempts 0) or `'keep'` it untouched. */
  ifExists?: IfExists;
  /**
   * Debounce with a cap, lodash's `maxWait`: with `ifExists: 'replace'`, the timer fires at the
   * earlier of its new due time and the time of the first schedule of this id since it last fired
   * plus `maxWaitMs`, so replacing it over and over cannot push it back forever. Decided in the
   * schedule script on the Redis clock. Once it fired (was claimed), the next schedule opens a
   * new window. 0 or Infinity: no cap (the default).
   */
  maxWaitMs?: number;
}

/** Options of {@link RedisTimers}. Defaults are listed here and nowhere else. */
export interface RedisTimersOptions extends ScheduleOptions {
  /** The ioredis client (or Cluster) for commands. Not closed by `stop()`: it stays yours. */
  redis: RedisClient;
  /** Names this set of timers; every process using the same namespace shares its timers. No `{` or `}`. */
  namespace: string;
  /**
   * How long a claimed timer is held for its handler. A worker never starts a handler once the
   * lease has passed; after it, any worker may claim the timer again. Default 30 000.
   */
  leaseMs?: number;
  /**
   * Number of shards (Redis Cluster hash slots) the namespace is spread over, 1 to 1024. Every
   * process of a namespace must use the same value, and it must not change while timers are
   * pending (an id's shard is a hash of the id modulo `shards`). Default 1.
   */
  shards?: number;
  /**
   * The wheel every wait of this instance is on, read through its clock: the worker's wake-up, a
   * call's turn at the gate, each try's timeout, the pause before a retry and the failover
   * budget. Keep it open while the instance is in use. Default: the process-wide `sharedWheel()`.
   */
  wheel?: TimingWheel;
  /**
   * The safety poll: a worker claims from every shard at least this often, covering wake-up
   * messages lost while its subscriber was disconnected. Default 5 000.
   */
  pollIntervalMs?: number;
  /** Most timers one claim round trip takes from one shard, 1 to 1 000. Default 100. */
  batchSize?: number;
  /** Most handlers a worker runs at once; it claims no more than it can start. Default 100. */
  concurrency?: number;
  /** Prefix of every key and of the pub/sub channel. Default `'tickwheel'`. */
  keyPrefix?: string;
  /**
   * How many times a timer's lease may expire (it stalled: its worker died or lost Redis, or its
   * handler outlived the lease) before it moves to the failed set, as BullMQ's `maxStalledCount`.
   * A stalled timer is delivered again on the same attempt: only a handler that rejects uses up
   * one of its `attempts`. An integer >= 0 (0: the first stall fails it), or Infinity (no limit).
   * Read by the worker that finds the expired lease. Default 1, BullMQ's.
   */
  maxStalledCount?: number;
  /**
   * How long every call (schedule, cancel, claims, acks ...) keeps retrying while Redis is
   * unreachable or the cluster is down (a failover, a restart) before it gives up with a
   * `RedisUnavailableError`. 0: no retries. Default 20 000, above a failover with Redis's default
   * `cluster-node-timeout` of 15 s.
   */
  failoverBudgetMs?: number;
  /**
   * Replicas that must confirm each write of schedule, reschedule, cancel and the failed-set
   * calls (Redis `WAIT`) before it resolves, so a failover cannot lose it. A master with fewer
   * replicas connected (one promoted by a failover, say) needs only those. Default 0.
   */
  waitForReplicas?: number;
  /** How long one `WAIT` waits for the replicas; too few in time counts as a transient failure. Default 1 000. */
  waitForReplicasTimeoutMs?: number;
  /**
   * Whose clock due times and leases follow: `'redis'` (the server's `TIME`) or `'local'` (this
   * process's `Date.now()`, for in-process fakes such as ioredis-mock, whose `TIME` is wrong).
   * Default `'redis'`.
   */
  timeSource?: 'redis' | 'local';
}

/** What a handler receives when a timer fires. */
export interface FiredTimer<P = unknown> {
  /** The id it was scheduled with. */
  id: string;
  /** Its payload (a fresh copy, parsed from JSON), or `undefined` when scheduled without one. */
  payload: P | undefined;
  /** When it was first due, in epoch ms of the Redis server's clock (a retry keeps it). */
  dueAt: number;
  /** Deliveries so far, this one included: 1 on the first. */
  attempts: number;
  /** Deliveries it gets in all (Infinity: no limit); when `attempts` reaches it, a failure is final. */
  maxAttempts: number;
  /**
   * Times a lease of this timer expired before its ack (BullMQ's `stalledCounter`): its worker
   * died or lost Redis, or the handler outlived the lease. Such a stall is delivered again on the
   * same attempt; once stalls exceed `maxStalledCount` the timer fails. 0 until it first stalls;
   * `reschedule` and `retryFailed` set it back to 0. A handler that sees `stalls > 0` may find
   * the side effects of an earlier run of the same attempt in place.
   */
  stalls: number;
  /** This claim's fencing token, unique and increasing per shard: pass it on to guard your own writes. */
  token: string;
  /** When this claim's lease ends, epoch ms of the server's clock. */
  leaseExpiresAt: number;
  /**
   * Extends this claim's lease to server now + `ms` (default `leaseMs`), fenced by the token.
   * Resolves with the new lease end, or `undefined` when the lease was already lost (another worker
   * claimed the timer, or it was cancelled or rescheduled): then stop working on it.
   */
  extendLease(ms?: number): Promise<number | undefined>;
}

/** Runs a fired timer. Resolving acks it; rejecting (or throwing) is a failed attempt. */
export type TimerHandler<P = unknown> = (timer: FiredTimer<P>) => unknown;

/** A timer as stored, from {@link RedisTimers.get}. */
export interface TimerInfo<P = unknown> {
  id: string;
  payload: P | undefined;
  /** When it was first due, epoch ms, Redis server clock. */
  dueAt: number;
  /** Deliveries so far (0 until first claimed). */
  attempts: number;
  /** Deliveries it gets in all (Infinity: no limit). */
  maxAttempts: number;
  /** `'scheduled'` (waiting, maybe for a retry), `'claimed'` (handed to a worker), `'failed'` (out of attempts). */
  state: 'scheduled' | 'claimed' | 'failed';
  /** For a scheduled timer: when it is claimable next (its due time, or a retry's). */
  nextAttemptAt: number | undefined;
  /** For a claimed timer: when its lease expires and another worker may take it (epoch ms). */
  leaseExpiresAt: number | undefined;
  /** For a failed timer: when it failed for good (epoch ms). */
  failedAt: number | undefined;
  /** The last failed attempt's error message, if any. */
  lastError: string | undefined;
}

/** A timer in the failed set, from {@link RedisTimers.listFailed}. */
export interface FailedTimer<P = unknown> {
  id: string;
  payload: P | undefined;
  dueAt: number;
  attempts: number;
  /** When it failed for good, epoch ms, Redis server clock. */
  failedAt: number;
  /** Its last error's message (or why its last lease expired). */
  reason: string;
}

/** What went stale: the lease passed before the handler could start, or an ack/failure report was refused. */
export type StaleStage = 'start' | 'ack' | 'fail';

/**
 * Options of {@link RedisPresence}. Defaults are listed here and in `PRESENCE_DEFAULTS` (and, for
 * the options it shares with {@link RedisTimersOptions}, in `DEFAULTS`).
 */
export interface RedisPresenceOptions {
  /** The ioredis client (or Cluster) for commands. Not closed by `stop()`: it stays yours. */
  redis: RedisClient;
  /**
   * Names this presence; every server using the same namespace shares it. The namespace's
   * durable timers belong to the presence: do not run a {@link RedisTimers} on it too. No `{` or `}`.
   */
  namespace: string;
  /**
   * How long a member stays after its last connection anywhere went, so that a reconnect (to
   * any server) within it produces no leave. 0: it leaves at once. Default 10 000.
   */
  graceMs?: number;
  /**
   * How long a server's lease lasts; it is renewed every `nodeTtlMs / 3`. When a server dies or
   * loses Redis, another finds its lease expired after at most this long and ends its
   * connections, whose members then leave after `graceMs`. At least 300. Default 15 000.
   */
  nodeTtlMs?: number;
  /**
   * How long a server holds a claimed grace timer or node lease while it handles it (the
   * timers' `leaseMs`): a server that dies holding one delays that leave by at most this long.
   * Default 5 000.
   */
  leaseMs?: number;
  /** As {@link RedisTimersOptions.shards}: the Cluster hash slots members spread over. Default 1. */
  shards?: number;
  /** As {@link RedisTimersOptions.keyPrefix}. Default `'tickwheel'`. */
  keyPrefix?: string;
  /** The wheel the renewals and the timers' wake-ups run on. Default: the process-wide `sharedWheel()`. */
  wheel?: TimingWheel;
  /** As {@link RedisTimersOptions.pollIntervalMs}. Default 5 000. */
  pollIntervalMs?: number;
  /** As {@link RedisTimersOptions.failoverBudgetMs}: how long each call rides out a failover. Default 20 000. */
  failoverBudgetMs?: number;
  /** As {@link RedisTimersOptions.waitForReplicas}: replicas that must confirm each write. Default 0. */
  waitForReplicas?: number;
  /** As {@link RedisTimersOptions.waitForReplicasTimeoutMs}. Default 1 000. */
  waitForReplicasTimeoutMs?: number;
  /** As {@link RedisTimersOptions.timeSource}. Default `'redis'`. */
  timeSource?: 'redis' | 'local';
}

/** What the `'join'` and `'leave'` events of {@link RedisPresence} carry. */
export interface PresenceEvent {
  /** The member, as given to `join`. */
  member: string;
}

/** A connection as {@link RedisPresence} takes it: an id unique on this server, or the connection object itself. */
export type PresenceConnection = string | object;
