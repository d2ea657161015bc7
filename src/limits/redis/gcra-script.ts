/**
 * The GCRA of `../gcra.ts` as one Lua script, so a read, a decision and a
 * write happen atomically in Redis however many processes ask at once.
 *
 * Time comes from Redis (`TIME`), never from the caller: processes whose
 * clocks disagree still share one budget exactly. Each budget is a string key
 * holding its theoretical arrival time in milliseconds, with a TTL equal to
 * its backlog, so a key whose budget is full again simply vanishes.
 *
 * KEYS[1]  the key's request budget    KEYS[2]  its token budget
 * ARGV[1]  'admit' or 'spend'
 * ARGV[2]  requests per minute         ARGV[3]  tokens per minute (0: no token limit)
 * ARGV[4]  tokens to spend ('spend' only)
 *
 * 'admit' returns { taken (0|1), request backlog after, token backlog } with
 * the backlogs as exact decimal strings (`%.17g`: Redis turns Lua numbers into
 * integers); `admissionOf` makes the headers from them, as memory does.
 * 'spend' adds tokens × 60000 / tokens-per-minute to the token backlog,
 * uncapped, and returns the new backlog.
 */
export const gcraScript = `
if redis.replicate_commands then redis.replicate_commands() end
local window = 60000
local epsilon = 1e-9
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + tonumber(clock[2]) / 1000

local function backlog(key)
  local arrival = tonumber(redis.call('GET', key))
  if arrival == nil or arrival < now then return 0 end
  return arrival - now
end

local function store(key, value)
  redis.call('SET', key, string.format('%.17g', now + value), 'PX', math.max(1, math.ceil(value)))
end

local function exact(value)
  return string.format('%.17g', value)
end

local tokens_per_minute = tonumber(ARGV[3])

if ARGV[1] == 'spend' then
  local after = backlog(KEYS[2]) + tonumber(ARGV[4]) * window / tokens_per_minute
  if after > 0 then store(KEYS[2], after) end
  return exact(after)
end

local requests = backlog(KEYS[1])
local tokens = 0
local room = true
if tokens_per_minute > 0 then
  tokens = backlog(KEYS[2])
  room = tokens + window / tokens_per_minute <= window + epsilon
end
local taken = 0
if room then
  local next = requests + window / tonumber(ARGV[2])
  if next <= window + epsilon then
    requests = next
    taken = 1
    store(KEYS[1], requests)
  end
end
return { taken, exact(requests), exact(tokens) }
`;
