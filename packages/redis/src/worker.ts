/**
 * The worker side of {@link RedisTimers}: wakes when a timer can be claimed, claims it; delivery.ts runs and acks it.
 *
 * ## Waking without polling
 * Every claim reply carries the shard's next due time and next lease expiry, read on the Redis
 * server. The worker keeps, per shard, the server time of the next thing that can become
 * claimable, and arms ONE handle on the local timing wheel for the earliest of them, converted
 * to the local monotonic clock. A timer scheduled elsewhere that is earlier than its shard's
 * earliest triggers a PUBLISH (`"<shard>:<dueAt>"`) that lowers that shard's wake time; a slow
 * safety poll claims from every shard each `pollIntervalMs`, and after the subscriber reconnects.
 *
 * ## Server time on the local clock
 * A claim request left at local `sent`; the server read its clock `now` at some local instant
 * after that, so `offset = server - local <= now + 1 - sent` (TIME is floored to the ms) whatever
 * delays (a GC pause, SIGSTOP) came in between. The worker keeps the smallest such upper bound
 * since the last safety poll. `local + offset` is then never behind the server's clock: used for
 * waking, it may wake a fraction of a millisecond early (the claim finds nothing and re-arms);
 * used for the lease check, it may refuse a handler a millisecond early, never start one late.
 *
 * ## Fencing
 * A claim returns, per timer, a fresh token and the lease end. Right before a handler starts the
 * worker checks the lease against `local + offset` and drops the timer when it has passed (the
 * next claim redelivers it). Ack, extendLease and failure reports carry the token, so once the
 * timer was claimed again (or rescheduled, or cancelled) they are refused; each refusal is
 * reported to `onStale`.
 *
 * ## Faults
 * A failed claim (or one unanswered for 2 s) is retried after 20 ms, doubling to 1 s (or the
 * safety poll), per shard. Each claim names the last claim whose reply arrived, so if Redis applied
 * later ones and only their replies were lost, the retry hands their timers out again (same token
 * and attempt) instead of leaving them held until their lease ends; the same holds when ioredis
 * sends an unanswered claim again after a reconnect, and a failed claim that Redis applies only
 * after a newer one of the same worker takes nothing (worker-scripts.ts, CLAIM). Acks and failure
 * reports retry transient errors within the failover budget, each try carrying the call's id, so
 * a second try of one that landed answers as it did (lua-prelude.ts, once); what still fails is
 * redelivered after its lease.
 */
import { randomBytes } from 'node:crypto';
import type { TimerHandle } from '@tickwheel/core';
import { publishFired } from './channels.js';
import { raced, refreshSlots, retryDelayMs, TRY_TIMEOUT_MS, withFailoverBudget } from './failover.js';
import { keyList } from './keys.js';
import type { Cluster } from 'ioredis';
import type { RedisClient } from './types.js';
import { Deliveries, type DeliveryShard, type WorkerContext } from './delivery.js';

interface Shard extends DeliveryShard {
  /** Server time (ms) of the next due timer or lease expiry known; Infinity when none. */
  next: number;
  /** Local time before which this shard is not claimed again (see claim's reply handling). */
  floor: number;
  claiming: boolean;
  /** Earliest wake-up message received while claiming: the reply cannot know of it. */
  hint: number;
  /** Consecutive failed claims, for the retry backoff. */
  failures: number;
  /** Sequence number of this worker's last claim on the shard (worker-scripts.ts, CLAIM). */
  claimSeq: number;
  /** The seq of the last claim whose reply came ('0' for none): the next claim takes back what later ones took. */
  answered: string;
}

export class Worker {
  readonly shards: Shard[];
  private readonly subscriber: RedisClient;
  private offset = Number.NaN;
  private lastPoll = Number.NEGATIVE_INFINITY;
  private handle: TimerHandle | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private readonly deliveries: Deliveries;
  /** Handler slots promised to claims under way. */
  private reserved = 0;
  private stopping = false;
  private readonly busy = new Set<Promise<unknown>>();
  private readonly wake = (): void => this.onWake();
  /** Names this worker's claims (worker-scripts.ts, CLAIM): unique per Worker. */
  private readonly id = randomBytes(9).toString('base64url');

  constructor(private readonly ctx: WorkerContext) {
    this.deliveries = new Deliveries(ctx, this);
    this.shards = ctx.shards.map((keys, index) => ({
      index,
      keys: keyList(keys),
      next: Number.NEGATIVE_INFINITY,
      floor: Number.NEGATIVE_INFINITY,
      claiming: false,
      hint: Infinity,
      failures: 0,
      claimSeq: 0,
      answered: '0',
      acks: [],
    }));
    this.subscriber = subscriberOf(ctx.client);
    this.subscriber.on('error', (error: unknown) => this.report(error));
    this.subscriber.on('message', (channel: string, message: string) => this.onMessage(channel, message));
  }

