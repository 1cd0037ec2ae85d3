/**
 * The scripts a worker runs: claim due timers under a lease, and ack, extend or fail them, fenced by the claim's token.
 */
import { LAYOUT, LAYOUT_ALONE } from './buckets.js';
import { LATE, NOW, once, WAKE } from './lua-prelude.js';

/**
 * Claims up to ARGV[1] timers for ARGV[2] ms: first those whose lease expired, then those due.
 * Each claimed timer gets a new token and loses its debounce window (it fired). A due one starts
 * its next attempt. One whose lease expired stalled (its worker died or lost Redis, or its handler
 * outlived the lease): as BullMQ's stalled jobs, it is delivered again on the same attempt, its
 * stall count (`s<n>` after the backoff in the record) one higher, and it goes to the failed set
 * once that count exceeds ARGV[6] (maxStalledCount; '' for no limit). Only a handler that
 * failed uses up an attempt (FAIL). Returns
 * {now, nextDue, nextLease, leaseUntil, then per timer: id, token, dueAt, attempts, maxAttempts,
 * backoff (followed by `s<stalls>` once it stalled), payload}, '' for an empty ZSET.
 *
 * ARGV[3] and ARGV[4] name the claim: the worker's id and the claim's sequence number on this
 * shard (one claim of a worker per shard at a time, so they only grow). The claims hash keeps each
 * worker's last claim: `<seq>|` then `<id length>:<id><token> ` per timer taken. ARGV[5] is the
 * seq of the worker's last claim whose reply it received ('0' for none). A kept claim newer than
 * that was applied but its reply never came: the timers it took that are still held under its
 * tokens are handed out again in this reply, same token and attempt, lease renewed; every claim
 * names the same answered one until a reply arrives, so each kept claim carries forward what the
 * lost ones took. A claim whose seq is below the kept one was overtaken by a newer claim of its
 * worker (abandoned, it arrived late): it takes nothing. One whose seq is the kept one is that
 * claim arriving again (ioredis sends again what got no reply before a reconnect): it hands out
 * what it took, and takes nothing new.
 */
export const CLAIM = `${NOW}
${LAYOUT}
local limit = tonumber(ARGV[1])
local leaseUntil = F(now + math.floor(tonumber(ARGV[2])))
local out = {F(now), '', '', leaseUntil}
local worker, seq = ARGV[3], tonumber(ARGV[4])
local last = redis.call('HGET', KEYS[7], worker)
local lastSeq, lastTaken
if last then
  lastSeq, lastTaken = string.match(last, '^(%d+)|(.*)$')
  lastSeq = tonumber(lastSeq)
end
if lastSeq and lastSeq > seq then return {unpack(out)} end
local taken = {}
local function hand(id, b, token, due, attempts, max, policy)
  local backoff = string.match(policy, '^[^ws]*')
  local stalls = string.match(policy, 's(%d+)$')
  if stalls then backoff = backoff .. 's' .. stalls end
  local n = #out
  out[n + 1] = id
  out[n + 2] = token
  out[n + 3] = F(from36(due))
  out[n + 4] = attempts
  out[n + 5] = max
  out[n + 6] = backoff
  out[n + 7] = redis.call('HGET', pk(b), id) or ''
  taken[#taken + 1] = #id .. ':' .. id .. token .. ' '
end
local function parse(record)
  return string.match(record, '^(%d+):(%w+):(%d+):(%d+):(.*)$')
end
if lastSeq and lastSeq > tonumber(ARGV[5]) then
  if lastSeq == seq then limit = 0 end
  local pos = 1
  while pos <= #lastTaken do
    local colon = string.find(lastTaken, ':', pos, true)
    local len = tonumber(string.sub(lastTaken, pos, colon - 1))
    local id = string.sub(lastTaken, colon + 1, colon + len)
    local space = string.find(lastTaken, ' ', colon + len + 1, true)
    local token = string.sub(lastTaken, colon + len + 1, space - 1)
    pos = space + 1
    local record, b = load(id)
    if record and redis.call('ZSCORE', KEYS[2], id) then
      local held, due, attempts, max, backoff = parse(record)
      if held == token then
        redis.call('ZADD', KEYS[2], leaseUntil, id)
        hand(id, b, token, due, attempts, max, backoff)
        limit = limit - 1
      end
    end
  end
end
local function take(id, record, b, expired)
  local _, due, attempts, max, backoff = parse(record)
  local stalls = tonumber(string.match(backoff, 's(%d+)$') or '0')
  backoff = string.match(backoff, '^[^ws]*')
  if expired then
    stalls = stalls + 1
    if ARGV[6] ~= '' and stalls > tonumber(ARGV[6]) then
      redis.call('ZADD', KEYS[5], F(now), id)
      redis.call('HSET', KEYS[6], id, 'stalled more than maxStalledCount (' .. ARGV[6] .. ') times: its lease expired on attempt ' ..
        attempts .. ' (the worker died or lost Redis, or the handler outlived its lease)')
      return
    end
  else
    attempts = F(tonumber(attempts) + 1)
  end
  local token = F(redis.call('INCR', KEYS[4]))
  local kept = backoff
  if stalls > 0 then kept = kept .. 's' .. stalls end
  redis.call('HSET', rk(b), id, token .. ':' .. due .. ':' .. attempts .. ':' .. max .. ':' .. kept)
  redis.call('ZADD', KEYS[2], leaseUntil, id)
  hand(id, b, token, due, attempts, max, kept)
end
-- Timers of the previous layout move over earliest first, so none is missed when due.
if OLD then
  local old = redis.call('ZRANGE', KEYS[1], 0, limit + 99)
  for i = 1, #old do load(old[i]) end
end
if limit > 0 then
  local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', F(now), 'LIMIT', 0, limit)
  for i = 1, #expired do
    local record, b = load(expired[i])
    redis.call('ZREM', KEYS[2], expired[i])
    if record then take(expired[i], record, b, true) end
  end
  limit = limit - #expired
end
-- A merge over the buckets in due order: from the bucket whose earliest timer is due first, take
-- what falls due before the next bucket's earliest, so a claim takes the shard's earliest timers,
-- as one sorted set would list them, whatever bucket each id hashed to.
while limit > 0 do
  local heads = redis.call('ZRANGE', KEYS[8], 0, 1, 'WITHSCORES')
  if not heads[2] or tonumber(heads[2]) > now then break end
  local bucket, bound = heads[1], now
  if heads[4] and tonumber(heads[4]) < bound then bound = tonumber(heads[4]) end
  local ids = redis.call('ZRANGEBYSCORE', dk(bucket), '-inf', F(bound), 'LIMIT', 0, limit)
  for i = 1, #ids do
    local record = redis.call('HGET', rk(bucket), ids[i])
    redis.call('ZREM', dk(bucket), ids[i])
    if record then take(ids[i], record, bucket, false) end
  end
  reindex(bucket)
  if #ids == 0 then break end
  limit = limit - #ids
end
redis.call('HSET', KEYS[7], worker, ARGV[4] .. '|' .. table.concat(taken))
local nextDue = redis.call('ZRANGE', KEYS[8], 0, 0, 'WITHSCORES')
if nextDue[2] then out[2] = nextDue[2] end
local oldDue = {}
if OLD then oldDue = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES') end
if oldDue[2] and (out[2] == '' or tonumber(oldDue[2]) < tonumber(out[2])) then out[2] = oldDue[2] end
local nextLease = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if nextLease[2] then out[3] = nextLease[2] end
return {unpack(out)}`;

