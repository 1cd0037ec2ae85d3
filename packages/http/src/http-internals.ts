/**
 * The one seam on node:http's and node:http2's internals: what the package reads or sets that Node does not document.
 *
 * Everything here is an own property Node itself puts on its objects; nothing is added. Each is
 * read where the documented API has no answer:
 *
 * - `socket.parser`: null once the socket left HTTP (an upgrade, a CONNECT) or closed: the
 *   connection's limits then let go of it, so a WebSocket on the same server is never timed by them.
 * - `res._header` and `res.destroyed`: after a timeout answer written through the response, the
 *   handler's late `setHeader`/`writeHead` must not throw ERR_HTTP_HEADERS_SENT and its late
 *   `write`/`end` must be dropped without an 'error' event, as they would be on a closed response;
 *   the head is shown again only while the response's 'finish' listeners run, so that access
 *   logs (morgan, pino-http) read the status and headers that were sent.
 * - `res._keepAliveTimeout`: what the response advertises in `Keep-Alive: timeout=N`. Node copies
 *   the server's `keepAliveTimeout` into it per response; with our `keepAliveMs` on we lift the
 *   server's (so that Node arms no socket timer of its own) and advertise ours here instead, so
 *   the bytes stay as a bare server with `keepAliveTimeout: keepAliveMs` sends them.
 */
import type { Socket } from 'node:net';
import type { ServerResponse } from 'node:http';

interface HttpSocket extends Socket {
  parser?: unknown;
}

/** True while `socket` still speaks HTTP/1.x through node:http's parser (not upgraded, not closed). */
export function speaksHttp(socket: Socket): boolean {
  return (socket as HttpSocket).parser != null;
}

interface AnsweredResponse extends ServerResponse {
  _header: string | null;
}

/**
 * Makes `res`, just answered with `status` by a timeout, inert for the handler's late calls,
 * except while its 'finish' listeners run (see the file's comment).
 */
export function settleAnswered(res: ServerResponse, status: number): void {
  const answered = res as AnsweredResponse;
  const head = answered._header;
  answered._header = null;
  res.destroyed = true;
  res.prependListener('finish', () => {
    answered._header = head;
    res.statusCode = status;
  });
  res.once('finish', () => {
    answered._header = null;
  });
}

/** Makes `res` advertise `keepAliveMs` in its `Keep-Alive` header, as the server's `keepAliveTimeout` would. */
export function advertiseKeepAlive(res: ServerResponse, keepAliveMs: number): void {
  (res as ServerResponse & { _keepAliveTimeout: number })._keepAliveTimeout = keepAliveMs;
}
