/**
 * Spreads a burst of pings over event-loop turns.
 *
 * Pings due close together are coalesced into one wheel pass (`pingSlackMs`), and each
 * `socket.ping()` is a write to the kernel: on 10,000 connections one pass sends about 300 of
 * them, 10 ms or more of synchronous work. A pong deadline that falls inside that burst (and with
 * a `pongTimeoutMs` that is a multiple of the slack they all do: the deadline lands on the grid
 * the next burst starts on) would fire that much late. So at most {@link PINGS_PER_TURN} pings go
 * out per turn; the rest wait for a `setImmediate`, and between two such turns the timers phase
 * runs, where the wheel's deadlines fire on time.
 *
 * A queued ping is sent later than it was decided, so the pong deadline runs from the moment it
 * is actually sent: the caller's `send` re-arms the connection's handle then.
 */

/** Pings sent synchronously per event-loop turn, about 1-3 ms of work on an idle machine; the rest are deferred. */
export const PINGS_PER_TURN = 128;

export class PingTurns<T> {
  private sentThisTurn = 0;
  private readonly queue: T[] = [];
  private turnScheduled = false;

  /** @param send - pings one connection now (it re-checks that the connection still wants it) */
  constructor(private readonly send: (item: T) => void) {}

  /**
   * Pings `item` now if this turn has room, else queues it for a later turn.
   * @returns true when sent now
   */
  ping(item: T): boolean {
    if (this.sentThisTurn < PINGS_PER_TURN && this.queue.length === 0) {
      this.sentThisTurn++;
      this.scheduleTurn();
      this.send(item);
      return true;
    }
    this.queue.push(item);
    this.scheduleTurn();
    return false;
  }

  /** Pings waiting for a later turn. */
  get queued(): number {
    return this.queue.length;
  }

  /** Forgets every queued ping. */
  clear(): void {
    this.queue.length = 0;
  }

  private scheduleTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(this.nextTurn).unref();
  }

  private readonly nextTurn = (): void => {
    this.turnScheduled = false;
    this.sentThisTurn = 0;
    const queue = this.queue;
    if (queue.length === 0) return;
    const batch = queue.splice(0, PINGS_PER_TURN);
    this.sentThisTurn = batch.length;
    this.scheduleTurn();
    for (const item of batch) this.send(item);
  };
}
