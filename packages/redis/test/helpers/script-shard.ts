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

/** The scripts as RedisTimers runs them; the write scripts wrapped by once take the calls hash and a call. */
export const raw = defineScripts(new RedisMock() as unknown as RedisClient);

/** A shard key's calls hash of the test client (lua-prelude.ts, once). */
export const callsOf = (keys: KeyList) => keys[0].replace(/:due$/, ':calls:test');

let callSeq = 0;
/** A fresh call's arguments: id, no finished calls, a minute's time to live. */
export const newCall = (): string[] => [`c${++callSeq}`, '', '60000'];

/**
 * How many of a write script's own trailing arguments the tests pass after the call's (the
 * deadline and the time; the time alone for FAIL, EXTEND and RETRY_FAILED, none for ACK and
 * PURGE_FAILED, which take both as '' and 0).
 */
const TRAILING = {
  tickwheelSchedule: 2,
  tickwheelReschedule: 2,
  tickwheelCancel: 2,
  tickwheelFail: 1,
  tickwheelExtend: 1,
  tickwheelRetryFailed: 1,
  tickwheelAck: 0,
  tickwheelPurgeFailed: 0,
};

/**
 * The scripts with every write made a fresh call, as RedisTimers makes one per call: the tests
 * pass the shard's nine keys and the script's own arguments, as for the other scripts. The
 * once wrapper itself is tested on {@link raw}.
 */
export const client: typeof raw = Object.create(raw) as typeof raw;
for (const [name, trailing] of Object.entries(TRAILING)) {
  const real = (raw as unknown as Record<string, (...args: string[]) => Promise<unknown>>)[name].bind(raw);
  (client as unknown as Record<string, unknown>)[name] = (...args: string[]) => {
    const keys = args.slice(0, 9) as KeyList;
    const own = args.slice(9, args.length - trailing);
    const tail = trailing === 2 ? args.slice(-2) : trailing === 1 ? ['', ...args.slice(-1)] : ['', '0'];
    return real(...keys, callsOf(keys), ...own, ...newCall(), ...tail);
  };
}
const subscriber = new RedisMock() as unknown as RedisClient;
/** Each shard's wake-up messages by channel: one listener for all, not one per shard past the emitter's limit. */
const wakesByChannel = new Map<string, string[]>();
subscriber.on('message', (from: string, message: string) => wakesByChannel.get(from)?.push(message));
afterAll(async () => {
  await subscriber.quit();
  await raw.quit();
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
  wakesByChannel.set(channel, wakes);
  await subscriber.subscribe(channel);
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
/**
 * A claim by worker `worker` (default 'w'), with a fresh sequence number unless `seq` is given;
 * `answered`: the seq of the worker's last claim whose reply it saw (default: each one was seen);
 * `maxStalled`: maxStalledCount ('' for no limit; default '1', BullMQ's).
 */
export const claim = (
  s: Shard,
  limit: number,
  leaseMs: number,
  now: number,
  {
    worker = 'w',
    seq = ++claimSeq,
    answered = seq - 1,
    maxStalled = '1',
  }: { worker?: string; seq?: number; answered?: number; maxStalled?: string } = {},
) =>
  client.tickwheelClaim(
    ...s.keys,
    String(limit),
    String(leaseMs),
    worker,
    String(seq),
    String(answered),
    maxStalled,
    String(now),
  );

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
