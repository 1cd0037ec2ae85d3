/**
 * The Lua scripts of @tickwheel/redis, and the typed commands they become on an ioredis client.
 * Must not depend on: the client, the worker or a client's clock (the layout is in keys.ts and record.ts).
 *
 * Each script touches the keys of ONE shard (one Cluster slot) and reads the time with
 * `redis.call('TIME')`, so due times and leases follow the Redis server's clock, never a client's
 * (scripts that read TIME are replicated by their effects, the default since Redis 5). They stay
 * within what both Redis's Lua 5.1 and ioredis-mock's fengari (Lua 5.3, 32-bit integers, no
 * cjson) run: `redis.call`, `string.match`, `string.format`, `tonumber`; numbers are printed with
 * `F`. KEYS are always the shard's `due, lease, timers, seq, failed, reasons`.
 *
 * Every script is safe to run twice (see failover.ts): schedule is keyed by id, and everything a
 * worker sends about a claim carries that claim's token.
 */

/**
 * Replies are built as `{unpack(out)}`: ioredis-mock's bridge converts only a table made by a
 * constructor, and Lua 5.1 unpacks at most ~8 000 values, which bounds a claim (4 + 7 x 1 000)
 * and one listFailed call (4 x 1 000).
 *
 * `now` in ms and `F` to print a number. Scripts that read the time take one more, last, ARGV:
 * '' to read TIME, or the caller's epoch ms (`timeSource: 'local'`). `%.0f` prints a whole float
 * the same way in Lua 5.1 and 5.3.
 */
const NOW = `local function F(x) return string.format('%.0f', x) end
local now
if ARGV[#ARGV] == '' then
  local t = redis.call('TIME')
  now = math.floor(tonumber(t[1]) * 1000.0 + tonumber(t[2]) / 1000.0)
else
  now = math.floor(tonumber(ARGV[#ARGV]) + 0.0)
end`;

/** Publishes `shard:due` when `due` is earlier than the shard's earliest (head read before the write). */
const WAKE = `local function wake(head, due, channel, shard)
  if head[2] == nil or due < tonumber(head[2]) then redis.call('PUBLISH', channel, shard .. ':' .. F(due)) end
end`;

/** Takes an id out of every set and the reasons hash (the record stays). */
const UNLINK = `local function unlink(id)
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZREM', KEYS[5], id)
  redis.call('HDEL', KEYS[6], id)
end`;

/**
 * Schedules a timer. ARGV: id, mode ('in' | 'at'), ms, payload, channel, shard, ifExists
 * ('replace' | 'keep'), maxAttempts, backoff. Returns {dueAt, token, '1' written | '0' kept}.
 */
export const SCHEDULE = `${NOW}
${WAKE}
${UNLINK}
local id = ARGV[1]
local record = redis.call('HGET', KEYS[3], id)
if record and ARGV[7] == 'keep' then
  local token, due = string.match(record, '^(%d+):(%d+):')
  return {due, token, '0'}
end
local due = math.floor(tonumber(ARGV[3]))
if ARGV[2] == 'in' then due = now + due end
local token = F(redis.call('INCR', KEYS[4]))
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if record then unlink(id) end
redis.call('ZADD', KEYS[1], F(due), id)
redis.call('HSET', KEYS[3], id, token .. ':' .. F(due) .. ':0:' .. ARGV[8] .. ':' .. ARGV[9] .. ':' .. ARGV[4])
wake(head, due, ARGV[5], ARGV[6])
return {F(due), token, '1'}`;

/**
 * Moves an existing timer (scheduled, claimed or failed) to a new due time, keeping its payload
 * and retry policy and resetting its attempts. ARGV: id, mode, ms, channel, shard. Returns the
 * new due time, or '' when there is no such timer.
 */
export const RESCHEDULE = `${NOW}
${WAKE}
${UNLINK}
local id = ARGV[1]
local record = redis.call('HGET', KEYS[3], id)
if not record then return '' end
local policy = string.match(record, '^%d+:%d+:%d+:(.*)$')
local due = math.floor(tonumber(ARGV[3]))
if ARGV[2] == 'in' then due = now + due end
local token = F(redis.call('INCR', KEYS[4]))
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
unlink(id)
redis.call('ZADD', KEYS[1], F(due), id)
redis.call('HSET', KEYS[3], id, token .. ':' .. F(due) .. ':0:' .. policy)
wake(head, due, ARGV[4], ARGV[5])
return F(due)`;

/** Deletes a timer wherever it is. ARGV: id. Returns 1 when it existed, else 0. */
export const CANCEL = `${UNLINK}
unlink(ARGV[1])
return redis.call('HDEL', KEYS[3], ARGV[1])`;

/**
 * Reads a timer. ARGV: id. Returns {record, next attempt or '', lease expiry or '', failed at
 * or '', last error or ''}, or '' when there is none.
 */
