/*
 * stream.c — the stream type (stream.h): Valkey 8 streams as SQLite rows.
 *
 * Layout. The key row (kv) holds type EMQ_T_STREAM and a kid; under it:
 *   xmeta(kid)                 length, last id, entries-added, max-deleted
 *   xentry(kid, ms, seq)       the entries, in id order, fields encoded as
 *                              varint(count) then varint(len) bytes each
 *   xgroup(gid; kid, name)     last-delivered id, entries-read (NULL: unknown)
 *   xconsumer(gid, name)       seen and active times
 *   xpel(gid, ms, seq)         owner, delivery time and count; indexed by
 *                              (gid, consumer, ms, seq) for per-consumer walks
 * Id halves are unsigned 64-bit: they are stored with the top bit flipped
 * (u ^ 2^63 as a signed integer), which keeps SQLite's order the id order.
 *
 * The first entry id is not stored: it is the lowest live entry (0-0 when
 * the stream is empty), which is what Valkey's recorded first id holds after
 * each of its updates.
 *
 * Rules: a table that a walk reads is never written during that walk (the
 * rows to change are collected first); every statement is reset before the
 * function that stepped it returns, on every path.
 */
#include <string.h>
#include "store_int.h"
#include "stream.h"


enum {
    X_META_GET, X_META_PUT, X_META_DEL, X_FIRST,
    X_E_INSERT, X_E_GET, X_E_DEL, X_E_ASC, X_E_DESC, X_E_NTH, X_E_BELOW,
    X_E_DEL_UPTO, X_E_DROP,
    X_G_GET, X_G_INSERT, X_G_UPDATE, X_G_DEL, X_G_ALL, X_G_DROP_PEL,
    X_G_DROP_CONS, X_G_DROP,
    X_C_GET, X_C_INSERT, X_C_TOUCH, X_C_DEL, X_C_ALL, X_C_COUNT, X_C_DROPG,
    X_P_GET, X_P_PUT, X_P_DEL, X_P_COUNT, X_P_COUNT_C, X_P_DEL_C, X_P_DROPG,
    X_P_RANGE, X_P_RANGE_C, X_P_OWNERS, X_P_FIRST, X_P_LAST, X_P_NEXT,
    X_P_PUT_RUN, X_C_SEEN,
    X_COUNT
};

/* PEL rows X_P_PUT_RUN writes in one statement (a group read of many
 * entries): the statement's own cost (bind, step, halt, reset) is paid
 * once for the run, not per row; callgrind: 10.7k instructions a row one
 * by one, 5.4k in a run. Its text spells out 32 rows. (The ack's deletes
 * gain nothing from a run: a 32-id DELETE ... IN (VALUES ...) cost 8.6k a
 * row against 8.7k one by one, the b-tree work being most of it.) */
#define X_RUN 32
/* Row i of a run: the id's halves are parameters ?(4+2i), ?(5+2i) (?1 the
 * gid, ?2 the consumer, ?3 the delivery time). */
#define X_PR(a, b) "(?1,?" #a ",?" #b ",?2,?3,1)"

static const char *const xsql[X_COUNT] = {
    [X_META_GET] = "SELECT length, last_ms, last_seq, added, maxdel_ms,"
                   " maxdel_seq FROM xmeta WHERE kid = ?1",
    [X_META_PUT] = "INSERT OR REPLACE INTO xmeta(kid, length, last_ms,"
                   " last_seq, added, maxdel_ms, maxdel_seq)"
                   " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [X_META_DEL] = "DELETE FROM xmeta WHERE kid = ?1",
    [X_FIRST] = "SELECT ms, seq FROM xentry WHERE kid = ?1"
                " ORDER BY ms, seq LIMIT 1",
    [X_E_INSERT] = "INSERT INTO xentry(kid, ms, seq, fields)"
                   " VALUES(?1, ?2, ?3, ?4)",
    [X_E_GET] = "SELECT fields FROM xentry WHERE kid = ?1 AND ms = ?2"
                " AND seq = ?3",
    [X_E_DEL] = "DELETE FROM xentry WHERE kid = ?1 AND ms = ?2 AND seq = ?3",
    [X_E_ASC] = "SELECT ms, seq, fields FROM xentry WHERE kid = ?1"
                " AND (ms, seq) >= (?2, ?3) AND (ms, seq) <= (?4, ?5)"
                " ORDER BY ms, seq LIMIT ?6",
    [X_E_DESC] = "SELECT ms, seq, fields FROM xentry WHERE kid = ?1"
                 " AND (ms, seq) >= (?2, ?3) AND (ms, seq) <= (?4, ?5)"
                 " ORDER BY ms DESC, seq DESC LIMIT ?6",
    [X_E_NTH] = "SELECT ms, seq FROM xentry WHERE kid = ?1"
                " ORDER BY ms, seq LIMIT 1 OFFSET ?2",
    [X_E_BELOW] = "SELECT count(*) FROM xentry WHERE kid = ?1"
                  " AND (ms, seq) < (?2, ?3)",
    [X_E_DEL_UPTO] = "DELETE FROM xentry WHERE kid = ?1"
                     " AND (ms, seq) <= (?2, ?3)",
    [X_E_DROP] = "DELETE FROM xentry WHERE kid = ?1",
    [X_G_GET] = "SELECT gid, last_ms, last_seq, entries_read FROM xgroup"
                " WHERE kid = ?1 AND name = ?2",
    [X_G_INSERT] = "INSERT INTO xgroup(kid, name, last_ms, last_seq,"
                   " entries_read) VALUES(?1, ?2, ?3, ?4, ?5)",
    [X_G_UPDATE] = "UPDATE xgroup SET last_ms = ?2, last_seq = ?3,"
                   " entries_read = ?4 WHERE gid = ?1",
    [X_G_DEL] = "DELETE FROM xgroup WHERE gid = ?1",
    [X_G_ALL] = "SELECT gid, name, last_ms, last_seq, entries_read"
                " FROM xgroup WHERE kid = ?1 ORDER BY name",
    [X_G_DROP_PEL] = "DELETE FROM xpel WHERE gid IN"
                     " (SELECT gid FROM xgroup WHERE kid = ?1)",
    [X_G_DROP_CONS] = "DELETE FROM xconsumer WHERE gid IN"
                      " (SELECT gid FROM xgroup WHERE kid = ?1)",
    [X_G_DROP] = "DELETE FROM xgroup WHERE kid = ?1",
    [X_C_GET] = "SELECT seen, active FROM xconsumer WHERE gid = ?1"
                " AND name = ?2",
    [X_C_INSERT] = "INSERT INTO xconsumer(gid, name, seen, active)"
                   " VALUES(?1, ?2, ?3, ?4)",
    [X_C_TOUCH] = "UPDATE xconsumer SET seen = ?3, active = CASE WHEN ?4 < 0"
                  " THEN active ELSE ?4 END WHERE gid = ?1 AND name = ?2",
    [X_C_DEL] = "DELETE FROM xconsumer WHERE gid = ?1 AND name = ?2",
    [X_C_ALL] = "SELECT name, seen, active, (SELECT count(*) FROM xpel p"
                " WHERE p.gid = c.gid AND p.consumer = c.name)"
                " FROM xconsumer c WHERE gid = ?1 ORDER BY name",
    [X_C_COUNT] = "SELECT count(*) FROM xconsumer WHERE gid = ?1",
    [X_C_DROPG] = "DELETE FROM xconsumer WHERE gid = ?1",
    [X_P_GET] = "SELECT consumer, dtime, dcount FROM xpel WHERE gid = ?1"
                " AND ms = ?2 AND seq = ?3",
    [X_P_PUT] = "INSERT OR REPLACE INTO xpel(gid, ms, seq, consumer, dtime,"
                " dcount) VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
    [X_P_DEL] = "DELETE FROM xpel WHERE gid = ?1 AND ms = ?2 AND seq = ?3",
    [X_P_COUNT] = "SELECT count(*) FROM xpel WHERE gid = ?1",
    [X_P_COUNT_C] = "SELECT count(*) FROM xpel WHERE gid = ?1"
                    " AND consumer = ?2",
    [X_P_DEL_C] = "DELETE FROM xpel WHERE gid = ?1 AND consumer = ?2",
    [X_P_DROPG] = "DELETE FROM xpel WHERE gid = ?1",
    [X_P_RANGE] = "SELECT ms, seq, consumer, dtime, dcount FROM xpel"
                  " WHERE gid = ?1 AND (ms, seq) >= (?2, ?3)"
                  " AND (ms, seq) <= (?4, ?5) ORDER BY ms, seq LIMIT ?6",
    [X_P_RANGE_C] = "SELECT ms, seq, consumer, dtime, dcount FROM xpel"
                    " WHERE gid = ?1 AND consumer = ?7"
                    " AND (ms, seq) >= (?2, ?3) AND (ms, seq) <= (?4, ?5)"
                    " ORDER BY ms, seq LIMIT ?6",
    [X_P_OWNERS] = "SELECT consumer, count(*) FROM xpel WHERE gid = ?1"
                   " GROUP BY consumer ORDER BY consumer",
    [X_P_FIRST] = "SELECT ms, seq FROM xpel WHERE gid = ?1"
                  " ORDER BY ms, seq LIMIT 1",
    [X_P_LAST] = "SELECT ms, seq FROM xpel WHERE gid = ?1"
                 " ORDER BY ms DESC, seq DESC LIMIT 1",
    [X_P_NEXT] = "SELECT ms, seq, consumer, dtime, dcount FROM xpel"
                 " WHERE gid = ?1 AND (ms, seq) >= (?2, ?3)"
                 " ORDER BY ms, seq LIMIT 1",
    /* A group read's consumer, created if new, seen now (and active now
     * when ?4 >= 0): one statement where a look and a write were two. */
    [X_C_SEEN] = "INSERT INTO xconsumer(gid, name, seen, active)"
                 " VALUES(?1, ?2, ?3, ?4) ON CONFLICT(gid, name) DO UPDATE"
                 " SET seen = excluded.seen, active = CASE WHEN"
                 " excluded.active < 0 THEN active ELSE excluded.active END",
    /* X_RUN new deliveries (count 1) of consumer ?2 at ?3; a record of
     * the same id is replaced, row by row, as X_P_PUT does. */
    [X_P_PUT_RUN] = "INSERT OR REPLACE INTO xpel(gid, ms, seq, consumer,"
                    " dtime, dcount) VALUES"
                    X_PR(4, 5) "," X_PR(6, 7) "," X_PR(8, 9) ","
                    X_PR(10, 11) "," X_PR(12, 13) "," X_PR(14, 15) ","
                    X_PR(16, 17) "," X_PR(18, 19) "," X_PR(20, 21) ","
                    X_PR(22, 23) "," X_PR(24, 25) "," X_PR(26, 27) ","
                    X_PR(28, 29) "," X_PR(30, 31) "," X_PR(32, 33) ","
                    X_PR(34, 35) "," X_PR(36, 37) "," X_PR(38, 39) ","
                    X_PR(40, 41) "," X_PR(42, 43) "," X_PR(44, 45) ","
                    X_PR(46, 47) "," X_PR(48, 49) "," X_PR(50, 51) ","
                    X_PR(52, 53) "," X_PR(54, 55) "," X_PR(56, 57) ","
                    X_PR(58, 59) "," X_PR(60, 61) "," X_PR(62, 63) ","
                    X_PR(64, 65) "," X_PR(66, 67),
};

