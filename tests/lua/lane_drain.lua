-- lane_drain.lua — T3.10 lane drain(q, g), PROTOCOL.md §6.3.
--
-- KEYS[1] = B(q)           emq:{q}:   (J(id), J(id).logs are derived)
-- KEYS[2] = lane(g)        emq:{q}:g:<g>:pending
-- KEYS[3] = B.ring         emq:{q}:ring
-- ARGV[1] = g
-- ARGV[2] = optional clock override (ignored: no clock is read)
--
-- Reply: the lane's member count. JOBDEL(id) for each member, the lane is
-- deleted and g leaves the ring. Untouched: the group's active jobs,
-- gactive, paused, glimit, gweight, lock keys, other lanes.
-- Clock: none.
local base = KEYS[1]
local ids = redis.call('ZRANGE', KEYS[2], 0, -1)
for _, id in ipairs(ids) do
  redis.call('DEL', base .. 'job:' .. id, base .. 'job:' .. id .. ':logs')
end
redis.call('DEL', KEYS[2])
redis.call('LREM', KEYS[3], 0, ARGV[1])
return #ids