export const GET = `local id = ARGV[1]
local record = redis.call('HGET', KEYS[3], id)
if not record then return '' end
return {record, redis.call('ZSCORE', KEYS[1], id) or '', redis.call('ZSCORE', KEYS[2], id) or '',
  redis.call('ZSCORE', KEYS[5], id) or '', redis.call('HGET', KEYS[6], id) or ''}`;

/**
 * Claims up to ARGV[1] timers for ARGV[2] ms: first those whose lease expired, then those due.
 * Each claimed timer gets a new token and one more attempt; one whose lease expired on its last
 * attempt goes to the failed set instead. Returns {now, nextDue, nextLease, leaseUntil, then per
 * timer: id, token, dueAt, attempts, maxAttempts, backoff, payload}, '' for an empty ZSET.
 */
export const CLAIM = `${NOW}
local limit = tonumber(ARGV[1])
local leaseUntil = F(now + math.floor(tonumber(ARGV[2])))
local out = {F(now), '', '', leaseUntil}
local function take(id, from, expired)
  local record = redis.call('HGET', KEYS[3], id)
  redis.call('ZREM', from, id)
  if not record then return end
  local due, attempts, max, backoff, payload = string.match(record, '^%d+:(%d+):(%d+):(%d+):([^:]*):(.*)$')
  if expired and tonumber(max) > 0 and tonumber(attempts) >= tonumber(max) then
    redis.call('ZADD', KEYS[5], F(now), id)
    redis.call('HSET', KEYS[6], id, 'lease expired on attempt ' .. attempts .. ' of ' .. max ..
      ': the worker died or lost Redis, or the handler outlived its lease')
    return
  end
  local token = F(redis.call('INCR', KEYS[4]))
  attempts = F(tonumber(attempts) + 1)
  redis.call('HSET', KEYS[3], id, token .. ':' .. due .. ':' .. attempts .. ':' .. max .. ':' .. backoff .. ':' .. payload)
  redis.call('ZADD', KEYS[2], leaseUntil, id)
  local n = #out
  out[n + 1] = id
  out[n + 2] = token
  out[n + 3] = due
  out[n + 4] = attempts
  out[n + 5] = max
  out[n + 6] = backoff
  out[n + 7] = payload
end
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', F(now), 'LIMIT', 0, limit)
for i = 1, #expired do take(expired[i], KEYS[2], true) end
if #expired < limit then
  local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', F(now), 'LIMIT', 0, limit - #expired)
  for i = 1, #due do take(due[i], KEYS[1], false) end
end
local nextDue = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if nextDue[2] then out[2] = nextDue[2] end
local nextLease = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if nextLease[2] then out[3] = nextLease[2] end
return {unpack(out)}`;

/** Checks that `id` is still claimed under `token`; returns its record then. */
const HELD = `local function held(id, token)
  local record = redis.call('HGET', KEYS[3], id)
  if not record or string.match(record, '^(%d+):') ~= token or not redis.call('ZSCORE', KEYS[2], id) then return nil end
  return record
end`;

/**
 * Acks handled timers: ARGV holds pairs id, token. A timer is deleted only while it is still
 * claimed under that token (the ZREM from the lease set is the claimed check). A last error can
 * exist only after a failed attempt, so a first attempt skips that HDEL. Returns the ids whose
 * ack was refused (the lease was lost).
 */
export const ACK = `local refused = {}
for i = 1, #ARGV, 2 do
  local id = ARGV[i]
  local record = redis.call('HGET', KEYS[3], id)
  local token, attempts
  if record then token, attempts = string.match(record, '^(%d+):%d+:(%d+):') end
  if token == ARGV[i + 1] and redis.call('ZREM', KEYS[2], id) == 1 then
    redis.call('HDEL', KEYS[3], id)
    if tonumber(attempts) > 1 then redis.call('HDEL', KEYS[6], id) end
  else
    refused[#refused + 1] = id
  end
end
return {unpack(refused)}`;

/**
 * Extends a lease. ARGV: id, token, leaseMs. Returns the new lease expiry, or '' when the
 * timer is no longer claimed under that token.
 */
export const EXTEND = `${NOW}
${HELD}
if not held(ARGV[1], ARGV[2]) then return '' end
local untilMs = F(now + math.floor(tonumber(ARGV[3])))
redis.call('ZADD', KEYS[2], untilMs, ARGV[1])
return untilMs`;

/**
 * Reports a failed attempt. ARGV: id, token, retry delay ms, reason, channel, shard. With
 * attempts left the timer is due again after the delay; on its last attempt it moves to the
 * failed set. Returns the retry's due time, 'failed', or '' when refused (the lease was lost).
 */
export const FAIL = `${NOW}
${WAKE}
${HELD}
local id = ARGV[1]
local record = held(id, ARGV[2])
if not record then return '' end
local attempts, max = string.match(record, '^%d+:%d+:(%d+):(%d+):')
redis.call('ZREM', KEYS[2], id)
redis.call('HSET', KEYS[6], id, ARGV[4])
if tonumber(max) > 0 and tonumber(attempts) >= tonumber(max) then
  redis.call('ZADD', KEYS[5], F(now), id)
  return 'failed'
end
local at = now + math.floor(tonumber(ARGV[3]))
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
redis.call('ZADD', KEYS[1], F(at), id)
wake(head, at, ARGV[5], ARGV[6])
return F(at)`;

