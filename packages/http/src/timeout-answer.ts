/**
 * Ending a timed-out request: a short status answer before the response started, a cut after.
 *
 * HTTP/1.1: the answer goes through the response object, as the handler's own would (the headers
 * the handler had set are dropped first), with `Connection: close`, so `res.headersSent`,
 * `res.statusCode`, 'finish' and the access logs that read them (morgan, pino-http) say what the
 * client got. The response is then made inert for the handler's late calls (http-internals.ts'
 * `settleAnswered`): express's `res.json`, koa's `ctx.body` and any plain `res.end()` after a
 * timeout are dropped without an error, and no second response can reach the client. A response
 * that had started (its head written) is cut: the socket is destroyed, so the client sees a
 * broken response, never a short one that looks whole.
 *
 * HTTP/2: the stream answers with the status and is closed; a started stream is reset (INTERNAL_ERROR).
 */
import { STATUS_CODES } from 'node:http';
import { constants as http2Constants, type Http2ServerResponse } from 'node:http2';
import type { Socket } from 'node:net';
import { settleAnswered } from './http-internals.js';
import type { HttpTimeoutKind, TimedRequest, TimedResponse, TimeoutEvent } from './types.js';

/** Node's own answer to a request head that took too long (`_http_server.js`), byte for byte. */
export const REQUEST_TIMEOUT_ANSWER = Buffer.from(
  `HTTP/1.1 408 ${STATUS_CODES[408]}\r\nConnection: close\r\n\r\n`,
  'latin1',
);

/** The short body of each answer, by the limit that fired. */
const WHY: Readonly<Record<HttpTimeoutKind, string>> = {
  handler: "the request's deadline passed",
  headers: 'the request head took too long',
  'body-idle': 'the request body was idle too long',
  'keep-alive': 'the connection was idle too long',
  drain: 'the server is shutting down',
};

function answerBody(status: number, kind: HttpTimeoutKind): string {
  return `${STATUS_CODES[status] ?? 'Timeout'}: ${WHY[kind]}\n`;
}

/**
 * Ends a timed-out request: `status` with a short body when the response had not started, else a cut.
 */
export function endTimedOut(
  req: TimedRequest,
  res: TimedResponse,
  status: number,
  kind: HttpTimeoutKind,
): TimeoutEvent['outcome'] {
  if ('stream' in res) return endStream(res, status, kind);
  const socket = req.socket as Socket | null;
  if (socket === null || socket.destroyed) return 'cut';
  if (res.headersSent || !socket.writable) {
    socket.destroy();
    return 'cut';
  }
  for (const name of res.getHeaderNames()) res.removeHeader(name);
  const body = answerBody(status, kind);
  res.writeHead(status, {
    Connection: 'close',
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
  settleAnswered(res, status);
  closeWhenFlushed(socket);
  return 'answered';
}

/** How long an ended socket may take to flush a timeout answer before it is destroyed. */
const FLUSH_MS = 2_000;

/**
 * Destroys `socket` once its answer is flushed, or after FLUSH_MS if the client does not read
 * it: a client that stops reading must not hold the socket. Timeouts are rare: the closure and
 * the Node timer here are paid only then.
 */
function closeWhenFlushed(socket: Socket): void {
  if (socket.writableFinished) {
    socket.destroy();
    return;
  }
  const timer = setTimeout(() => socket.destroy(), FLUSH_MS).unref();
  socket.once('finish', () => {
    clearTimeout(timer);
    socket.destroy();
  });
}

/** Writes the same answer for a request head that never completed, on a socket with no response yet. */
export function answerOnSocket(socket: Socket, bytes: Buffer): void {
  if (socket.writable) {
    socket.end(bytes);
    closeWhenFlushed(socket);
  } else {
    socket.destroy();
  }
}

function endStream(res: Http2ServerResponse, status: number, kind: HttpTimeoutKind): TimeoutEvent['outcome'] {
  const stream = res.stream;
  if (stream.destroyed || stream.closed) return 'cut';
  if (!stream.headersSent) {
    const body = answerBody(status, kind);
    const head = res.req.method === 'HEAD';
    stream.respond(
      { ':status': status, 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) },
      { endStream: head },
    );
    if (!head) stream.end(body);
    // Flushes what was written, then RST_STREAM(NO_ERROR): the stream closes even while the client still sends.
    stream.close(http2Constants.NGHTTP2_NO_ERROR);
    return 'answered';
  }
  // INTERNAL_ERROR rather than CANCEL: Node's client (and others) end a stream reset with CANCEL
  // as if it were whole; with an error code the client sees the cut.
  stream.close(http2Constants.NGHTTP2_INTERNAL_ERROR);
  return 'cut';
}
