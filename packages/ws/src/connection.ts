import type { TimerHandle } from '@tickwheel/core';
import type { WebSocket } from 'ws';
import type { SendTracker } from './send-tracker.js';
import type { LivenessState } from './types.js';

/** When each idle kind last fired; -Infinity until it does. */
export class IdleMarks {
  reader = -Infinity;
  writer = -Infinity;
  all = -Infinity;
}

/**
 * What the heartbeat knows about one connection. Kept in the controller's map, never on the
 * socket. Activity only writes a timestamp here; the wheel handle is re-armed from these
 * timestamps when it fires (see `heartbeat.ts`), so a busy connection costs one field write per
 * frame and one timer callback per interval.
 */
export class Connection<S extends WebSocket = WebSocket> {
  /** The one wheel handle of this connection; set right after construction. */
  handle!: TimerHandle;
  /** Present while completed sends are observed. */
  sendTracker: SendTracker | undefined = undefined;
  lastReadAt: number;
  lastWriteAt: number;
  /** A ping is outstanding: sent at `lastPingAt`, nothing received since. */
  awaitingPong = false;
  /** When the last ping was sent; NaN before the first. */
  lastPingAt = NaN;
  /** Round trip of the last answered ping; NaN before the first. */
  rttMs = NaN;
  pingsSent = 0;
  /** When each idle kind last fired; only allocated when idle detection is on (it is off by default). */
  idle: IdleMarks | undefined = undefined;

  constructor(
    readonly socket: S,
    readonly attachedAt: number,
  ) {
    this.lastReadAt = attachedAt;
    this.lastWriteAt = attachedAt;
  }

  /** A copy for the caller: later activity does not change it. */
  snapshot(): LivenessState {
    return {
      attachedAt: this.attachedAt,
      lastReadAt: this.lastReadAt,
      lastWriteAt: this.lastWriteAt,
      tracksWrites: this.sendTracker !== undefined,
      // Anything received since the ping answers it; `check()` clears the flag lazily.
      awaitingPong: this.awaitingPong && this.lastReadAt < this.lastPingAt,
      lastPingAt: Number.isNaN(this.lastPingAt) ? undefined : this.lastPingAt,
      rttMs: Number.isNaN(this.rttMs) ? undefined : this.rttMs,
      pingsSent: this.pingsSent,
    };
  }
}
