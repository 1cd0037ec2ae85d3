/**
 * ShardCalls: how RedisTimers runs one script on one shard, within the failover budget, waiting for replicas after a write.
 */
import { freshNow } from '@tickwheel/core';
import { CallGate } from './call-gate.js';
import { CallLog } from './call-log.js';
import { RedisUnavailableError, refreshSlots, TRY_TIMEOUT_MS, withFailoverBudget } from './failover.js';
import { keyList, shardKeys, shardOf, wakeChannel, type KeyList, type ShardKeys } from './keys.js';
import type { ResolvedOptions } from './options.js';
import { ReplicationBarrier } from './replication.js';
import { defineScripts, type ScriptCommands } from './scripts.js';
import type { RedisClient } from './types.js';

/** What a `RedisUnavailableError` says about trying again, per kind of call. */
export const RETRY_SAFE = {
  schedule: 'retrying is safe: schedule is idempotent by id',
  cancel: 'retrying is safe: cancel is idempotent',
  other: 'retrying is safe',
};

/** How long a measured server clock offset is used before it is read again. */
const OFFSET_MAX_AGE_MS = 5_000;
/** Taken off every try's deadline (ms). */
const LATE_MARGIN_MS = 5;

/** The shards of one namespace, their wake-up channel, and the calls to their scripts. */
export class ShardCalls {
  readonly client: RedisClient & ScriptCommands;
  /** The keys of each shard, by shard index. */
  readonly keys: ShardKeys[];
  /** The namespace's wake-up channel. */
  readonly channel: string;
  /** The ids that make each write land at most once (call-log.ts). */
  readonly log: CallLog;
  private readonly barrier: ReplicationBarrier | undefined;
  private readonly gate: CallGate;
  private offset: { value: number; at: number } | undefined;
  private offsetRead: { promise: Promise<number>; at: number } | undefined;

  constructor(private readonly options: ResolvedOptions) {
    this.client = defineScripts(options.redis);
    this.gate = new CallGate(options.wheel);
    this.keys = Array.from({ length: options.shards }, (_, shard) =>
      shardKeys(options.keyPrefix, options.namespace, shard),
    );
    this.channel = wakeChannel(options.keyPrefix, options.namespace);
    // A call's tries land within its budget (each carries a deadline inside it): its entry must outlive that.
    const ttlMs = Math.max(options.failoverBudgetMs, TRY_TIMEOUT_MS) + TRY_TIMEOUT_MS;
    this.log = new CallLog(options.keyPrefix, options.namespace, options.shards, ttlMs);
    if (options.waitForReplicas > 0) {
      this.barrier = new ReplicationBarrier(this.client, options.waitForReplicas, options.waitForReplicasTimeoutMs);
    }
  }

  /**
   * The scripts' trailing time argument: '' reads the server's TIME. With timeSource 'local' this
   * process's `Date.now()` stands in for TIME: it is the server clock then, not a local wait.
   */
  now(): string {
    return this.options.localTime ? String(Date.now()) : '';
  }

  /** The shard of `id`, and its keys as the scripts take them. */
  shardOf(id: string): { index: number; keys: KeyList } {
    const index = shardOf(id, this.keys.length);
    return { index, keys: keyList(this.keys[index]) };
  }

  /**
   * Runs one script on one shard, retrying transient errors within the failover budget; a write
   * then waits for `waitForReplicas` replicas (replication.ts). Only the wait is retried when the
   * replicas fail: the write landed, and running it again would write the timer a second time.
   */
  run<T>(
    command: keyof ScriptCommands,
    keys: KeyList,
    args: string[],
    what: string,
    retrySafe: string,
    write = true,
  ): Promise<T> {
    return this.call<T>(command, keys, () => Promise.resolve(args), what, retrySafe, write);
  }

