-- remove_job.lua — T2.12 remove_job(q, id, did), PROTOCOL.md §6.2.
--
-- KEYS[1] = J(id)          emq:{q}:job:<id>  (J(id).lock and J(id).logs are
--                                             derived from it)
-- KEYS[2] = B.pending      KEYS[3] = B.active
-- KEYS[4] = B.schedule     KEYS[5] = B.dead
-- KEYS[6] = B.de:<did>     (B.de: when there is no dedup id)
-- ARGV[1] = id             ARGV[2] = did, or '' for none
-- ARGV[3] = optional clock override (ignored: no clock is read)
--
-- Replies: 1 (ok) · -1 (gone: no row, checked before the lock) · error
--          "EMQLOCK job is locked" (the lock key exists, or the row has a
--          `lock` field).
-- The four flat sets only: lanes and gactive are not touched (D-9). The
-- dedup key is deleted only when it holds this id.
-- Clock: none.
local jk, id = KEYS[1], ARGV[1]
if redis.call('EXISTS', jk) == 0 then
  return -1
end
if redis.call('EXISTS', jk .. ':lock') == 1
    or redis.call('HEXISTS', jk, 'lock') == 1 then
  return redis.error_reply('EMQLOCK job is locked')
end
for k = 2, 5 do
  redis.call('ZREM', KEYS[k], id)
end
if ARGV[2] ~= '' and redis.call('GET', KEYS[6]) == id then
  redis.call('DEL', KEYS[6])
end
redis.call('DEL', jk, jk .. ':logs')
return 1
