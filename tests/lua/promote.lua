-- promote.lua — T1.7 promote(q, batch), PROTOCOL.md §6.1, with the group
-- path (a grouped job returns to its lane and the lane is offered).
--
-- KEYS[1] = B.schedule     emq:{q}:schedule
-- KEYS[2] = B.pending      emq:{q}:pending
-- ARGV[1] = B(q)           emq:{q}:   (derives J(id) and the lane family)
-- ARGV[2] = batch (decimal, > 0)
-- ARGV[3] = optional clock override (decimal Unix ms)
--
-- Reply: the number of members moved.
-- Clock: NOW. Ignores the queue-wide pause.
local base = ARGV[1]
local now
if #ARGV >= 3 then
  now = tonumber(ARGV[3])
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

local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now,
                       'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(due) do
  redis.call('ZREM', KEYS[1], id)
  local jk = base .. 'job:' .. id
  local g = redis.call('HGET', jk, 'group')
  if g then
    redis.call('ZADD', base .. 'g:' .. g .. ':pending', 0, id)
    if redis.call('SISMEMBER', base .. 'paused', g) == 0 then
      local act = tonumber(redis.call('HGET', base .. 'gactive', g) or '0')
      offer(g, act)
    end
  else
    redis.call('ZADD', KEYS[2], 0, id)
  end
  redis.call('HSET', jk, 'state', 'pending')
end
return #due
