/**
 * ws-internals: the one module that reads private fields of ws and of Node's `net` (the seam to their internals).
 *
 * The heartbeat needs a few things neither library exposes: the transport under a ws socket
 * (its byte counters tell reads and writes without a listener per frame), which side of the
 * connection a socket is (for the size of our own frames), whether ws answers the peer's pings by
 * itself, the opening handshake's HTTP request (to wait for `'open'` without a listener on the
 * socket) and the frame reader (to hear the close without joining the socket's `'close'`
 * listeners). Every read of an underscore field, and the one symbol-keyed back-reference, is
 * here and nowhere else (a lint rule in eslint.config.mjs fails a private-field read in any other
 * file of the package), each with a fallback for when the field is missing, so that a ws release
 * that moves one degrades a feature as documented below instead of breaking the heartbeat.
 * test/ws-internals.test.ts removes each field and checks its fallback;
 * test/integration/ws-versions.test.ts checks every field on the oldest ws we claim (8.0.0), the
 * first with `autoPong` (8.16.0) and the newest (the workspace's), and fails when one moves.
 *
 * | field (ws 8.x)                  | what it gives                         | fallback when missing                                  |
 * |---------------------------------|---------------------------------------|--------------------------------------------------------|
 * | `ws._socket`                    | the `net.Socket` (its byte counters)  | no counter: reads are heard by `'message'`/`'ping'` listeners, writes are not tracked |
 * | `net.Socket._handle.writeQueueSize` | bytes of the write being performed | 0: write progress is judged by `bytesWritten - writableLength` alone |
 * | `ws._isServer`                  | which side masks its frames           | the heartbeat's own side (its target: a server or a client socket) |
 * | `ws._autoPong` (8.16+)          | whether ws answers pings by itself    | answers: ws before 8.16 always does; 8.23 keeps the field only while on (see {@link answersPings}) |
 * | `ws._req`                       | the opening handshake's request       | plain `'open'`/`'close'` listeners on the socket       |
 * | `ws._receiver`, its `_writableState` and `kWebSocket` | the frame reader and its way back to the socket | a plain `'close'` listener on the socket |
 */
// Node's own types (node:http, node:events…), stated here for consumers that list no types (TypeScript 7's default).
/// <reference types="node" preserve="true" />
import type { EventEmitter } from 'node:events';
import type { WebSocket } from 'ws';

/** The part of ws's transport (a `net.Socket`) the heartbeat reads; its public fields only. */
export interface Transport {
  readonly bytesRead?: unknown;
  readonly bytesWritten?: unknown;
  readonly writableLength?: unknown;
}

/**
 * `socket`'s transport (ws's `_socket`, a `net.Socket`), or undefined when it has none (not open
 * yet, a stand-in, another implementation).
 */
export function transportOf(socket: WebSocket): Transport | undefined {
  const transport = (socket as { _socket?: unknown })._socket;
  return transport !== null && typeof transport === 'object' ? transport : undefined;
}

/**
 * Bytes of the write libuv is performing on `transport` (`_handle.writeQueueSize`), which shrinks
 * as a large write goes out piece by piece; 0 when there is no handle or no such field.
 */
export function writeQueueSizeOf(transport: Transport): number {
  const size = (transport as { _handle?: { writeQueueSize?: unknown } | null })._handle?.writeQueueSize;
  return typeof size === 'number' ? size : 0;
}

/**
 * Whether `socket` is the client side of its connection (ws's `_isServer` is false), whose
 * frames carry a 4-byte masking key; `fallback` when ws does not say.
 */
export function isClientSide(socket: WebSocket, fallback: boolean): boolean {
  const isServer = (socket as { _isServer?: unknown })._isServer;
  return typeof isServer === 'boolean' ? !isServer : fallback;
}

/**
 * Whether ws answers the peer's pings on `socket` by itself (its `autoPong` option). ws 8.16 to
 * 8.22 keep the option in `_autoPong`; 8.23 sets `_autoPong` only when it is on (and has
 * `_closeTimeout`, which 8.22 added); ws before 8.16 has neither and always answers.
 */
export function answersPings(socket: WebSocket): boolean {
  const autoPong = (socket as { _autoPong?: unknown })._autoPong;
  if (typeof autoPong === 'boolean') return autoPong;
  return !('_closeTimeout' in socket);
}

/** ws's client handshake request, as far as the intake relies on it. */
export interface HandshakeRequest {
  on(event: string, listener: () => void): unknown;
  removeListener(event: string, listener: () => void): unknown;
}

/** `socket`'s opening handshake request (ws's `_req`, replaced on a redirect), when it has one. */
export function handshakeRequestOf(socket: WebSocket): HandshakeRequest | undefined {
  const request = (socket as { _req?: unknown })._req as HandshakeRequest | null | undefined;
  return request !== null &&
    typeof request === 'object' &&
    typeof request.on === 'function' &&
    typeof request.removeListener === 'function'
    ? request
    : undefined;
}

/** ws's frame reader (a Writable stream), as far as the close watch relies on it. */
export type FrameReader = EventEmitter;

/** The symbol under which readers point back to their socket (ws's `kWebSocket`), once found. */
let backLink: symbol | undefined;

/**
 * The socket `reader` belongs to, by its symbol-keyed back-reference (ws's `kWebSocket`, found
 * on the first reader by the property that points back); undefined when it has none.
 */
export function socketOfReader(reader: FrameReader): WebSocket | undefined {
  const keyed = reader as unknown as Record<symbol, unknown>;
  if (backLink !== undefined) {
    const socket = keyed[backLink];
    if (socket !== undefined) return socket as WebSocket;
  }
  // The first reader seen, or one of another copy of ws: find the property that points back.
  for (const key of Object.getOwnPropertySymbols(reader)) {
    const value = keyed[key] as { _receiver?: unknown } | null;
    if (value !== null && typeof value === 'object' && value._receiver === reader) {
      backLink = key;
      return value as WebSocket;
    }
  }
  return undefined;
}

/**
 * `socket`'s frame reader (ws's `_receiver`): a Writable (it has `_writableState`) that points
 * back to the socket; undefined otherwise.
 */
export function frameReaderOf(socket: WebSocket): FrameReader | undefined {
  const reader = (socket as { _receiver?: unknown })._receiver as
    (FrameReader & { _writableState?: unknown }) | null | undefined;
  if (
    reader === null ||
    typeof reader !== 'object' ||
    typeof reader.on !== 'function' ||
    typeof reader._writableState !== 'object' ||
    socketOfReader(reader) !== socket
  )
    return undefined;
  return reader;
}

/**
 * Which of the fields above an OPEN `socket` has, by name (`_req` is only there while it
 * connects: see {@link handshakeRequestOf}). A field reported false is read through its fallback;
 * test/integration/ws-versions.test.ts checks this on each ws version we test.
 */
export function internalsOf(socket: WebSocket): Record<string, boolean> {
  const transport = transportOf(socket);
  const handle = (transport as { _handle?: { writeQueueSize?: unknown } | null } | undefined)?._handle;
  const autoPong = (socket as { _autoPong?: unknown })._autoPong;
  return {
    _socket: transport !== undefined && typeof transport.bytesRead === 'number',
    '_handle.writeQueueSize': typeof handle?.writeQueueSize === 'number',
    _isServer: typeof (socket as { _isServer?: unknown })._isServer === 'boolean',
    _autoPong: typeof autoPong === 'boolean',
    _closeTimeout: '_closeTimeout' in socket,
    _receiver: frameReaderOf(socket) !== undefined,
  };
}
