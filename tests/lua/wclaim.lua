-- wclaim.lua — T3.3 weighted claim wclaim(q, lease_ms), PROTOCOL.md §6.3,
-- steps 2-9.
--
-- KEYS[1] = B.ring         emq:{q}:ring
-- KEYS[2] = B.active       emq:{q}:active
-- ARGV[1] = B(q)           emq:{q}:   (lane(g), J(id), gactive, glimit,
--                                      gweight are derived from it)
-- ARGV[2] = lease_ms (decimal, > 0)
-- ARGV[3] = optional clock override (decimal Unix ms)
--
-- Step 1 (the queue-wide pause gate) is the caller's, as for lane_claim.lua.
--
-- Replies: an array of {id, payload or nil, attempts, g}, k of them, where
-- k = min(weight (absent or < 1 reads 1), lane depth, limit - GACT(g) when
-- a limit is set) · {} (empty ring; an empty lane or k <= 0 also removes g
-- from the ring).
-- Clock: NOW, once: one deadline for the batch.
local base = ARGV[1]
local now
if #ARGV >= 3 then
  now = tonumber(ARGV[3])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local g = redis.call('LMOVE', KEYS[1], KEYS[1], 'LEFT', 'RIGHT')
if not g then
  return {}
end
local lane = base .. 'g:' .. g .. ':pending'
local depth = redis.call('ZCARD', lane)
if depth == 0 then
  redis.call('LREM', KEYS[1], 0, g)
  return {}
end
local w = tonumber(redis.call('HGET', base .. 'gweight', g) or '1') or 1
if w < 1 then w = 1 end
local k = math.min(w, depth)
local lim = redis.call('HGET', base .. 'glimit', g)
if lim then
  local act = tonumber(redis.call('HGET', base .. 'gactive', g) or '0')
  k = math.min(k, tonumber(lim) - act)
end
if k <= 0 then
  redis.call('LREM', KEYS[1], 0, g)
  return {}
end
local deadline = now + tonumber(ARGV[2])
local out = {}
for _ = 1, k do
  local id = redis.call('ZPOPMIN', lane)[1]
  local jk = base .. 'job:' .. id
  local att = redis.call('HINCRBY', jk, 'attempts', 1)
  redis.call('HSET', jk, 'state', 'active')
  redis.call('ZADD', KEYS[2], deadline, id)
  out[#out + 1] = {id, redis.call('HGET', jk, 'payload'), att, g}
end
local act = redis.call('HINCRBY', base .. 'gactive', g, k)
-- DERING(g, act)
if lim and act >= tonumber(lim) then
  redis.call('LREM', KEYS[1], 0, g)
elseif redis.call('ZCARD', lane) == 0 then
  redis.call('LREM', KEYS[1], 0, g)
end
return out
