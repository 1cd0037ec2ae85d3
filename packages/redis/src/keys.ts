/**
 * Key layout of @tickwheel/redis: the keys of a shard and the namespace's wake channel.
 *
 * Every key of one shard carries the hash tag `{<namespace>:<shard>}`, so a shard's keys share
 * one Redis Cluster slot (each Lua script touches one shard only) while different shards of a
 * namespace spread over the cluster's nodes.
 *
 * Per shard:
 * - `index`, `buckets` and the bucket keys `r<n>`, `p<n>`, `d<n>`: the timers, their records,
 *             payloads and due times, in small buckets Redis stores compactly (see buckets.ts)
 * - `lease`   ZSET id -> lease expiry (epoch ms): claimed, not yet acked
 * - `failed`  ZSET id -> when it failed for good (epoch ms): out of attempts
 * - `due`, `timers`: the previous layout's due ZSET and record HASH, read and migrated by
 *             buckets.ts's Lua, empty once every old timer was touched
 * - `seq`     STRING counter; every schedule and every claim takes the next value as the
 *             timer's token (the fencing token)
 * - `reasons` HASH id -> why a failed timer failed (the last error's message)
 * - `claims`  HASH worker id -> that worker's last claim on the shard: its sequence number and
 *             the ids and tokens it took, so the worker's next claim can take back a claim whose
 *             reply was lost, and a claim applied after a newer one of the same worker takes nothing
 * - `calls:<client id>` HASH call id -> the reply of that call's write, per RedisTimers instance:
 *             a second try of a write that landed answers from it and writes nothing (see
 *             lua-prelude.ts, once). Entries live until their client saw the call finish; the hash
 *             expires when its client made no call for longer than a call's failover budget
 *
 * - `present`, `nodes`, `conns:<node>`: a RedisPresence's members, servers and connections
 *             on the shard (presence-scripts.ts)
 *
 * One pub/sub channel per namespace, `<prefix>:{<namespace>}:wake`, carries `"<shard>:<dueAt>"`
 * whenever a schedule makes a timer the earliest of its shard.
 */

/** The keys of one shard, in the order the Lua scripts take them. */
export interface ShardKeys {
  due: string;
  lease: string;
  timers: string;
  seq: string;
  failed: string;
  reasons: string;
  claims: string;
  index: string;
  buckets: string;
}

/** The nine keys of a shard as the scripts' KEYS array. */
export type KeyList = [string, string, string, string, string, string, string, string, string];

export function shardKeys(prefix: string, namespace: string, shard: number): ShardKeys {
  const base = `${prefix}:{${namespace}:${shard}}`;
  return {
    due: `${base}:due`,
    lease: `${base}:lease`,
    timers: `${base}:timers`,
    seq: `${base}:seq`,
    failed: `${base}:failed`,
    reasons: `${base}:reasons`,
    claims: `${base}:claims`,
    index: `${base}:index`,
    // Its last letter gives way to r, p or d and a number for the bucket keys (buckets.ts).
    buckets: `${base}:b`,
  };
}

export function keyList(keys: ShardKeys): KeyList {
  return [
    keys.due,
    keys.lease,
    keys.timers,
    keys.seq,
    keys.failed,
    keys.reasons,
    keys.claims,
    keys.index,
    keys.buckets,
  ];
}

/** The calls hash of client `clientId` on a shard (lua-prelude.ts, once): the shard's hash tag, so the same slot. */
export function callsKey(prefix: string, namespace: string, shard: number, clientId: string): string {
  return `${prefix}:{${namespace}:${shard}}:calls:${clientId}`;
}

/** A RedisPresence's `present` hash on a shard (presence-scripts.ts names it the same way in Lua). */
export function presentKey(keys: ShardKeys): string {
  return keys.buckets.slice(0, -1) + 'present';
}

export function wakeChannel(prefix: string, namespace: string): string {
  return `${prefix}:{${namespace}}:wake`;
}

/**
 * The shard of an id: FNV-1a (32 bit) over its UTF-16 code units, modulo `shards`. Every process
 * computes the same shard for the same id, which is what makes `schedule` idempotent by id.
 */
export function shardOf(id: string, shards: number): number {
  if (shards === 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % shards;
}
