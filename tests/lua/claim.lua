-- claim.lua — T1.4 claim(q, lease_ms), PROTOCOL.md §6.1, steps 2-6.
--
-- KEYS[1] = B.pending      emq:{q}:pending
-- KEYS[2] = B.active       emq:{q}:active
-- ARGV[1] = B(q) .. 'job:' emq:{q}:job:   (the row key prefix; J(popped) is
--                                          derived as ARGV[1] .. id)
-- ARGV[2] = lease_ms (decimal, > 0)
-- ARGV[3] = optional clock override (decimal Unix ms)
--
-- Step 1 (the queue-wide pause gate) is the caller's: read field `paused` of
-- emq:{q}:meta first and answer empty without running the script when it is
-- present (the reference does this host-side).
--
-- Replies: {id, payload or nil, attempts (integer)} · {} when pending is empty.
-- Clock: NOW. The popped id is not re-validated.
local now
if #ARGV >= 3 then
  now = tonumber(ARGV[3])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local popped = redis.call('ZPOPMIN', KEYS[1])
if #popped == 0 then
  return {}
end
local id = popped[1]
local jk = ARGV[1] .. id
local att = redis.call('HINCRBY', jk, 'attempts', 1)
redis.call('HSET', jk, 'state', 'active')
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), id)
local payload = redis.call('HGET', jk, 'payload')
return {id, payload, att}