/** Forgets a stopped worker's last claim on the shard. ARGV: worker id. */
export const FORGET_WORKER = `return redis.call('HDEL', KEYS[7], ARGV[1])`;

/**
 * Acks handled timers: ARGV holds pairs id, token, then the call's arguments, deadline and time
 * (see once). A timer is deleted only while it is still claimed under that token (the ZREM from
 * the lease set is the claimed check). A last error can exist only after a failed attempt, so a
 * first attempt skips that HDEL. Returns the ids whose ack was refused: the timer is there under
 * another token (claimed again or rescheduled) or gone (acked by another worker after this one
 * lost the lease, or cancelled). A second try of an applied ack answers as the first did (once).
 */
export const ACK = once(`${LAYOUT_ALONE}
local refused = {}
for i = 1, #ARGV - 5, 2 do
  local id = ARGV[i]
  local record, b = load(id)
  local token, attempts
  if record then token, attempts = string.match(record, '^(%d+):%w+:(%d+):') end
  if token == ARGV[i + 1] and redis.call('ZREM', KEYS[2], id) == 1 then
    redis.call('HDEL', pk(b), id)
    redis.call('HDEL', rk(b), id)
    redis.call('HINCRBY', KEYS[9], 'c', -1)
    if tonumber(attempts) > 1 then redis.call('HDEL', KEYS[6], id) end
  else
    refused[#refused + 1] = id
  end
end
return {unpack(refused)}`);

/**
 * Extends a lease. ARGV: id, token, leaseMs, then the call's arguments, deadline (see LATE) and
 * time (see once). Returns the new lease expiry, or '' when the timer is no longer claimed under
 * that token. A second try of an extend that landed answers with the expiry the first set, and
 * a try that arrives after its client gave up is refused: neither moves the lease again.
 */
export const EXTEND = once(`${NOW}
${LATE}
${LAYOUT}
if not held(ARGV[1], ARGV[2]) then return '' end
local untilMs = F(now + math.floor(tonumber(ARGV[3])))
redis.call('ZADD', KEYS[2], untilMs, ARGV[1])
return untilMs`);

/**
 * Reports a failed attempt. ARGV: id, token, retry delay ms, reason, channel, shard, then the
 * call's arguments, deadline and time (see once). With
 * attempts left the timer is due again after the delay; on its last attempt it moves to the
 * failed set. Returns the retry's due time, 'failed', or '' when refused (the lease was lost).
 */
export const FAIL = once(`${NOW}
${WAKE}
${LAYOUT}
local id = ARGV[1]
local record, b = held(id, ARGV[2])
if not record then return '' end
local attempts, max = string.match(record, '^%d+:%w+:(%d+):(%d+):')
redis.call('ZREM', KEYS[2], id)
redis.call('HSET', KEYS[6], id, ARGV[4])
if tonumber(max) > 0 and tonumber(attempts) >= tonumber(max) then
  redis.call('ZADD', KEYS[5], F(now), id)
  return 'failed'
end
local at = now + math.floor(tonumber(ARGV[3]))
local head = redis.call('ZRANGE', KEYS[8], 0, 0, 'WITHSCORES')
redis.call('ZADD', dk(b), F(at), id)
reindex(b)
wake(head, at, ARGV[5], ARGV[6])
return F(at)`);
