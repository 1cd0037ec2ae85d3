/**
 * A timer's record, the value of its field in the shard's `timers` HASH.
 *
 * `"<token>:<dueAt>:<attempts>:<maxAttempts>:<backoff>:<payload JSON>"`
 *
 * - `token`: the fencing token, a fresh value of the shard's counter at every schedule and every
 *   claim. Ack, extend and failure reports carry the token of their claim and are refused once it
 *   changed, so a worker that lost its lease can neither delete, extend nor retry the timer.
 * - `dueAt`: when it was first due (epoch ms, server clock); a retry keeps it (the due ZSET's
 *   score says when the next attempt runs).
 * - `attempts`: deliveries so far; `maxAttempts`: 0 for no limit; `backoff`: see backoff.ts,
 *   followed by `w<ms>` while a `maxWaitMs` window is open (when it opened; a claim drops it).
 * - `payload`: JSON, or empty for none. Only this last field may contain colons.
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
export function parseRecord(record: string): TimerRecord {
  const match = /^(\d+):(\d+):(\d+):(\d+):([^:]*):/.exec(record);
  if (match === null)
    throw new Error(
      `@tickwheel/redis: unreadable timer record ${JSON.stringify(record.slice(0, 80))} (written by another version?)`,
    );
  return {
    token: match[1],
    dueAt: Number(match[2]),
    attempts: Number(match[3]),
    maxAttempts: Number(match[4]),
    backoff: match[5],
    payload: record.slice(match[0].length),
  };
}
