/**
 * The scripts RedisTimers runs for its callers: schedule, reschedule, cancel, get, and the failed set's list, retry and purge.
 */
import { LAYOUT, LAYOUT_ALONE } from './buckets.js';
import { LATE, NOW, once, WAKE } from './lua-prelude.js';

/**
 * `put(id, record, b, due, payload, policy, channel, shard)`: writes timer `id` (whose current
 * record and bucket `load(id)` returned) due at `due` with a fresh token, attempts 0, `payload`
 * ('' for none) and `policy` (`<maxAttempts>:<backoff>`, record.ts), over whatever was there (a
 * claimed one's ack is then refused), and publishes the wake-up when it became its shard's
 * earliest. Returns the token. SCHEDULE and the presence scripts (presence-scripts.ts) write
 * timers through it. Needs NOW, WAKE and LAYOUT.
 */
export const PUT = `local function put(id, record, b, due, payload, policy, channel, shard)
  local token = F(redis.call('INCR', KEYS[4]))
  local head = redis.call('ZRANGE', KEYS[8], 0, 0, 'WITHSCORES')
  if record then unlink(id, b) end
  redis.call('HSET', rk(b), id, token .. ':' .. to36(due) .. ':0:' .. policy)
  if payload ~= '' then redis.call('HSET', pk(b), id, payload) elseif record then redis.call('HDEL', pk(b), id) end
  redis.call('ZADD', dk(b), F(due), id)
  reindex(b)
  if not record then added() end
  wake(head, due, channel, shard)
  return token
end`;

/**
 * Schedules a timer. ARGV: id, mode ('in' | 'at'), ms, payload, channel, shard, ifExists
 * ('replace' | 'keep'), maxAttempts, backoff, maxWait (ms, '' for none), then the call's
 * arguments (see once), deadline (see LATE) and time. Returns {dueAt, token, '1' written | '0' kept};
 * a try of a call that landed already returns the same, writing nothing.
 *
 * With a maxWait the record keeps when its window opened (`w<ms>` after the backoff): from the
 * replaced record when it has one, else now. The claim drops it, so a schedule after the timer
 * fired opens a new window.
 */
export const SCHEDULE = once(`${NOW}
${LATE}
${WAKE}
${LAYOUT}
${PUT}
local id = ARGV[1]
local record, b = load(id)
if record and ARGV[7] == 'keep' then
  local token, due = string.match(record, '^(%d+):(%w+):')
  return {F(from36(due)), token, '0'}
end
local due = math.floor(tonumber(ARGV[3]))
if ARGV[2] == 'in' then due = now + due end
local policy = ARGV[9]
if ARGV[10] ~= '' then
  local since = now
  if record then
    local opened = string.match(record, '^%d+:%w+:%d+:%d+:[^w]*w(%d+)$')
    if opened then since = tonumber(opened) end
  end
  local cap = since + math.floor(tonumber(ARGV[10]))
  if cap < due then due = cap end
  policy = policy .. 'w' .. F(since)
end
local token = put(id, record, b, due, ARGV[4], ARGV[8] .. ':' .. policy, ARGV[5], ARGV[6])
return {F(due), token, '1'}`);

/**
 * Moves an existing timer (scheduled, claimed or failed) to a new due time, keeping its payload
 * and retry policy and resetting its attempts and stalls. ARGV: id, mode, ms, channel, shard, then the
 * call's arguments, deadline and time (see once). Returns the new due time, or '' when there is no
 * such timer.
 */
export const RESCHEDULE = once(`${NOW}
${LATE}
${WAKE}
${LAYOUT}
local id = ARGV[1]
local record, b = load(id)
if not record then return '' end
local max, backoff = string.match(record, '^%d+:%w+:%d+:(%d+):([^:]*)$')
local policy = max .. ':' .. string.gsub(backoff, 's%d+$', '')
local due = math.floor(tonumber(ARGV[3]))
if ARGV[2] == 'in' then due = now + due end
local token = F(redis.call('INCR', KEYS[4]))
local head = redis.call('ZRANGE', KEYS[8], 0, 0, 'WITHSCORES')
unlink(id, b)
redis.call('ZADD', dk(b), F(due), id)
reindex(b)
redis.call('HSET', rk(b), id, token .. ':' .. to36(due) .. ':0:' .. policy)
wake(head, due, ARGV[4], ARGV[5])
return F(due)`);