/* The statements and the decode scratch of one store. */
struct emq_xs {
    sqlite3_stmt *s[X_COUNT];
    emq_bytes *fv;
    size_t fvcap;
    emq_buf enc;
};

void emq_xs_close(emq_store *st)
{
    if (!st->xs)
        return;
    for (int i = 0; i < X_COUNT; i++)
        sqlite3_finalize(st->xs->s[i]);
    emq_mem_free(st->xs->fv);
    emq_buf_free(&st->xs->enc);
    emq_mem_free(st->xs);
    st->xs = NULL;
}

static sqlite3_stmt *xstmt(emq_store *st, int id)
{
    if (!st->xs && !(st->xs = emq_mem_calloc(1, sizeof *st->xs)))
        return NULL;
    if (!st->xs->s[id] &&
        sqlite3_prepare_v3(st->db, xsql[id], -1, SQLITE_PREPARE_PERSISTENT,
                           &st->xs->s[id], NULL) != SQLITE_OK)
        return NULL;
    return st->xs->s[id];
}

/* The failure of a statement that could not be prepared: no memory for
 * the statement table, or SQLite's own error. */
static int nostmt(emq_store *st)
{
    if (!st->xs)
        return emq_store_err(st, EMQ_ENOMEM, "out of memory");
    return emq_store_fail(st, sqlite3_errcode(st->db));
}

/* ------------------------------------------------------------------ ids */

#define TOP UINT64_C(0x8000000000000000)

static int64_t bias(uint64_t u) { return (int64_t)(u ^ TOP); }
static uint64_t unbias(int64_t v) { return (uint64_t)v ^ TOP; }

static const emq_xid XID_MAX = { UINT64_MAX, UINT64_MAX };

int emq_xid_cmp(emq_xid a, emq_xid b)
{
    if (a.ms != b.ms)
        return a.ms < b.ms ? -1 : 1;
    if (a.seq != b.seq)
        return a.seq < b.seq ? -1 : 1;
    return 0;
}

int emq_xid_zero(emq_xid id)
{
    return id.ms == 0 && id.seq == 0;
}

static size_t fmt_u64(char *buf, uint64_t u)
{
    char tmp[21];
    size_t n = 0, len = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n)
        buf[len++] = tmp[--n];
    return len;
}

size_t emq_xid_fmt(char *buf, emq_xid id)
{
    size_t n = fmt_u64(buf, id.ms);
    buf[n++] = '-';
    n += fmt_u64(buf + n, id.seq);
    buf[n] = '\0';
    return n;
}

int emq_xid_incr(emq_xid *id)
{
    if (id->seq == UINT64_MAX) {
        if (id->ms == UINT64_MAX)
            return -1;
        id->ms++;
        id->seq = 0;
    } else {
        id->seq++;
    }
    return 0;
}

int emq_xid_decr(emq_xid *id)
{
    if (id->seq == 0) {
        if (id->ms == 0)
            return -1;
        id->ms--;
        id->seq = UINT64_MAX;
    } else {
        id->seq--;
    }
    return 0;
}

static void bind_id(sqlite3_stmt *s, int i, emq_xid id)
{
    sqlite3_bind_int64(s, i, bias(id.ms));
    sqlite3_bind_int64(s, i + 1, bias(id.seq));
}

static emq_xid col_id(sqlite3_stmt *s, int i)
{
    emq_xid id = { unbias(sqlite3_column_int64(s, i)),
                   unbias(sqlite3_column_int64(s, i + 1)) };
    return id;
}

/* ------------------------------------------------------------- fields */

/* Encode nfv byte strings into st->xs->enc. */
static int encode(emq_store *st, const emq_bytes *fv, size_t nfv)
{
    emq_buf *b = &st->xs->enc;
    b->len = 0;
    if (emq_varint_put(b, nfv))
        return emq_store_err(st, EMQ_ENOMEM, "out of memory");
    for (size_t i = 0; i < nfv; i++)
        if (emq_varint_put(b, fv[i].n) || emq_buf_append(b, fv[i].p, fv[i].n))
            return emq_store_err(st, EMQ_ENOMEM, "out of memory");
    return EMQ_OK;
}

/* Decode a fields blob into views of it (valid while the blob is). */
static int decode(emq_store *st, const unsigned char *p, size_t n,
                  const emq_bytes **fv, size_t *nfv)
{
    const unsigned char *end = p + n;
    uint64_t cnt, len;
    if (!p)
        p = end = (const unsigned char *)"";
    if (emq_varint_get(&p, end, &cnt) || cnt > (uint64_t)(end - p))
        return emq_store_err(st, EMQ_ECORRUPT, "a stream entry is damaged");
    if (cnt > st->xs->fvcap) {
        emq_bytes *a = emq_mem_realloc(st->xs->fv, (size_t)cnt * sizeof *a);
        if (!a)
            return emq_store_err(st, EMQ_ENOMEM, "out of memory");
        st->xs->fv = a;
        st->xs->fvcap = (size_t)cnt;
    }
    for (uint64_t i = 0; i < cnt; i++) {
        if (emq_varint_get(&p, end, &len) || len > (uint64_t)(end - p))
            return emq_store_err(st, EMQ_ECORRUPT, "a stream entry is "
                                                   "damaged");
        st->xs->fv[i].p = p;
        st->xs->fv[i].n = (size_t)len;
        p += len;
    }
    *fv = st->xs->fv;
    *nfv = (size_t)cnt;
    return EMQ_OK;
}

