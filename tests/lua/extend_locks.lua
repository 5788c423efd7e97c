-- extend_locks.lua — T1.12 extend_locks(q, [(id, token)...], lease_ms),
-- PROTOCOL.md §6.1.
--
-- KEYS[1] = B.active       emq:{q}:active
-- ARGV[1] = B(q)           emq:{q}:   (J(id) is derived as ARGV[1] .. 'job:' .. id)
-- ARGV[2] = lease_ms (decimal, > 0)
-- ARGV[3], ARGV[4], ... = id1, token1, id2, token2, ... (tokens decimal)
-- one more ARGV after the pairs (an odd count in all) = optional clock
--           override (decimal Unix ms)
--
-- Reply: the ids not extended (no row, or token mismatch), in input order;
--        {} when all were extended or no pair was given.
-- Clock: NOW, once for the whole batch: every extended id gets one deadline.
local npairs = math.floor((#ARGV - 2) / 2)
local now
if #ARGV % 2 == 1 then
  now = tonumber(ARGV[#ARGV])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local deadline = now + tonumber(ARGV[2])
local failed = {}
for i = 1, npairs do
  local id = ARGV[1 + 2 * i]
  local tok = ARGV[2 + 2 * i]
  local att = redis.call('HGET', ARGV[1] .. 'job:' .. id, 'attempts')
  if att and att == tok then
    redis.call('ZADD', KEYS[1], deadline, id)
  else
    failed[#failed + 1] = id
  end
end
return failed
