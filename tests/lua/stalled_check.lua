-- stalled_check.lua — T5.11 stalled sweep check(q, max_stalled, limit),
-- PROTOCOL.md §6.5.
--
-- KEYS[1] = B.active       KEYS[2] = B.pending      KEYS[3] = B.dead
-- ARGV[1] = B(q)           emq:{q}:   (J(id), the lane family and
--                                      B.metrics:failed are derived)
-- ARGV[2] = max_stalled (decimal)      ARGV[3] = limit (decimal, > 0)
-- ARGV[4] = optional clock override (decimal Unix ms)
--
-- Reply: {recovered ids, dead ids}, each in lease order.
-- For each of up to limit expired leases: it leaves active, its group's
-- in-flight count is decremented (field deleted at <= 0) and its `stalled`
-- count incremented; at or past max_stalled it is dead-lettered (state
-- dead, last_error 'stalled', dead, metrics:failed count, no offer);
-- otherwise it returns to its lane (OFFER(g, GACT(g)) unless g is paused)
-- or to the flat pending, state pending. attempts untouched; flow links
-- not consulted.
-- Clock: NOW.
local base = ARGV[1]
local now
if #ARGV >= 4 then
  now = tonumber(ARGV[4])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local maxst = tonumber(ARGV[2])
local exp = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now,
                       'LIMIT', 0, tonumber(ARGV[3]))
local recovered, dead = {}, {}
for _, id in ipairs(exp) do
  local jk = base .. 'job:' .. id
  redis.call('ZREM', KEYS[1], id)
  local g = redis.call('HGET', jk, 'group')
  local st = redis.call('HINCRBY', jk, 'stalled', 1)
  if g then
    if redis.call('HINCRBY', base .. 'gactive', g, -1) <= 0 then
      redis.call('HDEL', base .. 'gactive', g)
    end
  end
  if st >= maxst then
    redis.call('HSET', jk, 'state', 'dead', 'last_error', 'stalled')
    redis.call('ZADD', KEYS[3], 0, id)
    redis.call('HINCRBY', base .. 'metrics:failed', 'count', 1)
    dead[#dead + 1] = id
  else
    if g then
      redis.call('ZADD', base .. 'g:' .. g .. ':pending', 0, id)
      if redis.call('SISMEMBER', base .. 'paused', g) == 0 then
        local act = tonumber(redis.call('HGET', base .. 'gactive', g) or '0')
        local lim = redis.call('HGET', base .. 'glimit', g)
        if (not lim or act < tonumber(lim))
            and not redis.call('LPOS', base .. 'ring', g) then
          redis.call('RPUSH', base .. 'ring', g)
          redis.call('LPUSH', base .. 'wake', '1')
          redis.call('LTRIM', base .. 'wake', 0, 63)
        end
      end
    else
      redis.call('ZADD', KEYS[2], 0, id)
    end
    redis.call('HSET', jk, 'state', 'pending')
    recovered[#recovered + 1] = id
  end
end
return {recovered, dead}