/* ----------------------------------------------------------------- rows */

/* Step a statement that answers at most one row: SQLITE_ROW / DONE. */
static int step1(emq_store *st, sqlite3_stmt *s, int *row)
{
    int rc = sqlite3_step(s);
    *row = rc == SQLITE_ROW;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        emq_stmt_done(s);
        return emq_store_fail(st, rc);
    }
    return EMQ_OK;
}

/* Run a write statement to completion and reset it. */
static int run(emq_store *st, sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    emq_stmt_done(s);
    return rc == SQLITE_DONE ? EMQ_OK : emq_store_fail(st, rc);
}

/* Run a one-integer query (count) into *n. */
static int count_of(emq_store *st, sqlite3_stmt *s, int64_t *n)
{
    int row, rc = step1(st, s, &row);
    if (rc != EMQ_OK)
        return rc;
    *n = row ? sqlite3_column_int64(s, 0) : 0;
    emq_stmt_done(s);
    return EMQ_OK;
}

/* The stream and its metadata (m.first once loaded: load_first). */
typedef struct xstream {
    int64_t kid;
    emq_xmeta m;
} xstream;

static int meta_get(emq_store *st, xstream *x)
{
    sqlite3_stmt *s = xstmt(st, X_META_GET);
    int row, rc;
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, x->kid);
    if ((rc = step1(st, s, &row)) != EMQ_OK)
        return rc;
    memset(&x->m, 0, sizeof x->m);
    if (row) {
        x->m.length = (uint64_t)sqlite3_column_int64(s, 0);
        x->m.last = col_id(s, 1);
        x->m.entries_added = (uint64_t)sqlite3_column_int64(s, 3);
        x->m.max_deleted = col_id(s, 4);
    }
    emq_stmt_done(s);
    return EMQ_OK;
}

/* The first entry id (0-0 when empty): read only where a rule needs it. */
static int load_first(emq_store *st, xstream *x)
{
    sqlite3_stmt *s;
    int row, rc;
    x->m.first.ms = x->m.first.seq = 0;
    if (x->m.length == 0)
        return EMQ_OK;
    if (!(s = xstmt(st, X_FIRST)))
        return nostmt(st);
    sqlite3_bind_int64(s, 1, x->kid);
    if ((rc = step1(st, s, &row)) != EMQ_OK)
        return rc;
    if (row)
        x->m.first = col_id(s, 0);
    emq_stmt_done(s);
    return EMQ_OK;
}

static int meta_put(emq_store *st, const xstream *x)
{
    sqlite3_stmt *s = xstmt(st, X_META_PUT);
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, x->kid);
    sqlite3_bind_int64(s, 2, (int64_t)x->m.length);
    bind_id(s, 3, x->m.last);
    sqlite3_bind_int64(s, 5, (int64_t)x->m.entries_added);
    bind_id(s, 6, x->m.max_deleted);
    return run(st, s);
}

/* Find stream `key`: EMQ_OK (x filled), EMQ_NOTFOUND, or an error. */
static int find(emq_store *st, const void *key, size_t klen, xstream *x)
{
    emq_keyrow kr;
    int rc = emq_key_lookup(st, key, klen, EMQ_T_STREAM, &kr, 0);
    memset(x, 0, sizeof *x);
    if (rc != EMQ_OK)
        return rc;
    if (kr.type != EMQ_T_STREAM)
        return EMQ_NOTFOUND;
    x->kid = kr.kid;
    return meta_get(st, x);
}

/* Create stream `key` (absent) with empty metadata. */
static int create(emq_store *st, const void *key, size_t klen, xstream *x)
{
    int rc;
    memset(x, 0, sizeof *x);
    if ((rc = emq_key_create(st, key, klen, EMQ_T_STREAM, &x->kid)) != EMQ_OK)
        return rc;
    return meta_put(st, x);
}

int emq_xs_meta(emq_store *st, const void *key, size_t klen, emq_xmeta *m)
{
    xstream x;
    int rc = find(st, key, klen, &x);
    if (rc == EMQ_OK && (rc = load_first(st, &x)) == EMQ_OK)
        *m = x.m;
    return rc;
}

int emq_xs_drop(emq_store *st, int64_t kid)
{
    static const int drops[] = { X_E_DROP, X_G_DROP_PEL, X_G_DROP_CONS,
                                 X_G_DROP, X_META_DEL };
    for (size_t i = 0; i < sizeof drops / sizeof *drops; i++) {
        sqlite3_stmt *s = xstmt(st, drops[i]);
        int rc;
        if (!s)
            return nostmt(st);
        sqlite3_bind_int64(s, 1, kid);
        if ((rc = run(st, s)) != EMQ_OK)
            return rc;
    }
    return EMQ_OK;
}

/* 1 when entry id exists in stream kid (else 0; *rc on failure). */
static int entry_exists(emq_store *st, int64_t kid, emq_xid id, int *rc)
{
    sqlite3_stmt *s = xstmt(st, X_E_GET);
    int row = 0;
    if (!s) {
        *rc = nostmt(st);
        return 0;
    }
    sqlite3_bind_int64(s, 1, kid);
    bind_id(s, 2, id);
    if ((*rc = step1(st, s, &row)) == EMQ_OK)
        emq_stmt_done(s);
    return row;
}

int emq_xs_exists(emq_store *st, const void *key, size_t klen, emq_xid id,
                  int *rc)
{
    xstream x;
    *rc = find(st, key, klen, &x);
    if (*rc != EMQ_OK) {
        if (*rc == EMQ_NOTFOUND)
            *rc = EMQ_OK;
        return 0;
    }
    return entry_exists(st, x.kid, id, rc);
}

/* Call cb with entry id's fields (fv NULL when it is gone); *found. */
static int with_entry(emq_store *st, int64_t kid, emq_xid id,
                      emq_xentry_cb cb, void *ctx, int *found)
{
    sqlite3_stmt *s = xstmt(st, X_E_GET);
    const emq_bytes *fv = NULL;
    size_t nfv = 0;
    int row, rc;
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, kid);
    bind_id(s, 2, id);
    if ((rc = step1(st, s, &row)) != EMQ_OK)
        return rc;
    *found = row;
    if (row)
        rc = decode(st, sqlite3_column_blob(s, 0),
                    (size_t)sqlite3_column_bytes(s, 0), &fv, &nfv);
    if (rc == EMQ_OK && cb)
        rc = cb(ctx, id, row ? fv : NULL, nfv);
    emq_stmt_done(s);
    return rc;
}

/* -------------------------------------------------------------- append */

int emq_xs_add(emq_store *st, const void *key, size_t klen,
               const emq_xadd *a, emq_xid *out)
{
    xstream x;
    emq_xid id = a->id;
    int rc;
    int64_t removed;

    if (a->idmode == EMQ_XADD_EXPLICIT && emq_xid_zero(a->id))
        return emq_store_err(st, EMQ_EENGINE, "ERR The ID specified in XADD "
                             "must be greater than 0-0");
    rc = find(st, key, klen, &x);
    if (rc == EMQ_NOTFOUND) {
        if (a->nomkstream)
            return EMQ_NOTFOUND;
        memset(&x, 0, sizeof x); /* created below, once the id is good */
    } else if (rc != EMQ_OK) {
        return rc;
    }
    if (emq_xid_cmp(x.m.last, XID_MAX) == 0)
        return emq_store_err(st, EMQ_EENGINE, "ERR The stream has exhausted "
                             "the last possible ID, unable to add more "
                             "items");
    switch (a->idmode) {
    case EMQ_XADD_AUTO: {
        uint64_t now = st->now > 0 ? (uint64_t)st->now : 0;
        if (now > x.m.last.ms) {
            id.ms = now;
            id.seq = 0;
        } else {
            id = x.m.last;
            emq_xid_incr(&id);
        }
        break;
    }
    case EMQ_XADD_SEQAUTO:
        if (id.ms == x.m.last.ms) {
            if (x.m.last.seq == UINT64_MAX)
                goto too_small;
            id.seq = x.m.last.seq + 1;
        } else if (id.ms < x.m.last.ms) {
            goto too_small;
        } else {
            id.seq = 0;
        }
        break;
    default:
        if (emq_xid_cmp(id, x.m.last) <= 0)
            goto too_small;
        break;
    }
    if (!x.kid) {
        if ((rc = create(st, key, klen, &x)) != EMQ_OK)
            return rc;
    }
    if ((rc = encode(st, a->fv, a->nfv)) != EMQ_OK)
        return rc;
    sqlite3_stmt *s = xstmt(st, X_E_INSERT);
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, x.kid);
    bind_id(s, 2, id);
    emq_bind_blob(s, 4, st->xs->enc.p, st->xs->enc.len);
    if ((rc = run(st, s)) != EMQ_OK)
        return rc;
    if (x.m.length == 0)
        x.m.first = id;
    x.m.length++;
    x.m.last = id;
    x.m.entries_added++;
    if ((rc = meta_put(st, &x)) != EMQ_OK)
        return rc;
    *out = id;
    if (a->trim.how != EMQ_XTRIM_NONE)
        return emq_xs_trim(st, key, klen, &a->trim, &removed);
    return EMQ_OK;
