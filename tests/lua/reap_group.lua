-- reap_group.lua — T3.11 reap_group(q, g, limit), PROTOCOL.md §6.3.
--
-- KEYS[1] = B.active       emq:{q}:active
-- KEYS[2] = B(q)           emq:{q}:   (J(id) and the lane family derived)
-- ARGV[1] = g              ARGV[2] = limit (decimal, > 0)
-- ARGV[3] = optional clock override (decimal Unix ms)
--
-- Reply: the number of g's leases recovered. The scan takes up to limit
-- expired members of active in zset order (other groups' and ungrouped
-- leases count against the limit and are left untouched); each of g's gives
-- back its in-flight slot, returns to lane(g) and, unless g is paused,
-- OFFER(g, act).
-- Clock: NOW.
local base, g = KEYS[2], ARGV[1]
local now
if #ARGV >= 3 then
  now = tonumber(ARGV[3])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local exp = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now,
                       'LIMIT', 0, tonumber(ARGV[2]))
local n = 0
for _, id in ipairs(exp) do
  local jk = base .. 'job:' .. id
  if redis.call('HGET', jk, 'group') == g then
    redis.call('ZREM', KEYS[1], id)
    local act = redis.call('HINCRBY', base .. 'gactive', g, -1)
    if act <= 0 then
      redis.call('HDEL', base .. 'gactive', g)
    end
    redis.call('ZADD', base .. 'g:' .. g .. ':pending', 0, id)
    if redis.call('SISMEMBER', base .. 'paused', g) == 0 then
      local lim = redis.call('HGET', base .. 'glimit', g)
      if (not lim or act < tonumber(lim))
          and not redis.call('LPOS', base .. 'ring', g) then
        redis.call('RPUSH', base .. 'ring', g)
        redis.call('LPUSH', base .. 'wake', '1')
        redis.call('LTRIM', base .. 'wake', 0, 63)
      end
    end
    redis.call('HSET', jk, 'state', 'pending')
    n = n + 1
  end
end
return n
