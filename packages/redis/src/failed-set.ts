/**
 * The failed set across a namespace's shards: list, retry and purge its timers, in batches.
 */
import { keyList } from './keys.js';
import { kit, requireId } from './options.js';
import { decodePayload } from './payload.js';
import { parseRecord } from './record.js';
import { RETRY_SAFE, type ShardCalls } from './shard-calls.js';
import type { FailedTimer } from './types.js';

/** Failed-set calls over all of a shard go in batches of this many. */
const FAILED_BATCH = 500;

/** Up to `limit` failed timers, oldest failure first within each shard. */
export async function listFailed<P>(calls: ShardCalls, limit: number): Promise<FailedTimer<P>[]> {
  kit.integer(limit, 'limit', 1, 10_000);
  const out: FailedTimer<P>[] = [];
  for (const shard of calls.keys) {
    for (let offset = 0; out.length < limit; offset += FAILED_BATCH) {
      const count = Math.min(FAILED_BATCH, limit - out.length);
      const reply = await calls.run<string[]>(
        'tickwheelListFailed',
        keyList(shard),
        [String(offset), String(count)],
        'listFailed',
        RETRY_SAFE.other,
        false,
      );
      for (let i = 0; i < reply.length; i += 5) {
        if (reply[i + 2] === '') continue;
        const r = parseRecord(reply[i + 2], reply[i + 3]);
        out.push({
          id: reply[i],
          payload: decodePayload<P>(r.payload),
          dueAt: r.dueAt,
          attempts: r.attempts,
          failedAt: Number(reply[i + 1]),
          reason: reply[i + 4],
        });
      }
      if (reply.length < count * 5) break;
    }
  }
  return out;
}

/** Gives one failed timer (or, without `id`, every one) a fresh start; returns how many. */
export function retryFailed(calls: ShardCalls, id: string | undefined): Promise<number> {
  return eachFailed(calls, id, 'tickwheelRetryFailed', 'retryFailed', (index) => [calls.channel, String(index)]);
}

/** Deletes one failed timer (or, without `id`, every one) for good; returns how many. */
export function purgeFailed(calls: ShardCalls, id: string | undefined): Promise<number> {
  return eachFailed(calls, id, 'tickwheelPurgeFailed', 'purgeFailed', () => []);
}

async function eachFailed(
  calls: ShardCalls,
  id: string | undefined,
  command: 'tickwheelRetryFailed' | 'tickwheelPurgeFailed',
  what: string,
  extra: (index: number) => string[],
): Promise<number> {
  if (id !== undefined) {
    requireId(id);
    const { index } = calls.shardOf(id);
    return calls.write<number>(
      command,
      index,
      [id, '1', ...extra(index)],
      `${what}(${JSON.stringify(id)})`,
      RETRY_SAFE.other,
    );
  }
  let total = 0;
  for (let index = 0; index < calls.keys.length; index++) {
    for (;;) {
      const n = await calls.write<number>(
        command,
        index,
        ['', String(FAILED_BATCH), ...extra(index)],
        what,
        RETRY_SAFE.other,
      );
      total += n;
      if (n < FAILED_BATCH) break;
    }
  }
  return total;
}