too_small:
    return emq_store_err(st, EMQ_ENONMONO, "ERR The ID specified in XADD is "
                         "equal or smaller than the target stream top item");
}

/* ---------------------------------------------------------------- trim */

/* How many leading entries the exact form of `t` removes. */
static int exact_count(emq_store *st, const xstream *x, const emq_xtrim *t,
                       uint64_t *k)
{
    if (t->how == EMQ_XTRIM_MAXLEN) {
        *k = x->m.length > t->maxlen ? x->m.length - t->maxlen : 0;
        return EMQ_OK;
    }
    sqlite3_stmt *s = xstmt(st, X_E_BELOW);
    int64_t n;
    int rc;
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, x->kid);
    bind_id(s, 2, t->minid);
    if ((rc = count_of(st, s, &n)) != EMQ_OK)
        return rc;
    *k = (uint64_t)n;
    return EMQ_OK;
}

/* Remove the first k entries of the stream. */
static int drop_head(emq_store *st, xstream *x, uint64_t k)
{
    sqlite3_stmt *s;
    emq_xid upto;
    int row, rc;
    if (k == 0)
        return EMQ_OK;
    if (!(s = xstmt(st, X_E_NTH)))
        return nostmt(st);
    sqlite3_bind_int64(s, 1, x->kid);
    sqlite3_bind_int64(s, 2, (int64_t)(k - 1));
    if ((rc = step1(st, s, &row)) != EMQ_OK)
        return rc;
    if (!row) {
        emq_stmt_done(s);
        return emq_store_err(st, EMQ_ECORRUPT, "a stream's length is wrong");
    }
    upto = col_id(s, 0);
    emq_stmt_done(s);
    if (!(s = xstmt(st, X_E_DEL_UPTO)))
        return nostmt(st);
    sqlite3_bind_int64(s, 1, x->kid);
    bind_id(s, 2, upto);
    if ((rc = run(st, s)) != EMQ_OK)
        return rc;
    x->m.length -= k;
    return meta_put(st, x);
}

int emq_xs_trim(emq_store *st, const void *key, size_t klen,
                const emq_xtrim *t, int64_t *removed)
{
    xstream x;
    uint64_t k = 0;
    int rc = find(st, key, klen, &x);
    *removed = 0;
    if (rc == EMQ_NOTFOUND)
        return EMQ_OK;
    if (rc != EMQ_OK || t->how == EMQ_XTRIM_NONE)
        return rc;
    if ((rc = exact_count(st, &x, t, &k)) != EMQ_OK)
        return rc;
    if (t->approx) {
        /* D-16: whole leading blocks of 100 that the exact form removes,
         * within LIMIT (Valkey's default: 100 nodes of 100 entries). */
        uint64_t cap = t->limit < 0 ? 10000
                     : t->limit == 0 ? UINT64_MAX : (uint64_t)t->limit;
        if (k > cap)
            k = cap;
        k -= k % 100;
    }
    if ((rc = drop_head(st, &x, k)) != EMQ_OK)
        return rc;
    *removed = (int64_t)k;
    return EMQ_OK;
}

/* ----------------------------------------------------------------- del */

int emq_xs_del(emq_store *st, const void *key, size_t klen,
               const emq_xid *ids, size_t n, int64_t *deleted)
{
    xstream x;
    int rc = find(st, key, klen, &x);
    *deleted = 0;
    if (rc == EMQ_NOTFOUND)
        return EMQ_OK;
    if (rc != EMQ_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        sqlite3_stmt *s = xstmt(st, X_E_DEL);
        if (!s)
            return nostmt(st);
        sqlite3_bind_int64(s, 1, x.kid);
        bind_id(s, 2, ids[i]);
        if ((rc = run(st, s)) != EMQ_OK)
            return rc;
        if (sqlite3_changes(st->db) == 0)
            continue;
        (*deleted)++;
        x.m.length--;
        if (emq_xid_cmp(ids[i], x.m.max_deleted) > 0)
            x.m.max_deleted = ids[i];
    }
    return *deleted ? meta_put(st, &x) : EMQ_OK;
}

/* --------------------------------------------------------------- range */

/* Walk entries start..end (rev: descending), at most count (0: all). */
static int walk_entries(emq_store *st, int64_t kid, emq_xid start,
                        emq_xid end, int rev, uint64_t count,
                        emq_xentry_cb cb, void *ctx)
{
    sqlite3_stmt *s = xstmt(st, rev ? X_E_DESC : X_E_ASC);
    int rc = EMQ_OK, step;
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, kid);
    bind_id(s, 2, start);
    bind_id(s, 4, end);
    sqlite3_bind_int64(s, 6, count == 0 || count > INT64_MAX
                                 ? -1 : (int64_t)count);
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        const emq_bytes *fv;
        size_t nfv;
        rc = decode(st, sqlite3_column_blob(s, 2),
                    (size_t)sqlite3_column_bytes(s, 2), &fv, &nfv);
        if (rc == EMQ_OK)
            rc = cb(ctx, col_id(s, 0), fv, nfv);
        if (rc != EMQ_OK)
            break;
    }
    if (rc == EMQ_OK && step != SQLITE_DONE)
        rc = emq_store_fail(st, step);
    emq_stmt_done(s);
    return rc;
}

int emq_xs_range(emq_store *st, const void *key, size_t klen, emq_xid start,
                 emq_xid end, int rev, uint64_t count, emq_xentry_cb cb,
                 void *ctx)
{
    xstream x;
    int rc = find(st, key, klen, &x);
    if (rc != EMQ_OK)
        return rc;
    if (emq_xid_cmp(start, end) > 0)
        return EMQ_OK;
    return walk_entries(st, x.kid, start, end, rev, count, cb, ctx);
}

/* ----------------------------------------------------------- lag rules */

/* 1 when a deleted entry (a tombstone) may lie at or above `from`. */
static int tombstones_from(const emq_xmeta *m, emq_xid from)
{
    if (m->length == 0 || emq_xid_zero(m->max_deleted))
        return 0;
    if (emq_xid_cmp(m->first, m->max_deleted) > 0)
        return 0; /* every tombstone lies before the first entry */
    return emq_xid_cmp(from, m->max_deleted) <= 0;
}

/* The entries-read counter of the entry at `id`, or -1 when it cannot be
 * told from the stream's counters alone. */
static int64_t estimate_read(const emq_xmeta *m, emq_xid id)
{
    int c;
    if (m->entries_added == 0)
        return 0;
    if (m->length == 0 && emq_xid_cmp(id, m->last) <= 0)
        return (int64_t)m->entries_added;
    c = emq_xid_cmp(id, m->last);
    if (c == 0)
        return (int64_t)m->entries_added;
    if (c > 0)
        return -1;
    if (emq_xid_zero(m->max_deleted) ||
        emq_xid_cmp(m->max_deleted, m->first) < 0) {
        c = emq_xid_cmp(id, m->first);
        if (c < 0)
            return (int64_t)(m->entries_added - m->length);
        if (c == 0)
            return (int64_t)(m->entries_added - m->length + 1);
    }
    return -1;
}

/* -------------------------------------------------------------- groups */

