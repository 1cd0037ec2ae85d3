/**
 * KeepaliveMark: when a connection was last sent anything, read from its transport's byte counter, for `keepaliveMs`.
 * Must not depend on: the wheel, the schedule or the socket's listeners (ws's types only).
 *
 * A page cannot see protocol pings, so a server whose pages watch for silence (`watch()` from
 * `@tickwheel/ws/browser`) sends a small text message, the keepalive, to a connection it has sent
 * nothing for `keepaliveMs`. What the connection was sent is read where ws leaves it, without
 * wrapping `send`: the transport's `bytesWritten` (ws keeps its `net.Socket` as `_socket`; over TLS
 * it counts the bytes before encryption), sampled when the connection comes due, as reads are with
 * `bytesRead`. Bytes beyond the heartbeat's own frames (its pings and keepalives, whose sizes are
 * known) mean something else was sent since the last sample: the connection was sent something
 * "now", as far as the heartbeat can tell. So a keepalive goes out after `keepaliveMs` of nothing,
 * noticed at most `keepaliveMs` late: the page hears something at least every 2 × keepaliveMs.
 *
 * Errors lean towards one keepalive too many: a socket with no counter is taken for one that is
 * never sent anything, and a frame of ours still queued in ws (behind a message being compressed)
 * when the counter is read stays subtracted until it shows. What the heartbeat cannot tell from
 * the app's messages are ws's automatic pongs to the peer's pings: pages send no pings.
 */
import type { WebSocket } from 'ws';

/** The counter is kept modulo 2^24, as the read mark is (connection.ts): a small integer in the object. */
const MARK_MODULUS = 2 ** 24;

/**
 * Bytes written so far by the socket's transport, or -1 when there is none to read (a socket not
 * open yet, or a stand-in without one).
 */
export function bytesWrittenOf(socket: WebSocket): number {
  const transport = (socket as { _socket?: { bytesWritten?: unknown } | null })._socket;
  const written = transport?.bytesWritten;
  return typeof written === 'number' ? written : -1;
}

/**
 * Bytes on the wire of one unfragmented frame with `payloadBytes` of payload (RFC 6455 §5.2): a
 * 2-byte header, 2 or 8 more for a longer length, and a 4-byte mask on a client's frames.
 */
export function frameBytes(payloadBytes: number, masked: boolean): number {
  const length = payloadBytes < 126 ? 0 : payloadBytes < 65_536 ? 2 : 8;
  return 2 + length + (masked ? 4 : 0) + payloadBytes;
}

/** One connection's keepalive: see the module comment. */
export class KeepaliveMark {
  /** When the connection was last sent anything, as far as the heartbeat can tell. */
  lastSentAt: number;
  /** `bytesWritten` modulo 2^24 at the last sample; -1 when the socket has no counter. */
  private mark: number;
  /** Bytes of the heartbeat's own frames written since the last sample. */
  private own = 0;

  constructor(socket: WebSocket, at: number) {
    this.lastSentAt = at;
    const written = bytesWrittenOf(socket);
    this.mark = written < 0 ? -1 : written % MARK_MODULUS;
  }

  /** The heartbeat wrote a frame of its own (a ping, a keepalive): not something the app sent. */
  ownFrame(bytes: number): void {
    this.own += bytes;
  }

  /** Samples the counter: bytes beyond the heartbeat's own frames were sent at `now`, as far as it can tell. */
  noticeWrites(socket: WebSocket, now: number): void {
    if (this.mark < 0) return;
    const written = bytesWrittenOf(socket) % MARK_MODULUS;
    const moved = (written - this.mark + MARK_MODULUS) % MARK_MODULUS;
    if (moved > this.own) {
      this.lastSentAt = now;
      this.own = 0;
    } else {
      // Ours not all written yet (queued behind a message being compressed): the rest shows later.
      this.own -= moved;
    }
    this.mark = written;
  }
}
