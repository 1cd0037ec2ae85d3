/**
 * The one seam on node:http's and node:http2's internals: what the package reads or sets that Node does not document.
 *
 * Everything here is an own property Node itself puts on its objects; nothing is added. Each is
 * read where the documented API has no answer:
 *
 * - `socket._httpMessage`: the response that owns the HTTP/1.1 socket's output now. A timeout
 *   answer is written on the socket only when it is the timed-out response's turn (a pipelined
 *   response waiting behind another is cut instead, as its bytes would land in the other's).
 * - `socket.parser`: null once the socket left HTTP (an upgrade, a CONNECT) or closed: the
 *   connection's limits then let go of it, so a WebSocket on the same server is never timed by them.
 * - `res._keepAliveTimeout`: what the response advertises in `Keep-Alive: timeout=N`. Node copies
 *   the server's `keepAliveTimeout` into it per response; with our `keepAliveMs` on we lift the
 *   server's (so that Node arms no socket timer of its own) and advertise ours here instead, so
 *   the bytes stay as a bare server with `keepAliveTimeout: keepAliveMs` sends them.
 */
// Node's own types (node:http, node:events…), stated here for consumers that list no types (TypeScript 7's default).
/// <reference types="node" preserve="true" />
import type { Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import type { TimedResponse } from './types.js';

interface HttpSocket extends Socket {
  _httpMessage?: ServerResponse | null;
  parser?: unknown;
}

/** True when `res` is the response writing on its HTTP/1.1 socket now. */
export function ownsSocket(socket: Socket, res: TimedResponse): boolean {
  return (socket as HttpSocket)._httpMessage === res;
}

/** True while `socket` still speaks HTTP/1.x through node:http's parser (not upgraded, not closed). */
export function speaksHttp(socket: Socket): boolean {
  return (socket as HttpSocket).parser != null;
}

/** Makes `res` advertise `keepAliveMs` in its `Keep-Alive` header, as the server's `keepAliveTimeout` would. */
export function advertiseKeepAlive(res: ServerResponse, keepAliveMs: number): void {
  (res as ServerResponse & { _keepAliveTimeout: number })._keepAliveTimeout = keepAliveMs;
}
