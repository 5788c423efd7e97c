-- obliterate.lua — T2.3 obliterate(q, force, budget), PROTOCOL.md §6.2.
--
-- KEYS[1] = B.meta         emq:{q}:meta
-- KEYS[2] = B(q)           emq:{q}:   (every family it deletes is derived
--                                      from the base)
-- ARGV[1] = 'force' or ''  ARGV[2] = budget (decimal, >= 1; the host gate)
-- ARGV[3] = optional clock override (ignored: no clock is read)
--
-- Replies: 0 (done) · 1 (more: call again) · error "EMQSTATE not paused"
--          · error "EMQSTATE active jobs present". Both refusals come before
--          the first write.
-- Order: active, then pending, schedule, dead, then the lanes of the groups
-- on the ring (ring order) and of the paused groups not on it (memcmp order,
-- D-22); each id is OBDEL'd (row, logs, lock key). Then the repeat records,
-- the metrics, gactive, glimit, ring, wake, paused, repeat, limiter and meta.
-- Left by design (D-8): gweight, de:*, flow:outbox, streams, flow subkeys,
-- lanes of groups neither ringed nor paused, rows in no set.
-- Clock: none.
local base = KEYS[2]
local force = ARGV[1] == 'force'
local budget = tonumber(ARGV[2])

-- memcmp order (Lua's < on strings follows the server's collation locale)
local function before(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

local function obdel(ids, key)
  for _, id in ipairs(ids) do
    local jk = base .. 'job:' .. id
    redis.call('DEL', jk, jk .. ':logs', jk .. ':lock')
    redis.call('ZREM', key, id)
  end
end

if redis.call('HEXISTS', KEYS[1], 'paused') == 0 then
  return redis.error_reply('EMQSTATE not paused')
end
local act = redis.call('ZRANGE', base .. 'active', 0, budget - 1)
if #act > 0 and not force then
  return redis.error_reply('EMQSTATE active jobs present')
end
obdel(act, base .. 'active')
if #act > 0 then
  budget = budget - #act
  if budget <= 0 then return 1 end
end
for _, t in ipairs({'pending', 'schedule', 'dead'}) do
  local ids = redis.call('ZRANGE', base .. t, 0, budget - 1)
  obdel(ids, base .. t)
  budget = budget - #ids
  if budget <= 0 then return 1 end
end

local groups, seen = {}, {}
for _, g in ipairs(redis.call('LRANGE', base .. 'ring', 0, -1)) do
  if not seen[g] then
    seen[g] = true
    groups[#groups + 1] = g
  end
end
local rest = {}
for _, g in ipairs(redis.call('SMEMBERS', base .. 'paused')) do
  if not seen[g] then rest[#rest + 1] = g end
end
table.sort(rest, before)
for _, g in ipairs(rest) do groups[#groups + 1] = g end
for _, g in ipairs(groups) do
  local lane = base .. 'g:' .. g .. ':pending'
  local ids = redis.call('ZRANGE', lane, 0, budget - 1)
  obdel(ids, lane)
  budget = budget - #ids
  if redis.call('ZCARD', lane) > 0 then return 1 end
  if budget <= 0 then return 1 end
end

for _, name in ipairs(redis.call('ZRANGE', base .. 'repeat', 0, -1)) do
  redis.call('DEL', base .. 'repeat:' .. name)
end
redis.call('DEL', base .. 'metrics:completed', base .. 'metrics:completed:data',
           base .. 'metrics:failed', base .. 'metrics:failed:data',
           base .. 'gactive', base .. 'glimit', base .. 'ring', base .. 'wake',
           base .. 'paused', base .. 'repeat', base .. 'limiter', KEYS[1])
return 0
