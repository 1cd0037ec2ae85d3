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
