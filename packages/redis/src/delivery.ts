/**
 * Deliveries: what becomes of a claimed timer: the FiredTimer its handler gets, the lease fence before it runs, its ack or failure report.
 */
import { backoffDelayMs } from './backoff.js';
import { kit } from './options.js';
import { decodePayload } from './payload.js';
import type { KeyList } from './keys.js';
import type { TimingWheel } from '@tickwheel/core';
import type { ShardKeys } from './keys.js';
import type { ScriptCommands } from './scripts.js';
import type { FiredTimer, RedisClient, StaleStage, TimerHandler } from './types.js';

/** Everything a worker and its deliveries need from their RedisTimers (defined here, below the worker, which imports it). */
export interface WorkerContext {
  client: RedisClient & ScriptCommands;
  shards: ShardKeys[];
  channel: string;
  wheel: TimingWheel;
  leaseMs: number;
  pollIntervalMs: number;
  batchSize: number;
  concurrency: number;
  failoverBudgetMs: number;
  /** Stalls before a timer fails (worker-scripts.ts, CLAIM); Infinity: no limit. */
  maxStalledCount: number;
  /**
   * Runs a write script wrapped by once (lua-prelude.ts) on shard `index` within the failover
   * budget: every try carries the call's id, so a second try of one that landed answers as it did.
   */
  write<T>(
    command: 'tickwheelAck' | 'tickwheelExtend' | 'tickwheelFail',
    index: number,
    args: string[],
    what: string,
  ): Promise<T>;
  /** For the diagnostics channels. */
  namespace: string;
  /** The scripts' trailing time argument. */
  now: () => string;
  handler: TimerHandler;
  onError: (error: unknown) => void;
  onFailed: (timer: FiredTimer, error: unknown) => void;
  onStale: (timer: FiredTimer, stage: StaleStage) => void;
}

/** A claimed timer: what its handler gets, and the retry policy it was scheduled with. */
export interface Claimed {
  timer: FiredTimer;
  backoff: string;
}

/** The part of a worker's shard that deliveries use. */
export interface DeliveryShard {
  index: number;
  keys: KeyList;
  /** Handled timers waiting to be acked. */
  acks: Claimed[];
}

/** What deliveries need from their worker. */
export interface DeliveryHost {
  readonly shards: readonly DeliveryShard[];
  /** The server's clock at local time `local` (never behind it). */
  serverNow(local: number): number;
  /** Keeps `promise` among the work `stop()` waits for. */
  track<T>(promise: Promise<T>): Promise<T>;
  /** Re-arms the worker's wake-up (a handler slot came free). */
  arm(): void;
  /** Reports a background error unless stopping. */
  report(error: unknown): void;
}

/** Longest stored failure reason; a stack trace beyond it is cut. */
const MAX_REASON_CHARS = 2_000;

/** The handlers a worker runs and the acks it owes. */
export class Deliveries {
  /** Handlers running now. */
  running = 0;
  private ackImmediate: NodeJS.Immediate | undefined;

  constructor(
    private readonly ctx: WorkerContext,
    private readonly host: DeliveryHost,
  ) {}

  /** The FiredTimer a claim reply's fields make, its extendLease fenced by the claim's token. */
  fired(
    shard: DeliveryShard,
    id: string,
    token: string,
    dueAt: number,
    attempts: number,
    maxAttempts: number,
    leaseExpiresAt: number,
    payload: string,
    stalls = 0,
  ): FiredTimer {
    const timer: FiredTimer = {
      id,
      payload: decodePayload(payload),
      dueAt,
      attempts,
      maxAttempts,
      stalls,
      token,
      leaseExpiresAt,
      extendLease: async (ms = this.ctx.leaseMs) => {
        kit.durationMs(ms, 'extendLease(ms)', 1);
        const until = await this.host.track(
          this.ctx.write<string>(
            'tickwheelExtend',
            shard.index,
            [id, token, String(Math.ceil(ms))],
            `extendLease("${id}")`,
          ),
        );
        if (until === '') return undefined;
        timer.leaseExpiresAt = Number(until);
        return timer.leaseExpiresAt;
      },
    };
    return timer;
  }

  /** Runs the handler of a claimed timer, unless its lease passed already; then acks or reports the failure. */
  run(shard: DeliveryShard, claimed: Claimed): void {
    const { timer } = claimed;
    // The fence: never start a handler whose lease has passed (worker.ts, "Server time on the local clock").
    if (this.host.serverNow(this.ctx.wheel.clock.now()) >= timer.leaseExpiresAt) {
      this.ctx.onStale(timer, 'start');
      return;
    }
    this.running++;
    // Called synchronously (the executor runs at once); a throw becomes a rejection like an async one.
    const result = new Promise<unknown>((resolve) => resolve(this.ctx.handler(timer)));
    void this.host.track(
      result.then(
        () => {
          this.running--;
          shard.acks.push(claimed);
          this.ackImmediate ??= setImmediate(() => this.flushAcks());
          this.host.arm();
        },
        (error: unknown) => {
          this.running--;
          this.ctx.onFailed(timer, error);
          this.reportFailure(shard, claimed, error);
          this.host.arm();
        },
      ),
    );
  }

  /** Sends a failed attempt to Redis: retried after the backoff, or moved to the failed set. */
  private reportFailure(shard: DeliveryShard, { timer, backoff }: Claimed, error: unknown): void {
    const reason = (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(
      0,
      MAX_REASON_CHARS,
    );
    const delay = String(backoffDelayMs(backoff, timer.attempts));
    this.host
      .track(
        this.ctx.write<string>(
          'tickwheelFail',
          shard.index,
          [timer.id, timer.token, delay, reason, this.ctx.channel, String(shard.index)],
          `fail("${timer.id}")`,
        ),
      )
      .then(
        (result) => {
          if (result === '') this.ctx.onStale(timer, 'fail');
        },
        (failure: unknown) => this.host.report(failure),
      );
  }

  /** Sends every shard's pending acks, one call per shard. */
  flushAcks(): void {
    if (this.ackImmediate !== undefined) clearImmediate(this.ackImmediate);
    this.ackImmediate = undefined;
    for (const shard of this.host.shards) {
      if (shard.acks.length === 0) continue;
      const batch = shard.acks;
      shard.acks = [];
      const args = batch.flatMap(({ timer }) => [timer.id, timer.token]);
      this.host.track(this.ctx.write<string[]>('tickwheelAck', shard.index, args, 'ack')).then(
        (reply) => {
          // Refused: claimed again, rescheduled or cancelled before this ack first landed.
          const ids = new Set(reply);
          for (const { timer } of batch) if (ids.has(timer.id)) this.ctx.onStale(timer, 'ack');
        },
        // Nothing is lost: the timers stay claimed and are delivered again after their lease.
        (error: unknown) => this.host.report(error),
      );
    }
  }
}
