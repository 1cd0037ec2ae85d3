/**
 * write-marks: what only writer/all idleness, `trackWrites` and the connection limits need per connection (WriteAndIdle).
 *
 * In an object of its own, so that the default heartbeat (pings only) does not carry these fields
 * per connection.
 *
 * Writes are seen the way pings see reads: by the transport's byte counter (`bytesWritten`),
 * sampled when the connection comes due, so nothing is patched onto the socket and no listener
 * runs per `send()`. The heartbeat's own frames (its pings, and ws's automatic pongs to the
 * peer's pings) are counted in `ownBytes` as they are sent and taken off the next sample, so
 * they are not write activity.
 */
import type { WebSocket } from 'ws';
import type { LimitMarks } from './limits.js';
import { bytesWrittenOf } from './transport-probes.js';

/** See the module comment. */
export class WriteAndIdle implements LimitMarks {
  /** Connection limits (limits.ts); all Infinity/NaN while off. */
  firstMessageBy = Infinity;
  closeAt = Infinity;
  overSince = NaN;
  drainCheckAt = Infinity;
  /** The transport's `bytesWritten` at the last sample; -1 while writes are not observed (or there is no counter). */
  writeMark = -1;
  /** Bytes of our own frames sent since the last sample, not write activity. */
  ownBytes = 0;
  /** When each idle kind last fired; -Infinity until it does. */
  reader = -Infinity;
  writer = -Infinity;
  all = -Infinity;

  constructor(public lastWriteAt: number) {}

  /** Starts observing writes on `socket` (see `trackWrites`): samples its counter now. */
  track(socket: WebSocket): void {
    this.writeMark = bytesWrittenOf(socket);
  }

  /** Whether writes are observed (a counter was there to sample). */
  get tracks(): boolean {
    return this.writeMark >= 0;
  }

  /**
   * Samples the counter: bytes written since the last sample beyond our own frames are a write
   * noticed at `now`. Own frames not yet in the counter (queued in ws behind a compression) stay
   * in `ownBytes` for the next sample.
   */
  noticeWrites(socket: WebSocket, now: number): void {
    const written = bytesWrittenOf(socket);
    if (written < 0 || this.writeMark < 0) return;
    const theirs = written - this.writeMark - this.ownBytes;
    this.writeMark = written;
    if (theirs > 0) {
      this.ownBytes = 0;
      this.lastWriteAt = now;
    } else this.ownBytes = -theirs;
  }
}
