/**
 * The worker side of {@link RedisTimers}: claims due timers and runs the handler.
 *
 * ## Waking without polling
 * Every claim reply carries the shard's next due time and next lease expiry, read on the Redis
 * server. The worker keeps, per shard, the server time of the next thing that can become
 * claimable, and arms ONE handle on the local timing wheel for the earliest of them, converted
 * to the local monotonic clock. So the near-term timer is in the local wheel and fires with its
 * millisecond precision, and nothing is polled while nothing is due.
 *
 * A timer scheduled by another process that is earlier than the shard's earliest triggers a
 * PUBLISH from the schedule script, `"<shard>:<dueAt>"`; every worker's subscriber (a duplicate
 * connection) lowers that shard's wake time. Messages can be lost (pub/sub is fire and forget,
 * and a subscriber may be reconnecting), so a slow safety poll claims from every shard each
 * `pollIntervalMs`, and after a subscriber reconnects.
 *
 * ## Server time on the local clock
 * A claim reply says the server's `now`. The request left at local `sent` and the reply came at
 * `received`, so `now - received <= offset <= now + 1 - sent` (TIME is floored to the ms). The
 * worker keeps the smallest upper bound seen since the last safety poll: it may then wake a
 * fraction of a millisecond before the server thinks a timer is due (the claim finds nothing and
 * re-arms for the next tick), but never late because of the conversion.
 *
 * ## Acks
 * Handlers that resolve in the same turn of the event loop are acked together: one ACK script
 * call per shard carries all of them.
 */
import type { TimerHandle, TimingWheel } from '@tickwheel/core';
import { decodePayload } from './payload.js';
import type { ShardKeys } from './keys.js';
import type { ScriptCommands } from './scripts.js';
import type { FiredTimer, RedisClient, TimerHandler } from './types.js';

interface Shard {
  index: number;
  keys: ShardKeys;
  /** Server time (ms) of the next due timer or lease expiry known; Infinity when none. */
  next: number;
  /**
   * Local time before which this shard is not claimed again, after a claim found nothing more:
   * the offset estimate may put the server up to a millisecond ahead, and without this floor the
   * worker would re-claim in a loop during that millisecond.
   */
  floor: number;
  /** A claim round trip is under way. */
  claiming: boolean;
  /** Earliest wake-up message received while claiming: the reply cannot know of it. */
  hint: number;
  /** Pairs id, seq waiting to be acked. */
  acks: string[];
}

/** Everything the worker needs from its RedisTimers. */
export interface WorkerContext {
  client: RedisClient & ScriptCommands;
  shards: ShardKeys[];
  channel: string;
  wheel: TimingWheel;
  leaseMs: number;
  pollIntervalMs: number;
  batchSize: number;
  concurrency: number;
  /** The scripts' trailing time argument. */
  now: () => string;
  handler: TimerHandler;
  onError: (error: unknown) => void;
  onFailed: (error: unknown, timer: FiredTimer) => void;
}

/** Delay before a shard whose claim failed (Redis down, say) is tried again. */
const RETRY_MS = 1_000;

type Subscriber = RedisClient;

export class Worker {
  private readonly shards: Shard[];
  private readonly subscriber: Subscriber;
  private offset = Number.NaN;
  private lastPoll = Number.NEGATIVE_INFINITY;
  private handle: TimerHandle | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private ackImmediate: NodeJS.Immediate | undefined;
  /** Handlers under way. */
  private running = 0;
  /** Handler slots promised to claims under way. */
  private reserved = 0;
  private stopping = false;
  private readonly busy = new Set<Promise<unknown>>();
  private readonly wake = (): void => this.onWake();

  constructor(private readonly ctx: WorkerContext) {
    this.shards = ctx.shards.map((keys, index) => ({ index, keys, next: Number.NEGATIVE_INFINITY, floor: Number.NEGATIVE_INFINITY, claiming: false, hint: Infinity, acks: [] }));
    this.subscriber = ctx.client.duplicate();
    this.subscriber.on('error', (error: unknown) => this.report(error));
    this.subscriber.on('message', (channel: string, message: string) => this.onMessage(channel, message));
  }

  /** Subscribes to the wake-up channel, then claims from every shard. */
  async start(): Promise<void> {
    await this.subscriber.subscribe(this.ctx.channel);
    // From now on a reconnect may have lost messages: poll everything once it is back.
    this.subscriber.on('ready', () => {
      this.lastPoll = Number.NEGATIVE_INFINITY;
      this.arm();
    });
    this.arm();
  }

