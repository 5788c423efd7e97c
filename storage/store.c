/*
 * store.c — the store's file: open with ownership checks, pragmas, schema,
 * the prepared-statement cache, transactions and checkpoints.
 *
 * Rules: a file is resolved (symlinks followed, one name only, a regular
 * file) and judged through a private read-only connection before a single
 * byte of it — or of a side file — is written: its stamps, its schema
 * objects against the schema ladder (schema.c) and the caller's judge key
 * (the engine's version fence); only then is it switched to WAL and
 * created or upgraded. `synchronous` is always set explicitly; WAL
 * auto-checkpoints are off and checkpoints run only while holding the
 * writer gate exclusive (gate.c), so a checkpoint never races a commit that
 * resets the WAL (see doc/RELIABILITY.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include "journal.h"
#include "store_int.h"
#include "evlog.h"
#include "notify.h"
#include "stream.h"

/* ------------------------------------------------------------------ SQL */


/* S_Z_INSERT0_RUN and S_KEY_CREATE_RUN below spell out their rows: 32 each,
 * of type 2 for the hashes. */
_Static_assert(EMQ_Z_RUN == 32 && EMQ_H_RUN == 32,
               "the run statements' texts hold 32 rows");
_Static_assert(EMQ_T_HASH == 2, "S_KEY_CREATE_RUN and S_KEY_STEPS name type 2");
/* S_Z_COUNT_NZ counts up to EMQ_Z_SMALL + 1 rows, spelled out. */
_Static_assert(EMQ_Z_SMALL == 32, "S_Z_COUNT_NZ's text stops at 33 rows");

