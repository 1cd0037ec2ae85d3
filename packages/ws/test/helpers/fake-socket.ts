import { EventEmitter } from 'node:events';
import type { WebSocket } from 'ws';

/**
 * A stand-in for a ws WebSocket in unit tests: the same event names and the methods the heartbeat
 * calls, recording what it was asked to do, with no I/O. Its `send` lives on the prototype like
 * ws's, and completes synchronously.
 */
export class FakeSocket extends EventEmitter {
  /**
   * What ws keeps as `_socket`: the transport, whose byte counters the heartbeat samples.
   * `bytesWritten` counts every frame sent; `bytesRead` is there only with `{ transport: true }`,
   * and every frame received then adds to it, as on a real socket.
   */
  _socket: { bytesRead?: number; bytesWritten: number; writableLength: number } = {
    bytesWritten: 0,
    writableLength: 0,
  };
  /** Our own data queued and not written yet, as ws's getter reports it (tests set it). */
  bufferedAmount = 0;
  /** Callbacks of pings sent behind queued data, called by `flushPings()`. */
  pingCallbacks: Array<(err?: Error) => void> = [];
  /** As ws's: a server-side socket sends unmasked frames. */
  _isServer = true;
  /** As ws's option: whether ws answers the peer's pings by itself. */
  _autoPong = true;
  readyState = 1;
  pings = 0;
  terminated = false;
  closed: Array<{ code: number | undefined; reason: string | undefined }> = [];
  sent: unknown[] = [];

  constructor(options: { transport?: boolean } = {}) {
    super();
    if (options.transport === true) this._socket.bytesRead = 0;
  }

  /** Bytes arrive on the wire without ws emitting anything yet (a partial frame, or a frame nobody listens to). */
  receiveBytes(count = 2): void {
    const transport = this.transport;
    if (transport?.bytesRead !== undefined) transport.bytesRead += count;
  }

  /** `_socket`, or undefined when a test removed it (as a ws release that moved it would). */
  private get transport(): FakeSocket['_socket'] | undefined {
    return Object.hasOwn(this, '_socket') ? this._socket : undefined;
  }

  /** Our own bytes handed to the transport, when there is one. */
  private wrote(count: number): void {
    const transport = this.transport;
    if (transport !== undefined) transport.bytesWritten += count;
  }

  override emit(event: string | symbol, ...args: unknown[]): boolean {
    // A frame received: masked (4 more bytes) when it comes from a client, as on the wire.
    if (event === 'message' || event === 'ping' || event === 'pong')
      this.receiveBytes((this._isServer ? 6 : 2) + ((args[0] as Buffer | undefined)?.length ?? 0));
    // ws answers a peer's ping with a pong by itself.
    if (event === 'ping' && this.readyState === 1 && this._autoPong) this.wrote(2 + (args[0] as Buffer).length);
    return super.emit(event, ...args);
  }

  ping(_data?: unknown, _mask?: unknown, cb?: (err?: Error) => void): void {
    if (this.readyState === 0) throw new Error('WebSocket is not open: readyState 0 (CONNECTING)');
    if (cb !== undefined) this.pingCallbacks.push(cb);
    this.pings++;
    this.wrote(2);
    // Behind queued data, the ping is queued too.
    if (this.bufferedAmount > 0 && this.transport !== undefined) this.transport.writableLength += 2;
  }

  terminate(): void {
    this.terminated = true;
    this.readyState = 2;
  }

  close(code?: number, reason?: string): void {
    this.closed.push({ code, reason });
    this.readyState = 2;
  }

  send(data: unknown, options?: unknown, cb?: (err?: Error) => void): void {
    if (typeof options === 'function') cb = options as (err?: Error) => void;
    this.sent.push(data);
    if (this.readyState === 1) this.wrote(2 + String(data).length);
    cb?.(this.readyState === 1 ? undefined : new Error('WebSocket is not open'));
  }

  /** The queued data drains: `bytes` more reach the kernel, and (with `all`) the queue empties, pings included. */
  drain(bytes: number, all = false): void {
    this._socket.writableLength = Math.max(0, this._socket.writableLength - bytes);
    if (!all) return;
    this.bufferedAmount = 0;
    this._socket.writableLength = 0;
    for (const cb of this.pingCallbacks.splice(0)) cb();
  }

  /** What ws does when the socket finally closes. */
  finishClose(): void {
    this.readyState = 3;
    this.emit('close', 1006, Buffer.alloc(0));
  }

  /** Typed as what the heartbeat accepts. */
  get ws(): WebSocket {
    return this as unknown as WebSocket;
  }
}

/** A stand-in for a WebSocketServer: `'connection'` events, `clients`, and a `handleUpgrade` to be recognised. */
export class FakeServer extends EventEmitter {
  clients = new Set<WebSocket>();
  handleUpgrade(): void {
    throw new Error('not used in unit tests');
  }
  connect(socket: FakeSocket): void {
    this.clients.add(socket.ws);
    this.emit('connection', socket.ws);
  }
}
