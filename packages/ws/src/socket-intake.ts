/**
 * SocketIntake: how a heartbeat learns of sockets: a server's connections, and sockets that are still opening.
 *
 * On a server it listens to `'connection'` and adopts the sockets the server already has. A
 * user's `wss.removeAllListeners('connection')` (say, to swap the app's handler) takes that
 * listener too, so the intake also listens to `'removeListener'`: when its own hook goes, it puts
 * it back once the removal is over (next tick) and adopts whatever connected in between from
 * `wss.clients`.
 *
 * A client socket handed over while still CONNECTING is waited for on its opening handshake's
 * HTTP request (ws keeps it as `_req`, read in ws-internals.ts), not on the socket: ws's own
 * `'upgrade'` listener there makes the socket OPEN (and emits `'open'`) before ours runs, and its `'response'` (a redirect
 * puts a new request in `_req`), `'error'` and `'close'` tell that the socket will not open.
 * So a connecting socket shows no listener of ours (`ws.listeners('open')` reads as bare ws's),
 * and a user's `ws.removeAllListeners()` before `'open'` cannot take the hook. Only a stand-in
 * without such a request gets plain `'open'` and `'close'` listeners.
 */
// Node's own types (node:http, node:events…), stated here for consumers that list no types (TypeScript 7's default).
/// <reference types="node" preserve="true" />
import type { IncomingMessage } from 'node:http';
import { describeValue } from '@tickwheel/core/internal';
import type { Server as WebSocketServer, WebSocket } from 'ws';
import { handshakeRequestOf, type HandshakeRequest } from './ws-internals.js';

/** WebSocket ready states (RFC 6455 / WHATWG), the same numbers ws uses. */
const CONNECTING = 0;
const OPEN = 1;

/** The events of an opening handshake's request after which the socket is open, or will not open. */
const REQUEST_EVENTS = ['upgrade', 'response', 'error', 'close'] as const;

/** A CONNECTING socket's wait: on its handshake request (`settle` hears it), or on the socket itself. */
interface Waiting {
  request: HandshakeRequest | undefined;
  settle: () => void;
}

/** See the module comment. */
export class SocketIntake<S extends WebSocket> {
  /** Sockets handed over while still CONNECTING: attached once open. */
  private readonly opening = new Map<S, Waiting>();
  private readonly server: WebSocketServer | undefined;
  private stopped = false;
  /** A re-attach of the server's hooks is queued (see `onServerListenerRemoved`). */
  private reattachQueued = false;
  private readonly onOpen: (this: WebSocket) => void;
  private readonly onOpeningClose: (this: WebSocket) => void;
  private readonly onConnection: (socket: S, request: IncomingMessage) => void;
  private readonly onServerListenerRemoved: (event: string | symbol, listener: unknown) => void;

  /**
   * @param target - the server or the one socket to watch
   * @param attach - called with each socket that is (or becomes) OPEN
   * @param accepted - called after `attach` with each socket the server's `'connection'` event hands over, and its upgrade request
   * @throws TypeError when `target` is neither
   */
  constructor(
    target: WebSocketServer | S,
    private readonly attach: (socket: S) => void,
    accepted?: (socket: S, request: IncomingMessage) => void,
  ) {
    // ws calls these listeners with the socket as `this`, so the intake needs another name.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const intake = this;
    this.onOpeningClose = function (this: WebSocket): void {
      intake.forget(this as S);
    };
    this.onOpen = function (this: WebSocket): void {
      if (intake.forget(this as S) && !intake.stopped) attach(this as S);
    };
    this.onConnection = (socket: S, request: IncomingMessage): void => {
      this.add(socket);
      accepted?.(socket, request);
    };
    this.onServerListenerRemoved = (_event, listener): void => {
      if (
        this.stopped ||
        this.reattachQueued ||
        (listener !== this.onConnection && listener !== this.onServerListenerRemoved)
      )
        return;
      this.reattachQueued = true;
      process.nextTick(() => this.reattachServerHooks());
    };

    if (isServer(target)) {
      this.server = target;
      target.on('connection', this.onConnection as (socket: WebSocket) => void);
      target.on('removeListener', this.onServerListenerRemoved);
      if (target.clients !== undefined) for (const socket of target.clients) this.add(socket as S);
    } else if (isSocket(target)) {
      this.server = undefined;
      this.add(target);
    } else {
      throw new TypeError(`heartbeat() needs a ws WebSocketServer or WebSocket, got ${describeValue(target)}`);
    }
  }

