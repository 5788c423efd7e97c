-- reap.lua — T1.8 reap(q), PROTOCOL.md §6.1, with the group path (a lapsed
-- grouped lease gives back its in-flight slot and returns to its lane).
--
-- KEYS[1] = B.active       emq:{q}:active
-- KEYS[2] = B.pending      emq:{q}:pending
-- ARGV[1] = B(q)           emq:{q}:   (derives J(id) and the lane family)
-- ARGV[2] = optional clock override (decimal Unix ms)
--
-- Reply: the number of leases reaped (at most 100 per call).
-- Clock: NOW. Attempts are untouched.
local base = ARGV[1]
local now
if #ARGV >= 2 then
  now = tonumber(ARGV[2])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function wake()
  redis.call('LPUSH', base .. 'wake', '1')
  redis.call('LTRIM', base .. 'wake', 0, 63)
end
local function offer(g, act)
  local lim = redis.call('HGET', base .. 'glimit', g)
  if (not lim or act < tonumber(lim))
      and not redis.call('LPOS', base .. 'ring', g) then
    redis.call('RPUSH', base .. 'ring', g)
    wake()
  end
end

local exp = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 100)
for _, id in ipairs(exp) do
  redis.call('ZREM', KEYS[1], id)
  local jk = base .. 'job:' .. id
  local g = redis.call('HGET', jk, 'group')
  if g then
    local act = redis.call('HINCRBY', base .. 'gactive', g, -1)
    if act <= 0 then
      redis.call('HDEL', base .. 'gactive', g)
    end
    redis.call('ZADD', base .. 'g:' .. g .. ':pending', 0, id)
    if redis.call('SISMEMBER', base .. 'paused', g) == 0 then
      offer(g, act)
    end
  else
    redis.call('ZADD', KEYS[2], 0, id)
  end
  redis.call('HSET', jk, 'state', 'pending')
end
return #exp