static const char *const sql[S_COUNT] = {
    /* Every statement that writes a key row computes its checksum (NULL
     * while the file's checksums are off) and every read verifies it
     * (rowsum.c); the extra column of S_KEY_GET is always NULL. */
    [S_KEY_GET] = "SELECT type, kid, expire, val,"
                  " emq_verify(name, type, kid, expire, val, sum)"
                  " FROM kv WHERE name = ?1",
    [S_KEY_INSERT] = "INSERT INTO kv(name, type, kid, expire, val, sum)"
                     " VALUES(?1, ?2, ?3, ?4, ?5,"
                     " emq_sum(?1, ?2, ?3, ?4, ?5))",
    [S_KEY_DELETE] = "DELETE FROM kv WHERE name = ?1",
    [S_KEY_PUT_VAL] = "UPDATE kv SET val = ?2,"
                      " sum = emq_sum(name, type, kid, expire, ?2)"
                      " WHERE name = ?1",
    [S_KEY_SET_EXPIRE] = "UPDATE kv SET expire = ?2,"
                         " sum = emq_sum(name, type, kid, ?2, val)"
                         " WHERE name = ?1",
    [S_KEY_UPSERT] = "INSERT OR REPLACE INTO kv(name, type, kid, expire, val,"
                     " sum) VALUES(?1, ?2, 0, ?3, ?4,"
                     " emq_sum(?1, ?2, 0, ?3, ?4))",
    [S_KEY_CREATE_NX] = "INSERT INTO kv(name, type, kid, expire, val, sum)"
                        " VALUES(?1, ?2, 0, NULL, ?3,"
                        " emq_sum(?1, ?2, 0, NULL, ?3))"
                        " ON CONFLICT DO NOTHING",
    [S_KID_NEXT] = "UPDATE emq_meta SET v = v + 1 WHERE k = 'next_kid'"
                   " RETURNING v - 1",
    /* A member's score (zset.c): at 0 in the table, then in the member
     * index (a big set) or the two ranges of a small one. */
    [S_Z_PROBE0] = "SELECT 0.0 FROM zset WHERE kid = ?1 AND score = 0"
                   " AND member = ?2 UNION ALL"
                   " SELECT score FROM zset WHERE kid = ?1 AND member = ?2"
                   " AND ix = 1 LIMIT 1",
    [S_Z_PROBE0_SMALL] = "SELECT 0.0 FROM zset WHERE kid = ?1 AND score = 0"
                         " AND member = ?2 UNION ALL"
                         " SELECT score FROM zset WHERE kid = ?1"
                         " AND score > 0 AND member = ?2 UNION ALL"
                         " SELECT score FROM zset WHERE kid = ?1"
                         " AND score < 0 AND member = ?2 LIMIT 1",
    /* ?4: 1 puts the row in the member index, NULL keeps it out. */
    [S_Z_INSERT] = "INSERT INTO zset(kid, score, member, ix)"
                   " VALUES(?1, ?3, ?2, ?4)",
    [S_Z_DEL] = "DELETE FROM zset WHERE kid = ?1 AND score = ?3"
                " AND member = ?2",
    [S_Z_CARD] = "SELECT count(*) FROM zset WHERE kid = ?1",
    [S_Z_ANY] = "SELECT 1 FROM zset WHERE kid = ?1 LIMIT 1",
    [S_Z_RANGE_SCORE] = "SELECT member, score FROM zset WHERE kid = ?1"
                        " AND score >= ?2 AND score <= ?3"
                        " ORDER BY score, member LIMIT ?4",
    [S_Z_RANGE_ASC] = "SELECT member, score FROM zset WHERE kid = ?1"
                      " ORDER BY score, member LIMIT ?2",
    [S_Z_RANGE_DESC] = "SELECT member, score FROM zset WHERE kid = ?1"
                       " ORDER BY score DESC, member DESC LIMIT ?2",
    /* Lexical ranges walk rank order (Valkey's rule: lexical ranges are
     * meant for sets whose members share one score). */
    [S_Z_LEX_ASC] = "SELECT member, score FROM zset WHERE kid = ?1"
                    " AND (?2 IS NULL OR member >= ?2)"
                    " AND (?3 IS NULL OR member <= ?3)"
                    " ORDER BY score, member LIMIT ?4",
    [S_Z_LEX_DESC] = "SELECT member, score FROM zset WHERE kid = ?1"
                     " AND (?2 IS NULL OR member >= ?2)"
                     " AND (?3 IS NULL OR member <= ?3)"
                     " ORDER BY score DESC, member DESC LIMIT ?4",
    [S_Z_DROP] = "DELETE FROM zset WHERE kid = ?1",
    /* Each end through the primary key alone: a lone min() or max() is
     * one b-tree descent, a count is a walk of the whole list. */
    [S_L_MINMAX] = "SELECT (SELECT min(pos) FROM list WHERE kid = ?1),"
                   " (SELECT max(pos) FROM list WHERE kid = ?1)",
    [S_L_INSERT] = "INSERT INTO list(kid, pos, val) VALUES(?1, ?2, ?3)",
    [S_L_ASC] = "SELECT pos, val FROM list WHERE kid = ?1 ORDER BY pos"
                " LIMIT ?2 OFFSET ?3",
    [S_L_DESC] = "SELECT pos, val FROM list WHERE kid = ?1"
                 " ORDER BY pos DESC LIMIT ?2 OFFSET ?3",
    [S_L_DEL] = "DELETE FROM list WHERE kid = ?1 AND pos = ?2",
    [S_L_COUNT] = "SELECT count(*) FROM list WHERE kid = ?1",
    [S_L_DROP] = "DELETE FROM list WHERE kid = ?1",
    [S_L_ANY] = "SELECT 1 FROM list WHERE kid = ?1 LIMIT 1",
    [S_L_POP_LEFT] = "DELETE FROM list WHERE kid = ?1 AND pos ="
                     " (SELECT min(pos) FROM list WHERE kid = ?1)"
                     " RETURNING val",
    [S_L_POP_RIGHT] = "DELETE FROM list WHERE kid = ?1 AND pos ="
                      " (SELECT max(pos) FROM list WHERE kid = ?1)"
                      " RETURNING val",
    [S_L_FIND] = "SELECT pos FROM list WHERE kid = ?1 AND val = ?2"
                 " ORDER BY pos LIMIT 1",
    [S_L_RANK] = "SELECT count(*) FROM list WHERE kid = ?1 AND pos < ?2",
    [S_L_HAS] = "SELECT 1 FROM list WHERE kid = ?1 AND val = ?2"
                " ORDER BY pos DESC LIMIT 1",
    [S_L_DEL_VAL] = "DELETE FROM list WHERE kid = ?1 AND val = ?2",
    /* The same three for a value of at most EMQ_LIST_IX_MAX bytes, through
     * the partial index list_val (schema 8): the condition, true of every
     * row equal to such a value, lets the planner use it. */
    [S_L_FIND_IX] = "SELECT pos FROM list WHERE kid = ?1 AND val = ?2"
                    " AND " EMQ_LIST_IX_COND " ORDER BY pos LIMIT 1",
    [S_L_HAS_IX] = "SELECT 1 FROM list WHERE kid = ?1 AND val = ?2"
                   " AND " EMQ_LIST_IX_COND " LIMIT 1",
    /* LMOVE key key LEFT RIGHT: the head row takes the position after the
     * tail, in one statement (the subqueries are two b-tree descents). */
    [S_L_ROTATE] = "UPDATE list SET pos ="
                   " (SELECT max(pos) FROM list WHERE kid = ?1) + 1"
                   " WHERE kid = ?1 AND pos ="
                   " (SELECT min(pos) FROM list WHERE kid = ?1)"
                   " RETURNING val",
    [S_L_DEL_VAL_IX] = "DELETE FROM list WHERE kid = ?1 AND val = ?2"
                       " AND " EMQ_LIST_IX_COND,
    [S_S_ADD] = "INSERT INTO sset(kid, member) VALUES(?1, ?2)"
                " ON CONFLICT DO NOTHING",
    [S_S_REM] = "DELETE FROM sset WHERE kid = ?1 AND member = ?2",
    [S_S_IS] = "SELECT 1 FROM sset WHERE kid = ?1 AND member = ?2",
    [S_S_ALL] = "SELECT member FROM sset WHERE kid = ?1 ORDER BY member",
    [S_S_CARD] = "SELECT count(*) FROM sset WHERE kid = ?1",
    [S_S_ANY] = "SELECT 1 FROM sset WHERE kid = ?1 LIMIT 1",
    [S_S_DROP] = "DELETE FROM sset WHERE kid = ?1",
    [S_BEGIN_W] = "BEGIN IMMEDIATE",
    [S_BEGIN_R] = "BEGIN DEFERRED",
    [S_COMMIT] = "COMMIT",
    [S_ROLLBACK] = "ROLLBACK",
    [S_Z_PAGE_ASC] = "SELECT member, score FROM zset WHERE kid = ?1"
                     " ORDER BY score, member LIMIT ?2 OFFSET ?3",
    [S_Z_PAGE_DESC] = "SELECT member, score FROM zset WHERE kid = ?1"
                      " ORDER BY score DESC, member DESC LIMIT ?2 OFFSET ?3",
    /* The event log (evlog.c): seq is the rowid, so an insert takes
     * max(seq) + 1 and the log reads in commit order. */
    [S_EV_INSERT] = "INSERT INTO emq_events(at, channel, kind, subject,"
                    " payload) VALUES(?1, ?2, ?3, ?4, ?5)",
    [S_EV_LAST] = "SELECT coalesce(max(seq), 0) FROM emq_events",
    [S_EV_READ] = "SELECT seq, at, channel, kind, subject, payload"
                  " FROM emq_events WHERE seq > ?1 ORDER BY seq LIMIT ?2",
    [S_EV_HEAD] = "SELECT seq, at FROM emq_events ORDER BY seq LIMIT ?1",
    [S_EV_DROP_TO] = "DELETE FROM emq_events WHERE seq <= ?1",
    [S_EV_EXISTS] = "SELECT 1 FROM sqlite_schema WHERE type = 'table'"
                    " AND name = 'emq_events'",
    [S_J_CREATE] = JOURNAL_DDL,
    [S_J_EXISTS] = "SELECT count(*) FROM sqlite_schema WHERE type = 'table'"
                   " AND name = 'emq_journal'",
    /* A jid is never handed out twice (journal.h): one above both the
     * rows there and the highest jid ever ended. */
    [S_J_INSERT] = "INSERT INTO emq_journal(jid, kind, next, body)"
                   " VALUES(1 + max(coalesce((SELECT max(jid)"
                   " FROM emq_journal), 0), coalesce((SELECT v FROM emq_meta"
                   " WHERE k = 'journal_hw'), 0)), ?1, ?2, ?3) RETURNING jid",
    [S_J_NEXT] = "SELECT next FROM emq_journal WHERE jid = ?1",
    [S_J_SET] = "UPDATE emq_journal SET next = ?2 WHERE jid = ?1",
    [S_J_DEL] = "DELETE FROM emq_journal WHERE jid = ?1",
    [S_J_HW] = "INSERT INTO emq_meta(k, v) VALUES('journal_hw', ?1)"
               " ON CONFLICT(k) DO UPDATE SET v = max(v, excluded.v)",
    [S_J_SCAN] = "SELECT jid, kind, next, body FROM emq_journal ORDER BY jid",
    /* An add that leaves a conflicting row alone (zset.c): at score 0 it
     * finds the member at 0 by the key; in a big set, at any other score,
     * the member at any score other than 0 by the unique member index. */
    [S_Z_INSERT_NX] = "INSERT INTO zset(kid, score, member, ix)"
                      " VALUES(?1, ?3, ?2, ?4) ON CONFLICT DO NOTHING",
    /* A member at a score other than 0: in a big set's member index, or
     * walking a small set's two ranges (at most EMQ_Z_SMALL rows). */
    [S_Z_SCORE_NZ] = "SELECT score FROM zset WHERE kid = ?1 AND member = ?2"
                     " AND ix = 1 LIMIT 1",
    [S_Z_SCORE_SMALL] = "SELECT score FROM zset WHERE kid = ?1 AND score > 0"
                        " AND member = ?2 UNION ALL SELECT score FROM zset"
                        " WHERE kid = ?1 AND score < 0 AND member = ?2"
                        " LIMIT 1",
    /* Whether a zset is big (a row in the member index): one seek. */
    [S_Z_ANY_IX] = "SELECT 1 FROM zset INDEXED BY zset_member WHERE kid = ?1"
                   " AND ix = 1 LIMIT 1",
    /* A small set's members at scores other than 0, counted up to
     * EMQ_Z_SMALL + 1: the key's two ranges, not the members at 0 between
     * them. */
    [S_Z_COUNT_NZ] = "SELECT count(*) FROM (SELECT 1 FROM zset WHERE kid = ?1"
                     " AND score > 0 UNION ALL SELECT 1 FROM zset"
                     " WHERE kid = ?1 AND score < 0 LIMIT 33)",
    /* ZREM of a member at a score other than 0 (zset.c): found and deleted
     * in one statement, through the member index of a big set or in one
     * range of a small one. */
    [S_Z_DEL_NZ] = "DELETE FROM zset WHERE kid = ?1 AND member = ?2"
                   " AND ix = 1",
    [S_Z_DEL_POS] = "DELETE FROM zset WHERE kid = ?1 AND score > 0"
                    " AND member = ?2",
    [S_Z_DEL_NEG] = "DELETE FROM zset WHERE kid = ?1 AND score < 0"
                    " AND member = ?2",
    /* A small set turning big: its rows at scores other than 0 join the
     * member index. */
    [S_Z_INDEX_POS] = "UPDATE zset SET ix = 1 WHERE kid = ?1 AND score > 0",
    [S_Z_INDEX_NEG] = "UPDATE zset SET ix = 1 WHERE kid = ?1 AND score < 0",
    /* Whether a zset has any member at the score 0: one seek of the key. */
    [S_Z_ANY_ZERO] = "SELECT 1 FROM zset WHERE kid = ?1 AND score = 0"
                     " LIMIT 1",
    /* Hash steps on a row as one statement (hash.c; only on a file whose
     * checksums are off): a hash without expiry, or no row. */
    [S_KEY_STEPS] = "UPDATE kv SET val = emq_hash_steps(val)"
                    " WHERE name = ?1 AND type = 2 AND expire IS NULL",
    /* The history log and the kept records (hist.c): seq is the rowid;
     * the subject index ends in it, so a subject reads in seq order, and
     * a scope is read in seq order from the table (bounded scans). */
    [S_H_INSERT] = "INSERT INTO emq_hist(at, scope, subject, kind, detail)"
                   " VALUES(?1, ?2, ?3, ?4, ?5)",
    [S_H_NTH_SUBJ] = "SELECT seq FROM emq_hist WHERE subject = ?1"
                     " AND scope = ?3 ORDER BY seq DESC LIMIT 1 OFFSET ?2",
    [S_H_DROP_SUBJ] = "DELETE FROM emq_hist WHERE subject = ?1"
                      " AND seq <= ?2 AND scope = ?3",
    [S_H_COUNT_SINCE] = "SELECT count(*), coalesce(max(seq), ?2)"
                        " FROM emq_hist WHERE seq > ?2 AND scope = ?1",
    [S_H_HEAD_SCOPE] = "SELECT seq, at FROM emq_hist WHERE scope = ?1"
                       " ORDER BY seq LIMIT ?2",
    /* a scope's rows up to a seq: one rowid range, the other scopes'
     * rows in it skipped */
    [S_H_DROP_TO] = "DELETE FROM emq_hist WHERE seq <= ?2 AND scope = ?1",
    [S_H_READ_ALL] = "SELECT seq, at, scope, subject, kind, detail"
                     " FROM emq_hist WHERE seq > ?1 ORDER BY seq LIMIT ?2",
    [S_H_READ_SUBJ] = "SELECT seq, at, scope, subject, kind, detail"
                      " FROM emq_hist WHERE subject = ?1 AND seq > ?2"
                      " ORDER BY seq LIMIT ?3",
    [S_H_READ_SCOPE] = "SELECT seq, at, scope, subject, kind, detail"
                       " FROM emq_hist WHERE seq > ?2 AND scope = ?1"
                       " ORDER BY seq LIMIT ?3",
    [S_H_LAST] = "SELECT coalesce(max(seq), 0) FROM emq_hist",
    [S_K_PUT] = "INSERT OR REPLACE INTO emq_kept(scope, kind, at, subject,"
                " body) VALUES(?1, ?3, ?4, ?2, ?5)",
    [S_K_FIND] = "SELECT scope, subject, kind, at, body FROM emq_kept"
                 " WHERE scope = ?1 AND subject = ?2 ORDER BY at DESC",
    [S_K_FIND_ANY] = "SELECT scope, subject, kind, at, body FROM emq_kept"
                     " WHERE subject = ?1 ORDER BY at DESC",
    [S_K_LIST] = "SELECT scope, subject, kind, at, body FROM emq_kept"
                 " WHERE scope = ?1 AND kind = ?2"
                 " ORDER BY at DESC, subject DESC LIMIT ?3",
    [S_K_LIST_AFTER] = "SELECT scope, subject, kind, at, body FROM emq_kept"
                       " WHERE scope = ?1 AND kind = ?2 AND (at < ?3 OR"
                       " (at = ?3 AND subject < ?4))"
                       " ORDER BY at DESC, subject DESC LIMIT ?5",
    [S_K_COUNT] = "SELECT count(*) FROM emq_kept WHERE scope = ?1"
                  " AND kind = ?2",
    /* a kind's oldest records of a scope: those older than an instant,
     * the n-th oldest, and every one up to it (one range of the key) */
    [S_K_AGED] = "SELECT count(*) FROM emq_kept WHERE scope = ?1"
                 " AND kind = ?2 AND at < ?3",
    [S_K_NTH] = "SELECT at, subject FROM emq_kept WHERE scope = ?1"
                " AND kind = ?2 ORDER BY at, subject LIMIT 1 OFFSET ?3",
    [S_K_DROP_TO] = "DELETE FROM emq_kept WHERE scope = ?1 AND kind = ?2"
                    " AND (at, subject) <= (?3, ?4)",
    /* EMQ_Z_RUN score-0 members ?2 .. ?33 of zset ?1 (a member already at
     * 0 is left alone: ON CONFLICT applies row by row). */
    [S_Z_INSERT0_RUN] = "INSERT INTO zset(kid, score, member) VALUES"
                        "(?1,0.0,?2),(?1,0.0,?3),(?1,0.0,?4),(?1,0.0,?5),"
                        "(?1,0.0,?6),(?1,0.0,?7),(?1,0.0,?8),(?1,0.0,?9),"
                        "(?1,0.0,?10),(?1,0.0,?11),(?1,0.0,?12),(?1,0.0,?13),"
                        "(?1,0.0,?14),(?1,0.0,?15),(?1,0.0,?16),(?1,0.0,?17),"
                        "(?1,0.0,?18),(?1,0.0,?19),(?1,0.0,?20),(?1,0.0,?21),"
                        "(?1,0.0,?22),(?1,0.0,?23),(?1,0.0,?24),(?1,0.0,?25),"
                        "(?1,0.0,?26),(?1,0.0,?27),(?1,0.0,?28),(?1,0.0,?29),"
                        "(?1,0.0,?30),(?1,0.0,?31),(?1,0.0,?32),(?1,0.0,?33)"
                        " ON CONFLICT DO NOTHING",
    /* EMQ_H_RUN new hash rows, name ?(2i+1) and value ?(2i+2) each, type 2
     * (EMQ_T_HASH): a plain INSERT, so a name already taken aborts the
     * whole statement (SQLite undoes its rows; hash.c then goes one by
     * one). */
    [S_KEY_CREATE_RUN] = "INSERT INTO kv(name, type, kid, expire, val, sum)"
                         " VALUES"
                         "(?1,2,0,NULL,?2,emq_sum(?1,2,0,NULL,?2)),"
                         "(?3,2,0,NULL,?4,emq_sum(?3,2,0,NULL,?4)),"
                         "(?5,2,0,NULL,?6,emq_sum(?5,2,0,NULL,?6)),"
                         "(?7,2,0,NULL,?8,emq_sum(?7,2,0,NULL,?8)),"
                         "(?9,2,0,NULL,?10,emq_sum(?9,2,0,NULL,?10)),"
                         "(?11,2,0,NULL,?12,emq_sum(?11,2,0,NULL,?12)),"
                         "(?13,2,0,NULL,?14,emq_sum(?13,2,0,NULL,?14)),"
                         "(?15,2,0,NULL,?16,emq_sum(?15,2,0,NULL,?16)),"
                         "(?17,2,0,NULL,?18,emq_sum(?17,2,0,NULL,?18)),"
                         "(?19,2,0,NULL,?20,emq_sum(?19,2,0,NULL,?20)),"
                         "(?21,2,0,NULL,?22,emq_sum(?21,2,0,NULL,?22)),"
                         "(?23,2,0,NULL,?24,emq_sum(?23,2,0,NULL,?24)),"
                         "(?25,2,0,NULL,?26,emq_sum(?25,2,0,NULL,?26)),"
                         "(?27,2,0,NULL,?28,emq_sum(?27,2,0,NULL,?28)),"
                         "(?29,2,0,NULL,?30,emq_sum(?29,2,0,NULL,?30)),"
                         "(?31,2,0,NULL,?32,emq_sum(?31,2,0,NULL,?32)),"
                         "(?33,2,0,NULL,?34,emq_sum(?33,2,0,NULL,?34)),"
                         "(?35,2,0,NULL,?36,emq_sum(?35,2,0,NULL,?36)),"
                         "(?37,2,0,NULL,?38,emq_sum(?37,2,0,NULL,?38)),"
                         "(?39,2,0,NULL,?40,emq_sum(?39,2,0,NULL,?40)),"
                         "(?41,2,0,NULL,?42,emq_sum(?41,2,0,NULL,?42)),"
                         "(?43,2,0,NULL,?44,emq_sum(?43,2,0,NULL,?44)),"
                         "(?45,2,0,NULL,?46,emq_sum(?45,2,0,NULL,?46)),"
                         "(?47,2,0,NULL,?48,emq_sum(?47,2,0,NULL,?48)),"
                         "(?49,2,0,NULL,?50,emq_sum(?49,2,0,NULL,?50)),"
                         "(?51,2,0,NULL,?52,emq_sum(?51,2,0,NULL,?52)),"
                         "(?53,2,0,NULL,?54,emq_sum(?53,2,0,NULL,?54)),"
                         "(?55,2,0,NULL,?56,emq_sum(?55,2,0,NULL,?56)),"
                         "(?57,2,0,NULL,?58,emq_sum(?57,2,0,NULL,?58)),"
                         "(?59,2,0,NULL,?60,emq_sum(?59,2,0,NULL,?60)),"
                         "(?61,2,0,NULL,?62,emq_sum(?61,2,0,NULL,?62)),"
                         "(?63,2,0,NULL,?64,emq_sum(?63,2,0,NULL,?64))",
    [S_META_SUMS] = "SELECT v FROM emq_meta WHERE k = 'checksums'",
    [S_PAGE_COUNT] = "PRAGMA page_count",
    /* A page after the cursor (?2, ?3) in (score, member) order: a row
     * value comparison, so the primary key is entered at the cursor and
     * the cost is the page's, however deep it lies. */
    [S_Z_AFTER_ASC] = "SELECT member, score FROM zset WHERE kid = ?1"
                      " AND (score, member) > (?2, ?3)"
                      " ORDER BY score, member LIMIT ?4",
    [S_Z_AFTER_DESC] = "SELECT member, score FROM zset WHERE kid = ?1"
                       " AND (score, member) < (?2, ?3)"
                       " ORDER BY score DESC, member DESC LIMIT ?4",
};