/**
 * Lists failed timers, oldest failure first. ARGV: offset, count. Returns per timer: id,
 * failedAt, record, reason.
 */
export const LIST_FAILED = `local out = {}
local ids = redis.call('ZRANGE', KEYS[5], tonumber(ARGV[1]), tonumber(ARGV[1]) + tonumber(ARGV[2]) - 1, 'WITHSCORES')
for i = 1, #ids, 2 do
  local n = #out
  out[n + 1] = ids[i]
  out[n + 2] = ids[i + 1]
  out[n + 3] = redis.call('HGET', KEYS[3], ids[i]) or ''
  out[n + 4] = redis.call('HGET', KEYS[6], ids[i]) or ''
end
return {unpack(out)}`;

/**
 * Gives failed timers a fresh start, due now with zero attempts. ARGV: id ('' for up to
 * `count` of them), count, channel, shard. Returns how many were moved.
 */
export const RETRY_FAILED = `${NOW}
${WAKE}
local ids = {ARGV[1]}
if ARGV[1] == '' then ids = redis.call('ZRANGE', KEYS[5], 0, tonumber(ARGV[2]) - 1) end
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local n = 0
for i = 1, #ids do
  local record = redis.call('HGET', KEYS[3], ids[i])
  if record and redis.call('ZREM', KEYS[5], ids[i]) == 1 then
    local due, policy = string.match(record, '^%d+:(%d+):%d+:(.*)$')
    redis.call('HSET', KEYS[3], ids[i], F(redis.call('INCR', KEYS[4])) .. ':' .. due .. ':0:' .. policy)
    redis.call('HDEL', KEYS[6], ids[i])
    redis.call('ZADD', KEYS[1], F(now), ids[i])
    n = n + 1
  end
end
if n > 0 then wake(head, now, ARGV[3], ARGV[4]) end
return n`;

/** Deletes failed timers. ARGV: id ('' for up to `count` of them), count. Returns how many. */
export const PURGE_FAILED = `local ids = {ARGV[1]}
if ARGV[1] == '' then ids = redis.call('ZRANGE', KEYS[5], 0, tonumber(ARGV[2]) - 1) end
local n = 0
for i = 1, #ids do
  if redis.call('ZREM', KEYS[5], ids[i]) == 1 then
    redis.call('HDEL', KEYS[3], ids[i])
    redis.call('HDEL', KEYS[6], ids[i])
    n = n + 1
  end
end
return n`;

type Keys = [due: string, lease: string, timers: string, seq: string, failed: string, reasons: string];

/** The commands {@link defineScripts} adds to a client, typed. */
export interface ScriptCommands {
  tickwheelSchedule(...args: [...Keys, ...string[]]): Promise<[string, string, string]>;
  tickwheelReschedule(...args: [...Keys, ...string[]]): Promise<string>;
  tickwheelCancel(...args: [...Keys, string]): Promise<number>;
  tickwheelGet(...args: [...Keys, string]): Promise<string | [string, string, string, string, string]>;
  tickwheelClaim(...args: [...Keys, string, string, string]): Promise<string[]>;
  tickwheelAck(...args: [...Keys, ...string[]]): Promise<string[]>;
  tickwheelExtend(...args: [...Keys, string, string, string, string]): Promise<string>;
  tickwheelFail(...args: [...Keys, ...string[]]): Promise<string>;
  tickwheelListFailed(...args: [...Keys, string, string]): Promise<string[]>;
  tickwheelRetryFailed(...args: [...Keys, ...string[]]): Promise<number>;
  tickwheelPurgeFailed(...args: [...Keys, string, string]): Promise<number>;
}

const SCRIPTS: Record<keyof ScriptCommands, string> = {
  tickwheelSchedule: SCHEDULE,
  tickwheelReschedule: RESCHEDULE,
  tickwheelCancel: CANCEL,
  tickwheelGet: GET,
  tickwheelClaim: CLAIM,
  tickwheelAck: ACK,
  tickwheelExtend: EXTEND,
  tickwheelFail: FAIL,
  tickwheelListFailed: LIST_FAILED,
  tickwheelRetryFailed: RETRY_FAILED,
  tickwheelPurgeFailed: PURGE_FAILED,
};

interface DefinesCommands {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
}

/**
 * Adds the scripts to the client as commands (ioredis sends EVALSHA and falls back to EVAL on
 * NOSCRIPT, per node in a Cluster). Idempotent: several RedisTimers may share one client.
 */
export function defineScripts<C extends object>(client: C): C & ScriptCommands {
  const target = client as unknown as DefinesCommands & Record<string, unknown>;
  for (const [name, lua] of Object.entries(SCRIPTS)) {
    if (typeof target[name] !== 'function') target.defineCommand(name, { numberOfKeys: 6, lua });
  }
  return client as C & ScriptCommands;
}
