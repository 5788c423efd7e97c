-- retry.lua — T1.6 retry(q, id, token, delay_ms, max_attempts, error),
-- PROTOCOL.md §6.1, with the group paths and the flow LINK arms.
--
-- The caller reads LINK(id) (fields parent, parent_queue, parent_policy of
-- J(id)) first and picks one of three shapes, told by the number of KEYS:
--   no link (4 KEYS):  KEYS = B.active, B.schedule, B.dead, J(id)
--                      ARGV = id, token, delay_ms, max_attempts, error, B(q)
--   same    (8 KEYS):  KEYS = B.active, B.schedule, B.dead, J(id),
--                             J(p).failed, J(p).unsuccessful,
--                             J(p).dependencies, J(p)
--                      ARGV = ..., B(q), 'sq:fp' or 'sq:id', p
--   cross   (5 KEYS):  KEYS = B.active, B.schedule, B.dead, J(id),
--                             B.flow:outbox
--                      ARGV = ..., B(q), 'xq:fp' or 'xq:id', parent_queue, p
-- One more ARGV after these (7, 9 or 10 in all) is an optional clock override
-- (decimal Unix ms) for the schedule arm. B(q) = emq:{q}: derives the lane
-- family, B.pending and B.metrics:failed.
--
-- Replies: 'scheduled' · 'dead' · error "EMQSTALE job gone" (no attempts
--          field) · error "EMQSTALE retry token mismatch".
-- Clock: NOW on the schedule arm only (TIME, or the override).
local id, token, err, base = ARGV[1], ARGV[2], ARGV[5], ARGV[6]
local jk = KEYS[4]
local nargs = 6
if #KEYS == 8 then nargs = 8 elseif #KEYS == 5 then nargs = 9 end

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
local function release(g)
  local act = redis.call('HINCRBY', base .. 'gactive', g, -1)
  if act <= 0 then
    redis.call('HDEL', base .. 'gactive', g)
  end
  if redis.call('SISMEMBER', base .. 'paused', g) == 0
      and redis.call('ZCARD', base .. 'g:' .. g .. ':pending') > 0 then
    offer(g, act)
  end
end
local function unclaimed(g, jid)
  local lane = base .. 'g:' .. g .. ':pending'
  redis.call('ZREM', lane, jid)
  if redis.call('ZCARD', lane) == 0 then
    redis.call('LREM', base .. 'ring', 0, g)
  end
end

local att = redis.call('HGET', jk, 'attempts')
if not att then
  return redis.error_reply('EMQSTALE job gone')
end
if att ~= token then
  return redis.error_reply('EMQSTALE retry token mismatch')
end
local g = redis.call('HGET', jk, 'group')
local was = redis.call('ZREM', KEYS[1], id)
if g then
  if was == 1 then release(g) else unclaimed(g, id) end
elseif was == 0 then
  redis.call('ZREM', base .. 'pending', id)
end
redis.call('HSET', jk, 'last_error', err)
if tonumber(att) >= tonumber(ARGV[4]) then
  redis.call('HSET', jk, 'state', 'dead')
  redis.call('ZADD', KEYS[3], 0, id)
  redis.call('HINCRBY', base .. 'metrics:failed', 'count', 1)
  if #KEYS == 8 then
    local p = ARGV[8]
    if ARGV[7] == 'sq:id' then
      redis.call('HSET', KEYS[6], id, err)
      local left = redis.call('INCRBY', KEYS[7], -1)
      if left <= 0 then
        redis.call('ZADD', base .. 'pending', 0, p)
        redis.call('HSET', KEYS[8], 'state', 'pending')
      end
    else
      redis.call('HSET', KEYS[5], id, err)
      redis.call('HSET', KEYS[8], 'state', 'dead')
      redis.call('ZADD', KEYS[3], 0, p)
      redis.call('ZREM', base .. 'pending', p)
    end
  elseif #KEYS == 5 then
    local policy = 'fp'
    if ARGV[7] == 'xq:id' then policy = 'id' end
    local pq, p = ARGV[8], ARGV[9]
    redis.call('RPUSH', KEYS[5], '\0fail\0' .. pq .. '\0' .. p .. '\0' .. id
      .. '\0' .. policy .. '\0' .. err)
  end
  return 'dead'
end
local now
if #ARGV > nargs then
  now = tonumber(ARGV[nargs + 1])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
redis.call('HSET', jk, 'state', 'scheduled')
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), id)
return 'scheduled'