/* The key-row statements of a file whose checksums are off: the same rows,
 * no checksum computed or verified (a function call per row costs about a
 * thousand instructions). The column `sum` stays NULL. */
static const char *const sql_plain[S_COUNT] = {
    [S_KEY_GET] = "SELECT type, kid, expire, val FROM kv WHERE name = ?1",
    [S_KEY_INSERT] = "INSERT INTO kv(name, type, kid, expire, val)"
                     " VALUES(?1, ?2, ?3, ?4, ?5)",
    [S_KEY_PUT_VAL] = "UPDATE kv SET val = ?2 WHERE name = ?1",
    [S_KEY_SET_EXPIRE] = "UPDATE kv SET expire = ?2 WHERE name = ?1",
    [S_KEY_UPSERT] = "INSERT OR REPLACE INTO kv(name, type, kid, expire, val)"
                     " VALUES(?1, ?2, 0, ?3, ?4)",
    [S_KEY_CREATE_NX] = "INSERT INTO kv(name, type, kid, expire, val)"
                        " VALUES(?1, ?2, 0, NULL, ?3) ON CONFLICT DO NOTHING",
    [S_KEY_CREATE_RUN] = "INSERT INTO kv(name, type, kid, expire, val) VALUES"
                         "(?1,2,0,NULL,?2),(?3,2,0,NULL,?4),"
                         "(?5,2,0,NULL,?6),(?7,2,0,NULL,?8),"
                         "(?9,2,0,NULL,?10),(?11,2,0,NULL,?12),"
                         "(?13,2,0,NULL,?14),(?15,2,0,NULL,?16),"
                         "(?17,2,0,NULL,?18),(?19,2,0,NULL,?20),"
                         "(?21,2,0,NULL,?22),(?23,2,0,NULL,?24),"
                         "(?25,2,0,NULL,?26),(?27,2,0,NULL,?28),"
                         "(?29,2,0,NULL,?30),(?31,2,0,NULL,?32),"
                         "(?33,2,0,NULL,?34),(?35,2,0,NULL,?36),"
                         "(?37,2,0,NULL,?38),(?39,2,0,NULL,?40),"
                         "(?41,2,0,NULL,?42),(?43,2,0,NULL,?44),"
                         "(?45,2,0,NULL,?46),(?47,2,0,NULL,?48),"
                         "(?49,2,0,NULL,?50),(?51,2,0,NULL,?52),"
                         "(?53,2,0,NULL,?54),(?55,2,0,NULL,?56),"
                         "(?57,2,0,NULL,?58),(?59,2,0,NULL,?60),"
                         "(?61,2,0,NULL,?62),(?63,2,0,NULL,?64)",
};

