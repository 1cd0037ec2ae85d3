/**
 * A timer's record: its field in its bucket's `r` HASH (buckets.ts), and its payload beside it.
 *
 * `"<token>:<dueAt base 36>:<attempts>:<maxAttempts>:<backoff>"`; the payload's JSON is the
 * value of the same id in the bucket's `p` HASH (none when there is no payload), so the record
 * stays short enough for Redis's compact encoding whatever the payload.
 *
 * - `token`: the fencing token, a fresh value of the shard's counter at every schedule and every
 *   claim. Ack, extend and failure reports carry the token of their claim and are refused once it
 *   changed, so a worker that lost its lease can neither delete, extend nor retry the timer.
 * - `dueAt`: when it was first due (epoch ms, server clock, in base 36: 8 digits instead of 13);
 *   a retry keeps it (the bucket's due ZSET says when the next attempt runs).
 * - `attempts`: deliveries so far; `maxAttempts`: 0 for no limit; `backoff`: see backoff.ts,
 *   followed by `w<ms>` while a `maxWaitMs` window is open (when it opened; a claim drops it).
 */

export interface TimerRecord {
  token: string;
  dueAt: number;
  attempts: number;
  /** 0: unlimited. */
  maxAttempts: number;
  backoff: string;
  /** JSON text, '' for none. */
  payload: string;
}

/** Takes a record apart; the Lua scripts use the same pattern. */
export function parseRecord(record: string, payload: string): TimerRecord {
  const match = /^(\d+):([0-9a-z]+):(\d+):(\d+):([^:]*)$/.exec(record);
  if (match === null)
    throw new Error(
      `@tickwheel/redis: unreadable timer record ${JSON.stringify(record.slice(0, 80))} (written by another version?)`,
    );
  return {
    token: match[1],
    dueAt: parseInt(match[2], 36),
    attempts: Number(match[3]),
    maxAttempts: Number(match[4]),
    backoff: match[5],
    payload,
  };
}
