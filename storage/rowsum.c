/*
 * rowsum.c — the per-row checksum of the key table (schema 2, the column
 * kv.sum): an XXH3-64 of every column of the row (name, type, kid, expire,
 * val, each with its SQLite storage class), so that a flipped byte in a job
 * row, a payload, a counter, or in the type, element id or expiry of any
 * key shows as damage instead of being served.
 *
 * A file's checksums are off (sum NULL everywhere) until they are turned on
 * with emq_store_enable_checksums (meta `checksums` = 1, for good); from then
 * on every statement that writes a kv row computes its sum in SQL, through
 * emq_sum(), and every read of a row (S_KEY_GET) verifies it through
 * emq_verify(), which fails the statement with SQLITE_CORRUPT (EMQ_ECORRUPT)
 * and names the key. The checker verifies every row (emq_store_check_rows).
 *
 * While a file's checksums are off, the key-row statements are prepared in
 * a plain form that calls neither function (store.c, sql_plain), so the
 * option costs nothing until it is on.
 *
 * Rules: the functions are registered on the handle's own connection only,
 * SQLITE_DIRECTONLY (no schema object can call them); the mode each handle
 * writes with (st->sums, set through emq_store_set_sums) is re-read
 * whenever another connection committed, inside the write transaction, and
 * only ever goes from 0 to 1 (a read-only handle keeps the mode it saw at
 * open: it may skip verifying, never misreport).
 */
#include <stdio.h>
#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>
#include "store_int.h"

/* ------------------------------------------------------------ the sum */

