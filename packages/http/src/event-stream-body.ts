/**
 * eventStreamBody: a Server-Sent Events stream as a web `ReadableStream`, for frameworks that answer with a `Response` (hono, Next.js).
 */
import type { ReadableStreamDefaultController, UnderlyingSource } from 'node:stream/web';
import { EVENT_STREAM_HEADERS } from './event-stream.js';
import { streamPlan } from './event-stream-options.js';
import { kit } from './options.js';
import { TimedStream, type StreamSink } from './timed-stream.js';
import type { EventStreamBody, EventStreamEnd, EventStreamOptions, SendOptions } from './types.js';

/** How many bytes the body queues before `send()` says the client is behind (the queue's high-water mark). */
const QUEUE_BYTES = 16_384;

const encoder = new TextEncoder();

/**
 * The body's underlying source, the stream's target: the body's queue is the stream's buffer,
 * its cancel the client going away.
 */
class BodySource implements UnderlyingSource<Uint8Array> {
  stream: TimedStream<BodySource> | undefined = undefined;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined = undefined;
  private closed = false;

  constructor(private readonly request: Request | undefined) {}

  start(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.controller = controller;
  }

  cancel(): void {
    this.closed = true;
    this.stream?.end('client-gone');
  }

  /** The request's signal aborted: the client went away (or the framework gave up on it). */
  handleEvent(): void {
    this.stream?.end('client-gone');
  }

  write(text: string): boolean {
    const controller = this.controller!;
    controller.enqueue(encoder.encode(text));
    return (controller.desiredSize ?? 0) > 0;
  }

  bufferedBytes(): number {
    return QUEUE_BYTES - (this.controller!.desiredSize ?? QUEUE_BYTES);
  }

  finish(last: string | undefined): void {
    if (this.closed) return;
    this.closed = true;
    const controller = this.controller!;
    if (last !== undefined) controller.enqueue(encoder.encode(last));
    controller.close();
  }

  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    this.controller!.error(new DOMException('The event stream cut a slow consumer', 'AbortError'));
  }

  release(): void {
    this.request?.signal.removeEventListener('abort', this);
  }
}

/** A body source as a stream's sink. */
const BODY_SINK: StreamSink<BodySource> = {
  write: (source, text) => source.write(text),
  bufferedBytes: (source) => source.bufferedBytes(),
  end: (source, last) => source.finish(last),
  destroy: (source) => source.destroy(),
  release: (source) => source.release(),
};

/** What eventStreamBody returns: the stream's controls, passed through, and its body. */
class BodyControls implements EventStreamBody {
  readonly headers = EVENT_STREAM_HEADERS;

  constructor(
    private readonly stream: TimedStream<BodySource>,
    readonly body: ReadableStream<Uint8Array>,
  ) {}

  send(data: string, options?: SendOptions): boolean {
    return this.stream.send(data, options);
  }

  comment(text: string): boolean {
    return this.stream.comment(text);
  }

  close(): void {
    this.stream.close();
  }

  get lastEventId(): string | undefined {
    return this.stream.lastEventId;
  }

  get signal(): AbortSignal {
    return this.stream.signal;
  }

  get ended(): Promise<EventStreamEnd> {
    return this.stream.ended;
  }
}

/**
 * A Server-Sent Events stream for a framework that answers with a web `Response` (hono,
 * Next.js route handlers, anything on `fetch`'s types): the same controls and limits as
 * {@link eventStream}, and a `body` to answer with beside `headers`. The body's cancel (the
 * framework's sign that the client went away) ends the stream (`'client-gone'`), as does the
 * abort of `request.signal` when `request` is given; `request` also gives `lastEventId`. A slow
 * consumer's body errors, which makes the framework cut the response.
 *
 * @example
 * ```ts
 * import { Hono } from 'hono';
 * import { eventStreamBody } from '@tickwheel/http';
 *
 * const app = new Hono();
 * app.get('/events', (c) => {
 *   const stream = eventStreamBody({ heartbeatMs: 15_000, maxStreamMs: 600_000 }, c.req.raw);
 *   stream.send('hello');
 *   return new Response(stream.body, { headers: stream.headers });
 * });
 * ```
 * @param request - the request, for `Last-Event-ID` and its signal (optional)
 * @throws TypeError/RangeError for a bad option or a `request` that is not a `Request`
 */
export function eventStreamBody(options?: EventStreamOptions, request?: Request): EventStreamBody {
  const plan = streamPlan(options);
  // Not instanceof: frameworks bring their own Request class (@hono/node-server replaces the global one).
  if (request !== undefined && typeof (request as Partial<Request> | null)?.headers?.get !== 'function') {
    throw kit.typeError('request', 'must be a Request', request);
  }
  const source = new BodySource(request);
  const body = new ReadableStream<Uint8Array>(source, new ByteLengthQueuingStrategy({ highWaterMark: QUEUE_BYTES }));
  const lastEventId = request?.headers.get('last-event-id') ?? undefined;
  const stream = new TimedStream(plan, BODY_SINK, source, lastEventId);
  source.stream = stream;
  const result = new BodyControls(stream, body);
  if (request?.signal.aborted === true) {
    stream.end('client-gone');
    return result;
  }
  request?.signal.addEventListener('abort', source);
  stream.start(undefined);
  return result;
}
