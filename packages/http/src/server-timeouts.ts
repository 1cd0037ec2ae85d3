/**
 * serverTimeouts: the controller that attaches a server's limits to its requests and connections, and drains it.
 */
import { EventEmitter } from 'node:events';
import { Server as HttpServer } from 'node:http';
import type { Http2Session } from 'node:http2';
import type { Socket } from 'node:net';
import { Server as TlsServer, type TLSSocket } from 'node:tls';
import type { TimerHandle } from '@tickwheel/core';
import { enableAmbientDeadlines, enterDeadline } from '@tickwheel/core/internal';
import { ConnectionLimits, connectionOf, type ConnectionOwner } from './connection-limits.js';
import { advertiseKeepAlive } from './http-internals.js';
import { handlerLimitMs } from './deadline-policy.js';
import { graceMs as checkGrace, kit, serverPlan, type ServerPlan } from './options.js';
import { recordOf, RequestDeadline, type RequestOwner } from './request-deadline.js';
import type {
  CloseOptions,
  ServerTimeouts,
  ServerTimeoutsEvents,
  ServerTimeoutsOptions,
  TimedRequest,
  TimedResponse,
  TimedServer,
  TimeoutEvent,
} from './types.js';

/** The server's own limits that ours replace while attached, and the option of ours that lifts each. */
const LIFTED = [
  ['headersTimeout', 'headersMs'],
  ['requestTimeout', 'bodyIdleMs'],
  ['keepAliveTimeout', 'keepAliveMs'],
] as const;
type ServerLimit = (typeof LIFTED)[number][0];

/** The servers a controller is attached to: one controller per server at a time. */
const attached = new WeakSet<TimedServer>();

/**
 * The limits of one server (see {@link serverTimeouts}). A request listener prepended to the
 * server's (and to `'checkContinue'`) starts each request's deadline and enters it, so the
 * listeners after it run inside it; a connection listener appended after node:http's gives each
 * HTTP/1.x connection its limits. Nothing is wrapped, patched or added to Node's objects.
 */
