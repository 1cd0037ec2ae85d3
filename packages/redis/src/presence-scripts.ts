/**
 * The scripts RedisPresence runs: register a node, join and leave a connection, end a grace period, reap a dead node's connections, renew a node's lease.
 *
 * Presence lives beside the durable timers, in the same shard and so the same Cluster slot: a
 * member's keys and its grace timer `g:<member>` sit in the shard of that timer id, so one script
 * moves the member's count and writes or drops its grace timer atomically. A shard holds, next to
 * its timers (keys.ts), keys named from the shard's base the way bucket keys are (buckets.ts):
 *
 * - `present`        HASH member -> how many connections it has in the cluster; a member with 0
 *                    is in its grace period and has a grace timer; a member that left is absent
 * - `nodes`          HASH node id -> when it registered: the nodes whose connections this shard
 *                    accepts. Reaping a node deletes its field first, so a node that lost its
 *                    lease cannot add connections here again under that id
 * - `conns:<node>`   SET of that node's connections to the shard's members, each
 *                    `<member length>:<member><connection id>`
 *
 * The invariant every script keeps: `present[m] == 0` exactly while the grace timer `g:<m>`
 * exists (scheduled or claimed). The grace timer's handler ends the grace only while it still
 * holds the timer under its claim's token (`held`), so a handler overtaken by a re-join and a new
 * leave changes nothing, and the member leaves once, after the newer grace.
 */
import { LAYOUT } from './buckets.js';
import { LATE, NOW, once, WAKE } from './lua-prelude.js';
import { PUT } from './timer-scripts.js';

/** The presence keys and helpers; needs LAYOUT's BASE and the grace timers' policy. */
const KEYS_OF_PRESENCE = `local PRESENT = BASE .. 'present'
local NODES = BASE .. 'nodes'
local function connsOf(node) return BASE .. 'conns:' .. node end
local function pairOf(member, conn) return #member .. ':' .. member .. conn end
local function graceOf(member) return 'g:' .. member end`;

/** What every presence script starts with. */
const PRESENCE = `${NOW}
${LATE}
${WAKE}
${LAYOUT}
${PUT}
${KEYS_OF_PRESENCE}`;

/**
 * Registers a node on the shard. ARGV: node, then the call's arguments, deadline and time (see
 * once). Returns 1.
 */
export const HELLO = once(`${PRESENCE}
redis.call('HSET', NODES, ARGV[1], F(now))
return 1`);

/**
 * Adds a connection. ARGV: node, member, connection id, then the call's arguments, deadline and
 * time. Returns `'gone'` (the node is not registered here: it lost its lease), `'known'` (already
 * joined), `'joined'` (the member's first connection: it joined), `'back'` (the member was in its
 * grace period: its grace timer is dropped) or `'more'`.
 */
export const JOIN = once(`${PRESENCE}
local node, member = ARGV[1], ARGV[2]
if redis.call('HEXISTS', NODES, node) == 0 then return 'gone' end
if redis.call('SADD', connsOf(node), pairOf(member, ARGV[3])) == 0 then return 'known' end
local count = redis.call('HGET', PRESENT, member)
if not count then
  redis.call('HSET', PRESENT, member, 1)
  return 'joined'
end
redis.call('HINCRBY', PRESENT, member, 1)
if tonumber(count) > 0 then return 'more' end
local record, b = load(graceOf(member))
if record then drop(graceOf(member), b) end
return 'back'`);

/**
 * Removes a connection. ARGV: node, member, connection id, graceMs, policy, channel, shard, then
 * the call's arguments, deadline and time. Returns `'unknown'` (not joined under this node),
 * `'more'` (the member has other connections) or the grace timer's due time (the member's last
 * connection went: its grace began).
 */
export const LEAVE = once(`${PRESENCE}
local node, member = ARGV[1], ARGV[2]
if redis.call('SREM', connsOf(node), pairOf(member, ARGV[3])) == 0 then return 'unknown' end
if redis.call('HINCRBY', PRESENT, member, -1) > 0 then return 'more' end
local due = now + math.floor(tonumber(ARGV[4]))
local record, b = load(graceOf(member))
put(graceOf(member), record, b, due, '', ARGV[5], ARGV[6], ARGV[7])
return F(due)`);

/**
 * Ends a member's grace period: the member leaves when its grace timer is still claimed under
 * this token and it has no connection. ARGV: member, token, then the call's arguments, deadline
 * and time. Returns the server time when it left, or '' when it did not.
 */
export const LEFT = once(`${PRESENCE}
local member = ARGV[1]
if not held(graceOf(member), ARGV[2]) then return '' end
if tonumber(redis.call('HGET', PRESENT, member) or '1') ~= 0 then return '' end
redis.call('HDEL', PRESENT, member)
return F(now)`);

/**
 * Reaps a node: unregisters it from the shard, then removes up to `limit` of its connections,
 * starting the grace period of each member left without one. ARGV: node, limit, graceMs, policy,
 * channel, shard, then the call's arguments, deadline and time. Returns how many of its
 * connections are left on the shard (call again until 0) and how many were removed, as
 * `'<left>:<removed>'`.
 */
export const REAP = once(`${PRESENCE}
local node = ARGV[1]
redis.call('HDEL', NODES, node)
local taken = redis.call('SRANDMEMBER', connsOf(node), tonumber(ARGV[2]))
-- ioredis-mock's Lua does not get an array back from SRANDMEMBER with a count: take them all there.
if type(taken) ~= 'table' then
  local all = redis.call('SMEMBERS', connsOf(node))
  taken = {}
  for i = 1, math.min(#all, tonumber(ARGV[2])) do taken[i] = all[i] end
end
local due = now + math.floor(tonumber(ARGV[3]))
for i = 1, #taken do
  redis.call('SREM', connsOf(node), taken[i])
  local colon = string.find(taken[i], ':', 1, true)
  local member = string.sub(taken[i], colon + 1, colon + tonumber(string.sub(taken[i], 1, colon - 1)))
  if redis.call('HINCRBY', PRESENT, member, -1) <= 0 then
    redis.call('HSET', PRESENT, member, '0')
    local record, b = load(graceOf(member))
    put(graceOf(member), record, b, due, '', ARGV[4], ARGV[5], ARGV[6])
  end
end
return F(redis.call('SCARD', connsOf(node))) .. ':' .. F(#taken)`);

/**
 * Renews a node's lease timer to now + ttl, unless the lease ran out: the timer is gone, claimed
 * (a server is reaping the node) or failed. ARGV: lease timer id, ttlMs, policy, channel, shard,
 * then the call's arguments, deadline and time. Returns the new due time, or '' when the lease
 * ran out (the node must register again under a new id).
 */
export const RENEW = once(`${PRESENCE}
local id = ARGV[1]
local record, b = load(id)
if not record or redis.call('ZSCORE', KEYS[2], id) or redis.call('ZSCORE', KEYS[5], id) then return '' end
local due = now + math.floor(tonumber(ARGV[2]))
put(id, record, b, due, '', ARGV[3], ARGV[4], ARGV[5])
return F(due)`);
