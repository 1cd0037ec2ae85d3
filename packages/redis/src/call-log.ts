/**
 * CallLog: the ids that make one RedisTimers instance's writes happen at most once, per shard.
 *
 * Every write (schedule, reschedule, cancel, and a worker's acks and failure reports) carries a
 * call id, the same on every try of the call. The script keeps the reply of the first try that
 * lands in the client's calls hash on the shard and answers every later try from it (lua-prelude.ts,
 * once). Once a call has finished (resolved or given up), no try of it can land any more: each
 * try the budget loop abandoned carried a deadline that has passed (LATE). Its entry is then
 * useless, and the client's next write to that shard deletes it; the hash itself expires
 * {@link CallLog.ttlMs} after the client's last write there, which bounds what a client that
 * stopped writing (or crashed) leaves behind.
 */
import { randomBytes } from 'node:crypto';
import { callsKey } from './keys.js';

/** Most finished calls one write deletes; the rest wait for the next write. */
const MAX_DONE_PER_CALL = 100;
/** Most finished calls remembered per shard; older ones are left to the hash's expiry. */
const MAX_DONE_KEPT = 10_000;

/** One call's arguments for the wrapped scripts. */
export interface OpenCall {
  /** The calls hash on the call's shard. */
  key: string;
  /** The call id, then the finished calls' ids (space separated) and the hash's time to live (ms). */
  args: [id: string, done: string, ttlMs: string];
}

export class CallLog {
  /** Names this client's calls hashes: unique per RedisTimers instance. */
  readonly clientId = randomBytes(9).toString('base64url');
  private next = 0;
  private readonly done: string[][];

  /**
   * @param ttlMs - how long a calls hash lives after the client's last write to it: longer than
   *   any call's tries keep landing (its failover budget)
   */
  constructor(
    private readonly prefix: string,
    private readonly namespace: string,
    shards: number,
    readonly ttlMs: number,
  ) {
    this.done = Array.from({ length: shards }, () => []);
  }

  /** Opens a call on `shard`; pass it to {@link close} once the call finished, however it ended. */
  open(shard: number): OpenCall {
    const done = this.done[shard].splice(0, MAX_DONE_PER_CALL).join(' ');
    return {
      key: callsKey(this.prefix, this.namespace, shard, this.clientId),
      args: [(this.next++).toString(36), done, String(this.ttlMs)],
    };
  }

  /** The call finished: its entry may go with the next write to the shard. */
  close(shard: number, call: OpenCall): void {
    const done = this.done[shard];
    done.push(call.args[0]);
    if (done.length > MAX_DONE_KEPT) done.splice(0, done.length - MAX_DONE_KEPT);
  }
}
