/**
 * The Lua the scripts share: the time argument, number printing, the wake-up PUBLISH, unlinking and the fencing check.
 *
 * Each script touches the keys of ONE shard (one Cluster slot) and reads the time with
 * `redis.call('TIME')`, so due times and leases follow the Redis server's clock, never a client's
 * (scripts that read TIME are replicated by their effects, the default since Redis 5). They stay
 * within what both Redis's Lua 5.1 and ioredis-mock's fengari (Lua 5.3, 32-bit integers, no
 * cjson) run: `redis.call`, `string.match`, `string.format`, `tonumber`; numbers are printed with
 * `F`. KEYS are always the shard's `due, lease, timers, seq, failed, reasons, claims, index,
 * buckets` (keys.ts; buckets.ts has the layout and its Lua).
 *
 * Every script is safe to run twice (see failover.ts): schedule is keyed by id, and everything a
 * worker sends about a claim carries that claim's token.
 */

/**
 * Replies are built as `{unpack(out)}`: ioredis-mock's bridge converts only a table made by a
 * constructor, and Lua 5.1 unpacks at most ~8 000 values, which bounds a claim (4 + 7 x 1 000)
 * and one listFailed call (5 x 1 000).
 *
 * `now` in ms and `F` to print a number. Scripts that read the time take one more, last, ARGV:
 * '' to read TIME, or the caller's epoch ms (`timeSource: 'local'`). `%.0f` prints a whole float
 * the same way in Lua 5.1 and 5.3.
 */
export const NOW = `local function F(x) return string.format('%.0f', x) end
local now
if ARGV[#ARGV] == '' then
  local t = redis.call('TIME')
  now = math.floor(tonumber(t[1]) * 1000.0 + tonumber(t[2]) / 1000.0)
else
  now = math.floor(tonumber(ARGV[#ARGV]) + 0.0)
end`;

/**
 * Refuses a write try that arrived after its client gave up on it (failover.ts): the ARGV before
 * the time is the try's deadline on the server clock, '' for none. Raised as an error before any
 * write, so the try changes nothing; the client sees it only if it still waits, and retries.
 */
export const LATE = `if ARGV[#ARGV - 1] ~= '' and now >= tonumber(ARGV[#ARGV - 1]) then
  error('TICKWHEEL_LATE this try arrived after its client gave up on it')
end`;

/** Publishes `shard:due` when `due` is earlier than the shard's earliest (head read before the write). */
export const WAKE = `local function wake(head, due, channel, shard)
  if head[2] == nil or due < tonumber(head[2]) then redis.call('PUBLISH', channel, shard .. ':' .. F(due)) end
end`;

/**
 * Wraps a write script so that it runs at most once per call, however many times its tries reach
 * Redis (the budget loop's retries, ioredis sending again what got no reply before a reconnect).
 * KEYS[10] is the calling client's calls hash on the shard (keys.ts), and three ARGV come before
 * the deadline and the time: the call's id, the ids of the client's finished calls (space
 * separated; their entries are deleted), and how long the hash lives after this call (ms).
 *
 * The first try that lands runs the body and keeps its reply under the call's id; every later
 * try gets that reply back and writes nothing, so it can neither write the timer a second time
 * nor undo a newer call. An entry is deleted once its client saw the call finish (every try
 * that could still land is then refused by LATE), or with the hash, which expires when its
 * client made no call for longer than a call's budget.
 */
export function once(body: string): string {
  return `local function encode(r)
  if type(r) == 'number' then return 'n' .. string.format('%.0f', r) end
  if type(r) ~= 'table' then return 's' .. r end
  local parts = {}
  for i = 1, #r do parts[i] = #r[i] .. ':' .. r[i] end
  return 't' .. table.concat(parts)
end
local function decode(s)
  local kind, rest = string.sub(s, 1, 1), string.sub(s, 2)
  if kind == 'n' then return tonumber(rest) end
  if kind == 's' then return rest end
  local out, pos = {}, 1
  while pos <= #rest do
    local colon = string.find(rest, ':', pos, true)
    local len = tonumber(string.sub(rest, pos, colon - 1))
    out[#out + 1] = string.sub(rest, colon + 1, colon + len)
    pos = colon + len + 1
  end
  return {unpack(out)}
end
local call = ARGV[#ARGV - 4]
for done in string.gmatch(ARGV[#ARGV - 3], '%S+') do redis.call('HDEL', KEYS[10], done) end
local seen = redis.call('HGET', KEYS[10], call)
if seen then return decode(seen) end
local function body()
${body}
end
local reply = body()
redis.call('HSET', KEYS[10], call, encode(reply))
redis.call('PEXPIRE', KEYS[10], ARGV[#ARGV - 2])
return reply`;
}
