/**
 * The Lua scripts. Each touches the keys of ONE shard (one Cluster slot) and reads the time with
 * `redis.call('TIME')`, so due times and leases follow the Redis server's clock, never a client's
 * (scripts that read TIME are replicated by their effects, the default since Redis 5).
 *
 * They stay within what both Redis's Lua 5.1 and ioredis-mock's fengari (Lua 5.3, no cjson, no
 * cmsgpack) run: plain `redis.call`, `string.match`, `string.format`, `tonumber`. Every number
 * that goes into a key or a reply is printed with `F` (see NOW).
 *
 * KEYS are always the shard's `due, lease, timers, seq` (see keys.ts). ARGV listed per
 * script below exclude the trailing time argument.
 */

/**
 * Current server time in ms, and `F` to print a number. The scripts that read the time take one
 * more, last, ARGV: '' to read TIME (always, on a real server), or the caller's epoch ms for
 * ioredis-mock, whose TIME is wrong (seconds rounded, microseconds from an unrelated counter) and
 * which runs in the caller's process anyway. fengari's integers are 32 bits, so epoch
 * ms must stay floats there; `%.0f` prints a whole float the same way in Lua 5.1 and 5.3.
 */
const NOW = `local function F(x) return string.format('%.0f', x) end
local now
if ARGV[#ARGV] == '' then
  local t = redis.call('TIME')
  now = math.floor(tonumber(t[1]) * 1000.0 + tonumber(t[2]) / 1000.0)
else
  now = math.floor(tonumber(ARGV[#ARGV]) + 0.0)
end`;

/**
 * Schedules (or replaces) a timer. ARGV: id, mode ('in' | 'at'), ms, payload ('' = none),
 * channel, shard. Publishes `shard:dueAt` on the channel when the timer becomes its shard's
 * earliest, so sleeping workers re-arm. Returns { dueAt, seq }.
 */
export const SCHEDULE = `${NOW}
local id = ARGV[1]
local due = math.floor(tonumber(ARGV[3]))
if ARGV[2] == 'in' then due = now + due end
local seq = F(redis.call('INCR', KEYS[4]))
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
redis.call('ZREM', KEYS[2], id)
redis.call('ZADD', KEYS[1], F(due), id)
redis.call('HSET', KEYS[3], id, seq .. ':' .. F(due) .. ':0:' .. ARGV[4])
if head[2] == nil or due < tonumber(head[2]) then
  redis.call('PUBLISH', ARGV[5], ARGV[6] .. ':' .. F(due))
end
return {F(due), seq}`;

/**
 * Moves an existing timer (scheduled or claimed) to a new due time, keeping its payload.
 * ARGV: id, mode, ms, channel, shard. Returns the new due time, or '' when there is no such timer.
 */
export const RESCHEDULE = `${NOW}
local id = ARGV[1]
local record = redis.call('HGET', KEYS[3], id)
if not record then return '' end
local payload = string.match(record, '^%d+:%d+:%d+:(.*)$')
local due = math.floor(tonumber(ARGV[3]))
if ARGV[2] == 'in' then due = now + due end
local seq = F(redis.call('INCR', KEYS[4]))
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
redis.call('ZREM', KEYS[2], id)
redis.call('ZADD', KEYS[1], F(due), id)
redis.call('HSET', KEYS[3], id, seq .. ':' .. F(due) .. ':0:' .. payload)
if head[2] == nil or due < tonumber(head[2]) then
  redis.call('PUBLISH', ARGV[4], ARGV[5] .. ':' .. F(due))
end
return F(due)`;

/** Deletes a timer wherever it is. ARGV: id. Returns 1 when it existed (scheduled or claimed), else 0. */
export const CANCEL = `local id = ARGV[1]
redis.call('ZREM', KEYS[1], id)
redis.call('ZREM', KEYS[2], id)
return redis.call('HDEL', KEYS[3], id)`;

/** Reads a timer. ARGV: id. Returns {record, leaseExpiry or ''}, or '' when there is none. */
export const GET = `local id = ARGV[1]
local record = redis.call('HGET', KEYS[3], id)
if not record then return '' end
return {record, redis.call('ZSCORE', KEYS[2], id) or ''}`;