/**
 * Deletes a timer wherever it is. ARGV: id, then the call's arguments, deadline and time (see
 * once). Returns 1 when it existed, else 0.
 */
export const CANCEL = once(`${NOW}
${LATE}
${LAYOUT}
local record, b = load(ARGV[1])
if not record then return 0 end
drop(ARGV[1], b)
return 1`);

/**
 * Reads a timer, from either layout without moving it. ARGV: id. Returns {record, payload,
 * next attempt or '', lease expiry or '', failed at or '', last error or ''}, or '' when there
 * is none.
 */
export const GET = `${LAYOUT_ALONE}
local id = ARGV[1]
local record, payload, next = peek(id)
if not record then return '' end
return {record, payload, next or '', redis.call('ZSCORE', KEYS[2], id) or '',
  redis.call('ZSCORE', KEYS[5], id) or '', redis.call('HGET', KEYS[6], id) or ''}`;

/**
 * Lists failed timers, oldest failure first. ARGV: offset, count. Returns per timer: id,
 * failedAt, record, payload, reason.
 */
export const LIST_FAILED = `${LAYOUT_ALONE}
local out = {}
local ids = redis.call('ZRANGE', KEYS[5], tonumber(ARGV[1]), tonumber(ARGV[1]) + tonumber(ARGV[2]) - 1, 'WITHSCORES')
for i = 1, #ids, 2 do
  local n = #out
  local record, payload = peek(ids[i])
  out[n + 1] = ids[i]
  out[n + 2] = ids[i + 1]
  out[n + 3] = record or ''
  out[n + 4] = payload or ''
  out[n + 5] = redis.call('HGET', KEYS[6], ids[i]) or ''
end
return {unpack(out)}`;

/**
 * Gives failed timers a fresh start, due now with zero attempts and stalls. ARGV: id ('' for up to
 * `count` of them), count, channel, shard, then the call's arguments, deadline and time (see
 * once). Returns how many were moved; a second try of a call that landed answers the same and
 * moves nothing, so it cannot restart a timer that failed again in between.
 */
export const RETRY_FAILED = once(`${NOW}
${LATE}
${WAKE}
${LAYOUT}
local ids = {ARGV[1]}
if ARGV[1] == '' then ids = redis.call('ZRANGE', KEYS[5], 0, tonumber(ARGV[2]) - 1) end
local head = redis.call('ZRANGE', KEYS[8], 0, 0, 'WITHSCORES')
local n = 0
for i = 1, #ids do
  local record, b = load(ids[i])
  if record and redis.call('ZREM', KEYS[5], ids[i]) == 1 then
    local due, max, backoff = string.match(record, '^%d+:(%w+):%d+:(%d+):([^:]*)$')
    local policy = max .. ':' .. string.gsub(backoff, 's%d+$', '')
    redis.call('HSET', rk(b), ids[i], F(redis.call('INCR', KEYS[4])) .. ':' .. due .. ':0:' .. policy)
    redis.call('HDEL', KEYS[6], ids[i])
    redis.call('ZADD', dk(b), F(now), ids[i])
    reindex(b)
    n = n + 1
  end
end
if n > 0 then wake(head, now, ARGV[3], ARGV[4]) end
return n`);

/**
 * Deletes failed timers. ARGV: id ('' for up to `count` of them), count, then the call's
 * arguments, deadline and time (see once). Returns how many; a second try of a call that landed
 * answers the same and deletes nothing, so it cannot delete a timer that failed after it.
 */
export const PURGE_FAILED = once(`${NOW}
${LATE}
${LAYOUT}
local ids = {ARGV[1]}
if ARGV[1] == '' then ids = redis.call('ZRANGE', KEYS[5], 0, tonumber(ARGV[2]) - 1) end
local n = 0
for i = 1, #ids do
  if redis.call('ZSCORE', KEYS[5], ids[i]) then
    local _, b = load(ids[i])
    drop(ids[i], b)
    n = n + 1
  end
end
return n`);
