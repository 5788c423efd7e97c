-- drain.lua — T2.2 drain(q, include_schedule), PROTOCOL.md §6.2.
--
-- KEYS[1] = B(q)           emq:{q}:   (the queue base: J(id) and
--                                      J(id).logs are derived from it)
-- KEYS[2] = B.pending      emq:{q}:pending
-- KEYS[3] = B.schedule     emq:{q}:schedule, present exactly when
--                          include_schedule is true
-- ARGV[1] = optional clock override (ignored: no clock is read)
--
-- Reply: the number of members walked (an id in both sets counts twice, a
-- row-less id counts). JOBDEL(id) for every member, then the set is deleted.
-- Untouched: active, dead, lanes, the repeat registry, dedup keys, lock keys,
-- flow subkeys.
-- Clock: none.
local base = KEYS[1]
local n = 0
for k = 2, #KEYS do
  local ids = redis.call('ZRANGE', KEYS[k], 0, -1)
  for _, id in ipairs(ids) do
    redis.call('DEL', base .. 'job:' .. id, base .. 'job:' .. id .. ':logs')
  end
  redis.call('DEL', KEYS[k])
  n = n + #ids
end
return n