/* ------------------------------------------------------------- errors */

int emq_store_err(emq_store *st, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->errmsg, sizeof st->errmsg, fmt, ap);
    va_end(ap);
    return code;
}

static int map_rc(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return EMQ_EBUSY;
    case SQLITE_IOERR: return EMQ_EIO;
    case SQLITE_FULL: return EMQ_EFULL;
    case SQLITE_NOMEM: return EMQ_ENOMEM;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return EMQ_ECORRUPT;
    case SQLITE_READONLY:
    case SQLITE_PERM: return EMQ_EREADONLY;
    case SQLITE_CANTOPEN: return EMQ_ECANTOPEN;
    case SQLITE_TOOBIG: return EMQ_ETOOBIG;
    default: return EMQ_EINTERNAL;
    }
}

/* 1 when an I/O error of `db` on st's file came from a full disk: the
 * error number says so, or SQLite's unix VFS (which does not always keep
 * it) failed to grow a file while the disk has less than 64 KiB left. */
static int disk_full(const emq_store *st, sqlite3 *db)
{
    struct statvfs vb;
    int e = db ? sqlite3_system_errno(db) : 0;
    if (e == ENOSPC || e == EDQUOT)
        return 1;
    return !st->memory && st->path[0] && statvfs(st->path, &vb) == 0 &&
           (uint64_t)vb.f_bavail * vb.f_frsize < 64 * 1024;
}

int emq_store_fail(emq_store *st, int rc)
{
    const char *m = st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc);
    /* An I/O error the disk's fullness caused (growing the -shm, creating
     * the -wal) is a full disk. */
    if (map_rc(rc) == EMQ_EIO && disk_full(st, st->db))
        return emq_store_err(st, EMQ_EFULL, "the disk is full: sqlite: %s",
                             m);
    return emq_store_err(st, map_rc(rc), "sqlite: %s", m);
}

const char *emq_store_errmsg(const emq_store *st)
{
    return st ? st->errmsg : "";
}

sqlite3 *emq_store_sqlite(emq_store *st)
{
    return st->db;
}

/* --------------------------------------------------------- statements */

static sqlite3_stmt *stmt_get(emq_store *st, int id)
{
    if (!st->stmt[id] &&
        sqlite3_prepare_v3(st->db, !st->sums && sql_plain[id] ? sql_plain[id]
                                                              : sql[id],
                           -1, SQLITE_PREPARE_PERSISTENT, &st->stmt[id],
                           NULL) != SQLITE_OK) {
        emq_store_fail(st, sqlite3_errcode(st->db));
        return NULL;
    }
    return st->stmt[id];
}

sqlite3_stmt *emq_stmt(emq_store *st, int id)
{
    switch (id) { /* statements that write kv rows end the hash caches */
    case S_KEY_INSERT: case S_KEY_DELETE: case S_KEY_PUT_VAL:
    case S_KEY_SET_EXPIRE: case S_KEY_UPSERT: case S_KEY_CREATE_NX:
    case S_KEY_CREATE_RUN:
        emq_hcache_clear(st);
        break;
    default:
        break;
    }
    return stmt_get(st, id);
}

sqlite3_stmt *emq_stmt_kv(emq_store *st, int id, const void *key,
                          size_t klen)
{
    if (key)
        emq_hcache_forget(st, key, klen);
    return stmt_get(st, id);
}

void emq_store_set_sums(emq_store *st, int on)
{
    if (st->sums == on)
        return;
    st->sums = on;
    /* The key-row statements are prepared again in the other form; none
     * is in use between statements of the store. */
    for (int i = 0; i < S_COUNT; i++)
        if (sql_plain[i]) {
            sqlite3_finalize(st->stmt[i]);
            st->stmt[i] = NULL;
        }
}

/* Reset a statement after use. Bindings are kept: every caller binds every
 * parameter of its statement on each use (NULLs included), and the blobs
 * are bound SQLITE_STATIC only for the duration of the call. */
void emq_stmt_done(sqlite3_stmt *s)
{
    if (s)
        sqlite3_reset(s);
}

int emq_bind_blob(sqlite3_stmt *s, int i, const void *p, size_t n)
{
    /* A zero-length blob must still bind as a blob, never as NULL. */
    static const char empty[1];
    return sqlite3_bind_blob64(s, i, n ? p : empty, n, SQLITE_STATIC);
}

/* Run a statement with no bindings to completion. */
static int exec_stmt(emq_store *st, int id)
{
    sqlite3_stmt *s = emq_stmt(st, id);
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    return EMQ_OK;
}

/* ------------------------------------------------------------- open */

static int is_memory(const char *path)
{
    return path == NULL || path[0] == '\0' || strcmp(path, ":memory:") == 0;
}

static int wal_hook(void *ctx, sqlite3 *db, const char *name, int frames)
{
    (void)db;
    (void)name;
    ((emq_store *)ctx)->wal_frames = frames;
    return SQLITE_OK;
}

static int pragma_int(sqlite3 *db, const char *q, int64_t *out)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(db, q, -1, &s, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) {
            *out = sqlite3_column_int64(s, 0);
            rc = SQLITE_OK;
        } else if (rc == SQLITE_DONE) {
            *out = 0;
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(s);
    return rc;
}

int emq_store_exec(emq_store *st, const char *q)
{
    char *msg = NULL;
    int rc = sqlite3_exec(st->db, q, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        int code = map_rc(rc);
        emq_store_err(st, code, "sqlite: %s", msg ? msg : sqlite3_errstr(rc));
        sqlite3_free(msg);
        return code;
    }
    return EMQ_OK;
}

/* A signed big-endian 32-bit header field. */
static int32_t be32(const unsigned char *p)
{
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                     (uint32_t)p[2] << 8 | p[3]);
}

/* "file:" + the path, %-escaped, + `query`, for SQLITE_OPEN_URI. */
static void uri_of(char *uri, size_t cap, const char *path, const char *query)
{
    size_t u = (size_t)snprintf(uri, cap, "file:");
    for (const unsigned char *c = (const unsigned char *)path;
         *c && u + 4 < cap; c++) {
        if (*c == '%' || *c == '?' || *c == '#' || *c < 0x21 || *c >= 0x7f)
            u += (size_t)snprintf(uri + u, cap - u, "%%%02X", *c);
        else
            uri[u++] = (char)*c;
    }
    snprintf(uri + u, cap - u, "%s", query);
}

/* 1 when `<path>-wal` exists. */
static int has_wal(const emq_store *st)
{
    char w[EMQ_PATH_MAX + 8];
    struct stat sb;
    snprintf(w, sizeof w, "%s-wal", st->path);
    return lstat(w, &sb) == 0;
}

/*
 * Resolve `path` into st->path and stat it. A file that exists is named by
 * its real path (every symlink followed, as SQLite follows them); a new one
 * by its directory's real path and its own name. *exists and *size say what
 * was found. Refused (EMQ_ECANTOPEN, the path in the message): a dangling
 * symlink, a missing directory, anything but a regular file, more than one
 * hard link; a missing file for a read-only open. Returns 1, unless this
 * is the `last` try, when a file appeared between the look that found none
 * and the look for a dangling symlink (another process created it).
 */
