import type { Cluster, Redis } from 'ioredis';
import type { TimingWheel } from '@tickwheel/core';

/**
 * The client {@link RedisTimers} talks through: an ioredis `Redis`, an ioredis `Cluster`, or an
 * `ioredis-mock` instance (which mirrors the `Redis` API).
 */
export type RedisClient = Redis | Cluster;

/** When a timer is due: a delay in ms from now (the Redis server's now), or an absolute epoch-ms time. */
export type DueSpec = number | { at: number | Date };

/** Options of {@link RedisTimers}. Defaults are listed here and nowhere else. */
export interface RedisTimersOptions {
  /** The ioredis client (or Cluster) for commands. Not closed by `stop()`: it stays yours. */
  redis: RedisClient;
  /** Names this set of timers; every process using the same namespace shares its timers. No `{` or `}`. */
  namespace: string;
  /**
   * How long a claimed timer waits for its handler to resolve (the ack) before any worker may
   * claim it again. Handlers should finish well within it. Default 30 000.
   */
  leaseMs?: number;
  /**
   * Number of shards (Redis Cluster hash slots) the namespace is spread over, 1 to 1024. Every
   * process of a namespace must use the same value, and it must not change while timers are
   * pending (an id's shard is a hash of the id modulo `shards`). Default 1.
   */
  shards?: number;
  /** The wheel that arms the worker's wake-up. Default: the process-wide `sharedWheel()`. */
  wheel?: TimingWheel;
  /**
   * The safety poll: a worker claims from every shard at least this often, covering wake-up
   * messages lost while its subscriber was disconnected. An idle namespace costs one claim per
   * shard per interval and nothing else. Default 5 000.
   */
  pollIntervalMs?: number;
  /** Most timers one claim round trip takes from one shard, 1 to 1 000. Default 100. */
  batchSize?: number;
  /** Most handlers a worker runs at once; it claims no more than it can start. Default 100. */
  concurrency?: number;
  /** Prefix of every key and of the pub/sub channel. Default `'tickwheel'`. */
  keyPrefix?: string;
}

/** What a handler receives when a timer fires. */
export interface FiredTimer<P = unknown> {
  /** The id it was scheduled with. */
  id: string;
  /** Its payload (a fresh copy, parsed from JSON), or `undefined` when scheduled without one. */
  payload: P | undefined;
  /** When it was due, in epoch ms of the Redis server's clock. */
  dueAt: number;
  /** Deliveries so far, this one included: 1 on the first, more after lease expiries. */
  attempts: number;
}

/** Runs a fired timer. Resolving acks it; rejecting (or throwing) leaves it to be retried after the lease. */
export type TimerHandler<P = unknown> = (timer: FiredTimer<P>) => unknown | Promise<unknown>;

/** A timer as stored, from {@link RedisTimers.get}. */
export interface TimerInfo<P = unknown> {
  id: string;
  payload: P | undefined;
  /** When it is (or was) due, epoch ms, Redis server clock. */
  dueAt: number;
  /** Deliveries so far (0 until first claimed). */
  attempts: number;
  /** `'scheduled'`: waiting for its due time; `'claimed'`: handed to a worker and not yet acked. */
  state: 'scheduled' | 'claimed';
  /** For a claimed timer: when its lease expires and another worker may take it (epoch ms). */
  leaseExpiresAt: number | undefined;
}
