/**
 * frame-size: the size on the wire of the frames the heartbeat's side sends (RFC 6455 §5.2).
 *
 * Writes are seen by the transport's byte counter, so the heartbeat's own frames (its pings,
 * its keepalives, and ws's automatic pongs) are counted as they go out and taken off the next
 * sample (see write-marks.ts): their sizes must be exact.
 */
import type { WebSocket } from 'ws';
import { isClientSide } from './ws-internals.js';

/**
 * The size of a control frame `socket` sends with `payload` bytes: two header bytes, and a 4-byte
 * masking key from a client. `client` is the side to assume when ws does not say (the heartbeat's own).
 */
export function controlFrameBytes(socket: WebSocket, payload: number, client = false): number {
  return isClientSide(socket, client) ? 6 + payload : 2 + payload;
}

/**
 * The size of a data frame `socket` sends with `payload` bytes, unfragmented: a control frame's,
 * with 2 or 8 more bytes for a length of 126 or more.
 */
export function dataFrameBytes(socket: WebSocket, payload: number, client = false): number {
  const length = payload < 126 ? 0 : payload < 65_536 ? 2 : 8;
  return controlFrameBytes(socket, payload, client) + length;
}

/**
 * The size of a control frame `socket` receives with `payload` bytes: the peer's side masks when
 * ours does not. `client` is our side when ws does not say.
 */
export function receivedControlFrameBytes(socket: WebSocket, payload: number, client = false): number {
  return isClientSide(socket, client) ? 2 + payload : 6 + payload;
}
