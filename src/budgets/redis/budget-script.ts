/**
 * The budget ledger's Redis side as one Lua script, so a reservation's check
 * of every cap and its additions to all of them happen atomically, however
 * many processes reserve at once. Each cap is a string key holding its spend
 * in integer micro-dollars (INCRBY adds exactly), expiring a day after its
 * period ends (PEXPIREAT; the caller passes the time, so a key's life does not
 * depend on Redis's clock agreeing with anyone's).
 *
 * Amounts reach INCRBY as the caller's decimal strings, never as Lua numbers
 * (Lua would print 1e+15); comparisons use Lua numbers, exact up to 2^53.
 *
 * 'reserve'  KEYS: one per cap.  ARGV: 'reserve', amount, then per cap: limit, expire-at (ms).
 *            Returns { 1, 0, spent after… } or { 0, index of the first refusing cap (from 1), spent now… }.
 * 'add'      KEYS: one per cap.  ARGV: 'add', then per cap: delta, expire-at (ms) or 0.
 *            With 0 the delta goes only to a key that exists (a settlement of an expired period is
 *            dropped); else a missing key starts at 0 (spend made while Redis was away). The spend never
 *            goes below 0. Returns each key's spend after, or -1 where nothing was changed.
 */
export const budgetScript = `
local function spent_of(key)
  return tonumber(redis.call('GET', key) or '0')
end

if ARGV[1] == 'reserve' then
  local amount = tonumber(ARGV[2])
  local spent = {}
  for i = 1, #KEYS do spent[i] = spent_of(KEYS[i]) end
  for i = 1, #KEYS do
    if spent[i] + amount > tonumber(ARGV[1 + 2 * i]) then
      local reply = { 0, i }
      for j = 1, #KEYS do reply[2 + j] = spent[j] end
      return reply
    end
  end
  local reply = { 1, 0 }
  for i = 1, #KEYS do
    reply[2 + i] = redis.call('INCRBY', KEYS[i], ARGV[2])
    redis.call('PEXPIREAT', KEYS[i], ARGV[2 + 2 * i])
  end
  return reply
end

if ARGV[1] == 'add' then
  local reply = {}
  for i = 1, #KEYS do
    local expire_at = ARGV[1 + 2 * i]
    if expire_at == '0' and redis.call('EXISTS', KEYS[i]) == 0 then
      reply[i] = -1
    else
      local after = redis.call('INCRBY', KEYS[i], ARGV[2 * i])
      if after < 0 then
        redis.call('INCRBY', KEYS[i], string.format('%.0f', -after))
        after = 0
      end
      if expire_at ~= '0' then redis.call('PEXPIREAT', KEYS[i], expire_at) end
      reply[i] = after
    end
  end
  return reply
end

return redis.error_reply('unknown budget operation ' .. tostring(ARGV[1]))
`;
