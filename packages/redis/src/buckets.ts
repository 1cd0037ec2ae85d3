/**
 * The bucketed storage layout of a shard's timers: small hashes and sorted sets that Redis keeps in its compact listpack encoding.
 *
 * A key per timer, or one big hash and one big sorted set per shard, costs Redis a dict entry,
 * an object header and a skiplist node per timer. A hash or sorted set of at most
 * `hash-max-listpack-entries` / `zset-max-listpack-entries` (128 by default) entries, each at
 * most `*-max-listpack-value` (64) bytes long, is stored as one flat listpack instead: a few
 * bytes of framing per entry. So a shard's timers live in numbered buckets of a few dozen:
 *
 * - `r<b>` HASH id -> the timer's record without its payload (record.ts), always short
 * - `p<b>` HASH id -> the payload's JSON, only for timers that have one
 * - `d<b>` ZSET id -> when its next attempt is due, for timers scheduled and not claimed
 * - `index` ZSET bucket number -> the earliest due time in `d<b>` (a bucket without due timers
 *   has no entry), so the shard's earliest due time is the index's head and a claim walks the
 *   due buckets in order
 * - `buckets` HASH `l`, `s`, `c`: the linear hashing state below, and how many timers there are
 *
 * Bucket keys are the `buckets` key's name with its last letter replaced (`...}:r17`), so they
 * share the shard's hash tag and Cluster slot.
 *
 * The number of buckets grows with the timers by linear hashing (Litwin, 1980), one bucket at a
 * time, so no step ever rewrites more than one bucket. With level `l` and split pointer `s` there
 * are `2^l + s` buckets; an id whose hash `h` gives `h mod 2^l < s` lives in bucket `h mod 2^(l+1)`,
 * any other in `h mod 2^l`. Whenever an insert brings the count above {@link LOAD} timers per
 * bucket, bucket `s` is split: its timers whose `h mod 2^(l+1)` is `s + 2^l` move there, and `s`
 * advances (at `2^l` the level goes up and `s` returns to 0). Worked example, `l = 1`, `s = 0`
 * (2 buckets), an id with `h = 6`:
 *
 * | step                      | l | s | buckets | bucket of h = 6                  |
 * |---------------------------|---|---|---------|----------------------------------|
 * | start                     | 1 | 0 | 0, 1    | 6 mod 2 = 0                      |
 * | split bucket 0 into 0, 2  | 1 | 1 | 0, 1, 2 | 6 mod 2 = 0 < s: 6 mod 4 = 2     |
 * | split bucket 1 into 1, 3  | 2 | 0 | 0 to 3  | 6 mod 4 = 2                      |
 *
 * Split buckets hold about LOAD timers and the ones not yet split about twice that, so with
 * LOAD 32 a bucket stays far below 128 entries and in listpack. The hash is a polynomial one
 * modulo the prime 2^20 - 3, whose products stay exact in both Redis's Lua (doubles) and
 * ioredis-mock's (32-bit integers); its multiplier is no power of two plus or minus one, so ids
 * that differ only in their last characters still spread over the buckets. Its 2^20 values bound
 * a shard at 2^20 buckets, about 33 million timers, before buckets grow past listpack. Buckets are never merged: an
 * emptied hash or sorted set is deleted by Redis itself. A payload or an id longer than 64 bytes
 * turns its bucket's hash into a regular one; that bucket then costs what a big hash costs.
 *
 * The layout before this one kept `timers` (HASH id -> `token:dueAt:attempts:maxAttempts:backoff:payload`)
 * and `due` (ZSET id -> next attempt). Its records are migrated on first touch: {@link LAYOUT}'s
 * `load(id)` moves a timer it finds there, and every claim first moves the earliest of the old
 * `due` set, so an old timer is never missed when it is due. Read-only scripts (get,
 * listFailed) read the old keys without moving anything. Each script asks once whether the old
 * `timers` hash exists at all (`OLD`; Redis deletes it with its last record): without it, no id
 * is looked up there and a claim reads no old `due`, so a namespace that never had old records
 * pays one EXISTS per script, not a lookup per id.
 */
/** Timers per bucket on average; see the header. */
export const LOAD = 32;

/**
 * The Lua of the layout. Needs lua-prelude.ts's `F` (from NOW). KEYS: 1 old `due`, 2 `lease`, 3 old
 * `timers`, 5 `failed`, 6 `reasons`, 8 `index`, 9 `buckets`.
 *
 * - `bucketOf(id)`, `rk(b)`, `pk(b)`, `dk(b)`: an id's bucket and that bucket's keys
 * - `to36(n)`, `from36(s)`: due times in records are written in base 36 (8 digits, not 13)
 * - `OLD`: whether the old `timers` hash exists (a shard with records of the previous layout)
 * - `peek(id)`: meta, payload ('' for none), next attempt or false; reads old records too
 * - `load(id)`: meta (or nil) and bucket, migrating an old record first (the newer of the two wins)
 * - `reindex(b)`: sets bucket b's entry in the index from its earliest due timer
 * - `unlink(id, b)`: takes an id out of its due bucket, the lease and failed sets and the reasons
 * - `drop(id, b)`: unlink, then deletes its record and payload
 * - `added()`: counts one more timer and splits buckets while there are too many per bucket
 * - `held(id, token)`: its meta and bucket while it is claimed under that very token
 */