static void put64(unsigned char *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

/* The sum of the five columns name, type, kid, expire, val in v[0..4]. */
static sqlite3_int64 row_sum(sqlite3_value **v)
{
    unsigned char head[5 + 3 * 8];
    const void *name, *val;
    size_t nlen, vlen;
    uint64_t h;
    for (int i = 0; i < 5; i++)
        head[i] = (unsigned char)sqlite3_value_type(v[i]);
    put64(head + 5, (uint64_t)sqlite3_value_int64(v[1]));
    put64(head + 13, (uint64_t)sqlite3_value_int64(v[2]));
    put64(head + 21, (uint64_t)sqlite3_value_int64(v[3]));
    name = sqlite3_value_blob(v[0]);
    nlen = (size_t)sqlite3_value_bytes(v[0]);
    val = sqlite3_value_blob(v[4]);
    vlen = (size_t)sqlite3_value_bytes(v[4]);
    h = XXH3_64bits(head, sizeof head);
    h = XXH3_64bits_withSeed(name ? name : "", name ? nlen : 0, h);
    h = XXH3_64bits_withSeed(val ? val : "", val ? vlen : 0, h);
    return (sqlite3_int64)h;
}

/* emq_sum(name, type, kid, expire, val): the row's sum when the file's
 * checksums are on, else NULL. */
static void fn_sum(sqlite3_context *cx, int argc, sqlite3_value **v)
{
    const emq_store *st = sqlite3_user_data(cx);
    (void)argc;
    if (st->sums)
        sqlite3_result_int64(cx, row_sum(v));
    else
        sqlite3_result_null(cx);
}

/* emq_sum_of(name, type, kid, expire, val): the row's sum, always. */
static void fn_sum_of(sqlite3_context *cx, int argc, sqlite3_value **v)
{
    (void)argc;
    sqlite3_result_int64(cx, row_sum(v));
}

/* The key of a row for a message: ASCII verbatim, other bytes \xNN. */
static void show_key(char *out, size_t cap, sqlite3_value *v)
{
    const unsigned char *p = sqlite3_value_blob(v);
    size_t n = (size_t)sqlite3_value_bytes(v), o = 0, i;
    for (i = 0; p && i < n && o + 5 < cap; i++) {
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
            out[o++] = (char)p[i];
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", p[i]);
    }
    out[o] = 0;
}

/* emq_verify(name, type, kid, expire, val, sum): NULL when the row is
 * intact; fails the statement with SQLITE_CORRUPT when its sum is wrong,
 * or missing while the handle knows the file's checksums are on. */
static void fn_verify(sqlite3_context *cx, int argc, sqlite3_value **v)
{
    const emq_store *st = sqlite3_user_data(cx);
    char key[200], msg[300];
    int t = sqlite3_value_type(v[5]);
    (void)argc;
    if (t == SQLITE_NULL ? !st->sums
                         : t == SQLITE_INTEGER &&
                               sqlite3_value_int64(v[5]) == row_sum(v)) {
        sqlite3_result_null(cx);
        return;
    }
    show_key(key, sizeof key, v[0]);
    snprintf(msg, sizeof msg, "checksum %s: the key row of %s was changed "
             "outside emqlite", t == SQLITE_NULL ? "missing" : "mismatch",
             key);
    sqlite3_result_error(cx, msg, -1);
    sqlite3_result_error_code(cx, SQLITE_CORRUPT);
}

int emq_rowsum_register(emq_store *st)
{
    const int f = SQLITE_UTF8 | SQLITE_DIRECTONLY;
    int rc = sqlite3_create_function_v2(st->db, "emq_sum", 5, f, st, fn_sum,
                                        NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(st->db, "emq_sum_of", 5,
                                        f | SQLITE_DETERMINISTIC, st,
                                        fn_sum_of, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function_v2(st->db, "emq_verify", 6, f, st,
                                        fn_verify, NULL, NULL, NULL);
    return rc == SQLITE_OK ? EMQ_OK : emq_store_fail(st, rc);
}

/* ----------------------------------------------------------- the mode */

int emq_rowsum_load(emq_store *st)
{
    sqlite3_stmt *s = emq_stmt(st, S_META_SUMS);
    int rc, on;
    if (!s)
        return emq_store_fail(st, sqlite3_errcode(st->db));
    on = (rc = sqlite3_step(s)) == SQLITE_ROW &&
         sqlite3_column_int64(s, 0) == 1;
    emq_stmt_done(s);
    if (rc == SQLITE_ROW)
        emq_store_set_sums(st, on);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    return EMQ_OK;
}

int emq_store_checksums(const emq_store *st)
{
    return st->sums;
}

int emq_store_enable_checksums(emq_store *st)
{
    int rc, was = 0;
    if (st->opts.readonly)
        return emq_store_err(st, EMQ_EREADONLY, "checksums cannot be turned "
                             "on through a read-only handle");
    if ((rc = emq_store_begin(st, 1, 0)) != EMQ_OK)
        return rc;
    rc = emq_rowsum_load(st);
    was = st->sums;
    if (rc == EMQ_OK && !was) {
        emq_store_set_sums(st, 1); /* emq_sum() computes from here on */
        rc = emq_store_exec(st, "UPDATE kv SET sum = emq_sum_of(name, type,"
                            " kid, expire, val);"
                            "UPDATE emq_meta SET v = 1"
                            " WHERE k = 'checksums';");
    }
    if (rc == EMQ_OK)
        rc = emq_store_commit(st); /* rolls back itself when it fails */
    else
        emq_store_rollback(st);
    if (rc != EMQ_OK)
        emq_store_set_sums(st, was);
    return rc;
}

/* ---------------------------------------------------------- the check */

int emq_store_check_rows(emq_store *st, emq_row_cb cb, void *ctx)
{
    sqlite3_stmt *s = NULL;
    int rc, on = 0;
    char msg[200];
    /* The mode as this transaction sees it (another handle may have turned
     * checksums on since this one last wrote). */
    rc = sqlite3_prepare_v2(st->db, "SELECT v FROM emq_meta"
                            " WHERE k = 'checksums'", -1, &s, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW)
        on = sqlite3_column_int64(s, 0) == 1;
    sqlite3_finalize(s);
    s = NULL;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    rc = sqlite3_prepare_v2(st->db, "SELECT name, sum IS NULL,"
                            " sum IS emq_sum_of(name, type, kid, expire, val)"
                            " FROM kv ORDER BY name", -1, &s, NULL);
    if (rc != SQLITE_OK)
        return emq_store_fail(st, rc);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int missing = sqlite3_column_int(s, 1), good = sqlite3_column_int(s, 2);
        if (good || (missing && !on))
            continue;
        snprintf(msg, sizeof msg, missing
                 ? "the key row has no checksum although the file's "
                   "checksums are on"
                 : "the key row's checksum does not match its bytes: it was "
                   "changed outside emqlite (damage, or another writer)");
        cb(ctx, sqlite3_column_blob(s, 0), (size_t)sqlite3_column_bytes(s, 0),
           msg);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return emq_store_fail(st, rc);
    return EMQ_OK;
}