  /** Stops claiming, waits for running handlers and their acks, closes the subscriber. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.handle?.cancel();
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    // Claims under way may still hand over timers; those run too. Each settled round may add acks.
    while (this.busy.size > 0) {
      await Promise.allSettled([...this.busy]);
      this.flushAcks();
    }
    this.subscriber.disconnect();
  }

  private report(error: unknown): void {
    if (!this.stopping) this.ctx.onError(error);
  }

  private serverNow(local: number): number {
    return local + (Number.isNaN(this.offset) ? 0 : this.offset);
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.busy.add(promise);
    void promise.finally(() => this.busy.delete(promise)).catch(() => undefined);
    return promise;
  }

  private onMessage(channel: string, message: string): void {
    if (channel !== this.ctx.channel) return;
    const colon = message.indexOf(':');
    const shard = this.shards[Number(message.slice(0, colon))];
    const due = Number(message.slice(colon + 1));
    if (shard === undefined || !Number.isFinite(due)) return;
    if (shard.claiming) shard.hint = Math.min(shard.hint, due);
    if (due < shard.next) {
      shard.next = due;
      shard.floor = Number.NEGATIVE_INFINITY;
      this.arm();
    }
  }

  /** Arms the one wake-up: the earliest shard event, or the safety poll. */
  private arm(): void {
    if (this.stopping) return;
    const clock = this.ctx.wheel.clock;
    const now = clock.now();
    let wakeAt = this.lastPoll + this.ctx.pollIntervalMs;
    if (this.running + this.reserved < this.ctx.concurrency) {
      for (const shard of this.shards) {
        if (!shard.claiming) wakeAt = Math.min(wakeAt, Math.max(shard.next - this.serverNow(0), shard.floor));
      }
    }
    if (wakeAt <= now) {
      this.handle?.cancel();
      this.immediate ??= setImmediate(() => {
        this.immediate = undefined;
        this.onWake();
      });
      return;
    }
    if (this.handle?.pending && this.handle.expiresAt <= wakeAt && this.handle.expiresAt >= wakeAt - 1) return;
    this.handle?.cancel();
    this.handle = this.ctx.wheel.scheduleAt(wakeAt, this.wake);
  }

  private onWake(): void {
    if (this.stopping) return;
    const now = this.ctx.wheel.clock.now();
    const full = now >= this.lastPoll + this.ctx.pollIntervalMs;
    if (full) this.lastPoll = now;
    const serverNow = this.serverNow(now);
    const due = this.shards.filter((shard) => !shard.claiming && (full || (shard.next <= serverNow && shard.floor <= now)));
    // Free handler slots are shared among the shards claimed now, so their claims go out together.
    const free = this.ctx.concurrency - this.running - this.reserved;
    for (const shard of due) this.claim(shard, full, Math.min(this.ctx.batchSize, Math.max(1, Math.floor(free / due.length))));
    this.arm();
  }

  private claim(shard: Shard, resync: boolean, share: number): void {
    const limit = Math.min(share, this.ctx.concurrency - this.running - this.reserved);
    if (limit <= 0) return;
    shard.claiming = true;
    shard.hint = Infinity;
    this.reserved += limit;
    const { keys } = shard;
    const clock = this.ctx.wheel.clock;
    const sent = clock.now();
    const request = this.ctx.client.tickwheelClaim(keys.due, keys.lease, keys.timers, keys.seq, String(limit), String(this.ctx.leaseMs), this.ctx.now());
    this.track(request).then(
      (reply) => {
        const received = clock.now();
        this.reserved -= limit;
        shard.claiming = false;
        const serverNow = Number(reply[0]);
        const upper = serverNow + 1 - sent;
        const lower = serverNow - received;
        if (resync || Number.isNaN(this.offset) || upper < this.offset || lower > this.offset) this.offset = upper;
        const claimed = (reply.length - 3) / 5;
        const nextDue = reply[1] === '' ? Infinity : Number(reply[1]);
        const nextLease = reply[2] === '' ? Infinity : Number(reply[2]);
        if (claimed >= limit) {
          shard.next = serverNow;
          shard.floor = Number.NEGATIVE_INFINITY;
        } else {
          shard.next = Math.min(nextDue, nextLease, shard.hint);
          shard.floor = shard.hint === Infinity ? received + 1 : Number.NEGATIVE_INFINITY;
        }
        for (let i = 3; i < reply.length; i += 5) {
          this.run(shard, reply[i]!, reply[i + 1]!, {
            id: reply[i]!,
            dueAt: Number(reply[i + 2]),
            attempts: Number(reply[i + 3]),
            payload: decodePayload(reply[i + 4]),
          });
        }
        this.arm();
      },
      (error: unknown) => {
        this.reserved -= limit;
        shard.claiming = false;
        shard.next = Math.min(shard.hint, this.serverNow(clock.now()) + Math.min(RETRY_MS, this.ctx.pollIntervalMs));
        this.report(error);
        this.arm();
      },
    );
  }

  private run(shard: Shard, id: string, seq: string, timer: FiredTimer): void {
    this.running++;
    let result: Promise<unknown>;
    try {
      result = Promise.resolve(this.ctx.handler(timer));
    } catch (error) {
      result = Promise.reject(error);
    }
    this.track(result.then(
      () => {
        this.running--;
        shard.acks.push(id, seq);
        this.ackImmediate ??= setImmediate(() => this.flushAcks());
        this.arm();
      },
      (error: unknown) => {
        this.running--;
        this.ctx.onFailed(error, timer);
        this.arm();
      },
    ));
  }

  private flushAcks(): void {
    if (this.ackImmediate !== undefined) clearImmediate(this.ackImmediate);
    this.ackImmediate = undefined;
    for (const shard of this.shards) {
      if (shard.acks.length === 0) continue;
      const { keys, acks } = shard;
      shard.acks = [];
      // A failed ack loses nothing: the timer stays claimed and is delivered again after its lease.
      this.track(this.ctx.client.tickwheelAck(keys.due, keys.lease, keys.timers, keys.seq, ...acks)).catch((error: unknown) => this.report(error));
    }
  }
}
