-- claim_batch.lua — T2.14 claim_batch(q, size, lease_ms), PROTOCOL.md §6.2,
-- steps 2-5.
--
-- KEYS[1] = B.pending      emq:{q}:pending
-- KEYS[2] = B.active       emq:{q}:active
-- ARGV[1] = B(q) .. 'job:' emq:{q}:job:   (J(popped) = ARGV[1] .. id)
-- ARGV[2] = lease_ms (decimal, > 0)
-- ARGV[3] = size (decimal, > 0)
-- ARGV[4] = optional clock override (decimal Unix ms)
--
-- Step 1 (the queue-wide pause gate) is the caller's, as for claim.lua.
--
-- Replies: an array of {id, payload or nil, attempts} in pop (mint) order
--          · {} when pending is empty.
-- Clock: NOW, once: every member gets the same deadline.
local now
if #ARGV >= 4 then
  now = tonumber(ARGV[4])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local depth = redis.call('ZCARD', KEYS[1])
if depth == 0 then
  return {}
end
local k = math.min(tonumber(ARGV[3]), depth)
local deadline = now + tonumber(ARGV[2])
local out = {}
for _ = 1, k do
  local popped = redis.call('ZPOPMIN', KEYS[1])
  if #popped == 0 then break end
  local id = popped[1]
  local jk = ARGV[1] .. id
  local att = redis.call('HINCRBY', jk, 'attempts', 1)
  redis.call('HSET', jk, 'state', 'active')
  redis.call('ZADD', KEYS[2], deadline, id)
  out[#out + 1] = {id, redis.call('HGET', jk, 'payload'), att}
end
return out