export const LAYOUT = `local BASE = string.sub(KEYS[9], 1, -2)
local state = redis.call('HMGET', KEYS[9], 'l', 's')
local level = tonumber(state[1]) or 0
local split = tonumber(state[2]) or 0
local OLD = redis.call('EXISTS', KEYS[3]) == 1
local function hashOf(id)
  local h = 0
  for i = 1, #id do h = (h * 1103 + string.byte(id, i)) % 1048573 end
  return h
end
local function bucketOf(id)
  local size = 2 ^ level
  local h = hashOf(id)
  local b = h % size
  if b < split then b = h % (size * 2) end
  return F(b)
end
local function rk(b) return BASE .. 'r' .. b end
local function pk(b) return BASE .. 'p' .. b end
local function dk(b) return BASE .. 'd' .. b end
local DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz'
local function to36(n)
  n = math.floor(n + 0.0)
  local s = ''
  repeat
    local d = n % 36
    s = string.sub(DIGITS, d + 1, d + 1) .. s
    n = (n - d) / 36
  until n < 1
  return s
end
local function from36(s)
  local n = 0.0
  for i = 1, #s do n = n * 36 + string.find(DIGITS, string.sub(s, i, i), 1, true) - 1 end
  return n
end
local function reindex(b)
  local head = redis.call('ZRANGE', dk(b), 0, 0, 'WITHSCORES')
  if head[2] then redis.call('ZADD', KEYS[8], head[2], b) else redis.call('ZREM', KEYS[8], b) end
end
local function legacy(id)
  if not OLD then return nil end
  local old = redis.call('HGET', KEYS[3], id)
  if not old then return nil end
  local token, due, rest, payload = string.match(old, '^(%d+):(%d+):(%d+:%d+:[^:]*):(.*)$')
  return token .. ':' .. to36(tonumber(due)) .. ':' .. rest, payload
end
local function peek(id)
  local b = bucketOf(id)
  local meta = redis.call('HGET', rk(b), id)
  local old, payload = legacy(id)
  if old and not (meta and tonumber(string.match(meta, '^%d+')) > tonumber(string.match(old, '^%d+'))) then
    return old, payload, redis.call('ZSCORE', KEYS[1], id)
  end
  if not meta then return nil end
  return meta, redis.call('HGET', pk(b), id) or '', redis.call('ZSCORE', dk(b), id)
end
local function load(id)
  local b = bucketOf(id)
  local meta = redis.call('HGET', rk(b), id)
  local old, payload = legacy(id)
  if not old then return meta, b end
  redis.call('HDEL', KEYS[3], id)
  local at = redis.call('ZSCORE', KEYS[1], id)
  if at then redis.call('ZREM', KEYS[1], id) end
  if meta and tonumber(string.match(meta, '^%d+')) > tonumber(string.match(old, '^%d+')) then return meta, b end
  if meta then
    if redis.call('ZREM', dk(b), id) == 1 then reindex(b) end
  else
    redis.call('HINCRBY', KEYS[9], 'c', 1)
  end
  redis.call('HSET', rk(b), id, old)
  if payload ~= '' then redis.call('HSET', pk(b), id, payload) else redis.call('HDEL', pk(b), id) end
  if at then
    redis.call('ZADD', dk(b), at, id)
    reindex(b)
  end
  return old, b
end
local function unlink(id, b)
  if redis.call('ZREM', dk(b), id) == 1 then reindex(b) end
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZREM', KEYS[5], id)
  redis.call('HDEL', KEYS[6], id)
end
local function drop(id, b)
  unlink(id, b)
  redis.call('HDEL', pk(b), id)
  if redis.call('HDEL', rk(b), id) == 1 then redis.call('HINCRBY', KEYS[9], 'c', -1) end
end
local function splitNext()
  local size = 2 ^ level
  local from, to = F(split), F(split + size)
  local fields = redis.call('HGETALL', rk(from))
  for i = 1, #fields, 2 do
    local id = fields[i]
    if hashOf(id) % (size * 2) ~= split then
      redis.call('HSET', rk(to), id, fields[i + 1])
      redis.call('HDEL', rk(from), id)
      local payload = redis.call('HGET', pk(from), id)
      if payload then
        redis.call('HSET', pk(to), id, payload)
        redis.call('HDEL', pk(from), id)
      end
      local at = redis.call('ZSCORE', dk(from), id)
      if at then
        redis.call('ZADD', dk(to), at, id)
        redis.call('ZREM', dk(from), id)
      end
    end
  end
  split = split + 1
  if split == size then
    level = level + 1
    split = 0
  end
  redis.call('HMSET', KEYS[9], 'l', F(level), 's', F(split))
  reindex(from)
  reindex(to)
end
local function added()
  local count = redis.call('HINCRBY', KEYS[9], 'c', 1)
  while count > ${LOAD} * (2 ^ level + split) do splitNext() end
end
local function held(id, token)
  local meta, b = load(id)
  if not meta or string.match(meta, '^(%d+):') ~= token or not redis.call('ZSCORE', KEYS[2], id) then return nil end
  return meta, b
end`;

/** The layout's Lua with its prerequisite, for scripts that do not read the time. */
export const LAYOUT_ALONE = `local function F(x) return string.format('%.0f', x) end
${LAYOUT}`;
