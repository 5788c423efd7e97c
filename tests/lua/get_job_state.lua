-- get_job_state.lua — T2.5 get_job_state(q, id), PROTOCOL.md §6.2.
--
-- KEYS[1] = B.pending      KEYS[2] = B.active
-- KEYS[3] = B.schedule     KEYS[4] = B.dead
-- KEYS[5] = J(id)          emq:{q}:job:<id>
-- ARGV[1] = id
-- ARGV[2] = optional clock override (ignored: no clock is read)
--
-- Reply (first match wins): 'pending' · 'active' · 'scheduled' · 'dead'
--        (by set membership, in that order) · 'awaiting_children' (the
--        row's state) · 'unknown' (a row in no flat set: lanes are not
--        consulted, D-13) · 'absent'.
-- Clock: none. Pure read.
local id = ARGV[1]
local names = {'pending', 'active', 'scheduled', 'dead'}
for k = 1, 4 do
  if redis.call('ZSCORE', KEYS[k], id) then
    return names[k]
  end
end
if redis.call('HGET', KEYS[5], 'state') == 'awaiting_children' then
  return 'awaiting_children'
end
if redis.call('EXISTS', KEYS[5]) == 1 then
  return 'unknown'
end
return 'absent'
