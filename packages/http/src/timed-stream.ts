/**
 * TimedStream: one Server-Sent Events stream, its writes, its one wheel handle and its end, whatever it is written to.
 *
 * A stream has up to three times to keep: its heartbeat (`heartbeatMs` after the last write), its
 * maximum age and, once its client was seen behind, the slow-consumer check. They share one
 * wheel handle that runs the stream itself as a task (no closure), armed at the earliest of the
 * three. A write only moves the heartbeat later, which the wheel takes in O(1) without relinking
 * (lazy re-filing, `TimerHandle.refreshAt`), so nothing of the stream fires while events flow.
 * What the stream writes to is a {@link StreamSink}: a node:http or http2 response
 * (event-stream.ts), or a web `ReadableStream` (event-stream-body.ts).
 */
import type { TimerHandle } from '@tickwheel/core';
import { scheduleTaskAt, type TimerTask } from '@tickwheel/core/internal';
import { publishStreamEnd } from './channels.js';
import type { StreamPlan } from './event-stream-options.js';
import { eventText, commentText, HEARTBEAT, retryText } from './sse-fields.js';
import type { EventStreamControls, EventStreamEnd, EventStreamEndReason, SendOptions } from './types.js';

/**
 * How a stream's bytes reach its target (a response, a web body's source): one shared object
 * per kind of target, never one per stream, the stream holding the target itself.
 */
export interface StreamSink<T> {
  /** Writes `text`; false when the client is behind (the bytes were buffered). */
  write(target: T, text: string): boolean;
  /** Bytes written but not yet taken by the client (our buffers, the socket's included). */
  bufferedBytes(target: T): number;
  /** Ends the response politely, after `last` when given. */
  end(target: T, last: string | undefined): void;
  /** Cuts the response and frees what it buffered. */
  destroy(target: T): void;
  /** Lets go of every listener the entry point put on the target (called first at every end). */
  release(target: T): void;
}

/** The stream's state: OPEN, or ended with the reason at `state - 1` here. */
const OPEN = 0;
const REASONS: readonly EventStreamEndReason[] = ['closed', 'client-gone', 'slow-consumer', 'max-age', 'drain'];

/** `overSince` while the client is not behind. */
const NOT_BEHIND = -1;

/** What `signal` and `ended` need, made on first use of either: most streams never pay for it. */
interface Watchers {
  aborter: AbortController | undefined;
  ended: Promise<EventStreamEnd> | undefined;
  settle: ((end: EventStreamEnd) => void) | undefined;
}

/**
 * A non-number stored first keeps a time field tagged (ARCHITECTURE.md, "The tagged-field idiom"):
 * the whole-ms times below then sit in the object instead of a heap box each.
 */
const TAGGED = null as unknown as number;

/** See the module comment. */
export class TimedStream<T> implements EventStreamControls, TimerTask {
  private state = OPEN;
  private handle: TimerHandle | undefined = undefined;
  /** When the stream started, whole ms on the wheel's clock (rounded up, as every time here: never early). */
  private startedAt = TAGGED;
  private lastWriteAt = TAGGED;
  private closeAt = TAGGED;
  /** When the client was first seen more than `maxBufferedBytes` behind; NOT_BEHIND while it is not. */
  private overSince = TAGGED;
  private watchers: Watchers | undefined = undefined;

  constructor(
    private readonly plan: StreamPlan,
    private readonly sink: StreamSink<T>,
    readonly target: T,
    readonly lastEventId: string | undefined,
  ) {
    this.overSince = NOT_BEHIND;
  }

  /**
   * Starts the stream's times; `join` joins it to serverTimeouts' drain (event-stream.ts), which
   * may end it at once. `random` draws the age's jitter.
   */
  start(join: (stream: TimedStream<T>) => void = noJoin, random: () => number = Math.random): void {
    const plan = this.plan;
    const now = Math.ceil(plan.wheel.clock.now());
    this.startedAt = now;
    this.lastWriteAt = now;
    // Uniform in [max × (1 − jitter), max]: 1 − r is in (0, 1].
    this.closeAt =
      plan.maxStreamMs === Infinity
        ? Infinity
        : Math.ceil(now + plan.maxStreamMs * (1 - plan.streamJitter * (1 - random())));
    join(this);
    if (this.state === OPEN) this.arm();
  }

  send(data: string, options?: SendOptions): boolean {
    const text = eventText(data, options?.event, options?.id);
    return this.write(text);
  }