static int resolve_once(emq_store *st, const char *path, int *exists,
                        int64_t *size, int last)
{
    char dir[EMQ_PATH_MAX], real[PATH_MAX];
    struct stat sb;
    const char *base;
    *exists = 0;
    *size = 0;
    if (strlen(path) >= EMQ_PATH_MAX)
        return emq_store_err(st, EMQ_ECANTOPEN, "cannot open %.64s...: the "
                             "path is too long", path);
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return emq_store_err(st, EMQ_ECANTOPEN, "cannot open %s: it is "
                                 "a directory", path);
        if (!S_ISREG(sb.st_mode))
            return emq_store_err(st, EMQ_ECANTOPEN, "cannot open %s: it is "
                                 "not a regular file (a device, FIFO or "
                                 "socket)", path);
        if (sb.st_nlink > 1)
            return emq_store_err(st, EMQ_ECANTOPEN, "cannot open %s: it has "
                                 "%lu hard links, and SQLite keeps a "
                                 "separate WAL for each name, which loses "
                                 "commits; give the file one name", path,
                                 (unsigned long)sb.st_nlink);
        if (realpath(path, real) == NULL || strlen(real) >= EMQ_PATH_MAX)
            return emq_store_err(st, EMQ_ECANTOPEN, "cannot resolve %s: %s",
                                 path, strerror(errno));
        snprintf(st->path, sizeof st->path, "%s", real);
        *exists = 1;
        *size = (int64_t)sb.st_size;
        return EMQ_OK;
    }
    if (errno != ENOENT)
        return emq_store_err(st, EMQ_ECANTOPEN, "cannot open %s: %s", path,
                             strerror(errno));
    if (lstat(path, &sb) == 0) {
        /* Another process may have created the file between the two
         * looks (workers started together): judged again, as found. */
        if (!S_ISLNK(sb.st_mode) && !last)
            return 1;
        return emq_store_err(st, EMQ_ECANTOPEN, "cannot open %s: it is a "
                             "symbolic link to a file that does not exist",
                             path);
    }
    if (st->opts.readonly)
        return emq_store_err(st, EMQ_ECANTOPEN, "cannot open %s: no such "
                             "file (a read-only open never creates one)",
                             path);
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    base = slash ? slash + 1 : path;
    if (slash == dir)
        dir[1] = '\0';           /* "/x.db": the root directory */
    else if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return emq_store_err(st, EMQ_ECANTOPEN, "cannot open %s: not a file "
                             "name", path);
    if (realpath(dir, real) == NULL)
        return emq_store_err(st, EMQ_ECANTOPEN, "cannot open %s: the "
                             "directory %s: %s", path, dir, strerror(errno));
    if (snprintf(st->path, sizeof st->path, "%s/%s",
                 strcmp(real, "/") ? real : "", base) >= (int)sizeof st->path)
        return emq_store_err(st, EMQ_ECANTOPEN, "cannot open %s: the path is "
                             "too long", path);
    return EMQ_OK;
}

/* resolve_once, again while the file appears between its looks (1). */
static int resolve(emq_store *st, const char *path, int *exists,
                   int64_t *size)
{
    int rc, tries = 0;
    while ((rc = resolve_once(st, path, exists, size, ++tries == 8)) == 1)
        ;
    return rc;
}

/* Remember what the database file is (side files copy its owner and
 * permissions); with `want_same`, refuse a file that is not the one
 * judged (renamed or replaced meanwhile). */
static int identify(emq_store *st, int want_same)
{
    struct stat sb;
    if (stat(st->path, &sb) != 0)
        return emq_store_err(st, EMQ_ECANTOPEN, "cannot open %s: %s",
                             st->path, strerror(errno));
    if (want_same && (st->file_dev != (unsigned long)sb.st_dev ||
                      st->file_ino != (unsigned long)sb.st_ino))
        return emq_store_err(st, EMQ_ECANTOPEN, "cannot open %s: the file "
                             "was replaced while it was being opened",
                             st->path);
    if (!S_ISREG(sb.st_mode) || sb.st_nlink > 1)
        return emq_store_err(st, EMQ_ECANTOPEN, "cannot open %s: not a "
                             "regular file with one name", st->path);
    st->file_dev = (unsigned long)sb.st_dev;
    st->file_ino = (unsigned long)sb.st_ino;
    st->file_uid = (unsigned)sb.st_uid;
    st->file_gid = (unsigned)sb.st_gid;
    st->file_mode = (unsigned)sb.st_mode;
    return EMQ_OK;
}

/* SQLite's -wal and -shm, when present, by the side files' rules (side.c):
 * another user's planted -wal would be read as part of the database. Once
 * before SQLite reads the file, once after the file is known (created). */
static int sqlite_sides(emq_store *st)
{
    static const char *const sfx[] = { "-wal", "-shm" };
    char msg[1400];
    for (size_t i = 0; i < 2; i++) {
        int rc = emq_store_side_check(st, sfx[i], msg, sizeof msg);
        if (rc != EMQ_OK)
            return emq_store_err(st, rc, "%s", msg);
    }
    return EMQ_OK;
}

/* The first finding of the schema judge becomes the refusal's reason. */
static void first_finding(void *ctx, const char *f)
{
    char *m = ctx;
    if (m[0] == '\0')
        snprintf(m, 200, "%s", f);
}

/*
 * Decide from the stamps and the schema objects (on connection `db`, inside
 * a read or write transaction) whether the file is ours: EMQ_OK with
 * *version 0 (empty: to be created) or 1..EMQ_SCHEMA_VERSION, else
 * EMQ_ENOTEMQ or EMQ_ESCHEMA with the message set.
 */
static int classify(emq_store *st, sqlite3 *db, int *version)
{
    int64_t appid = 0, uver = 0, nobj = 0;
    char why[200] = "";
    int rc;
    *version = 0;
    if ((rc = pragma_int(db, "PRAGMA application_id", &appid)) != SQLITE_OK ||
        (rc = pragma_int(db, "PRAGMA user_version", &uver)) != SQLITE_OK ||
        (rc = pragma_int(db, "SELECT count(*) FROM sqlite_schema", &nobj)) !=
            SQLITE_OK)
        return rc;  /* an SQLite code: the caller maps it */
    if (appid == 0 && uver == 0 && nobj == 0)
        return EMQ_OK; /* an empty SQLite database: adopt it */
    if (appid != EMQ_APPLICATION_ID)
        return emq_store_err(st, EMQ_ENOTEMQ, appid == 0
                             ? "%s is not an emqlite file (an SQLite file "
                               "with tables and no application_id)"
                             : "%s is an SQLite file of another application "
                               "(application_id %lld)", st->path,
                             (long long)appid);
    if (uver > EMQ_SCHEMA_VERSION)
        return emq_store_err(st, EMQ_ESCHEMA, "%s has schema version %lld; "
                             "this emqlite reads up to %d", st->path,
                             (long long)uver, EMQ_SCHEMA_VERSION);
    if (uver < 1)
        return emq_store_err(st, EMQ_ENOTEMQ, "%s carries emqlite's "
                             "application_id but no schema version", st->path);
    rc = emq_schema_judge(db, (int)uver, first_finding, why);
    if (rc < 0)
        return emq_store_err(st, rc, "cannot read the schema of %s",
                             st->path);
    if (rc > 0)
        return emq_store_err(st, EMQ_ENOTEMQ, "%s is not an emqlite file: "
                             "its schema has a %s", st->path, why);
    if (uver < EMQ_SCHEMA_VERSION && st->opts.readonly)
        return emq_store_err(st, EMQ_ESCHEMA, "%s has schema version %lld "
                             "and this emqlite needs %d: open it once "
                             "read-write to upgrade it", st->path,
                             (long long)uver, EMQ_SCHEMA_VERSION);
    *version = (int)uver;
    return EMQ_OK;
}

/* The judge of `opts.judge_key`, on connection `db` of a file of schema
 * `version` (0: no tables yet, the key is absent). Every schema version
 * has kv(name, type, val) (schema.c). */
static int judge_key(emq_store *st, sqlite3 *db, int version)
{
    sqlite3_stmt *s = NULL;
    char err[sizeof st->errmsg] = "";
    int rc, type = EMQ_T_NONE;
    const void *v = NULL;
    size_t n = 0;
    if (!st->opts.judge || !st->opts.judge_key)
        return EMQ_OK;
    if (version > 0) {
        rc = sqlite3_prepare_v2(db, "SELECT type, val FROM kv WHERE name = ?1",
                                -1, &s, NULL);
        if (rc == SQLITE_OK) {
            emq_bind_blob(s, 1, st->opts.judge_key,
                          strlen(st->opts.judge_key));
            rc = sqlite3_step(s);
        }
        if (rc == SQLITE_ROW) {
            type = sqlite3_column_int(s, 0);
            v = sqlite3_column_blob(s, 1);
            n = (size_t)sqlite3_column_bytes(s, 1);
        } else if (rc != SQLITE_DONE) {
            sqlite3_finalize(s);
            return rc; /* an SQLite code: the caller maps it */
        }
    }
    rc = st->opts.judge(st->opts.judge_ctx, type, v, n, err, sizeof err);
    sqlite3_finalize(s);
    if (rc != EMQ_OK)
        return emq_store_err(st, rc, "%s", err);
    return EMQ_OK;
}

/* Map an SQLite failure of the read-only look at a file. */
static int look_failed(emq_store *st, sqlite3 *db, int rc)
{
    int code = map_rc(rc);
    if (code == EMQ_ECORRUPT || code == EMQ_EINTERNAL)
        return emq_store_err(st, EMQ_ENOTEMQ, "%s is not an emqlite file "
                             "(%s)", st->path, sqlite3_errstr(rc));
    if (code == EMQ_EIO && disk_full(st, db))
        return emq_store_err(st, EMQ_EFULL, "cannot inspect %s: the disk is "
                             "full (%s)", st->path, sqlite3_errstr(rc));
    return emq_store_err(st, code, "cannot inspect %s: %s", st->path,
                         sqlite3_errstr(rc));
}

/*
 * SQLite's busy handler for the handle's connections: polls the lock
 * every 50 µs, doubling to 2 ms, until st->busy_ms passed since the first
 * look (sqlite3_busy_timeout's handler sleeps 1, 2, 5 ... 100 ms apart, so
 * a lock freed just after a look was seen up to 100 ms late). A writer
 * meets it only after its turn (turn.c), behind a checkpoint or a writer
 * outside emqlite.
 */
