-- lane_depths.lua — T3.12 lane_depths(q, [g...]), PROTOCOL.md §6.3.
--
-- KEYS[1] = B(q)           emq:{q}:
-- ARGV[1] = B(q)           emq:{q}:   (lane(g) = ARGV[1] .. 'g:' .. g ..
--                                      ':pending')
-- ARGV[2..] = g1, g2, ... (branded ids)
-- one more ARGV after the groups = optional clock override (ignored). A
--           group id is a branded id (its first byte is a letter), so a
--           trailing element made of digits only is the override.
--
-- Reply: an array, the card of each lane in order; the caller pairs them
-- with the groups into its map.
-- Clock: none. Pure read.
local n = #ARGV
if n > 1 and string.match(ARGV[n], '^%d+$') then n = n - 1 end
local out = {}
for k = 2, n do
  out[#out + 1] = redis.call('ZCARD', ARGV[1] .. 'g:' .. ARGV[k] .. ':pending')
end
return out
