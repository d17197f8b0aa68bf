/**
 * `takeUpTo` (token-bucket.ts) as a Redis Lua script, for buckets shared by every replica of
 * the fleet (ADR 0102): the same rule run where the bucket lives, atomically. It must answer
 * exactly what `takeUpTo` answers for the same bucket, inputs and time; the gateway's
 * integration test replays operation sequences through both and compares.
 *
 * KEYS[1] = bucket key. ARGV = needed, wanted, returned, ratePerSecond, burst, nowMs.
 * Answers {1, granted} or {0, retryAfterMs} (-1: never, a rate of 0). The key expires once the
 * bucket would be full again (a missing bucket starts full: the same answer).
 */
export const TAKE_UP_TO_LUA = `
local needed = tonumber(ARGV[1])
local wanted = tonumber(ARGV[2])
local returned = tonumber(ARGV[3])
local rate = tonumber(ARGV[4])
local cap = math.max(tonumber(ARGV[5]), 1)
local now = tonumber(ARGV[6])
local state = redis.call('HMGET', KEYS[1], 't', 'u')
local tokens = tonumber(state[1])
local updated = tonumber(state[2])
if tokens == nil or updated == nil then
  tokens = cap
  updated = now
end
local elapsed = now - updated
if elapsed < 0 then elapsed = 0 end
tokens = math.min(cap, tokens + elapsed * rate / 1000)
if now > updated then updated = now end
if returned ~= 0 then tokens = math.min(cap, tokens + returned) end
local answer
if tokens < needed then
  local wait = -1
  if rate > 0 then wait = math.max(1, math.ceil((needed - tokens) * 1000 / rate)) end
  answer = {0, wait}
else
  local granted = math.max(needed, math.min(wanted, math.floor(tokens)))
  tokens = tokens - granted
  answer = {1, granted}
end
redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 'u', string.format('%.17g', updated))
local fullIn = 1000
if rate > 0 then fullIn = math.ceil((cap - tokens) * 1000 / rate) + 1000 else fullIn = 3600000 end
redis.call('PEXPIRE', KEYS[1], fullIn)
return answer
`;