static int busy_wait(void *ctx, int count)
{
    emq_busy *st = ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000, left;
    long us = count < 6 ? 50L << count : 2000L;
    if (count == 0) st->since = now;
    left = st->since + (int64_t)st->ms * 1000 - now;
    if (left <= 0) return 0;
    if (us > left) us = (long)left;
    ts.tv_sec = 0;
    ts.tv_nsec = us * 1000L;
    nanosleep(&ts, NULL);
    return 1;
}

/* The longest wait for SQLite's locks from now on (ms). */
static void set_busy(emq_store *st, int ms)
{
    st->busy.ms = ms > 0 ? ms : 0;
}

/* One read-only look at the file: immutable (no side file created) or as
 * an ordinary reader. */
static int look(emq_store *st, int immutable, int *version)
{
    char uri[EMQ_PATH_MAX * 3 + 32];
    sqlite3 *db = NULL;
    emq_busy busy = {st->opts.busy_timeout_ms, 0};
    int rc;
    uri_of(uri, sizeof uri, st->path, immutable ? "?immutable=1" : "?mode=ro");
    rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
                         SQLITE_OPEN_NOMUTEX, emq_walbuf_vfs());
    if (rc == SQLITE_OK)
        rc = sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    /* Writers may hold the file right now (a checkpoint, a WAL reset):
     * the look waits for them as the handle's own calls would. */
    if (rc == SQLITE_OK)
        rc = sqlite3_busy_handler(db, busy_wait, &busy);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    if (rc == SQLITE_OK && (rc = classify(st, db, version)) == EMQ_OK)
        rc = judge_key(st, db, *version);
    if (rc > 0)
        rc = look_failed(st, db, rc);
    sqlite3_close(db); /* ends the read transaction */
    return rc;
}

/* The file's size and modification time, to see whether it changed. */
static int same_file(const emq_store *st, const struct stat *a)
{
    struct stat b;
    return stat(st->path, &b) == 0 && b.st_size == a->st_size &&
           b.st_mtim.tv_sec == a->st_mtim.tv_sec &&
           b.st_mtim.tv_nsec == a->st_mtim.tv_nsec && b.st_ino == a->st_ino;
}

/*
 * Judge an existing, non-empty file before anything is written to it. The
 * header alone settles garbage, another application's stamp and a newer
 * schema. Otherwise the file is read through a private read-only
 * connection: immutable when no WAL is beside it (nobody has it open in WAL
 * mode, and nothing — no -wal, no -shm — is created), unless the file
 * changed during that look (a writer came), then as an ordinary reader.
 * *version receives the file's schema version (0: an empty database).
 */
static int judge_file(emq_store *st, int *version)
{
    unsigned char hdr[100];
    struct stat before;
    ssize_t got = 0, r;
    int fd, rc;
    *version = 0;
    if ((fd = open(st->path, O_RDONLY | O_CLOEXEC)) < 0)
        return emq_store_err(st, errno == EACCES ? EMQ_EREADONLY
                                                 : EMQ_ECANTOPEN,
                             "cannot read %s: %s", st->path, strerror(errno));
    while (got < (ssize_t)sizeof hdr &&
           ((r = read(fd, hdr + got, sizeof hdr - (size_t)got)) > 0 ||
            (r < 0 && errno == EINTR)))
        got += r > 0 ? r : 0;
    close(fd);
    if (got < (ssize_t)sizeof hdr || memcmp(hdr, "SQLite format 3", 16) != 0)
        return emq_store_err(st, EMQ_ENOTEMQ,
                             "%s is not an emqlite file (not SQLite)",
                             st->path);
    /* The stamps live in the header: user_version at byte 60,
     * application_id at 68, both big-endian (an unstamped header may still
     * be ours, its first transaction in the WAL). */
    int64_t appid = be32(hdr + 68), uver = be32(hdr + 60);
    if (appid != 0 && appid != EMQ_APPLICATION_ID)
        return emq_store_err(st, EMQ_ENOTEMQ, "%s is an SQLite file of "
                             "another application (application_id %lld)",
                             st->path, (long long)appid);
    if (appid == EMQ_APPLICATION_ID && uver > EMQ_SCHEMA_VERSION)
        return emq_store_err(st, EMQ_ESCHEMA, "%s has schema version %lld; "
                             "this emqlite reads up to %d", st->path,
                             (long long)uver, EMQ_SCHEMA_VERSION);
    if (has_wal(st) || stat(st->path, &before) != 0)
        return look(st, 0, version);
    rc = look(st, 1, version);
    if (!same_file(st, &before) || has_wal(st)) {
        st->errmsg[0] = '\0';
        rc = look(st, 0, version);
    }
    return rc;
}

