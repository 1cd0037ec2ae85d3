/**
 * transport-probes: what the byte counters of a socket's transport say about reads and writes.
 *
 * The heartbeat sees reads and writes without a listener per frame or a wrapped `send()`: it
 * samples the counters of ws's `net.Socket` when a connection comes due. The transport itself
 * is found through ws-internals.ts; a socket without one (not open yet, a stand-in) reads as -1
 * or undefined here, and the heartbeat listens to frames instead.
 */
import type { WebSocket } from 'ws';
import { transportOf, writeQueueSizeOf } from './ws-internals.js';

/** Bytes read so far by the socket's transport, or -1 when there is none to read. */
export function bytesReadOf(socket: WebSocket): number {
  const read = transportOf(socket)?.bytesRead;
  return typeof read === 'number' ? read : -1;
}

/**
 * Bytes handed to the socket's transport so far (`bytesWritten` of ws's `net.Socket`: written or
 * queued in it), or -1 when there is none to read.
 */
export function bytesWrittenOf(socket: WebSocket): number {
  const written = transportOf(socket)?.bytesWritten;
  return typeof written === 'number' ? written : -1;
}

/**
 * How far the socket's transport is in passing our data to the kernel: `done`, the bytes of
 * writes that completed (`bytesWritten` less what is still queued in the stream), and `inFlight`,
 * what the write being performed still has to pass (libuv's `writeQueueSize`, which shrinks as a
 * large write goes out piece by piece, while the stream counts it as queued until it ends).
 * Undefined when the socket has no transport to read.
 */
export interface WriteProgress {
  done: number;
  inFlight: number;
}

/** See {@link WriteProgress}. */
export function writeProgressOf(socket: WebSocket): WriteProgress | undefined {
  const transport = transportOf(socket);
  const written = transport?.bytesWritten;
  if (typeof written !== 'number') return undefined;
  const queued = transport!.writableLength;
  return {
    done: typeof queued === 'number' ? written - queued : written,
    inFlight: writeQueueSizeOf(transport!),
  };
}

/** Whether the transport passed anything to the kernel between `before` and `after`. */
export function wroteSince(before: WriteProgress, after: WriteProgress): boolean {
  return after.done > before.done || (after.done === before.done && after.inFlight < before.inFlight);
}
