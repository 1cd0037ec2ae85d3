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
