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

/** Where a stream's bytes go. One small object per stream, made by the entry point. */
export interface StreamSink {
  /** Writes `text`; false when the client is behind (the bytes were buffered). */
  write(text: string): boolean;
  /** Bytes written but not yet taken by the client (our buffers, the socket's included). */
  bufferedBytes(): number;
  /** Ends the response politely, after `last` when given. */
  end(last: string | undefined): void;
  /** Cuts the response and frees what it buffered. */
  destroy(): void;
  /** Lets go of every listener the sink put on its response (called first at every end). */
  release(): void;
}

/**
 * Who is told when a stream starts and ends: `serverTimeouts`' controller, which ends every
 * stream of its server when it drains. One per server, never per stream.
 */
export interface StreamOwner {
  /** True once the server drains: a stream that starts then ends at once (`'drain'`). */
  readonly draining: boolean;
  streamStarted(stream: TimedStream): void;
  streamEnded(stream: TimedStream): void;
}

/** The stream's life: OPEN until it ends, for any reason; ENDED after. */
const OPEN = 0;
const ENDED = 1;

/** See the module comment. */
export class TimedStream implements EventStreamControls, TimerTask {
  private phase = OPEN;
  private reason: EventStreamEndReason | undefined = undefined;
  private handle: TimerHandle | undefined = undefined;
  private startedAt = 0;
  private lastWriteAt = 0;
  private closeAt = Infinity;
  /** When the client was first seen more than `maxBufferedBytes` behind; NaN while it is not. */
  private overSince = NaN;
  /** Made on first use of `signal`, `ended`: most streams never pay for them. */
  private aborter: AbortController | undefined = undefined;
  private endedPromise: Promise<EventStreamEnd> | undefined = undefined;
  private settle: ((end: EventStreamEnd) => void) | undefined = undefined;
  private owner: StreamOwner | undefined = undefined;

  constructor(
    private readonly plan: StreamPlan,
    private readonly sink: StreamSink,
    readonly lastEventId: string | undefined,
  ) {}

  /** Starts the stream's times, under `owner` when a server's controller has one; `random` draws the age's jitter. */
  start(owner: StreamOwner | undefined, random: () => number = Math.random): void {
    const plan = this.plan;
    const now = plan.wheel.clock.now();
    this.startedAt = now;
    this.lastWriteAt = now;
    // Uniform in [max × (1 − jitter), max]: 1 − r is in (0, 1].
    this.closeAt = now + plan.maxStreamMs * (1 - plan.streamJitter * (1 - random()));
    if (owner !== undefined) {
      if (owner.draining) {
        this.end('drain');
        return;
      }
      this.owner = owner;
      owner.streamStarted(this);
    }
    this.arm();
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
    let aborter = this.aborter;
    if (aborter === undefined) {
      aborter = this.aborter = new AbortController();
      if (this.reason !== undefined) aborter.abort(endedReason(this.reason));
    }
    return aborter.signal;
  }

  get ended(): Promise<EventStreamEnd> {
    let ended = this.endedPromise;
    if (ended === undefined) {
      const reason = this.reason;
      ended = this.endedPromise =
        reason !== undefined
          ? Promise.resolve({ reason })
          : new Promise<EventStreamEnd>((resolve) => {
              this.settle = resolve;
            });
    }
    return ended;
  }

  /** True until the stream ended. */
  get open(): boolean {
    return this.phase === OPEN;
  }

  /** @internal The handle came due: the age, the slow-consumer check or the heartbeat. */
  timerFired(): void {
    if (this.phase !== OPEN) return;
    const plan = this.plan;
    const now = plan.wheel.clock.now();
    if (now >= this.closeAt) {
      this.end('max-age');
      return;
    }
    if (this.overSince === this.overSince && now >= this.overSince + plan.drainTimeoutMs) {
      if (this.sink.bufferedBytes() > plan.maxBufferedBytes) {
        this.end('slow-consumer');
        return;
      }
      this.overSince = NaN;
    }
    if (now - this.lastWriteAt >= plan.heartbeatMs) this.write(HEARTBEAT);
    else this.arm();
  }

  /**
   * Ends the stream once: lets go of its handle, its owner and its sink's listeners, ends the
   * response as `reason` says (`retry:` first for an age or a drain, cut for a slow consumer),
   * reports it, then settles `ended` and aborts `signal`.
   */
  end(reason: EventStreamEndReason): void {
    if (this.phase !== OPEN) return;
    this.phase = ENDED;
    this.reason = reason;
    this.handle?.cancel();
    this.handle = undefined;
    const owner = this.owner;
    this.owner = undefined;
    owner?.streamEnded(this);
    const sink = this.sink;
    sink.release();
    if (reason === 'max-age' || reason === 'drain') sink.end(retryText(this.plan.retryMs));
    else if (reason === 'closed') sink.end(undefined);
    else if (reason === 'slow-consumer') sink.destroy();
    publishStreamEnd(reason, this.plan.wheel.clock.now() - this.startedAt);
    this.settle?.({ reason });
    this.settle = undefined;
    this.aborter?.abort(endedReason(reason));
  }

  private write(text: string): boolean {
    if (this.phase !== OPEN) return false;
    const sink = this.sink;
    const written = sink.write(text);
    if (this.phase !== OPEN) return false;
    const plan = this.plan;
    this.lastWriteAt = plan.wheel.clock.now();
    if (
      this.overSince !== this.overSince &&
      plan.maxBufferedBytes !== Infinity &&
      sink.bufferedBytes() > plan.maxBufferedBytes
    ) {
      this.overSince = this.lastWriteAt;
    }
    this.arm();
    return written;
  }

  /** Arms the handle at the earliest of the heartbeat, the age and the slow-consumer check. */
  private arm(): void {
    const plan = this.plan;
    let dueAt = this.lastWriteAt + plan.heartbeatMs;
    if (this.closeAt < dueAt) dueAt = this.closeAt;
    const checkAt = this.overSince + plan.drainTimeoutMs;
    if (checkAt < dueAt) dueAt = checkAt;
    const handle = this.handle;
    if (dueAt === Infinity) handle?.cancel();
    else if (handle === undefined) this.handle = scheduleTaskAt(plan.wheel, dueAt, this).unref();
    else handle.refreshAt(dueAt);
  }
}

/** What `signal` aborts with: an AbortError naming why the stream ended. */
function endedReason(reason: EventStreamEndReason): DOMException {
  return new DOMException(`The event stream ended (${reason})`, 'AbortError');
}
