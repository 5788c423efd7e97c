-- add_log.lua — T2.10 add_log(q, id, line, keep), PROTOCOL.md §6.2.
--
-- KEYS[1] = J(id)          emq:{q}:job:<id>
-- KEYS[2] = J(id).logs     emq:{q}:job:<id>:logs
-- ARGV[1] = line
-- ARGV[2] = keep (decimal, > 0), or '' for keep 0 (no trim)
-- ARGV[3] = optional clock override (ignored: no clock is read)
--
-- Replies: the list's length after the push, or keep when the push made it
-- longer than keep (it is then trimmed to its last keep lines) · -1 (gone:
-- no row).
-- Clock: none.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
local count = redis.call('RPUSH', KEYS[2], ARGV[1])
local keep = tonumber(ARGV[2]) or 0
if keep > 0 then
  redis.call('LTRIM', KEYS[2], -keep, -1)
  if keep < count then
    return keep
  end
end
return count
