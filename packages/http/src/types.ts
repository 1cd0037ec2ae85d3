/**
 * The public types of @tickwheel/http: serverTimeouts' options, its controller and events, the framework adapters' options.
 */
// Node's own types (node:http, node:events…), stated here for consumers that list no types (TypeScript 7's default).
/// <reference types="node" preserve="true" />
import type { EventEmitter } from 'node:events';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { Http2SecureServer, Http2Server, Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Server as HttpsServer } from 'node:https';
import type { TimeoutBudget, TimingWheel } from '@tickwheel/core';

/**
 * A server {@link serverTimeouts} attaches to: node:http, node:https, or node:http2's compatibility
 * API (`createServer`, `createSecureServer`, with or without `allowHTTP1`), also one a framework made.
 */
export type TimedServer = HttpServer | HttpsServer | Http2Server | Http2SecureServer;

/** A request as the server's `'request'` listeners get it (HTTP/1.x or the HTTP/2 compatibility API). */
export type TimedRequest = IncomingMessage | Http2ServerRequest;

/** A response as the server's `'request'` listeners get it. */
export type TimedResponse = ServerResponse | Http2ServerResponse;

/**
 * Options of {@link serverTimeouts}. Every limit is off until set (`0` and `Infinity` both mean
 * off), so attaching with no options changes nothing but the deadline headers it reads.
 */
export interface ServerTimeoutsOptions {
  /**
   * The handler deadline of a request whose caller sent no deadline header, in ms. Inside the
   * handler it is `currentDeadline()`. Default off.
   */
  defaultTimeoutMs?: number;
  /** The cap on every deadline, whatever the caller's header or `timeoutFor` asked, in ms. Default off. */
  maxTimeoutMs?: number;
  /**
   * A per-route handler deadline for plain node:http, in place of `defaultTimeoutMs`: called once
   * per request with the request head, returns ms (`0`/`Infinity`: no deadline) or `undefined`
   * for `defaultTimeoutMs`. A caller's deadline header can shorten it, never lengthen it.
   */
  timeoutFor?: (req: TimedRequest) => number | undefined;
  /**
   * The request headers read as the caller's deadline, the first present and valid one winning,
   * lower-case names. `grpc-timeout` is read in gRPC's format (`100m`, `2S`), every other as whole
   * ms. A malformed value is ignored. A caller's deadline can only shorten the request's
   * (`defaultTimeoutMs`/`timeoutFor`) and is capped by `maxTimeoutMs`. `[]` reads none.
   * Default `['connect-timeout-ms', 'grpc-timeout', 'x-envoy-expected-rq-timeout-ms']`.
   */
  deadlineHeaders?: readonly string[];
  /**
   * The request head must arrive in full within this many ms of the connection's start (or of
   * the previous response's end, on a keep-alive connection), timed on the wheel; then `408` and
   * the connection is closed. While on, the server's own `headersTimeout` is lifted. Default off.
   */
  headersMs?: number;
  /**
   * While the handler reads the request body, the body may be silent at most this long; time the
   * handler spends not reading does not count. Then `408` (or the connection is cut when the
   * response had started). While on, the server's own `requestTimeout` is lifted. Default off.
   */
  bodyIdleMs?: number;
  /**
   * An idle keep-alive connection (between a response's end and the next request's head) is
   * closed after this many ms. Keep it longer than the idle timeout of any load balancer in front
   * of the server. While on, the server's own `keepAliveTimeout` is lifted. Default off.
   */
  keepAliveMs?: number;
  /** The status answered when the handler deadline passes before the response started. Default 503. */
  timeoutStatus?: number;
  /** The wheel that times everything. Default `sharedWheel()`. */
  wheel?: TimingWheel;
}

/** Which limit fired. `'drain'`: `close({ graceMs })`'s grace ended with the request still in flight. */
export type HttpTimeoutKind = 'handler' | 'headers' | 'body-idle' | 'keep-alive' | 'drain';

