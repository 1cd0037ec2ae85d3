/**
 * A shard of a fresh namespace on ioredis-mock with the scripts defined, for the script tests:
 * its keys, its wake-up channel and the messages published on it, and the two calls most tests
 * start with (schedule and claim), each passing the time in as the last ARGV.
 * Test code only; depends on ioredis-mock and the package's keys and scripts.
 */
import RedisMock from 'ioredis-mock';
import { afterAll } from 'vitest';
import { keyList, shardKeys, wakeChannel, type KeyList } from '../../src/keys.js';
import { defineScripts } from '../../src/scripts.js';
import type { RedisClient } from '../../src/types.js';
import { uniqueNamespace } from './wait.js';

export const client = defineScripts(new RedisMock() as unknown as RedisClient);
const subscriber = new RedisMock() as unknown as RedisClient;
afterAll(async () => {
  await subscriber.quit();
  await client.quit();
});

export interface Shard {
  keys: KeyList;
  channel: string;
  /** Every wake-up message published for this namespace. */
  wakes: string[];
}

export async function shard(): Promise<Shard> {
  const namespace = uniqueNamespace('scripts');
  const channel = wakeChannel('tickwheel', namespace);
  const wakes: string[] = [];
  await subscriber.subscribe(channel);
  subscriber.on('message', (from: string, message: string) => {
    if (from === channel) wakes.push(message);
  });
  return { keys: keyList(shardKeys('tickwheel', namespace, 0)), channel, wakes };
}

/** schedule(id, due in ms at `now`) with 3 attempts, a fixed 1 s backoff and no maxWait unless told otherwise. */
export function schedule(
  s: Shard,
  id: string,
  ms: number,
  now: number,
  extra: { payload?: string; ifExists?: string; maxWaitMs?: number } = {},
) {
  const { payload = '{"n":1}', ifExists = 'replace', maxWaitMs } = extra;
  return client.tickwheelSchedule(
    ...s.keys,
    id,
    'in',
    String(ms),
    payload,
    s.channel,
    '0',
    ifExists,
    '3',
    'f1000',
    maxWaitMs === undefined ? '' : String(maxWaitMs),
    '',
    String(now),
  );
}

let claimSeq = 0;
/** A claim by worker `worker` (default 'w'), with a fresh sequence number unless `seq` is given. */
export const claim = (
  s: Shard,
  limit: number,
  leaseMs: number,
  now: number,
  { worker = 'w', seq = ++claimSeq, recover = '' }: { worker?: string; seq?: number; recover?: string } = {},
) => client.tickwheelClaim(...s.keys, String(limit), String(leaseMs), worker, String(seq), recover, String(now));

export const flush = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A timer as one line, `token:dueAt:attempts:maxAttempts:backoff:payload` (dueAt in decimal),
 * read with the GET script whichever layout holds it; null when there is none.
 */
export async function record(keys: KeyList, id: string, on = client): Promise<string | null> {
  const reply = await on.tickwheelGet(...keys, id);
  if (!Array.isArray(reply)) return null;
  const [meta, payload] = reply;
  const [token, due, ...rest] = meta.split(':');
  return [token, parseInt(due, 36), ...rest, payload].join(':');
}

/** When a timer's next attempt is due (its score in its bucket's due ZSET), or null. */
export async function nextAt(keys: KeyList, id: string, on = client): Promise<string | null> {
  const reply = await on.tickwheelGet(...keys, id);
  return Array.isArray(reply) && reply[2] !== '' ? reply[2] : null;
}

/** How many timers of the shard are due (scheduled and not claimed), over all its buckets. */
export async function dueCount(keys: KeyList): Promise<number> {
  const buckets = await client.keys(`${keys[8].slice(0, -1)}d*`);
  let n = 0;
  for (const key of buckets) n += await client.zcard(key);
  return n;
}