  /**
   * Like {@link run} for a write wrapped by once (lua-prelude.ts) on shard `index`: every try
   * carries the call's id, so whichever try lands first is the only one applied and later tries
   * answer as it did; and each try carries its deadline on the server clock, so a try abandoned
   * by the budget loop is refused if it reaches Redis afterwards.
   *
   * @param replicas - wait for `waitForReplicas` after the write (a worker's acks do not)
   */
  write<T>(
    command: keyof ScriptCommands,
    index: number,
    args: string[],
    what: string,
    retrySafe: string,
    replicas = true,
  ): Promise<T> {
    const call = this.log.open(index);
    const keys = [...keyList(this.keys[index]), call.key];
    return this.call<T>(
      command,
      keys,
      async (tryMs) => {
        // With timeSource 'local' the script's time is the one sent, so a late try cannot be told.
        if (tryMs === Infinity || this.options.localTime) return [...args, ...call.args, '', this.now()];
        const start = freshNow(this.options.wheel.clock);
        const offset = await this.serverOffset();
        // A safety margin for the wheel's tick and the rounding of TIME to the ms.
        return [...args, ...call.args, String(Math.floor(start + offset + tryMs) - LATE_MARGIN_MS), ''];
      },
      what,
      retrySafe,
      replicas,
    ).finally(() => this.log.close(index, call));
  }

  /**
   * Waits for its turn at the gate (call-gate.ts), then tries with the budget left. A write's
   * wait for replicas comes after it leaves the gate: that wait is one round shared by the
   * shard's writes (replication.ts), so it should gather as many of them as there are.
   */
  private async call<T>(
    command: keyof ScriptCommands,
    keys: readonly string[],
    args: (tryMs: number) => Promise<string[]>,
    what: string,
    retrySafe: string,
    write: boolean,
  ): Promise<T> {
    const { failoverBudgetMs } = this.options;
    const client = this.client as unknown as Record<string, (...a: string[]) => Promise<T>>;
    const { wheel } = this.options;
    const refresh = () => refreshSlots(this.client);
    let deadline = Infinity;
    const reply = await this.gate.run(
      (budgetMs) => {
        deadline = freshNow(wheel.clock) + budgetMs;
        return withFailoverBudget(
          wheel,
          async (tryMs) => client[command](...keys, ...(await args(tryMs))),
          budgetMs,
          what,
          retrySafe,
          TRY_TIMEOUT_MS,
          refresh,
          this.client,
        );
      },
      failoverBudgetMs,
      (error) => !(error instanceof RedisUnavailableError),
      () =>
        new RedisUnavailableError(
          what,
          failoverBudgetMs,
          0,
          new Error('no call of this RedisTimers got an answer while this one waited for its turn'),
          retrySafe,
          this.client,
        ),
    );
    const barrier = write ? this.barrier : undefined;
    if (barrier !== undefined) {
      const left = failoverBudgetMs === 0 ? 0 : Math.max(1, deadline - freshNow(wheel.clock));
      await withFailoverBudget(
        wheel,
        () => barrier.wait(keys[0]),
        left,
        `${what} (waiting for replicas)`,
        'the write itself was applied',
        Math.max(TRY_TIMEOUT_MS, 2 * this.options.waitForReplicasTimeoutMs + 1_000),
        refresh,
        this.client,
      );
    }
    return reply;
  }

  /**
   * A lower bound of (server clock - wheel clock), from `TIME`, the package's one other clock: the
   * server read it before the reply arrived. Read again after {@link OFFSET_MAX_AGE_MS} of the
   * wheel's clock, so drift between the two cannot pile up.
   */
  private serverOffset(): Promise<number> {
    const clock = this.options.wheel.clock;
    if (this.offset !== undefined && clock.now() - this.offset.at <= OFFSET_MAX_AGE_MS) {
      return Promise.resolve(this.offset.value);
    }
    // One TIME for the tries that need it meanwhile; one that does not answer within a try is not waited for.
    if (this.offsetRead === undefined || clock.now() - this.offsetRead.at > TRY_TIMEOUT_MS) {
      const read = (this.client as unknown as { time(): Promise<[string, string]> })
        .time()
        .then(([seconds, micros]) => {
          const at = freshNow(clock); // after the server read TIME, so the offset is a lower bound
          this.offset = { value: Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - at, at };
          return this.offset.value;
        });
      const entry = { promise: read, at: clock.now() };
      const clear = () => {
        if (this.offsetRead === entry) this.offsetRead = undefined;
      };
      read.then(clear, clear);
      this.offsetRead = entry;
    }
    return this.offsetRead.promise;
  }
}
