-- complete.lua — T1.5 complete(q, id, token, result), PROTOCOL.md §6.1, with
-- the group paths (RELEASE / UNCLAIMED) and the flow LINK arms.
--
-- The caller reads LINK(id) (fields parent, parent_queue of J(id)) first and
-- picks one of three shapes; the shape is told by the number of KEYS:
--   no link (2 KEYS):  KEYS = B.active, J(id)
--                      ARGV = id, token, B(q)
--   same    (5 KEYS):  KEYS = B.active, J(id), J(p).dependencies,
--                             J(p).processed, J(p)
--                      ARGV = id, token, B(q), p, r
--   cross   (3 KEYS):  KEYS = B.active, J(id), B.flow:outbox
--                      ARGV = id, token, B(q), p, r, 'xq', parent_queue
-- r is the result, or the id when there is none. One more ARGV after these
-- (4, 6 or 8 in all) is an optional clock override; it is ignored, since
-- completion reads no clock. B(q) is the queue base emq:{q}: from which the
-- lane family, B.pending and B.metrics:completed are derived.
--
-- Replies: 1 (ok) · 0 (gone: no attempts field) · error
--          "EMQSTALE complete token mismatch".
-- Clock: none.
local id, token, base = ARGV[1], ARGV[2], ARGV[3]
local jk = KEYS[2]

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
  return 0
end
if att ~= token then
  return redis.error_reply('EMQSTALE complete token mismatch')
end
local g = redis.call('HGET', jk, 'group')
local was = redis.call('ZREM', KEYS[1], id)
if g then
  if was == 1 then release(g) else unclaimed(g, id) end
elseif was == 0 then
  redis.call('ZREM', base .. 'pending', id)
end
if #KEYS == 3 then
  if was == 1 then
    local p, r, pq = ARGV[4], ARGV[5], ARGV[7]
    redis.call('RPUSH', KEYS[3], pq .. '\0' .. p .. '\0' .. id .. '\0' .. r)
  end
elseif #KEYS == 5 then
  if was == 1 then
    local p, r = ARGV[4], ARGV[5]
    local left = redis.call('INCRBY', KEYS[3], -1)
    redis.call('HSET', KEYS[4], id, r)
    if left <= 0 then
      redis.call('ZADD', base .. 'pending', 0, p)
      redis.call('HSET', KEYS[5], 'state', 'pending')
    end
  end
end
redis.call('DEL', jk)
redis.call('HINCRBY', base .. 'metrics:completed', 'count', 1)
return 1