typedef struct xgroup {
    int64_t gid;
    emq_xid last;
    int64_t entries_read; /* -1 unknown */
} xgroup;

/* Group g of stream kid: EMQ_OK, EMQ_XNOGROUP or an error. */
static int group_get(emq_store *st, int64_t kid, const void *g, size_t glen,
                     xgroup *out)
{
    sqlite3_stmt *s = xstmt(st, X_G_GET);
    int row, rc;
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, kid);
    emq_bind_blob(s, 2, g, glen);
    if ((rc = step1(st, s, &row)) != EMQ_OK)
        return rc;
    if (row) {
        out->gid = sqlite3_column_int64(s, 0);
        out->last = col_id(s, 1);
        out->entries_read = sqlite3_column_type(s, 3) == SQLITE_NULL
                                ? -1 : sqlite3_column_int64(s, 3);
    }
    emq_stmt_done(s);
    return row ? EMQ_OK : EMQ_XNOGROUP;
}

static int group_put(emq_store *st, const xgroup *g)
{
    sqlite3_stmt *s = xstmt(st, X_G_UPDATE);
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, g->gid);
    bind_id(s, 2, g->last);
    if (g->entries_read < 0)
        sqlite3_bind_null(s, 4);
    else
        sqlite3_bind_int64(s, 4, g->entries_read);
    return run(st, s);
}

/* The stream and its group: EMQ_OK, EMQ_NOTFOUND, EMQ_XNOGROUP, errors. */
static int find_group(emq_store *st, const void *key, size_t klen,
                      const void *g, size_t glen, xstream *x, xgroup *grp)
{
    int rc = find(st, key, klen, x);
    if (rc != EMQ_OK)
        return rc;
    return group_get(st, x->kid, g, glen, grp);
}

int emq_xs_group_exists(emq_store *st, const void *key, size_t klen,
                        const void *g, size_t glen)
{
    xstream x;
    xgroup grp;
    return find_group(st, key, klen, g, glen, &x, &grp);
}

int emq_xs_group_create(emq_store *st, const void *key, size_t klen,
                        const void *g, size_t glen, const emq_xid *id,
                        int mkstream, int64_t entries_read)
{
    xstream x;
    xgroup grp;
    int rc = find(st, key, klen, &x);
    if (rc == EMQ_NOTFOUND) {
        if (!mkstream)
            return EMQ_NOTFOUND;
        if ((rc = create(st, key, klen, &x)) != EMQ_OK)
            return rc;
    } else if (rc != EMQ_OK) {
        return rc;
    }
    rc = group_get(st, x.kid, g, glen, &grp);
    if (rc == EMQ_OK)
        return EMQ_EXISTS;
    if (rc != EMQ_XNOGROUP)
        return rc;
    sqlite3_stmt *s = xstmt(st, X_G_INSERT);
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, x.kid);
    emq_bind_blob(s, 2, g, glen);
    bind_id(s, 3, id ? *id : x.m.last);
    if (entries_read < 0)
        sqlite3_bind_null(s, 5);
    else
        sqlite3_bind_int64(s, 5, entries_read);
    return run(st, s);
}

int emq_xs_group_setid(emq_store *st, const void *key, size_t klen,
                       const void *g, size_t glen, const emq_xid *id,
                       int64_t entries_read)
{
    xstream x;
    xgroup grp;
    int rc = find_group(st, key, klen, g, glen, &x, &grp);
    if (rc != EMQ_OK)
        return rc;
    grp.last = id ? *id : x.m.last;
    grp.entries_read = entries_read < 0 ? -1 : entries_read;
    return group_put(st, &grp);
}

/* Run a statement bound to (gid) or (gid, name). */
static int run_gid(emq_store *st, int id, int64_t gid, const void *n,
                   size_t nlen)
{
    sqlite3_stmt *s = xstmt(st, id);
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, gid);
    if (n)
        emq_bind_blob(s, 2, n, nlen);
    return run(st, s);
}

int emq_xs_group_destroy(emq_store *st, const void *key, size_t klen,
                         const void *g, size_t glen, int *removed)
{
    xstream x;
    xgroup grp;
    int rc = find_group(st, key, klen, g, glen, &x, &grp);
    *removed = 0;
    if (rc == EMQ_XNOGROUP)
        return EMQ_OK;
    if (rc != EMQ_OK)
        return rc;
    if ((rc = run_gid(st, X_P_DROPG, grp.gid, NULL, 0)) != EMQ_OK ||
        (rc = run_gid(st, X_C_DROPG, grp.gid, NULL, 0)) != EMQ_OK ||
        (rc = run_gid(st, X_G_DEL, grp.gid, NULL, 0)) != EMQ_OK)
        return rc;
    *removed = 1;
    return EMQ_OK;
}

/* Consumer c of group gid: *exists. */
static int consumer_exists(emq_store *st, int64_t gid, const void *c,
                           size_t clen, int *exists)
{
    sqlite3_stmt *s = xstmt(st, X_C_GET);
    int rc;
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, gid);
    emq_bind_blob(s, 2, c, clen);
    if ((rc = step1(st, s, exists)) == EMQ_OK)
        emq_stmt_done(s);
    return rc;
}

/* Create consumer c (seen now, never active) unless it exists. */
static int consumer_ensure(emq_store *st, int64_t gid, const void *c,
                           size_t clen, int *created)
{
    int exists, rc = consumer_exists(st, gid, c, clen, &exists);
    *created = 0;
    if (rc != EMQ_OK || exists)
        return rc;
    sqlite3_stmt *s = xstmt(st, X_C_INSERT);
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, gid);
    emq_bind_blob(s, 2, c, clen);
    sqlite3_bind_int64(s, 3, st->now);
    sqlite3_bind_int64(s, 4, -1);
    if ((rc = run(st, s)) == EMQ_OK)
        *created = 1;
    return rc;
}

/* The consumer was seen now (and, when `active`, did work now): statement
 * `which`, X_C_TOUCH (an existing consumer) or X_C_SEEN (created if new:
 * a group read's, which reads no consumer row before it). */
static int consumer_mark(emq_store *st, int which, int64_t gid,
                         const void *c, size_t clen, int active)
{
    sqlite3_stmt *s = xstmt(st, which);
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, gid);
    emq_bind_blob(s, 2, c, clen);
    sqlite3_bind_int64(s, 3, st->now);
    sqlite3_bind_int64(s, 4, active ? st->now : -1);
    return run(st, s);
}

int emq_xs_consumer_create(emq_store *st, const void *key, size_t klen,
                           const void *g, size_t glen, const void *c,
                           size_t clen, int *created)
{
    xstream x;
    xgroup grp;
    int rc = find_group(st, key, klen, g, glen, &x, &grp);
    *created = 0;
    if (rc != EMQ_OK)
        return rc;
    return consumer_ensure(st, grp.gid, c, clen, created);
}

static int count_gid(emq_store *st, int id, int64_t gid, const void *n,
                     size_t nlen, int64_t *out)
{
    sqlite3_stmt *s = xstmt(st, id);
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, gid);
    if (n)
        emq_bind_blob(s, 2, n, nlen);
    return count_of(st, s, out);
}

int emq_xs_consumer_delete(emq_store *st, const void *key, size_t klen,
                           const void *g, size_t glen, const void *c,
                           size_t clen, int64_t *pending)
{
    xstream x;
    xgroup grp;
    int exists;
    int rc = find_group(st, key, klen, g, glen, &x, &grp);
    *pending = 0;
    if (rc != EMQ_OK)
        return rc;
    if ((rc = consumer_exists(st, grp.gid, c, clen, &exists)) != EMQ_OK ||
        !exists)
        return rc;
    if ((rc = count_gid(st, X_P_COUNT_C, grp.gid, c, clen, pending)) != EMQ_OK
        || (rc = run_gid(st, X_P_DEL_C, grp.gid, c, clen)) != EMQ_OK)
        return rc;
    return run_gid(st, X_C_DEL, grp.gid, c, clen);
}

/* ----------------------------------------------------------------- PEL */

typedef struct pelrec {
    int found;
    emq_buf owner;
    int64_t dtime, dcount;
} pelrec;