/* 1 when the directory of the file accepts new files (an -shm). */
static int dir_writable(const emq_store *st)
{
    char dir[EMQ_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", st->path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';
    else if (slash)
        *slash = '\0';
    return access(dir, W_OK) == 0;
}

/* Connection settings; none of them writes to the file. */
static int set_pragmas(emq_store *st)
{
    char q[160];
    int rc;
    sqlite3_extended_result_codes(st->db, 1);
    set_busy(st, st->opts.busy_timeout_ms);
    sqlite3_busy_handler(st->db, busy_wait, &st->busy);
    if (st->opts.exclusive &&
        (rc = emq_store_exec(st, "PRAGMA locking_mode = EXCLUSIVE")) !=
            EMQ_OK)
        return rc;
    snprintf(q, sizeof q,
             "PRAGMA synchronous = %s; PRAGMA wal_autocheckpoint = 0;"
             " PRAGMA foreign_keys = OFF; PRAGMA trusted_schema = OFF;",
             /* FULL through group commit (gsync.c) runs SQLite at
              * NORMAL and syncs after the writers' turn */
             st->opts.synchronous == EMQ_SYNC_FULL && !emq_gsync_on(st)
                 ? "FULL"
                 : "NORMAL");
    if ((rc = emq_store_exec(st, q)) != EMQ_OK)
        return rc;
    if ((rc = emq_rowsum_register(st)) != EMQ_OK ||
        (rc = emq_hash_register(st)) != EMQ_OK)
        return rc;
    /* The transaction statements, prepared now: ending a transaction must
     * never need memory, and here a failure can still refuse the open. */
    for (int i = S_BEGIN_W; i <= S_ROLLBACK; i++)
        if (!emq_stmt(st, i))
            return emq_store_fail(st, sqlite3_errcode(st->db));
    return EMQ_OK;
}

/* The handle's own connection: read-write (creating the file), or
 * read-only — immutable where nobody can be writing (no WAL beside the
 * file and a directory that refuses new files: a read-only mount), so a
 * read-only handle works there and never creates a file. */
static int connect(emq_store *st)
{
    char uri[EMQ_PATH_MAX * 3 + 32];
    int rc;
    if (st->memory)
        rc = sqlite3_open_v2(":memory:", &st->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                             NULL);
    else if (!st->opts.readonly)
        rc = sqlite3_open_v2(st->path, &st->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                             SQLITE_OPEN_NOMUTEX, emq_walbuf_vfs());
    else {
        uri_of(uri, sizeof uri, st->path,
               !has_wal(st) && !dir_writable(st) ? "?immutable=1"
                                                 : "?mode=ro");
        rc = sqlite3_open_v2(uri, &st->db, SQLITE_OPEN_READONLY |
                             SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                             emq_walbuf_vfs());
    }
    if (rc != SQLITE_OK)
        return emq_store_fail(st, rc);
    return set_pragmas(st);
}

/*
 * A writable file: WAL mode, then the schema in one write transaction —
 * created in an empty file, climbed from an older version — unless the
 * look already found it current. The stamps are read again under the write
 * lock: another process may have created or upgraded the file meanwhile.
 */
/*
 * Turn the file to WAL. A new file is turned by the first opener, under
 * the file's exclusive lock, which SQLite takes without calling the busy
 * handler: processes creating one file at once got "database is locked"
 * at once. Retried within the busy timeout (pauses of 1 ms doubling to
 * 16 ms), as a busy write would be.
 */
static int wal_mode(emq_store *st)
{
    int64_t waited = 0, pause = 1;
    for (;;) {
        int rc = emq_store_exec(st, "PRAGMA journal_mode = WAL");
        if (rc != EMQ_EBUSY || waited >= st->opts.busy_timeout_ms)
            return rc;
        struct timespec ts = { 0, (long)pause * 1000000L };
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        waited += pause;
        if (pause < 16)
            pause *= 2;
    }
}

static int make_current(emq_store *st, int version)
{
    int rc, now;
    /* A new file's page size: only before its first page is written (the
     * value was range-checked by the caller: an integer, no user bytes). */
    if (version == 0 && st->opts.page_size > 0) {
        char q[48];
        snprintf(q, sizeof q, "PRAGMA page_size = %d", st->opts.page_size);
        if ((rc = emq_store_exec(st, q)) != EMQ_OK)
            return rc;
    }
    if (!st->memory && (rc = wal_mode(st)) != EMQ_OK)
        return rc;
    if (version == EMQ_SCHEMA_VERSION)
        return EMQ_OK;
    if ((rc = emq_store_begin(st, 1, 0)) != EMQ_OK)
        return rc;
    rc = classify(st, st->db, &now);
    if (rc > 0)
        rc = emq_store_fail(st, rc);
    if (rc == EMQ_OK && now < EMQ_SCHEMA_VERSION)
        rc = emq_schema_climb(st, now, EMQ_SCHEMA_VERSION, now == 0);
    if (rc != EMQ_OK) {
        emq_store_rollback(st);
        return rc;
    }
    return emq_store_commit(st);
}

/* ------------------------------------------------------------- room */

/*
 * A full disk must not wedge the workers: the transitions that shrink a
 * queue (complete, retry, extend, claim, reap...) must still commit, and a
 * checkpoint must still run, so that retiring jobs frees space. Two rules
 * give them the room:
 *   - the WAL owns its blocks: once it went round a checkpoint cycle, a
 *     RESTART checkpoint makes later commits reuse them from its start;
 *     before that, on a disk close to full, a writable handle preallocates
 *     room for a cycle of frames past the WAL's end (FALLOC_FL_KEEP_SIZE:
 *     its size and content are untouched);
 *   - every committed page owns its blocks in the database file, with a
 *     headroom past them: before a commit the handle compares the pages
 *     in use with the file's size and has SQLite extend the file
 *     (SQLITE_FCNTL_SIZE_HINT, ROOM_CHUNK steps) to ROOM_HEAD past them
 *     when less than half of it is left. The pages in use are those the
 *     handle's last commit frame gave (walbuf.c saw it written) unless
 *     another connection committed since or the transaction is big; then
 *     PRAGMA page_count, which is compiled again at every run (7k
 *     instructions). The look (a stat) is taken every
 *     ROOM_EVERY commits, for every transaction that changed more than
 *     ROOM_ROWS rows, after every checkpoint of the handle (which truncates
 *     the file to its pages), and at every commit once the disk could not
 *     give the headroom ("low"). Then a commit that needs pages the file
 *     cannot get is refused with EMQ_EFULL, nothing applied, and the
 *     checkpoints only write blocks the file owns.
 * A transition that needs no new page commits into room already owned;
 * only growth — enqueues past the free pages, imports — is refused. Not
 * covered: copy-on-write file systems (btrfs, ZFS), where overwriting a
 * block needs a new one; growth of more than half the headroom between two
 * looks while the disk fills.
 */
#define ROOM_CHUNK (64 * 1024)
#define ROOM_HEAD (1024 * 1024) /* the file's headroom past its pages */
#define ROOM_EVERY 8            /* commits between two looks        */
#define ROOM_ROWS 64            /* a bigger transaction is looked at */
#define ROOM_RESERVE (256 * 1024) /* kept for the spending transactions */

/* The WAL's room: (checkpoint_frames + 64) frames, or as much of it as
 * the disk gives, never more than an eighth of its free space, halving
 * down to 128 frames; then the handle checkpoints before the WAL outgrows
 * it. Best effort, and only when the disk has less than 64 times that
 * free (a WAL that went once round its cycle owns the blocks anyway): at
 * open and after this handle's checkpoints. */
static void reserve_wal(emq_store *st)
{
#ifdef FALLOC_FL_KEEP_SIZE /* Linux; elsewhere the WAL grows as it goes */
    char w[EMQ_PATH_MAX + 8];
    int64_t want = (st->opts.checkpoint_frames > 0
                        ? st->opts.checkpoint_frames
                        : EMQ_CHECKPOINT_FRAMES) + 64;
    int64_t frame = st->page_size + 24, free_b;
    struct statvfs vb;
    int fd, got = 0;
    if (!st->room || statvfs(st->path, &vb) != 0)
        return;
    free_b = (int64_t)vb.f_bavail * (int64_t)vb.f_frsize;
    if (want <= free_b / 64 / frame)
        return; /* room enough */
    /* Never more than an eighth of the free space: a huge checkpoint
     * interval must not take the disk (the interval follows the room). */
    if (want > free_b / 8 / frame) {
        want = free_b / 8 / frame;
        if (want >= 128 && st->opts.checkpoint_frames > want - 64)
            st->opts.checkpoint_frames = (int)(want - 64);
    }
    snprintf(w, sizeof w, "%s-wal", st->path);
    fd = open(w, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    for (int64_t f = want; f >= 128 && !got; f /= 2) {
        off_t len = (off_t)(f * frame + 32);
        if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, len) == 0)
            got = 1;
        else if (errno != ENOSPC)
            break;
        else if (f / 2 >= 128 && st->opts.checkpoint_frames > f / 2 - 64)
            st->opts.checkpoint_frames = (int)(f / 2 - 64);
    }
    close(fd);
#else
    (void)st;
#endif
}

/* A writable file handle: SQLite grows the file in chunks (and so can
 * extend it on request), the WAL gets its room. */
static int room_init(emq_store *st)
{
    int64_t ps = 0;
    int chunk = ROOM_CHUNK, rc;
    if (st->memory || st->opts.readonly)
        return EMQ_OK;
    if ((rc = pragma_int(st->db, "PRAGMA page_size", &ps)) != SQLITE_OK)
        return emq_store_fail(st, rc);
    st->page_size = ps > 0 ? ps : 4096;
    if ((rc = sqlite3_file_control(st->db, "main", SQLITE_FCNTL_CHUNK_SIZE,
                                   &chunk)) != SQLITE_OK)
        return emq_store_fail(st, rc);
    if ((rc = pragma_int(st->db, "PRAGMA page_count", &ps)) != SQLITE_OK)
        return emq_store_fail(st, rc);
    st->room_last = ps * st->page_size;
    st->room = 1;
    st->room_tick = ROOM_EVERY; /* the first commit looks */
    reserve_wal(st);
    return EMQ_OK;
}

/* Have SQLite extend the database file to at least `to` bytes. */
static int extend(emq_store *st, sqlite3_int64 to)
{
    return sqlite3_file_control(st->db, "main", SQLITE_FCNTL_SIZE_HINT,
                                &to) == SQLITE_OK ? 0 : -1;
}

/* Before a commit: the pages of the database own their blocks, and the
 * file keeps a headroom when the disk allows. */
static int ensure_room(emq_store *st)
{
    sqlite3_stmt *s;
    sqlite3_int64 need, keep;
    struct stat sb;
    struct statvfs vb;
    int rc;
    if (!st->room ||
        (!st->room_low && ++st->room_tick < ROOM_EVERY &&
         sqlite3_total_changes64(st->db) - st->tx_changes <= ROOM_ROWS))
        return EMQ_OK;
    st->room_tick = 0;
    /* The pages in use: what this handle's last commit frame said, while
     * no other connection has committed since and the transaction is
     * small (its own growth is within the headroom's half); else asked. */
    need = st->room_foreign || st->room_low ||
                   sqlite3_total_changes64(st->db) - st->tx_changes >
                       ROOM_ROWS
               ? 0
               : emq_walbuf_pages(st->db) * st->page_size;
    if (need == 0) {
        if ((s = emq_stmt(st, S_PAGE_COUNT)) == NULL)
            return emq_store_fail(st, sqlite3_errcode(st->db));
        rc = sqlite3_step(s);
        need = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) * st->page_size
                                : 0;
        emq_stmt_done(s);
        if (rc != SQLITE_ROW)
            return emq_store_fail(st, rc);
        st->room_foreign = 0;
    }
    if (stat(st->path, &sb) != 0)
        return emq_store_err(st, EMQ_EIO, "cannot stat %s: %s", st->path,
                             strerror(errno));
    if (need + ROOM_HEAD / 2 <= (sqlite3_int64)sb.st_size) {
        st->room_last = need;
        return EMQ_OK;
    }
    st->room_low = extend(st, need + ROOM_HEAD) != 0;
    /* On a disk that could not give the headroom, a transaction that grew
     * the file's pages leaves ROOM_RESERVE of its room to the transitions
     * that retire work (emq_store_set_spend): a cross-queue complete
     * writes an outbox row and a flow delivery the parent's fields, which
     * may need pages. */
    keep = st->room_spend || need <= st->room_last ? 0 : ROOM_RESERVE;
    if (!st->room_low || need + keep <= (sqlite3_int64)sb.st_size ||
        extend(st, need + keep) == 0) {
        st->room_last = need;
        return EMQ_OK;
    }
    int full = statvfs(st->path, &vb) == 0 &&
               (int64_t)vb.f_bavail * (int64_t)vb.f_frsize <
                   need + keep - (int64_t)sb.st_size + ROOM_CHUNK;
    return emq_store_err(st, full ? EMQ_EFULL : EMQ_EIO, full
                         ? "the disk is full: the file would grow to %lld "
                           "bytes (transitions that need no new space still "
                           "commit)"
                         : "cannot extend the file to %lld bytes",
                         (long long)need);
}

