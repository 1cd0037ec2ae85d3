/**
 * The scripts RedisTimers runs for its callers: schedule, reschedule, cancel, get, and the failed set's list, retry and purge.
 */
import { LATE, NOW, once, UNLINK, WAKE } from './lua-prelude.js';

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
${UNLINK}
local id = ARGV[1]
local record = redis.call('HGET', KEYS[3], id)
if record and ARGV[7] == 'keep' then
  local token, due = string.match(record, '^(%d+):(%d+):')
  return {due, token, '0'}
end
local due = math.floor(tonumber(ARGV[3]))
if ARGV[2] == 'in' then due = now + due end
local policy = ARGV[9]
if ARGV[10] ~= '' then
  local since = now
  if record then
    local opened = string.match(record, '^%d+:%d+:%d+:%d+:[^:w]*w(%d+):')
    if opened then since = tonumber(opened) end
  end
  local cap = since + math.floor(tonumber(ARGV[10]))
  if cap < due then due = cap end
  policy = policy .. 'w' .. F(since)
end
local token = F(redis.call('INCR', KEYS[4]))
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if record then unlink(id) end
redis.call('ZADD', KEYS[1], F(due), id)
redis.call('HSET', KEYS[3], id, token .. ':' .. F(due) .. ':0:' .. ARGV[8] .. ':' .. policy .. ':' .. ARGV[4])
wake(head, due, ARGV[5], ARGV[6])
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
${UNLINK}
local id = ARGV[1]
local record = redis.call('HGET', KEYS[3], id)
if not record then return '' end
local max, backoff, payload = string.match(record, '^%d+:%d+:%d+:(%d+):([^:]*):(.*)$')
local policy = max .. ':' .. string.gsub(backoff, 's%d+$', '') .. ':' .. payload
local due = math.floor(tonumber(ARGV[3]))
if ARGV[2] == 'in' then due = now + due end
local token = F(redis.call('INCR', KEYS[4]))
local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
unlink(id)
redis.call('ZADD', KEYS[1], F(due), id)
redis.call('HSET', KEYS[3], id, token .. ':' .. F(due) .. ':0:' .. policy)
wake(head, due, ARGV[4], ARGV[5])
return F(due)`);

/**
 * Deletes a timer wherever it is. ARGV: id, then the call's arguments, deadline and time (see
 * once). Returns 1 when it existed, else 0.
 */
export const CANCEL = once(`${NOW}
${LATE}
${UNLINK}
unlink(ARGV[1])
return redis.call('HDEL', KEYS[3], ARGV[1])`);

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
 * Gives failed timers a fresh start, due now with zero attempts and stalls. ARGV: id ('' for up to
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
    local due, max, backoff, payload = string.match(record, '^%d+:(%d+):%d+:(%d+):([^:]*):(.*)$')
    local policy = max .. ':' .. string.gsub(backoff, 's%d+$', '') .. ':' .. payload
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