  /** Attaches `socket` now if OPEN, once open if CONNECTING; ignores a closing or closed one. */
  add(socket: S): void {
    if (this.opening.has(socket)) return;
    if (socket.readyState === CONNECTING) {
      const request = handshakeRequestOf(socket);
      if (request === undefined) {
        this.opening.set(socket, { request, settle: () => undefined });
        socket.on('open', this.onOpen);
        socket.on('close', this.onOpeningClose);
      } else this.waitOn(socket, request);
      return;
    }
    if (socket.readyState === OPEN) this.attach(socket);
  }

  /** Stops waiting for `socket` to open. @returns true if it was waited for */
  forget(socket: S): boolean {
    const waiting = this.opening.get(socket);
    if (waiting === undefined) return false;
    this.opening.delete(socket);
    const request = waiting.request;
    if (request === undefined) {
      socket.removeListener('open', this.onOpen);
      socket.removeListener('close', this.onOpeningClose);
    } else for (const event of REQUEST_EVENTS) request.removeListener(event, waiting.settle);
    return true;
  }

  /**
   * Waits for `socket` on its handshake `request`: whichever of its events comes, ws's own
   * listener has run first, so the socket is OPEN (attach), CONNECTING on a new request (a
   * redirect: wait on that one), or will not open (forget).
   */
  private waitOn(socket: S, request: HandshakeRequest): void {
    const settle = (): void => {
      const state = socket.readyState;
      if (state === CONNECTING) {
        const current = handshakeRequestOf(socket);
        if (current === undefined || current === request) return;
        this.forget(socket);
        this.waitOn(socket, current);
        return;
      }
      if (this.forget(socket) && state === OPEN && !this.stopped) this.attach(socket);
    };
    this.opening.set(socket, { request, settle });
    for (const event of REQUEST_EVENTS) request.on(event, settle);
  }

  /** Removes every hook: the server's and those of sockets still opening. */
  stop(): void {
    this.stopped = true;
    this.server?.removeListener('removeListener', this.onServerListenerRemoved);
    this.server?.removeListener('connection', this.onConnection as (socket: WebSocket) => void);
    for (const socket of [...this.opening.keys()]) this.forget(socket);
  }

  /** Puts back the server hooks a `removeAllListeners()` took, and adopts the connections it missed. */
  private reattachServerHooks(): void {
    this.reattachQueued = false;
    const server = this.server;
    if (this.stopped || server === undefined) return;
    const onConnection = this.onConnection as (socket: WebSocket) => void;
    if (server.listenerCount('connection', onConnection) === 0) server.on('connection', onConnection);
    if (server.listenerCount('removeListener', this.onServerListenerRemoved) === 0)
      server.on('removeListener', this.onServerListenerRemoved);
    if (server.clients !== undefined) for (const socket of server.clients) this.add(socket as S);
  }
}

/** A ws `WebSocketServer`, by shape (any copy of ws). */
export function isServer(value: unknown): value is WebSocketServer {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as WebSocketServer).handleUpgrade === 'function' &&
    typeof (value as WebSocketServer).on === 'function'
  );
}

/** A ws `WebSocket`, by shape (any copy of ws). */
export function isSocket(value: unknown): value is WebSocket {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as WebSocket).ping === 'function' &&
    typeof (value as WebSocket).terminate === 'function' &&
    typeof (value as WebSocket).readyState === 'number'
  );
}
