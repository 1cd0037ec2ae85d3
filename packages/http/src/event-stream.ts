/**
 * eventStream: a Server-Sent Events stream on a node:http, https or http2 (compatibility API) response.
 */
import { streamPlan } from './event-stream-options.js';
import { kit } from './options.js';
import { onDrain, releaseDeadline } from './stream-hooks.js';
import { TimedStream, type StreamSink } from './timed-stream.js';
import type { EventStream, EventStreamOptions, TimedRequest, TimedResponse } from './types.js';

/** The head of every event stream: no caching, and no buffering by nginx (`X-Accel-Buffering`). */
export const EVENT_STREAM_HEADERS = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
});

/** The streams on responses, found by a response's 'close' (one shared listener, no closure per stream). */
const streams = new WeakMap<TimedResponse, TimedStream<TimedResponse>>();

/** The response closed: ended by other code (`'closed'`), or the client went away (http2's compatibility API reports a reset stream as finished, so not `writableFinished`). */
function onResponseClose(this: TimedResponse): void {
  streams.get(this)?.end(this.writableEnded ? 'closed' : 'client-gone');
}

/**
 * Under serverTimeouts (or a framework adapter's deadline): the request leaves its handler
 * deadline, since a healthy stream outlives any, and a drain ends the stream at once.
 */
function joinServer(stream: TimedStream<TimedResponse>): void {
  const res = stream.target;
  if (releaseDeadline(res)) onDrain(res, () => stream.end('drain'));
}

/** What a stream uses of a response, the same on node:http's and on http2's compatibility API. */
interface StreamResponse {
  write(chunk: string): boolean;
  end(chunk?: string): unknown;
  destroy(): unknown;
  flushHeaders(): void;
  readonly writableLength: number;
}

/** A response as a stream's sink: one object for every stream. */
const RESPONSE_SINK: StreamSink<TimedResponse> = {
  write(res, text) {
    return (res as unknown as StreamResponse).write(text);
  },
  bufferedBytes(res) {
    return res.writableLength;
  },
  end(res, last) {
    if (last === undefined) res.end();
    else (res as unknown as StreamResponse).end(last);
  },
  destroy(res) {
    res.destroy();
  },
  release(res) {
    streams.delete(res);
    res.removeListener('close', onResponseClose);
  },
};

/**
 * Starts a Server-Sent Events stream on `res`: writes the head at once (`200`,
 * `content-type: text/event-stream`, `cache-control: no-cache`, `x-accel-buffering: no`, with any
 * header set on `res` before) and returns its controls. The stream writes a heartbeat comment after
 * `heartbeatMs` of silence, ends after `maxStreamMs` (with `retry:`), cuts a client that stays
 * `maxBufferedBytes` behind for `drainTimeoutMs`, and ends at once when the client goes away: no
 * timer or listener of it is left. Under `serverTimeouts` the request leaves its handler deadline
 * (the stream's own limits govern it), and the server's `close()` ends the stream with `retry:`.
 *
 * From express: `eventStream(req, res)`; koa: `ctx.respond = false` then `eventStream(ctx.req, ctx.res)`;
 * fastify: `reply.hijack()` then `eventStream(request.raw, reply.raw)`.
 *
 * @example
 * ```ts
 * import http from 'node:http';
 * import { eventStream } from '@tickwheel/http';
 *
 * http
 *   .createServer((req, res) => {
 *     const stream = eventStream(req, res, { heartbeatMs: 15_000, maxStreamMs: 600_000, streamJitter: 0.2 });
 *     let n = Number(stream.lastEventId ?? 0);
 *     const tick = setInterval(() => stream.send(`tick ${++n}`, { id: String(n) }), 1_000);
 *     stream.signal.addEventListener('abort', () => clearInterval(tick));
 *   })
 *   .listen(8080);
 * ```
 * @throws TypeError/RangeError for a bad option; TypeError when `res` has already ended
 */
export function eventStream(req: TimedRequest, res: TimedResponse, options?: EventStreamOptions): EventStream {
  const plan = streamPlan(options);
  if (res.writableEnded || res.destroyed) {
    throw new TypeError(`${kit.pkg}: eventStream() needs a response that has not ended`);
  }
  if (!res.headersSent) {
    res.writeHead(200, EVENT_STREAM_HEADERS);
    // Declared on both kinds of response, though @types/node leaves it off http2's.
    (res as unknown as StreamResponse).flushHeaders();
  }
  const lastEventId = req.headers['last-event-id'];
  const stream = new TimedStream(plan, RESPONSE_SINK, res, typeof lastEventId === 'string' ? lastEventId : undefined);
  streams.set(res, stream);
  res.on('close', onResponseClose);
  stream.start(joinServer);
  return stream;
}