/* The PEL record of id in group gid (r->found = 0 when none). */
static int pel_get(emq_store *st, int64_t gid, emq_xid id, pelrec *r)
{
    sqlite3_stmt *s = xstmt(st, X_P_GET);
    int rc;
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, gid);
    bind_id(s, 2, id);
    if ((rc = step1(st, s, &r->found)) != EMQ_OK)
        return rc;
    if (r->found) {
        r->dtime = sqlite3_column_int64(s, 1);
        r->dcount = sqlite3_column_int64(s, 2);
        rc = emq_buf_set(&r->owner, sqlite3_column_blob(s, 0),
                         (size_t)sqlite3_column_bytes(s, 0));
        if (rc != EMQ_OK)
            rc = emq_store_err(st, EMQ_ENOMEM, "out of memory");
    }
    emq_stmt_done(s);
    return rc;
}

static int pel_put(emq_store *st, int64_t gid, emq_xid id, const void *c,
                   size_t clen, int64_t dtime, int64_t dcount)
{
    sqlite3_stmt *s = xstmt(st, X_P_PUT);
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, gid);
    bind_id(s, 2, id);
    emq_bind_blob(s, 4, c, clen);
    sqlite3_bind_int64(s, 5, dtime);
    sqlite3_bind_int64(s, 6, dcount);
    return run(st, s);
}

static int pel_del(emq_store *st, int64_t gid, emq_xid id, int *removed)
{
    sqlite3_stmt *s = xstmt(st, X_P_DEL);
    int rc;
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, gid);
    bind_id(s, 2, id);
    rc = run(st, s);
    if (removed)
        *removed = rc == EMQ_OK && sqlite3_changes(st->db) > 0;
    return rc;
}

/* X_RUN new PEL records (consumer c, delivered at dtime, count 1), one
 * statement. */
static int pel_put_run(emq_store *st, int64_t gid, const emq_xid *ids,
                       const void *c, size_t clen, int64_t dtime)
{
    sqlite3_stmt *s = xstmt(st, X_P_PUT_RUN);
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, gid);
    emq_bind_blob(s, 2, c, clen);
    sqlite3_bind_int64(s, 3, dtime);
    for (int i = 0; i < X_RUN; i++)
        bind_id(s, 4 + 2 * i, ids[i]);
    return run(st, s);
}

/* A list of ids collected from a walk, so the walk's table can change. */
typedef struct idlist {
    emq_xid *v;
    size_t n, cap;
} idlist;

static int idlist_add(emq_store *st, idlist *l, emq_xid id)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        emq_xid *v = emq_mem_realloc(l->v, cap * sizeof *v);
        if (!v)
            return emq_store_err(st, EMQ_ENOMEM, "out of memory");
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = id;
    return EMQ_OK;
}

/* Walk PEL records start..end (of consumer c when not NULL), at most
 * count (0: all), in id order. */
static int walk_pel(emq_store *st, int64_t gid, emq_xid start, emq_xid end,
                    uint64_t count, const void *c, size_t clen,
                    int64_t min_idle, emq_xpel_cb cb, void *ctx)
{
    sqlite3_stmt *s = xstmt(st, c ? X_P_RANGE_C : X_P_RANGE);
    int rc = EMQ_OK, step;
    uint64_t left = count;
    if (!s)
        return nostmt(st);
    sqlite3_bind_int64(s, 1, gid);
    bind_id(s, 2, start);
    bind_id(s, 4, end);
    /* With an idle filter the limit counts matches: no SQL limit. */
    sqlite3_bind_int64(s, 6, count == 0 || count > INT64_MAX || min_idle > 0
                                 ? -1 : (int64_t)count);
    if (c)
        emq_bind_blob(s, 7, c, clen);
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t dtime = sqlite3_column_int64(s, 3);
        if (min_idle > 0 && st->now - dtime < min_idle)
            continue;
        rc = cb(ctx, col_id(s, 0), sqlite3_column_blob(s, 2),
                (size_t)sqlite3_column_bytes(s, 2), dtime,
                sqlite3_column_int64(s, 4));
        if (rc != EMQ_OK || (count && --left == 0))
            break;
    }
    if (rc == EMQ_OK && step != SQLITE_ROW && step != SQLITE_DONE)
        rc = emq_store_fail(st, step);
    emq_stmt_done(s);
    return rc;
}

/* ---------------------------------------------------------- group read */

typedef struct deliver {
    emq_store *st;
    const emq_xmeta *m;
    xgroup *grp;
    const void *c;
    size_t clen;
    int noack;
    emq_xentry_cb cb;
    void *ctx;
    int64_t served;
    /* the delivered ids whose PEL records are not written yet: a full run
     * goes in one statement (pel_put_run), the last few one by one */
    emq_xid run[X_RUN];
    size_t nrun;
} deliver;

/* A delivery count after one more delivery. Valkey's counter is an
 * unsigned 64-bit word (reported as a signed one); ours is SQLite's signed
 * integer, so it stops at INT64_MAX (2^63 - 1, reached only through an
 * import or RETRYCOUNT) instead of overflowing: doc/DECISIONS.md. */
static int64_t one_more(int64_t n)
{
    return n < INT64_MAX ? n + 1 : INT64_MAX;
}

/* One new entry delivered to the group: PEL, counters, last id. */
static int on_new(void *ctx, emq_xid id, const emq_bytes *fv, size_t nfv)
{
    deliver *d = ctx;
    if (!d->noack) {
        d->run[d->nrun++] = id;
        if (d->nrun == X_RUN) {
            int rc = pel_put_run(d->st, d->grp->gid, d->run, d->c, d->clen,
                                 d->st->now);
            d->nrun = 0;
            if (rc != EMQ_OK)
                return rc;
        }
    }
    if (d->grp->entries_read >= 0 && !tombstones_from(d->m, id))
        d->grp->entries_read++;
    else if (d->m->entries_added)
        d->grp->entries_read = estimate_read(d->m, id);
    d->grp->last = id;
    d->served++;
    return d->cb ? d->cb(d->ctx, id, fv, nfv) : EMQ_OK;
}

/* Collect ids of a PEL walk. */
static int on_pel_id(void *ctx, emq_xid id, const unsigned char *c,
                     size_t clen, int64_t dtime, int64_t dcount)
{
    void **a = ctx;
    (void)c, (void)clen, (void)dtime, (void)dcount;
    return idlist_add(a[0], a[1], id);
}

int emq_xs_readgroup(emq_store *st, const void *key, size_t klen,
                     const void *g, size_t glen, const void *c, size_t clen,
                     const emq_xid *after, uint64_t count, int noack,
                     emq_xentry_cb cb, void *ctx, int64_t *served)
{
    xstream x;
    xgroup grp;
    int rc = find_group(st, key, klen, g, glen, &x, &grp);
    *served = 0;
    if (rc != EMQ_OK)
        return rc;
    /* The consumer row (created if new, seen, active) is written last,
     * consumer_mark(X_C_SEEN): nothing here reads it. */
    if (!after) {
        deliver d = { st, &x.m, &grp, c, clen, noack, cb, ctx, 0, {{0, 0}},
                      0 };
        /* The counter rules look at the first id only when the counter is
         * unknown or a tombstone may lie ahead. */
        if ((grp.entries_read < 0 || !emq_xid_zero(x.m.max_deleted)) &&
            (rc = load_first(st, &x)) != EMQ_OK)
            return rc;
        emq_xid from = grp.last;
        if (emq_xid_cmp(x.m.last, grp.last) > 0 &&
            emq_xid_incr(&from) == 0) {
            if ((rc = walk_entries(st, x.kid, from, XID_MAX, 0, count,
                                   on_new, &d)) != EMQ_OK)
                return rc;
        }
        for (size_t i = 0; i < d.nrun; i++)
            if ((rc = pel_put(st, grp.gid, d.run[i], c, clen, st->now, 1))
                    != EMQ_OK)
                return rc;
        *served = d.served;
        if (d.served && (rc = group_put(st, &grp)) != EMQ_OK)
            return rc;
        return consumer_mark(st, X_C_SEEN, grp.gid, c, clen, d.served > 0);
    }
    /* History: the consumer's own PEL above `after`. */
    idlist l = { NULL, 0, 0 };
    emq_xid from = *after;
    void *pa[2] = { st, &l };
    if (emq_xid_incr(&from) == 0)
        rc = walk_pel(st, grp.gid, from, XID_MAX, count, c, clen, 0,
                      on_pel_id, pa);
    for (size_t i = 0; rc == EMQ_OK && i < l.n; i++) {
        int found;
        pelrec r = { 0, { NULL, 0, 0 }, 0, 0 };
        rc = with_entry(st, x.kid, l.v[i], cb, ctx, &found);
        if (rc == EMQ_OK && found &&
            (rc = pel_get(st, grp.gid, l.v[i], &r)) == EMQ_OK && r.found)
            rc = pel_put(st, grp.gid, l.v[i], c, clen, st->now,
                         one_more(r.dcount));
        emq_buf_free(&r.owner);
    }
    *served = (int64_t)l.n;
    emq_mem_free(l.v);
    if (rc != EMQ_OK)
        return rc;
    return consumer_mark(st, X_C_SEEN, grp.gid, c, clen, 0);
}

