/*
 * evlog.c — the event log table (evlog.h): appends inside the caller's
 * write transaction, reads from a cursor, pruning by count and age.
 *
 * Rules: seq is the rowid and is never given explicitly, so an append
 * takes max(seq) + 1; pruning removes the oldest rows only and never the
 * newest one, so seq never goes back and stays dense (a reader that finds
 * a gap after its cursor knows exactly how many messages it missed).
 */
#include <string.h>
#include "store_int.h"
#include "evlog.h"

/* Rows looked at, at most, by one prune. */
#define PRUNE_EVERY 64
#define PRUNE_AGE_SCAN 256
#define PRUNE_MAX 1024

/* 1 when the table exists (cached once seen), 0 when not, or a failure. */
static int have_table(emq_store *st)
{
    sqlite3_stmt *s;
    int rc;
    if (st->ev_table)
        return 1;
    if (!(s = emq_stmt(st, S_EV_EXISTS)))
        return emq_store_fail(st, sqlite3_errcode(st->db));
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    if (rc == SQLITE_ROW)
        return st->ev_table = 1;
    return rc == SQLITE_DONE ? 0 : emq_store_fail(st, rc);
}

int emq_evlog_ensure(emq_store *st)
{
    char *msg = NULL;
    int rc = have_table(st);
    if (rc != 0)
        return rc < 0 ? rc : EMQ_OK;
    rc = sqlite3_exec(st->db, EMQ_EVLOG_DDL, NULL, NULL, &msg);
    sqlite3_free(msg);
    if (rc != SQLITE_OK)
        return emq_store_fail(st, rc);
    return EMQ_OK;
}

static int bind_bytes(sqlite3_stmt *s, int i, const emq_bytes *b)
{
    return emq_bind_blob(s, i, b->p, b->n);
}

/* Delete every row with seq <= to. */
static int drop_to(emq_store *st, int64_t to)
{
    sqlite3_stmt *s = emq_stmt(st, S_EV_DROP_TO);
    int rc;
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, to);
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    return rc == SQLITE_DONE ? EMQ_OK : emq_store_fail(st, rc);
}

/* On a disk that cannot give the file its headroom (store.c's room) the
 * log stops growing: each append drops the oldest row, so the rows a
 * shrinking transition writes reuse the pages they free (a subscriber
 * that falls behind then finds the gap, emq_sub_lost). */
static int drop_oldest(emq_store *st, int64_t newest)
{
    sqlite3_stmt *s = emq_stmt(st, S_EV_HEAD);
    int64_t first = 0;
    int rc;
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, 1);
    if ((rc = sqlite3_step(s)) == SQLITE_ROW)
        first = sqlite3_column_int64(s, 0);
    emq_stmt_done(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    return first > 0 && first < newest ? drop_to(st, first) : EMQ_OK;
}

/* The retention of `k` after the append of `newest`: the oldest rows
 * beyond the count, then the leading rows older than the age limit. */
static int prune(emq_store *st, int64_t newest, const emq_evlog_keep *k)
{
    sqlite3_stmt *s = emq_stmt(st, S_EV_HEAD);
    int64_t first = 0, to = 0, cutoff = st->now - k->max_age_ms;
    int rc, stop = 0;
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, PRUNE_AGE_SCAN);
    while (!stop && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(s, 0);
        if (first == 0)
            first = seq;
        if (sqlite3_column_int64(s, 1) < cutoff)
            to = seq;
        else
            stop = 1;
    }
    emq_stmt_done(s);
    if (!stop && rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    if (newest - k->keep > to)
        to = newest - k->keep;
    if (first > 0 && to > first + PRUNE_MAX)
        to = first + PRUNE_MAX;  /* bounded work; the next prune goes on */
    if (to >= newest)
        to = newest - 1;          /* the newest row always stays */
    return to >= first && first > 0 ? drop_to(st, to) : EMQ_OK;
}

int emq_evlog_append(emq_store *st, const emq_bytes *channel,
                     const emq_bytes *kind, const emq_bytes *subject,
                     const emq_bytes *payload, const emq_evlog_keep *k,
                     int64_t *seq)
{
    sqlite3_stmt *s;
    int64_t id;
    int rc = have_table(st);
    if (rc == 0)
        rc = emq_store_err(st, EMQ_EINTERNAL, "the event log table is "
                           "missing (a read-only open of an old file?)");
    if (rc < 0)
        return rc;
    if (!(s = emq_stmt(st, S_EV_INSERT)))
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, st->now);
    bind_bytes(s, 2, channel);
    bind_bytes(s, 3, kind);
    bind_bytes(s, 4, subject);
    bind_bytes(s, 5, payload);
    rc = sqlite3_step(s);
    emq_stmt_done(s);
    if (rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    id = sqlite3_last_insert_rowid(st->db);
    if (seq)
        *seq = id;
    if (st->room_low)
        return drop_oldest(st, id);
    if (k && id % PRUNE_EVERY == 0 && k->keep >= 1 && k->max_age_ms > 0)
        return prune(st, id, k);
    return EMQ_OK;
}

int emq_evlog_bounds(emq_store *st, int64_t *first, int64_t *last)
{
    sqlite3_stmt *s;
    int rc = have_table(st);
    *first = *last = 0;
    if (rc <= 0)
        return rc;
    if (!(s = emq_stmt(st, S_EV_LAST)))
        return emq_store_fail(st, sqlite3_errcode(st->db));
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *last = sqlite3_column_int64(s, 0);
    emq_stmt_done(s);
    if (rc != SQLITE_ROW)
        return emq_store_fail(st, rc);
    if (!(s = emq_stmt(st, S_EV_HEAD)))
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, 1);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *first = sqlite3_column_int64(s, 0);
    emq_stmt_done(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? EMQ_OK
                                                 : emq_store_fail(st, rc);
}

static void col_bytes(sqlite3_stmt *s, int i, emq_bytes *b)
{
    b->p = sqlite3_column_blob(s, i);
    b->n = (size_t)sqlite3_column_bytes(s, i);
    if (!b->p)
        b->p = "";
}

int emq_evlog_read(emq_store *st, int64_t after, int64_t limit,
                   emq_evlog_cb cb, void *ctx)
{
    sqlite3_stmt *s;
    emq_evlog_msg m;
    int rc = have_table(st), out = EMQ_OK;
    if (rc <= 0 || limit == 0)
        return rc;
    if (!(s = emq_stmt(st, S_EV_READ)))
        return emq_store_fail(st, sqlite3_errcode(st->db));
    sqlite3_bind_int64(s, 1, after);
    sqlite3_bind_int64(s, 2, limit);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        m.seq = sqlite3_column_int64(s, 0);
        m.at = sqlite3_column_int64(s, 1);
        col_bytes(s, 2, &m.channel);
        col_bytes(s, 3, &m.kind);
        col_bytes(s, 4, &m.subject);
        col_bytes(s, 5, &m.payload);
        if ((out = cb(ctx, &m)) != 0)
            break;
    }
    emq_stmt_done(s);
    if (out == EMQ_OK && rc != SQLITE_DONE)
        out = emq_store_fail(st, rc);
    return out;
}
