-- lane_claim.lua — T3.2 lane claim(q, lease_ms): one rotation, one job,
-- PROTOCOL.md §6.3, steps 2-6.
--
-- KEYS[1] = B.ring         emq:{q}:ring
-- KEYS[2] = B.active       emq:{q}:active
-- ARGV[1] = B(q)           emq:{q}:   (lane(g), J(id), gactive, glimit are
--                                      derived from it)
-- ARGV[2] = lease_ms (decimal, > 0)
-- ARGV[3] = optional clock override (decimal Unix ms)
--
-- Step 1 (the queue-wide pause gate) is the caller's: read field `paused`
-- of B.meta first and answer {} without running the script when present.
--
-- Replies: {id, payload or nil, attempts, g} · {} (empty ring, or the
-- rotated lane was empty: g then leaves the ring).
-- Clock: NOW.
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
local popped = redis.call('ZPOPMIN', lane)
if #popped == 0 then
  redis.call('LREM', KEYS[1], 0, g)
  return {}
end
local id = popped[1]
local jk = base .. 'job:' .. id
local att = redis.call('HINCRBY', jk, 'attempts', 1)
redis.call('HSET', jk, 'state', 'active')
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), id)
local act = redis.call('HINCRBY', base .. 'gactive', g, 1)
-- DERING(g, act)
local lim = redis.call('HGET', base .. 'glimit', g)
if lim and act >= tonumber(lim) then
  redis.call('LREM', KEYS[1], 0, g)
elseif redis.call('ZCARD', lane) == 0 then
  redis.call('LREM', KEYS[1], 0, g)
end
return {id, redis.call('HGET', jk, 'payload'), att, g}