/** The `'timeout'` event of a {@link ServerTimeouts}, one per limit that fired. */
export interface TimeoutEvent {
  readonly kind: HttpTimeoutKind;
  /** The limit that fired, in ms (the request's deadline for `'handler'`, the grace for `'drain'`). */
  readonly limitMs: number;
  /**
   * What the connection got: `'answered'` (`timeoutStatus` for `'handler'` or `'drain'`, `408`
   * for `'headers'` and `'body-idle'`), `'cut'` (the response had started: the HTTP/1.1 socket
   * destroyed, the HTTP/2 stream reset) or `'closed'` (an idle connection closed).
   */
  readonly outcome: 'answered' | 'cut' | 'closed';
  /** The request, for the kinds that have one (`'handler'`, `'body-idle'`, `'drain'`). */
  readonly req: TimedRequest | undefined;
  /** True when a `'handler'` deadline came from the caller's deadline header. */
  readonly propagated: boolean;
  /**
   * Where a `'handler'` deadline's time went (`@tickwheel/core`'s `TimeoutBudget`): the caller's
   * deadline (`limit: 'deadline'`, `inherited`, `source: 'header:<name>'`) or the server's own
   * limit (`limit` `'defaultTimeoutMs'`, `'timeoutFor'`, `'maxTimeoutMs'` or an adapter's
   * `timeoutMs`), its length, the time the request spent and how late the deadline fired.
   * Undefined for the other kinds.
   */
  readonly budget: TimeoutBudget | undefined;
  /** The request's context, from `tickwheel:core:capture-context` (undefined without a subscriber there or a request). */
  readonly context: unknown;
}

/** The events of a {@link ServerTimeouts}. */
export interface ServerTimeoutsEvents {
  timeout: [event: TimeoutEvent];
}

/** Options of {@link ServerTimeouts.close}. */
export interface CloseOptions {
  /**
   * How long in-flight requests may go on: each deadline is capped at this, and whatever is
   * still open when it ends is destroyed. Default 30 000 ms; `0`/`Infinity` wait for the
   * requests' own deadlines.
   */
  graceMs?: number;
}

/**
 * What {@link serverTimeouts} returns: the limits attached to one server.
 */
export interface ServerTimeouts extends EventEmitter<ServerTimeoutsEvents> {
  /**
   * Detaches: requests that arrive from now on get no deadline and no limit, the server's own
   * `headersTimeout`, `requestTimeout` and `keepAliveTimeout` are restored, and the limits of
   * requests and connections in flight are cancelled. Idempotent.
   */
  stop(): void;
  /**
   * Drains the server: stops accepting, closes idle keep-alive connections at once, answers each
   * in-flight keep-alive request with `Connection: close`, caps every in-flight deadline at
   * `graceMs`, destroys what is left when the grace ends, and resolves once the server is closed.
   */
  close(options?: CloseOptions): Promise<void>;
}

/**
 * Options of the framework adapters' `deadline()` middleware (express, koa) and of fastify's
 * `deadlinePlugin` (and a fastify route's `config.deadline`).
 */
export interface DeadlineMiddlewareOptions {
  /**
   * The handler deadline in ms (`0`/`Infinity`: none). Per route it replaces the app-wide one,
   * longer or shorter. A caller's deadline header can shorten it, never lengthen it. Default off.
   */
  timeoutMs?: number;
  /** The cap on every deadline, the caller's header included. Default off. */
  maxTimeoutMs?: number;
  /** As {@link ServerTimeoutsOptions.deadlineHeaders}. */
  deadlineHeaders?: readonly string[];
  /** As {@link ServerTimeoutsOptions.timeoutStatus}. Default 503. */
  timeoutStatus?: number;
  /** As {@link ServerTimeoutsOptions.wheel}. */
  wheel?: TimingWheel;
}

/**
 * Options of {@link eventStream} and {@link eventStreamBody}. Every time is in ms on the wheel's
 * clock; `0` and `Infinity` turn a limit off.
 */