int emq_store_open(const char *path, const emq_store_opts *o, emq_store **out,
                   char *err, size_t errlen)
{
    int rc, exists = 0, version = 0;
    int64_t size = 0;
    emq_store *st = emq_mem_calloc(1, sizeof *st);
    *out = NULL;
    if (!st) {
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return EMQ_ENOMEM;
    }
    emq_mem_hold();
    st->opts = *o;
    st->gate = NULL;
    st->hf.dict = o->dict;
    if (st->opts.busy_timeout_ms < 0)
        st->opts.busy_timeout_ms = 0;
    st->memory = is_memory(path);
    if (!st->memory) {
        if ((rc = resolve(st, path, &exists, &size)) != EMQ_OK ||
            (exists && (rc = identify(st, 0)) != EMQ_OK) ||
            (exists && (rc = sqlite_sides(st)) != EMQ_OK))
            goto fail;
        /* Nothing is written before the file is judged. */
        if (exists && size > 0)
            rc = judge_file(st, &version);
        else
            rc = judge_key(st, NULL, 0); /* a new file: the key is absent */
        if (rc != EMQ_OK)
            goto fail;
    }
    if ((rc = connect(st)) != EMQ_OK ||
        (!st->memory && (rc = identify(st, exists)) != EMQ_OK) ||
        (!st->memory && (rc = sqlite_sides(st)) != EMQ_OK) ||
        (rc = emq_wgate_open(st)) != EMQ_OK)
        goto fail;
    if (!st->opts.readonly && ((rc = make_current(st, version)) != EMQ_OK ||
                               (rc = room_init(st)) != EMQ_OK))
        goto fail;
    st->current = !st->opts.readonly || version == EMQ_SCHEMA_VERSION;
    if (st->current && (rc = emq_rowsum_load(st)) != EMQ_OK)
        goto fail;
    sqlite3_wal_hook(st->db, wal_hook, st);
    *out = st;
    return EMQ_OK;
fail:
    if (err && errlen)
        snprintf(err, errlen, "%s", st->errmsg);
    emq_store_close(st);
    return rc;
}

const char *emq_store_path(const emq_store *st)
{
    return st->memory ? NULL : st->path;
}

void emq_store_close(emq_store *st)
{
    if (!st)
        return;
    if (st->in_tx)
        emq_store_rollback(st);
    emq_wturn_release(st);
    for (int i = 0; i < S_COUNT; i++)
        sqlite3_finalize(st->stmt[i]);
    emq_xs_close(st);
    sqlite3_close(st->db);
    emq_wgate_close(st);
    emq_notify_close(st->notify);
    emq_buf_free(&st->hraw);
    emq_buf_free(&st->hkey);
    for (int i = 0; i < EMQ_KCACHE; i++)
        emq_buf_free(&st->kc[i].name);
    emq_buf_free(&st->henc);
    emq_hc_free(&st->hf);
    emq_hcache_free(st);
    emq_mem_free(st);
    emq_mem_release();
}

/* ------------------------------------------------------- transactions */

/* The pager's data version of the main database, or -1. */
static int64_t data_version(emq_store *st)
{
    unsigned v = 0;
    return sqlite3_file_control(st->db, "main", SQLITE_FCNTL_DATA_VERSION,
                                &v) == SQLITE_OK ? (int64_t)v : -1;
}

int emq_store_begin(emq_store *st, int write, int64_t now_ms)
{
    if (st->in_tx)
        return emq_store_err(st, EMQ_EINTERNAL, "transaction already open");
    st->errmsg[0] = '\0'; /* no message survives into a new transaction */
    /* A ROLLBACK that failed (it should not) left SQLite's transaction
     * open: end it before starting ours. */
    if (!sqlite3_get_autocommit(st->db))
        exec_stmt(st, S_ROLLBACK);
    /* A writer takes its turn (first come, first served), then the gate,
     * then SQLite's write lock: the three waits share the busy timeout. */
    int waited = 0, w = 0, rc = EMQ_OK, budget = st->opts.busy_timeout_ms;
    if (write && emq_gsync_on(st) && (rc = emq_gsync_ready(st)) != EMQ_OK)
        return rc;
    if (write && (rc = emq_wturn_enter(st, budget, &waited)) == EMQ_OK &&
        (rc = emq_wgate_enter(st, waited < budget ? budget - waited : 0,
                              &w)) != EMQ_OK)
        emq_wturn_leave(st);
    if (rc != EMQ_OK)
        return rc;
    waited += w;
    if (waited)
        set_busy(st, waited < budget ? budget - waited : 0);
    rc = exec_stmt(st, write ? S_BEGIN_W : S_BEGIN_R);
    if (waited)
        set_busy(st, st->opts.busy_timeout_ms);
    if (rc != EMQ_OK) {
        if (write) {
            emq_wgate_leave(st);
            emq_wturn_leave(st);
        }
        return rc;
    }
    st->in_tx = 1;
    st->tx_write = write;
    st->tx_changes = sqlite3_total_changes64(st->db);
    st->now = now_ms;
    st->hvalid = 0;
    if (write) {
        /* Another connection's commit invalidates the registration cache
         * and may have turned the file's checksums on. The pager's data
         * version (no SQL: a PRAGMA is compiled again at every run) moves
         * with every commit; commit() notes it after our own. */
        int64_t v = data_version(st);
        if (v < 0 || v != st->kc_version) {
            emq_kc_clear(st);
            emq_hcache_clear(st);
            st->room_foreign = 1;
            if (st->current && !st->sums &&
                (rc = emq_rowsum_load(st)) != EMQ_OK) {
                emq_store_rollback(st);
                return rc;
            }
        }
        st->kc_version = v;
    }
    return EMQ_OK;
}

void emq_store_set_spend(emq_store *st, int spend)
{
    st->room_spend = spend != 0;
}

void emq_store_set_now(emq_store *st, int64_t now_ms)
{
    st->now = now_ms;
    st->hvalid = 0;
}

int64_t emq_store_now(const emq_store *st)
{
    return st->now;
}

/* A best-effort checkpoint after a commit: its own failure (a busy reader
 * defers it) does not replace the message the commit leaves. */
static void checkpoint_keeping_message(emq_store *st)
{
    char keep[sizeof st->errmsg];
    memcpy(keep, st->errmsg, sizeof keep);
    (void)emq_store_checkpoint(st);
    memcpy(st->errmsg, keep, sizeof keep);
}

int emq_store_commit(emq_store *st)
{
    if (!st->in_tx)
        return emq_store_err(st, EMQ_EINTERNAL, "no transaction open");
    if (st->tx_write)
        emq_hcache_commit(st); /* a failed commit rolls back: forgotten */
    st->hvalid = 0;
    int rc = st->tx_write ? ensure_room(st) : EMQ_OK;
    if (rc == EMQ_OK)
        rc = exec_stmt(st, S_COMMIT);
    if (rc != EMQ_OK) {
        emq_store_rollback(st);
        /* A WAL that could not grow: a checkpoint lets the next commit
         * start the WAL over, in blocks it already owns. */
        if (rc == EMQ_EFULL && st->room)
            checkpoint_keeping_message(st);
        return rc;
    }
    st->in_tx = 0;
    if (st->tx_write) {
        st->kc_version = data_version(st); /* our own commit moved it */
        if (emq_gsync_on(st))
            emq_gsync_mark(st); /* numbered inside the turn */
        emq_wgate_leave(st);
        emq_wturn_leave(st);
        rc = emq_gsync_wait(st); /* the next writer commits meanwhile */
    }
    emq_store_watch_end(st, 1); /* visible to every reader now */
    if (st->tx_write && st->opts.checkpoint_frames > 0 &&
        st->wal_frames >= st->opts.checkpoint_frames)
        checkpoint_keeping_message(st); /* a busy reader defers it */
    return rc;
}

void emq_store_rollback(emq_store *st)
{
    emq_hcache_clear(st);
    emq_kc_clear(st);
    emq_store_watch_end(st, 0);
    if (!st->in_tx)
        return;
    /* Statements left mid-step (an error path) must be reset first. */
    for (int i = 0; i < S_COUNT; i++)
        if (st->stmt[i])
            sqlite3_reset(st->stmt[i]);
    if (!sqlite3_get_autocommit(st->db))
        exec_stmt(st, S_ROLLBACK);
    st->in_tx = 0;
    if (st->tx_write) {
        emq_wgate_leave(st);
        emq_wturn_leave(st);
    }
}

int emq_store_checkpoint(emq_store *st)
{
    if (st->memory)
        return EMQ_OK;
    if (st->in_tx)
        return emq_store_err(st, EMQ_EINTERNAL, "checkpoint inside a "
                             "transaction");
    /* Only with the writer gate held exclusive: no emqlite commit can run
     * meanwhile, even if SQLite falls back from RESTART to PASSIVE. A writer
     * in flight defers the checkpoint to a later commit. */
    if (!emq_wgate_try_exclusive(st))
        return emq_store_err(st, EMQ_EBUSY, "a write transaction is in "
                             "flight; checkpoint deferred");
    /* Do not wait for readers on old snapshots either: what they pin is
     * checkpointed by a later call. */
    set_busy(st, 0);
    int logf = 0, ckpt = 0;
    int rc = sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_RESTART,
                                       &logf, &ckpt);
    set_busy(st, st->opts.busy_timeout_ms);
    emq_wgate_leave(st);
    if (rc == SQLITE_OK) {
        st->wal_frames = 0;
        st->room_tick = ROOM_EVERY; /* it truncated the file to its pages */
        reserve_wal(st);
        return EMQ_OK;
    }
    return emq_store_fail(st, rc);
}
