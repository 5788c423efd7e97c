-- counts.lua — T2.4 counts(q, names), PROTOCOL.md §6.2.
--
-- KEYS[1] = B(q)           emq:{q}:   (B.metrics:<name> is derived from it)
-- KEYS[2..] = B.<set> for each set name asked for (pending, active,
--             schedule, dead), in list order
-- ARGV[1..] = the metric names asked for (completed, failed), in list order
-- one more ARGV after the names = optional clock override (ignored). The
--           host gate admits only the six names, so a trailing element made
--           of digits only is the override, never a metric name.
--
-- Reply: an array, the card of each KEYS[2..] in order, then the integer
-- field `count` of B.metrics:<name> (0 when absent) of each ARGV name in
-- order; the caller pairs them with the names into its map. The host gate
-- (the first name outside the six → unknown_state(name)) is the caller's.
-- Clock: none. Pure read.
local n = #ARGV
if n > 0 and string.match(ARGV[n], '^%d+$') then n = n - 1 end
local out = {}
for k = 2, #KEYS do
  out[#out + 1] = redis.call('ZCARD', KEYS[k])
end
for k = 1, n do
  local c = redis.call('HGET', KEYS[1] .. 'metrics:' .. ARGV[k], 'count')
  out[#out + 1] = tonumber(c or '0')
end
return out