export interface EventStreamOptions {
  /**
   * A comment line (`:`) is written after this much silence on the stream, so that proxies and
   * load balancers do not close it as idle; none while events flow. `0`/`Infinity`: none. Default 15 000.
   */
  heartbeatMs?: number;
  /**
   * The stream ends politely (`retry:` first, then the response's end) at a uniformly random
   * point in `[maxStreamMs × (1 − streamJitter), maxStreamMs]` after it started, so that
   * EventSource clients reconnect (with `Last-Event-ID`) and load spreads again, as
   * `@tickwheel/ws`'s `maxLifetimeMs`. Default off.
   */
  maxStreamMs?: number;
  /** The fraction (0–1) of `maxStreamMs` by which stream ages are spread. Needs `maxStreamMs`. Default 0. */
  streamJitter?: number;
  /** The `retry:` field (ms, an integer) written before a `'max-age'` or `'drain'` end. Default 3 000. */
  retryMs?: number;
  /**
   * A client that stops reading is cut (the socket destroyed, its buffers freed) once more than
   * this many bytes of ours are still waiting to be written `drainTimeoutMs` after it was first
   * seen behind, as `@tickwheel/ws`'s slow-consumer limit. `0`/`Infinity`: off. Default 1 048 576.
   */
  maxBufferedBytes?: number;
  /** How long a client may stay more than `maxBufferedBytes` behind. Must be > 0; needs `maxBufferedBytes`. Default 10 000. */
  drainTimeoutMs?: number;
  /** The wheel that times the streams. Default `sharedWheel()`. */
  wheel?: TimingWheel;
}

/** Why an event stream ended. */
export type EventStreamEndReason = 'closed' | 'client-gone' | 'slow-consumer' | 'max-age' | 'drain';

/** What {@link EventStream.ended} resolves with. */
export interface EventStreamEnd {
  /**
   * `'closed'`: `close()` (or the response ended by other code); `'client-gone'`: the client went
   * away; `'slow-consumer'`: cut by `maxBufferedBytes`; `'max-age'`: `maxStreamMs` passed;
   * `'drain'`: `serverTimeouts`' `close()`.
   */
  readonly reason: EventStreamEndReason;
}

/** The fields of one event besides its data. */
export interface SendOptions {
  /** The event type (`event:`); EventSource dispatches it under this name. Default: none (`'message'`). */
  event?: string;
  /** The event id (`id:`), which an EventSource sends back as `Last-Event-ID` when it reconnects. */
  id?: string;
}

/** The controls of one Server-Sent Events stream (see {@link eventStream}). */
export interface EventStreamControls {
  /**
   * Writes one event: `id:` and `event:` when given, then one `data:` line per line of `data`.
   * @returns false while the client is behind (the write was buffered; wait for it or skip), and
   *   once the stream has ended (nothing is written then)
   * @throws TypeError when `data` is not a string; RangeError for an `event` or `id` with a line break (or an `id` with NUL)
   */
  send(data: string, options?: SendOptions): boolean;
  /** Writes a comment (`: text`, one per line), which EventSource ignores. Returns as `send()`. */
  comment(text: string): boolean;
  /** Ends the stream (`'closed'`); the client's EventSource reconnects unless it is closed too. Idempotent. */
  close(): void;
  /** The `Last-Event-ID` the client sent (an EventSource reconnecting), or undefined. */
  readonly lastEventId: string | undefined;
  /** Aborts when the stream ends, for any reason. */
  readonly signal: AbortSignal;
  /** Resolves when the stream ends, with why. */
  readonly ended: Promise<EventStreamEnd>;
}

/** What {@link eventStream} returns: the controls of a stream on a node:http (or http2) response. */
export type EventStream = EventStreamControls;

/** What {@link eventStreamBody} returns: the controls and the body to answer with. */
export interface EventStreamBody extends EventStreamControls {
  /** The response body: hand it to `new Response(body, { headers })`; its cancel is the client going away. */
  readonly body: ReadableStream<Uint8Array>;
  /** The headers of an event stream (`content-type`, `cache-control`, `x-accel-buffering`), for the `Response`. */
  readonly headers: Readonly<Record<string, string>>;
}