  comment(text: string): boolean {
    return this.write(commentText(text));
  }

  close(): void {
    this.end('closed');
  }

  get signal(): AbortSignal {
    const watchers = this.watch();
    let aborter = watchers.aborter;
    if (aborter === undefined) {
      aborter = watchers.aborter = new AbortController();
      if (this.state !== OPEN) aborter.abort(endedReason(REASONS[this.state - 1]));
    }
    return aborter.signal;
  }

  get ended(): Promise<EventStreamEnd> {
    const watchers = this.watch();
    let ended = watchers.ended;
    if (ended === undefined) {
      ended = watchers.ended =
        this.state !== OPEN
          ? Promise.resolve({ reason: REASONS[this.state - 1] })
          : new Promise<EventStreamEnd>((resolve) => {
              watchers.settle = resolve;
            });
    }
    return ended;
  }

  /** True until the stream ended. */
  get open(): boolean {
    return this.state === OPEN;
  }

  private watch(): Watchers {
    return (this.watchers ??= { aborter: undefined, ended: undefined, settle: undefined });
  }

  /** @internal The handle came due: the age, the slow-consumer check or the heartbeat. */
  timerFired(): void {
    if (this.state !== OPEN) return;
    const plan = this.plan;
    const now = plan.wheel.clock.now();
    if (now >= this.closeAt) {
      this.end('max-age');
      return;
    }
    if (this.overSince !== NOT_BEHIND && now >= this.overSince + plan.drainTimeoutMs) {
      if (this.sink.bufferedBytes(this.target) > plan.maxBufferedBytes) {
        this.end('slow-consumer');
        return;
      }
      this.overSince = NOT_BEHIND;
    }
    if (now - this.lastWriteAt >= plan.heartbeatMs) this.write(HEARTBEAT);
    else this.arm();
  }

  /**
   * Ends the stream once: lets go of its handle and its sink's listeners, ends the
   * response as `reason` says (`retry:` first for an age or a drain, cut for a slow consumer),
   * reports it, then settles `ended` and aborts `signal`.
   */
  end(reason: EventStreamEndReason): void {
    if (this.state !== OPEN) return;
    this.state = REASONS.indexOf(reason) + 1;
    this.handle?.cancel();
    this.handle = undefined;
    const sink = this.sink;
    const target = this.target;
    sink.release(target);
    if (reason === 'max-age' || reason === 'drain') sink.end(target, retryText(this.plan.retryMs));
    else if (reason === 'closed') sink.end(target, undefined);
    else if (reason === 'slow-consumer') sink.destroy(target);
    publishStreamEnd(reason, Math.ceil(this.plan.wheel.clock.now()) - this.startedAt);
    const watchers = this.watchers;
    if (watchers === undefined) return;
    watchers.settle?.({ reason });
    watchers.settle = undefined;
    watchers.aborter?.abort(endedReason(reason));
  }

  private write(text: string): boolean {
    if (this.state !== OPEN) return false;
    const sink = this.sink;
    const written = sink.write(this.target, text);
    if (this.state !== OPEN) return false;
    const plan = this.plan;
    const now = Math.ceil(plan.wheel.clock.now());
    this.lastWriteAt = now;
    if (
      this.overSince === NOT_BEHIND &&
      plan.maxBufferedBytes !== Infinity &&
      sink.bufferedBytes(this.target) > plan.maxBufferedBytes
    ) {
      this.overSince = now;
    }
    this.arm();
    return written;
  }

  /** Arms the handle at the earliest of the heartbeat, the age and the slow-consumer check. */
  private arm(): void {
    const plan = this.plan;
    let dueAt = this.lastWriteAt + plan.heartbeatMs;
    if (this.closeAt < dueAt) dueAt = this.closeAt;
    if (this.overSince !== NOT_BEHIND && this.overSince + plan.drainTimeoutMs < dueAt) {
      dueAt = this.overSince + plan.drainTimeoutMs;
    }
    const handle = this.handle;
    if (dueAt === Infinity) handle?.cancel();
    else if (handle === undefined) this.handle = scheduleTaskAt(plan.wheel, dueAt, this).unref();
    else handle.refreshAt(dueAt);
  }
}

function noJoin(): void {}

/** What `signal` aborts with: an AbortError naming why the stream ended. */
function endedReason(reason: EventStreamEndReason): DOMException {
  return new DOMException(`The event stream ended (${reason})`, 'AbortError');
}