class TimeoutsController
  extends EventEmitter<ServerTimeoutsEvents>
  implements ServerTimeouts, RequestOwner, ConnectionOwner
{
  draining = false;
  private stopped = false;
  private readonly requests = new Set<RequestDeadline>();
  private readonly connections = new Set<ConnectionLimits>();
  /** HTTP/2 sessions, for the drain (HTTP/2 servers only). */
  private readonly sessions = new Set<Http2Session>();
  private readonly saved = new Map<ServerLimit, number>();
  private readonly connectionEvent: 'connection' | 'secureConnection' | undefined;
  private closing: Promise<void> | undefined = undefined;
  private graceTimer: TimerHandle | undefined = undefined;

  constructor(
    private readonly server: TimedServer,
    readonly plan: ServerPlan,
  ) {
    super();
    const limits = server as unknown as Partial<Record<ServerLimit, number>>;
    for (const [limit, ours] of LIFTED) {
      if (plan[ours] === Infinity || typeof limits[limit] !== 'number') continue;
      this.saved.set(limit, limits[limit]);
      limits[limit] = 0;
    }
    this.connectionEvent =
      server instanceof TlsServer ? 'secureConnection' : server instanceof HttpServer ? 'connection' : undefined;
    if (this.connectionEvent !== undefined) server.on(this.connectionEvent, this.onConnection);
    // Only node:http2's servers emit 'session'.
    if (!(server instanceof HttpServer)) server.on('session', this.onSession);
    server.prependListener('request', this.onRequest);
    // Deadlines will be entered on the first request anyway: switch the store on before the
    // server's objects are sized (core's enableAmbientDeadlines).
    enableAmbientDeadlines();
  }

  /** The request listener: one per controller, bound once. */
  private readonly onRequest = (req: TimedRequest, res: TimedResponse): void => {
    if (this.stopped) {
      // Stopped while connections it saw are still open: clear the deadline a former request
      // left on the connection's context (see stop()), and nothing more. A controller attached
      // since then runs first (prepended later) and has made the request's record: leave its deadline.
      if (recordOf(res) === undefined) enterDeadline(undefined);
      return;
    }
    // A request emitted twice (a 'checkContinue' listener that emits 'request' itself) keeps its first deadline.
    if (recordOf(res) !== undefined) return;
    const plan = this.plan;
    const record = new RequestDeadline(this, plan, req, res);
    this.requests.add(record);
    if (!('stream' in res)) {
      connectionOf(req.socket)?.requestStarted(record);
      if (plan.keepAliveMs !== Infinity) advertiseKeepAlive(res, plan.keepAliveMs);
      if (this.draining) res.setHeader('Connection', 'close');
    }
    record.start(handlerLimitMs(plan, req));
  };

  /** The connection listener, after node:http's own. */
  private readonly onConnection = (socket: Socket): void => {
    // An HTTP/2 session on a server with allowHTTP1: its streams are timed per request only.
    if ((socket as TLSSocket).alpnProtocol === 'h2') return;
    if (this.draining) {
      socket.destroy();
      return;
    }
    this.connections.add(new ConnectionLimits(this, socket));
  };

  private readonly onSession = (session: Http2Session): void => {
    this.sessions.add(session);
    session.once('close', () => {
      this.sessions.delete(session);
      if (this.stopped) this.releaseWhenQuiet();
    });
  };

  /** @internal A limit fired (channels.ts' `reportTimeout`). */
  timedOut(event: TimeoutEvent): void {
    if (this.listenerCount('timeout') > 0) this.emit('timeout', event);
  }

  /** @internal */
  requestClosed(record: RequestDeadline): void {
    this.requests.delete(record);
    if (!this.stopped && !('stream' in record.res)) connectionOf(record.req.socket)?.requestClosed(record);
  }

  /** @internal */
  connectionClosed(connection: ConnectionLimits): void {
    this.connections.delete(connection);
    if (this.stopped) this.releaseWhenQuiet();
  }

  /** After stop(): removes the request listener once no connection or session it saw is open. */
  private releaseWhenQuiet(): void {
    if (this.connections.size === 0 && this.sessions.size === 0) this.server.removeListener('request', this.onRequest);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    const server = this.server;
    attached.delete(server);
    // A connection's parser context keeps the last deadline entered on it, so our request
    // listener stays (clearing it) until the connections seen while attached are gone.
    this.releaseWhenQuiet();
    if (this.connectionEvent !== undefined) server.removeListener(this.connectionEvent, this.onConnection);
    server.removeListener('session', this.onSession);
    const limits = server as unknown as Record<ServerLimit, number>;
    for (const [limit, value] of this.saved) limits[limit] = value;
    this.saved.clear();
    for (const record of [...this.requests]) record.detach();
    this.requests.clear();
    for (const connection of this.connections) connection.detach();
    this.graceTimer?.cancel();
  }

  close(options?: CloseOptions): Promise<void> {
    const graceMs = checkGrace(options);
    if (this.closing !== undefined) return this.closing;
    this.draining = true;
    const server = this.server;
    this.closing = new Promise<void>((resolve) => {
      // Resolves however the server ends, even one that was not listening.
      server.close(() => {
        this.stop();
        resolve();
      });
    });
    for (const connection of [...this.connections]) if (connection.idle) connection.socket.destroy();
    for (const record of [...this.requests]) {
      const res = record.res;
      if (!('stream' in res) && !res.headersSent && !res.writableEnded) res.setHeader('Connection', 'close');
      record.drain?.();
    }
    for (const session of this.sessions) session.close();
    if (graceMs !== Infinity && !this.stopped) {
      this.graceTimer = this.plan.wheel.schedule(graceMs, () => this.graceEnded(graceMs));
    }
    return this.closing;
  }

  /** The drain's grace is over: end what is in flight, then destroy every connection left. */
  private graceEnded(graceMs: number): void {
    for (const record of [...this.requests]) if (record.open) record.end('drain', graceMs, this.plan.timeoutStatus);
    for (const connection of [...this.connections]) connection.socket.destroy();
    for (const session of this.sessions) session.destroy();
    (this.server as Partial<HttpServer>).closeAllConnections?.();
  }
}

/**
 * Attaches handler deadlines and connection limits to an HTTP server: node:http, node:https or
 * node:http2's compatibility API, also one a framework made (`fastify().server`,
 * `http.createServer(app)`). Inside a request listener (and all the async work it starts),
 * `currentDeadline()` is the request's deadline, so `withTimeouts` fetches and
 * `deadlineInterceptor` gRPC calls made there get what is left of it.
 *
 * @example
 * ```ts
 * import http from 'node:http';
 * import { currentDeadline } from '@tickwheel/core';
 * import { serverTimeouts } from '@tickwheel/http';
 *
 * const server = http.createServer((req, res) => {
 *   res.end(`${currentDeadline()?.remaining() ?? Infinity} ms left\n`);
 * });
 * const timeouts = serverTimeouts(server, { defaultTimeoutMs: 2_000, headersMs: 5_000, keepAliveMs: 65_000 });
 * timeouts.on('timeout', (event) => console.warn(`${event.kind} limit (${event.limitMs} ms): ${event.outcome}`));
 * server.listen(8080);
 * ```
 * @throws TypeError/RangeError for a bad option or a server that is not one; Error when the server already has one attached
 */
export function serverTimeouts(server: TimedServer, options?: ServerTimeoutsOptions): ServerTimeouts {
  if (!(server instanceof EventEmitter) || typeof (server as Partial<HttpServer>).listen !== 'function') {
    throw kit.typeError('server', 'must be a node:http, node:https or node:http2 server', server);
  }
  const plan = serverPlan(options);
  if (attached.has(server)) {
    throw new Error('@tickwheel/http: this server already has serverTimeouts attached; stop() that one first');
  }
  attached.add(server);
  return new TimeoutsController(server, plan);
}