  /** Subscribes to the wake-up channel (within the failover budget), then claims from every shard. */
  async start(): Promise<void> {
    await withFailoverBudget(
      this.ctx.wheel,
      () => this.subscriber.subscribe(this.ctx.channel),
      this.ctx.failoverBudgetMs,
      'start',
      'calling start() again is safe',
      undefined,
      undefined,
      this.subscriber,
    );
    // From now on a reconnect may have lost messages: poll everything once it is back.
    this.subscriber.on('ready', () => {
      if (!isCluster(this.subscriber) && !this.stopping) {
        // Our own resubscribe (see subscriberOf): a rejection, say the connection closing again, is handled.
        this.subscriber.subscribe(this.ctx.channel).catch((error: unknown) => this.report(error));
      }
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
    while (this.busy.size > 0) {
      await Promise.allSettled([...this.busy]);
      this.deliveries.flushAcks();
    }
    this.subscriber.disconnect();
    // Best effort: a worker's last claim per shard is a few hundred bytes, and nothing reads it once it stopped.
    await Promise.allSettled(
      this.shards.map((shard) =>
        raced(this.ctx.wheel, this.ctx.client.tickwheelForgetWorker(...shard.keys, this.id), TRY_TIMEOUT_MS),
      ),
    );
  }

  /** @internal DeliveryHost */
  report(error: unknown): void {
    if (!this.stopping) this.ctx.onError(error);
  }

  /** @internal DeliveryHost */
  serverNow(local: number): number {
    return local + (Number.isNaN(this.offset) ? 0 : this.offset);
  }

  /** @internal DeliveryHost */
  track<T>(promise: Promise<T>): Promise<T> {
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
  /** @internal DeliveryHost */
  arm(): void {
    if (this.stopping) return;
    const now = this.ctx.wheel.clock.now();
    let wakeAt = this.lastPoll + this.ctx.pollIntervalMs;
    if (this.deliveries.running + this.reserved < this.ctx.concurrency) {
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
    const due = this.shards.filter(
      (shard) => !shard.claiming && (full || (shard.next <= serverNow && shard.floor <= now)),
    );
    // Free handler slots are shared among the shards claimed now, so their claims go out together.
    const free = this.ctx.concurrency - this.deliveries.running - this.reserved;
    for (const shard of due)
      this.claim(shard, full, Math.min(this.ctx.batchSize, Math.max(1, Math.floor(free / due.length))));
    this.arm();
  }

  private claim(shard: Shard, resync: boolean, share: number): void {
    const limit = Math.min(share, this.ctx.concurrency - this.deliveries.running - this.reserved);
    if (limit <= 0) return;
    shard.claiming = true;
    shard.hint = Infinity;
    this.reserved += limit;
    const clock = this.ctx.wheel.clock;
    const sent = clock.now();
    const seq = String(++shard.claimSeq);
    // A claim that never answers (see failover.ts) must not hold the shard: after TRY_TIMEOUT_MS it
    // counts as failed, and the next claim takes back what it took if it was applied.
    const request = raced(
      this.ctx.wheel,
      this.ctx.client.tickwheelClaim(
        ...shard.keys,
        String(limit),
        String(this.ctx.leaseMs),
        this.id,
        seq,
        shard.answered,
        this.ctx.maxStalledCount === Infinity ? '' : String(this.ctx.maxStalledCount),
        this.ctx.now(),
      ),
      TRY_TIMEOUT_MS,
    );
    this.track(request).then(
      (reply) => {
        const received = clock.now();
        this.reserved -= limit;
        shard.claiming = false;
        shard.failures = 0;
        shard.answered = seq;
        const serverNow = Number(reply[0]);
        const upper = serverNow + 1 - sent;
        const lower = serverNow - received;
        if (resync || Number.isNaN(this.offset) || upper < this.offset || lower > this.offset) this.offset = upper;
        const claimed = (reply.length - 4) / 7;
        if (claimed >= limit) {
          shard.next = serverNow;
          shard.floor = Number.NEGATIVE_INFINITY;
        } else {
          const nextDue = reply[1] === '' ? Infinity : Number(reply[1]);
          const nextLease = reply[2] === '' ? Infinity : Number(reply[2]);
          shard.next = Math.min(nextDue, nextLease, shard.hint);
          // The offset may put the server up to a millisecond ahead: without this floor the worker
          // would re-claim in a loop during that millisecond.
          shard.floor = shard.hint === Infinity ? received + 1 : Number.NEGATIVE_INFINITY;
        }
        const leaseExpiresAt = Number(reply[3]);
        for (let i = 4; i < reply.length; i += 7) {
          const maxAttempts = Number(reply[i + 4]);
          // The backoff, then `s<stalls>` once it stalled (worker-scripts.ts, CLAIM).
          const [backoff, stalls = '0'] = reply[i + 5].split('s');
          const timer = this.deliveries.fired(
            shard,
            reply[i],
            reply[i + 1],
            Number(reply[i + 2]),
            Number(reply[i + 3]),
            maxAttempts === 0 ? Infinity : maxAttempts,
            leaseExpiresAt,
            reply[i + 6],
            Number(stalls),
          );
          publishFired(this.ctx.namespace, timer.id, timer.dueAt, serverNow, timer.attempts);
          this.deliveries.run(shard, { timer, backoff });
        }
        this.arm();
      },
      (error: unknown) => {
        this.reserved -= limit;
        shard.claiming = false;
        // Back off from tens of ms: a failover is usually over in a second or two.
        const delay = retryDelayMs(shard.failures++, Math.min(1_000, this.ctx.pollIntervalMs));
        refreshSlots(this.ctx.client);
        shard.next = Math.min(shard.hint, this.serverNow(clock.now()) + delay);
        shard.floor = Number.NEGATIVE_INFINITY;
        this.report(error);
        this.arm();
      },
    );
  }
}

function isCluster(client: RedisClient): client is Cluster {
  return (client as { isCluster?: unknown }).isCluster === true;
}

/**
 * The worker's pub/sub connection. A Redis client's own resubscribe after a reconnect (ioredis's
 * readyHandler) leaves its promise without a rejection handler, so a `stop()` while it is in
 * flight would surface as an unhandled 'Connection is closed' in the user's process: the
 * duplicate resubscribes nothing itself, and the worker subscribes again on 'ready'. A Cluster's
 * subscriber connection (ClusterSubscriber) never reconnects: it is replaced, and its
 * resubscribe handles its rejections.
 */
function subscriberOf(client: RedisClient): RedisClient {
  return isCluster(client) ? client.duplicate() : client.duplicate({ autoResubscribe: false });
}
