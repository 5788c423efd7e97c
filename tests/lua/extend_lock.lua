-- extend_lock.lua — T1.11 extend_lock(q, id, token, lease_ms), PROTOCOL.md §6.1.
--
-- KEYS[1] = B.active       emq:{q}:active
-- KEYS[2] = J(id)          emq:{q}:job:<id>
-- ARGV[1] = id             ARGV[2] = token (decimal)
-- ARGV[3] = lease_ms (decimal, > 0)
-- ARGV[4] = optional clock override (decimal Unix ms)
--
-- Replies: 1 (ok) · -1 (gone: no attempts field) · error
--          "EMQSTALE extend token mismatch".
-- Clock: NOW. The member is inserted into active if it was not there.
local now
if #ARGV >= 4 then
  now = tonumber(ARGV[4])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local att = redis.call('HGET', KEYS[2], 'attempts')
if not att then
  return -1
end
if att ~= ARGV[2] then
  return redis.error_reply('EMQSTALE extend token mismatch')
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
return 1