int emq_xs_ack(emq_store *st, const void *key, size_t klen, const void *g,
               size_t glen, const emq_xid *ids, size_t n, int64_t *acked)
{
    emq_keyrow kr;
    xgroup grp;
    /* The key and the group, not the stream's metadata (find would read
     * it): an ack needs the group's id alone. */
    int rc = emq_key_lookup(st, key, klen, EMQ_T_STREAM, &kr, 0);
    *acked = 0;
    if (rc == EMQ_OK && kr.type != EMQ_T_STREAM)
        rc = EMQ_NOTFOUND;
    if (rc == EMQ_OK)
        rc = group_get(st, kr.kid, g, glen, &grp);
    if (rc == EMQ_NOTFOUND || rc == EMQ_XNOGROUP)
        return EMQ_OK;
    for (size_t i = 0; rc == EMQ_OK && i < n; i++) {
        int removed = 0;
        rc = pel_del(st, grp.gid, ids[i], &removed);
        *acked += removed;
    }
    return rc;
}

/* ------------------------------------------------------------- pending */

int emq_xs_pending_summary(emq_store *st, const void *key, size_t klen,
                           const void *g, size_t glen, emq_xpsum *sum,
                           emq_xowner_cb cb, void *ctx)
{
    xstream x;
    xgroup grp;
    int64_t n;
    int row, rc = find_group(st, key, klen, g, glen, &x, &grp);
    sqlite3_stmt *s;
    memset(sum, 0, sizeof *sum);
    if (rc != EMQ_OK)
        return rc;
    if ((rc = count_gid(st, X_P_COUNT, grp.gid, NULL, 0, &n)) != EMQ_OK)
        return rc;
    sum->count = (uint64_t)n;
    if (n == 0)
        return EMQ_OK;
    for (int k = 0; k < 2; k++) {
        if (!(s = xstmt(st, k ? X_P_LAST : X_P_FIRST)))
            return nostmt(st);
        sqlite3_bind_int64(s, 1, grp.gid);
        if ((rc = step1(st, s, &row)) != EMQ_OK)
            return rc;
        if (row) {
            if (k)
                sum->max = col_id(s, 0);
            else
                sum->min = col_id(s, 0);
        }
        emq_stmt_done(s);
    }
    if (!(s = xstmt(st, X_P_OWNERS)))
        return nostmt(st);
    sqlite3_bind_int64(s, 1, grp.gid);
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        rc = cb(ctx, sqlite3_column_blob(s, 0),
                (size_t)sqlite3_column_bytes(s, 0),
                sqlite3_column_int64(s, 1));
        if (rc != EMQ_OK)
            break;
    }
    if (rc == EMQ_OK && step != SQLITE_DONE)
        rc = emq_store_fail(st, step);
    emq_stmt_done(s);
    return rc;
}

int emq_xs_pending_range(emq_store *st, const void *key, size_t klen,
                         const void *g, size_t glen, emq_xid start,
                         emq_xid end, uint64_t count, const void *c,
                         size_t clen, int64_t min_idle, emq_xpel_cb cb,
                         void *ctx)
{
    xstream x;
    xgroup grp;
    int rc = find_group(st, key, klen, g, glen, &x, &grp);
    if (rc != EMQ_OK)
        return rc;
    if (count == 0 || emq_xid_cmp(start, end) > 0)
        return EMQ_OK;
    return walk_pel(st, grp.gid, start, end, count, c, clen, min_idle, cb,
                    ctx);
}

int emq_xs_pel(emq_store *st, const void *key, size_t klen, const void *g,
               size_t glen, const void *c, size_t clen, uint64_t count,
               emq_xpel_cb cb, void *ctx)
{
    xstream x;
    xgroup grp;
    emq_xid zero = { 0, 0 };
    int rc = find_group(st, key, klen, g, glen, &x, &grp);
    if (rc != EMQ_OK)
        return rc;
    return walk_pel(st, grp.gid, zero, XID_MAX, count, c, clen, 0, cb, ctx);
}

/* --------------------------------------------------------------- claims */

int emq_xs_claim(emq_store *st, const void *key, size_t klen, const void *g,
                 size_t glen, const void *c, size_t clen, int64_t min_idle,
                 const emq_xid *ids, size_t n, const emq_xclaim *o,
                 emq_xentry_cb cb, void *ctx)
{
    xstream x;
    xgroup grp;
    int created, claimed = 0;
    int64_t dtime = o->delivery_time;
    int rc = find_group(st, key, klen, g, glen, &x, &grp);
    pelrec r = { 0, { NULL, 0, 0 }, 0, 0 };
    if (rc != EMQ_OK)
        return rc;
    if (o->has_lastid && emq_xid_cmp(o->lastid, grp.last) > 0) {
        grp.last = o->lastid;
        if ((rc = group_put(st, &grp)) != EMQ_OK)
            return rc;
    }
    /* A bogus time (negative, or in the future) means now. */
    if (dtime < 0 || dtime > st->now)
        dtime = st->now;
    if ((rc = consumer_ensure(st, grp.gid, c, clen, &created)) != EMQ_OK)
        return rc;
    for (size_t i = 0; rc == EMQ_OK && i < n; i++) {
        int exists = entry_exists(st, x.kid, ids[i], &rc);
        if (rc != EMQ_OK)
            break;
        if ((rc = pel_get(st, grp.gid, ids[i], &r)) != EMQ_OK)
            break;
        if (!exists) {
            if (r.found)
                rc = pel_del(st, grp.gid, ids[i], NULL);
            continue;
        }
        if (!r.found && !o->force)
            continue;
        /* The idle check applies to a record that existed before. */
        if (r.found && min_idle > 0 && st->now - r.dtime < min_idle)
            continue;
        /* A record made by FORCE starts as a first delivery. */
        int64_t cnt = r.found ? r.dcount : 1;
        if (o->retrycount >= 0)
            cnt = o->retrycount;
        else if (!o->justid)
            cnt = one_more(cnt);
        if ((rc = pel_put(st, grp.gid, ids[i], c, clen, dtime, cnt))
            != EMQ_OK)
            break;
        claimed++;
        if (o->justid)
            rc = cb ? cb(ctx, ids[i], NULL, 0) : EMQ_OK;
        else
            rc = with_entry(st, x.kid, ids[i], cb, ctx, &exists);
    }
    emq_buf_free(&r.owner);
    if (rc != EMQ_OK)
        return rc;
    return consumer_mark(st, X_C_TOUCH, grp.gid, c, clen, claimed > 0);
}

int emq_xs_pel_restore(emq_store *st, const void *key, size_t klen,
                       const void *g, size_t glen, const void *c,
                       size_t clen, emq_xid id, int64_t dtime, int64_t count)
{
    xstream x;
    xgroup grp;
    int created;
    int rc = find_group(st, key, klen, g, glen, &x, &grp);
    if (rc != EMQ_OK)
        return rc;
    if ((rc = consumer_ensure(st, grp.gid, c, clen, &created)) != EMQ_OK)
        return rc;
    return pel_put(st, grp.gid, id, c, clen, dtime, count);
}