/**
 * Claims up to ARGV[1] timers: first those whose lease expired, then those due, each moved to the
 * lease ZSET with score now + ARGV[2] and its attempts incremented. Atomic, so each claim goes to
 * exactly one caller. Returns {now, nextDue, nextLease, then per timer: id, seq, dueAt, attempts,
 * payload}, with '' for an empty ZSET or no payload.
 */
export const CLAIM = `${NOW}
local limit = tonumber(ARGV[1])
local leaseUntil = F(now + math.floor(tonumber(ARGV[2])))
local out = {F(now), '', ''}
local function take(id, from)
  local record = redis.call('HGET', KEYS[3], id)
  redis.call('ZREM', from, id)
  if not record then return end
  local seq, due, attempts, payload = string.match(record, '^(%d+):(%d+):(%d+):(.*)$')
  attempts = F(tonumber(attempts) + 1)
  redis.call('HSET', KEYS[3], id, seq .. ':' .. due .. ':' .. attempts .. ':' .. payload)
  redis.call('ZADD', KEYS[2], leaseUntil, id)
  out[#out + 1] = id
  out[#out + 1] = seq
  out[#out + 1] = due
  out[#out + 1] = attempts
  out[#out + 1] = payload
end
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', F(now), 'LIMIT', 0, limit)
for i = 1, #expired do take(expired[i], KEYS[2]) end
if #expired < limit then
  local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', F(now), 'LIMIT', 0, limit - #expired)
  for i = 1, #due do take(due[i], KEYS[1]) end
end
local nextDue = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if nextDue[2] then out[2] = nextDue[2] end
local nextLease = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if nextLease[2] then out[3] = nextLease[2] end
return {unpack(out)}`;

/**
 * Acks handled timers: ARGV holds pairs id, seq. A timer is deleted only while its seq still
 * matches (a schedule or reschedule since the claim gives it a new seq, and that new timer must
 * not be lost) and it is still claimed. Returns how many were deleted.
 */
export const ACK = `local n = 0
for i = 1, #ARGV, 2 do
  local id = ARGV[i]
  local record = redis.call('HGET', KEYS[3], id)
  if record and string.match(record, '^(%d+):') == ARGV[i + 1] and redis.call('ZREM', KEYS[2], id) == 1 then
    redis.call('HDEL', KEYS[3], id)
    n = n + 1
  end
end
return n`;

/** A timer's HASH value, `"<seq>:<dueAt>:<attempts>:<payload JSON>"`, taken apart. */
export function parseRecord(record: string): { seq: string; dueAt: number; attempts: number; payload: string } {
  const [seq, dueAt, attempts] = record.split(':', 3) as [string, string, string];
  return { seq, dueAt: Number(dueAt), attempts: Number(attempts), payload: record.slice(seq.length + dueAt.length + attempts.length + 3) };
}

/** The commands {@link defineScripts} adds to a client, typed. */
export interface ScriptCommands {
  tickwheelSchedule(due: string, lease: string, timers: string, seq: string, ...argv: string[]): Promise<[string, string]>;
  tickwheelReschedule(due: string, lease: string, timers: string, seq: string, ...argv: string[]): Promise<string>;
  tickwheelCancel(due: string, lease: string, timers: string, seq: string, id: string): Promise<number>;
  tickwheelGet(due: string, lease: string, timers: string, seq: string, id: string): Promise<string | [string, string]>;
  tickwheelClaim(due: string, lease: string, timers: string, seq: string, limit: string, leaseMs: string, now: string): Promise<string[]>;
  tickwheelAck(due: string, lease: string, timers: string, seq: string, ...argv: string[]): Promise<number>;
}

const SCRIPTS: Record<keyof ScriptCommands, string> = {
  tickwheelSchedule: SCHEDULE,
  tickwheelReschedule: RESCHEDULE,
  tickwheelCancel: CANCEL,
  tickwheelGet: GET,
  tickwheelClaim: CLAIM,
  tickwheelAck: ACK,
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
    if (typeof target[name] !== 'function') target.defineCommand(name, { numberOfKeys: 4, lua });
  }
  return client as C & ScriptCommands;
}