int emq_xs_autoclaim(emq_store *st, const void *key, size_t klen,
                     const void *g, size_t glen, const void *c, size_t clen,
                     int64_t min_idle, emq_xid start, uint64_t count,
                     int justid, emq_xentry_cb claimed, void *cctx,
                     emq_xentry_cb deleted, void *dctx, emq_xid *cursor)
{
    xstream x;
    xgroup grp;
    int created, row, active = 0;
    uint64_t attempts = count > UINT64_MAX / 10 ? UINT64_MAX : count * 10;
    emq_xid at = start;
    int rc = find_group(st, key, klen, g, glen, &x, &grp);
    sqlite3_stmt *s;
    cursor->ms = cursor->seq = 0;
    if (rc != EMQ_OK)
        return rc;
    if ((rc = consumer_ensure(st, grp.gid, c, clen, &created)) != EMQ_OK)
        return rc;
    for (;;) {
        emq_xid id;
        int64_t dtime, dcount;
        if (!(s = xstmt(st, X_P_NEXT)))
            return nostmt(st);
        sqlite3_bind_int64(s, 1, grp.gid);
        bind_id(s, 2, at);
        if ((rc = step1(st, s, &row)) != EMQ_OK)
            return rc;
        if (!row) {
            emq_stmt_done(s);
            break; /* the end: cursor 0-0 */
        }
        id = col_id(s, 0);
        dtime = sqlite3_column_int64(s, 3);
        dcount = sqlite3_column_int64(s, 4);
        emq_stmt_done(s);
        if (attempts == 0 || count == 0) {
            *cursor = id; /* the first record not scanned */
            break;
        }
        attempts--;
        at = id;
        int exists = entry_exists(st, x.kid, id, &rc);
        if (rc != EMQ_OK)
            return rc;
        if (!exists) {
            if ((rc = pel_del(st, grp.gid, id, NULL)) != EMQ_OK ||
                (deleted && (rc = deleted(dctx, id, NULL, 0)) != EMQ_OK))
                return rc;
            count--;
        } else if (min_idle > 0 && st->now - dtime < min_idle) {
            /* not idle long enough: left where it is */
        } else {
            if ((rc = pel_put(st, grp.gid, id, c, clen, st->now,
                               justid ? dcount : one_more(dcount))) != EMQ_OK)
                return rc;
            active = 1;
            if (justid)
                rc = claimed ? claimed(cctx, id, NULL, 0) : EMQ_OK;
            else
                rc = with_entry(st, x.kid, id, claimed, cctx, &exists);
            if (rc != EMQ_OK)
                return rc;
            count--;
        }
        if (emq_xid_incr(&at) != 0)
            break; /* the last possible id was scanned */
    }
    return consumer_mark(st, X_C_TOUCH, grp.gid, c, clen, active);
}

/* ---------------------------------------------------------------- info */

int emq_xs_groups(emq_store *st, const void *key, size_t klen,
                  emq_xgroup_cb cb, void *ctx)
{
    xstream x;
    int rc = find(st, key, klen, &x), step;
    sqlite3_stmt *s;
    emq_buf names = { NULL, 0, 0 };
    idlist l = { NULL, 0, 0 };
    /* Collected first: the per-group counts run their own statements. */
    typedef struct ginfo {
        int64_t gid, er;
        size_t off, len;
    } ginfo;
    ginfo *gi = NULL;
    size_t ng = 0, cap = 0;
    if (rc != EMQ_OK || (rc = load_first(st, &x)) != EMQ_OK)
        return rc;
    if (!(s = xstmt(st, X_G_ALL)))
        return nostmt(st);
    sqlite3_bind_int64(s, 1, x.kid);
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        if (ng == cap) {
            size_t nc = cap ? 2 * cap : 8;
            ginfo *p = emq_mem_realloc(gi, nc * sizeof *p);
            if (!p) {
                rc = emq_store_err(st, EMQ_ENOMEM, "out of memory");
                break;
            }
            gi = p;
            cap = nc;
        }
        gi[ng].gid = sqlite3_column_int64(s, 0);
        gi[ng].off = names.len;
        gi[ng].len = (size_t)sqlite3_column_bytes(s, 1);
        gi[ng].er = sqlite3_column_type(s, 4) == SQLITE_NULL
                        ? -1 : sqlite3_column_int64(s, 4);
        if (emq_buf_append(&names, sqlite3_column_blob(s, 1), gi[ng].len) ||
            (rc = idlist_add(st, &l, col_id(s, 2))) != EMQ_OK) {
            rc = emq_store_err(st, EMQ_ENOMEM, "out of memory");
            break;
        }
        ng++;
    }
    if (rc == EMQ_OK && step != SQLITE_DONE)
        rc = emq_store_fail(st, step);
    emq_stmt_done(s);
    for (size_t i = 0; rc == EMQ_OK && i < ng; i++) {
        emq_xgroup_info info;
        memset(&info, 0, sizeof info);
        info.name = names.p + gi[i].off;
        info.nlen = gi[i].len;
        info.last = l.v[i];
        info.entries_read = gi[i].er;
        if ((rc = count_gid(st, X_C_COUNT, gi[i].gid, NULL, 0,
                            &info.consumers)) != EMQ_OK ||
            (rc = count_gid(st, X_P_COUNT, gi[i].gid, NULL, 0,
                            &info.pending)) != EMQ_OK)
            break;
        /* Lag: exact while the counter is valid and no tombstone lies
         * ahead, else estimated from the last-delivered id. */
        if (x.m.entries_added == 0) {
            info.lag_known = 1;
        } else if (info.entries_read >= 0 &&
                   !tombstones_from(&x.m, info.last)) {
            info.lag_known = 1;
            info.lag = (int64_t)x.m.entries_added - info.entries_read;
        } else {
            int64_t er = estimate_read(&x.m, info.last);
            info.lag_known = er >= 0;
            info.lag = er >= 0 ? (int64_t)x.m.entries_added - er : 0;
        }
        rc = cb(ctx, &info);
    }
    emq_buf_free(&names);
    emq_mem_free(l.v);
    emq_mem_free(gi);
    return rc;
}

int emq_xs_consumers(emq_store *st, const void *key, size_t klen,
                     const void *g, size_t glen, emq_xconsumer_cb cb,
                     void *ctx)
{
    xstream x;
    xgroup grp;
    int rc = find_group(st, key, klen, g, glen, &x, &grp), step;
    sqlite3_stmt *s;
    if (rc != EMQ_OK)
        return rc;
    if (!(s = xstmt(st, X_C_ALL)))
        return nostmt(st);
    sqlite3_bind_int64(s, 1, grp.gid);
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {
        rc = cb(ctx, sqlite3_column_blob(s, 0),
                (size_t)sqlite3_column_bytes(s, 0),
                sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
                sqlite3_column_int64(s, 3));
        if (rc != EMQ_OK)
            break;
    }
    if (rc == EMQ_OK && step != SQLITE_DONE)
        rc = emq_store_fail(st, step);
    emq_stmt_done(s);
    return rc;
}

/* ---------------------------------------------------------------- setid */

int emq_xs_setid(emq_store *st, const void *key, size_t klen, emq_xid last,
                 int64_t entries_added, const emq_xid *max_deleted)
{
    xstream x;
    int rc = find(st, key, klen, &x);
    if (rc != EMQ_OK)
        return rc;
    if (emq_xid_cmp(last, x.m.max_deleted) < 0)
        return emq_store_err(st, EMQ_EENGINE, "ERR The ID specified in XSETID "
                             "is smaller than current max_deleted_entry_id");
    if (x.m.length > 0) {
        sqlite3_stmt *s = xstmt(st, X_E_DESC);
        emq_xid top = { 0, 0 }, zero = { 0, 0 };
        int row;
        if (!s)
            return nostmt(st);
        sqlite3_bind_int64(s, 1, x.kid);
        bind_id(s, 2, zero);
        bind_id(s, 4, XID_MAX);
        sqlite3_bind_int64(s, 6, 1);
        if ((rc = step1(st, s, &row)) != EMQ_OK)
            return rc;
        if (row)
            top = col_id(s, 0);
        emq_stmt_done(s);
        if (emq_xid_cmp(last, top) < 0)
            return emq_store_err(st, EMQ_EENGINE, "ERR The ID specified in "
                                 "XSETID is smaller than the target stream "
                                 "top item");
        if (entries_added >= 0 && x.m.length > (uint64_t)entries_added)
            return emq_store_err(st, EMQ_EENGINE, "ERR The entries_added "
                                 "specified in XSETID is smaller than the "
                                 "target stream length");
    }
    x.m.last = last;
    if (entries_added >= 0)
        x.m.entries_added = (uint64_t)entries_added;
    if (max_deleted && !emq_xid_zero(*max_deleted))
        x.m.max_deleted = *max_deleted;
    return meta_put(st, &x);
}
