/*
 * test_stream.c — the stream type and the Tier 5 stream verbs: type
 * isolation both ways, streams that outlive their entries, the append
 * gates and receipts (D-15), the read shapes, approximate trims (D-16),
 * blocking group reads, the T5.7 consumer loop, and export, import and
 * digest of streams with their groups and pending entries.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "emqlite.h"
#include "emqlite_protocol.h"
#include "store.h"
#include "stream.h"
#include "db.h"
#include "xcmd.h"
#include "tengine.h"
#include "suites.h"

#define Q "sq"
#define SK "emq:{" Q "}:stream:ev"

static tclock clk;

/* Run one stream command on the handle; the reply, NUL-separated words. */
static int xc(emq_db *db, emq_reply *r, const char *line)
{
    char buf[1024], *argv[64], *save = NULL;
    size_t len[64], n = 0;
    snprintf(buf, sizeof buf, "%s", line);
    for (char *t = strtok_r(buf, " ", &save); t && n < 64;
         t = strtok_r(NULL, " ", &save)) {
        argv[n] = t;
        len[n++] = strlen(t);
    }
    emq_reply_clear(r);
    return emq_xcmd_run(db, n, (const char *const *)argv, len, r);
}

static int64_t xc_int(emq_db *db, const char *line)
{
    emq_reply r = {0};
    ck_assert_int_eq(xc(db, &r, line), EMQ_OK);
    ck_assert_int_eq(r.type, EMQ_REPLY_INT);
    int64_t v = r.integer;
    emq_reply_clear(&r);
    return v;
}

static void append3(emq_db *db, const char *name)
{
    static const char *const ids[] = { "EVT0JZGkP8smrw", "EVT0JZGkP8smrx",
                                       "EVT0JZGkP8smry" };
    const void *fv[2] = { "n", NULL };
    char v[12];
    for (int i = 0; i < 3; i++) {
        snprintf(v, sizeof v, "%d", i);
        fv[1] = v;
        ck_assert_int_eq(emq_stream_append_id(db, Q, name, ids[i], fv, NULL,
                                              2), EMQ_OK);
    }
}

/* ------------------------------------------------------- the type itself */

START_TEST(stream_type_is_isolated_both_ways)
{
    emq_db *db = topen(&clk);
    emq_store *st = emq_db_store(db);
    emq_buf b = {0};
    emq_bytes fv[2] = { { "f", 1 }, { "v", 1 } };
    emq_reply r = {0};
    int type;
    append3(db, "ev");
    ck_assert_int_eq(tk_type(db, SK), EMQ_T_STREAM);
    ck_assert_int_eq(emq_store_begin(st, 1, T0), EMQ_OK);
    /* Other types' commands against a stream key. */
    ck_assert_int_eq(emq_str_get(st, SK, strlen(SK), &b), EMQ_EWRONGTYPE);
    ck_assert_int_eq(emq_hash_set(st, SK, strlen(SK), fv, 1, NULL),
                     EMQ_EWRONGTYPE);
    ck_assert_int_eq(emq_zset_add(st, SK, strlen(SK), "m", 1, 0, NULL),
                     EMQ_EWRONGTYPE);
    ck_assert_int_eq(emq_list_push(st, SK, strlen(SK), 1, "x", 1, NULL),
                     EMQ_EWRONGTYPE);
    ck_assert_int_eq(emq_sset_add(st, SK, strlen(SK), "m", 1, NULL),
                     EMQ_EWRONGTYPE);
    ck_assert_int_eq(emq_key_type(st, SK, strlen(SK), &type), EMQ_OK);
    ck_assert_int_eq(type, EMQ_T_STREAM);
    emq_store_rollback(st);
    emq_buf_free(&b);
    /* Stream commands against another type. */
    tk_set(db, "emq:{" Q "}:stream:w", "str");
    ck_assert_int_eq(xc(db, &r, "XADD emq:{" Q "}:stream:w 1-1 f v"),
                     EMQ_EWRONGTYPE);
    ck_assert_str_eq(r.str, EMQ_WRONGTYPE_MSG);
    ck_assert_int_eq(xc(db, &r, "XLEN emq:{" Q "}:stream:w"),
                     EMQ_EWRONGTYPE);
    /* SET replaces a stream, rows and all; DEL removes one. */
    tk_set(db, SK, "now a string");
    ck_assert_int_eq(tk_type(db, SK), EMQ_T_STRING);
    ck_assert_int_eq(xc(db, &r, "XADD " SK " 1-1 f v"), EMQ_EWRONGTYPE);
    tk_del(db, SK);
    ck_assert_int_eq(xc_int(db, "XLEN " SK), 0);
    ck_assert_int_eq(xc(db, &r, "XADD " SK " 1-1 f v"), EMQ_OK);
    ck_assert_int_eq(xc_int(db, "XLEN " SK), 1);
    emq_reply_clear(&r);
    emq_close(db);
}
END_TEST

START_TEST(stream_outlives_its_entries)
{
    emq_db *db = topen(&clk);
    emq_reply r = {0};
    emq_xmeta m;
    emq_store *st = emq_db_store(db);
    append3(db, "ev");
    ck_assert_int_eq(xc_int(db, "XDEL " SK " 1767225600000-4096"), 1);
    ck_assert_int_eq(xc_int(db, "XTRIM " SK " MAXLEN 0"), 2);
    ck_assert(tk_exists(db, SK));
    ck_assert_int_eq(emq_store_begin(st, 0, T0), EMQ_OK);
    ck_assert_int_eq(emq_xs_meta(st, SK, strlen(SK), &m), EMQ_OK);
    emq_store_rollback(st);
    ck_assert_uint_eq(m.length, 0);
    ck_assert_uint_eq(m.entries_added, 3);
    ck_assert_uint_eq(m.last.ms, 1767225600000u);
    ck_assert_uint_eq(m.last.seq, 4098);
    ck_assert_uint_eq(m.max_deleted.seq, 4096); /* XDEL moved it, XTRIM not */
    /* Later appends still need a greater id. */
    ck_assert_int_eq(xc(db, &r, "XADD " SK " 1767225600000-4098 f v"),
                     EMQ_ENONMONO);
    ck_assert_str_eq(r.str, "ERR The ID specified in XADD is equal or "
                            "smaller than the target stream top item");
    /* A group creation with MKSTREAM makes an empty stream that exists. */
    ck_assert_int_eq(emq_stream_group_create(db, Q, "mk", "g", "$", 1),
                     EMQ_OK);
    ck_assert(tk_exists(db, "emq:{" Q "}:stream:mk"));
    emq_reply_clear(&r);
    emq_close(db);
}
END_TEST

/* -------------------------------------------------------------- appends */

START_TEST(append_gates_and_codes)
{
    emq_db *db = topen(&clk);
    const void *fv[2] = { "f", "v" };
    char id[EMQ_ID_SIZE], xid[EMQ_XID_SIZE];
    ck_assert_int_eq(emq_stream_append_id(db, Q, "ev", "ORD0KHTOWnGLuC", fv,
                                          NULL, 2), EMQ_EREFUSED);
    ck_assert_str_eq(emq_errmsg(db), "kind");
    ck_assert_int_eq(emq_stream_append_id(db, Q, "ev", "not-branded", fv,
                                          NULL, 2), EMQ_EREFUSED);
    ck_assert_str_eq(emq_errmsg(db), "malformed");
    ck_assert(!tk_exists(db, SK)); /* refused before the store */
    ck_assert_int_eq(emq_stream_append_id(db, Q, "ev", "EVT000xY9Wvvcd", fv,
                                          NULL, 2), EMQ_OK);
    /* entry_id(EVT000xY9Wvvcd) = 1704117200000-1620567 (T5.1's vector) */
    emq_stream_entry *e;
    size_t n;
    ck_assert_int_eq(emq_stream_range(db, Q, "ev", "-", "+", -1, &e, &n),
                     EMQ_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(e[0].xid, "1704117200000-1620567");
    ck_assert_str_eq(e[0].fields[0].name, "id");
    ck_assert_str_eq(e[0].fields[0].value, "EVT000xY9Wvvcd");
    emq_stream_entries_free(e, n);
    ck_assert_int_eq(emq_stream_append_id(db, Q, "ev", "EVT000xY9Wvvcd", fv,
                                          NULL, 2), EMQ_ENONMONO);
    ck_assert_int_eq(emq_stream_add(db, Q, "ev", "0-0", fv, NULL, 2, xid),
                     EMQ_EENGINE);
    ck_assert_str_eq(emq_errmsg(db), "ERR The ID specified in XADD must be "
                                     "greater than 0-0");
    ck_assert_int_eq(emq_stream_append_id(db, Q, "bad:name", "EVT000xY9Wvvcd",
                                          fv, NULL, 2), EMQ_EINVAL);
    /* append mints from the handle's clock. */
    clk.now = T0 + 5;
    ck_assert_int_eq(emq_stream_append(db, Q, "ev", fv, NULL, 2, id), EMQ_OK);
    ck_assert_uint_eq(strlen(id), EMQ_ID_LEN);
    ck_assert_int_eq(memcmp(id, "EVT", 3), 0);
    ck_assert_int_eq(emq_stream_range(db, Q, "ev", "(1704117200000-1620567",
                                      "+", -1, &e, &n), EMQ_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(strncmp(e[0].xid, "1767225600005-", 14), 0);
    emq_stream_entries_free(e, n);
    emq_close(db);
}
END_TEST

START_TEST(append_batch_reports_every_receipt)
{
    emq_db *db = topen(&clk);
    const void *fv[6] = { "n", "1", "n", "2", "n", "3" };
    size_t nfv[3] = { 2, 2, 2 };
    char ids[3][EMQ_ID_SIZE], xid[EMQ_XID_SIZE];
    int out[3];
    const void *far[2] = { "n", "far" };
    ck_assert_int_eq(emq_stream_append_batch(db, Q, "b", 3, nfv, fv, NULL,
                                             ids, out), EMQ_OK);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(out[i], EMQ_OK);
    ck_assert(strcmp(ids[0], ids[1]) < 0 && strcmp(ids[1], ids[2]) < 0);
    /* Over a far-future top every append is refused, and every minted id
     * is still reported (D-15). */
    ck_assert_int_eq(emq_stream_add(db, Q, "top", "4102444800000-0", far,
                                    NULL, 2, xid), EMQ_OK);
    ck_assert_int_eq(emq_stream_append_batch(db, Q, "top", 3, nfv, fv, NULL,
                                             ids, out), EMQ_OK);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(out[i], EMQ_ENONMONO);
        ck_assert_uint_eq(strlen(ids[i]), EMQ_ID_LEN);
    }
    ck_assert_int_eq(emq_stream_append_batch(db, Q, "top", 0, nfv, fv, NULL,
                                             ids, out), EMQ_EEMPTY);
    emq_close(db);
}
END_TEST

/* ------------------------------------------- appends from many handles */

static emq_db *open_node(const char *path, int node, tclock *c)
{
    emq_options o;
    emq_db *db = NULL;
    emq_options_init(&o);
    o.node_id = node;
    if (c) {
        o.clock = tclock_fn;
        o.clock_ctx = c;
    }
    ck_assert_int_eq(emq_open(path, &o, &db), EMQ_OK);
    return db;
}

/* Issue 27 item 4, the deterministic half: two handles in the same
 * millisecond, the higher node first. The lower node's id sorts below the
 * top (entry ids order node before sequence): it must still append, above
 * the top, and its later ids stay above too; a batch likewise. A top far
 * ahead is still refused (D-15). Before, the second append answered
 * EMQ_ENONMONO. */
START_TEST(appends_of_two_nodes_in_one_millisecond_land_in_order)
{
    char dir[256], path[300], id1[EMQ_ID_SIZE], id2[EMQ_ID_SIZE],
        ids[2][EMQ_ID_SIZE], xid[EMQ_XID_SIZE];
    const void *fv[4] = { "n", "1", "n", "2" };
    size_t nfv[2] = { 2, 2 };
    int out[2];
    emq_stream_entry *e;
    size_t n;
    tclock c = { T0, 0 };
    emq_db *hi, *lo;
    tdir_make(dir, sizeof dir, "stream", path, sizeof path);
    hi = open_node(path, 900, &c);
    lo = open_node(path, 3, &c);
    ck_assert_int_eq(emq_stream_append(hi, Q, "ev", fv, NULL, 2, id1),
                     EMQ_OK);
    ck_assert_int_eq(emq_stream_append(lo, Q, "ev", fv, NULL, 2, id2),
                     EMQ_OK);
    ck_assert_int_eq(emq_stream_append_batch(hi, Q, "ev", 2, nfv, fv, NULL,
                                             ids, out), EMQ_OK);
    ck_assert_int_eq(out[0], EMQ_OK);
    ck_assert_int_eq(out[1], EMQ_OK);
    ck_assert_int_eq(emq_stream_append_batch(lo, Q, "ev", 2, nfv, fv, NULL,
                                             ids, out), EMQ_OK);
    ck_assert_int_eq(out[0], EMQ_OK);
    ck_assert_int_eq(out[1], EMQ_OK);
    ck_assert_int_eq(emq_stream_range(lo, Q, "ev", "-", "+", -1, &e, &n),
                     EMQ_OK);
    ck_assert_uint_eq(n, 6);
    ck_assert_str_eq(e[0].fields[0].value, id1);
    ck_assert_str_eq(e[1].fields[0].value, id2);
    ck_assert_int_eq(strncmp(e[0].xid, "1767225600000-", 14), 0);
    ck_assert_int_eq(strncmp(e[1].xid, "1767225600001-", 14), 0);
    emq_stream_entries_free(e, n);
    /* A top a day ahead is not another handle's: refused, and the node's
     * ids do not jump there. */
    ck_assert_int_eq(emq_stream_add(hi, Q, "far", "1767312000000-0", fv,
                                    NULL, 2, xid), EMQ_OK);
    ck_assert_int_eq(emq_stream_append(lo, Q, "far", fv, NULL, 2, id2),
                     EMQ_ENONMONO);
    ck_assert_int_eq(emq_stream_append(lo, Q, "ev2", fv, NULL, 2, id2),
                     EMQ_OK);
    ck_assert_int_eq(emq_stream_range(lo, Q, "ev2", "-", "+", -1, &e, &n),
                     EMQ_OK);
    ck_assert_int_eq(strncmp(e[0].xid, "176722560000", 12), 0);
    emq_stream_entries_free(e, n);
    emq_close(hi);
    emq_close(lo);
    tdir_remove(dir);
}
END_TEST

/* Issue 27 item 4, across processes on the real clock: 4 processes append
 * 150 records each (single appends and batches of 5) to one stream at
 * once. Every append succeeds, and the stream holds all 600 in entry-id
 * order with the ids each process minted increasing. Before, 18-39% were
 * refused as non-monotonic. */
#define APROCS 4
#define APER 150
START_TEST(appends_from_several_processes_all_land_in_order)
{
    char dir[256], path[300];
    pid_t pid[APROCS];
    int st, p;
    emq_stream_entry *e;
    size_t n, i;
    emq_db *db;
    tdir_make(dir, sizeof dir, "stream", path, sizeof path);
    db = open_node(path, -1, NULL);
    emq_close(db);
    for (p = 0; p < APROCS; p++) {
        pid[p] = fork();
        ck_assert_int_ge(pid[p], 0);
        if (pid[p] == 0) {
            char v[16], ids[5][EMQ_ID_SIZE], id[EMQ_ID_SIZE];
            const void *fv[10];
            size_t nfv[5] = { 2, 2, 2, 2, 2 };
            int out[5], bad = 0, k, j, rc;
            emq_db *h;
            if (emq_open(path, NULL, &h) != EMQ_OK) _exit(3);
            snprintf(v, sizeof v, "p%d", p);
            for (k = 0; k < 5; k++) {
                fv[2 * k] = "by";
                fv[2 * k + 1] = v;
            }
            for (k = 0; k < APER;) {
                if (k % 20 < 10) {
                    rc = emq_stream_append(h, Q, "many", fv, NULL, 2, id);
                    if (rc != EMQ_OK) {
                        bad++;
                        fprintf(stderr, "append: %d %s\n", rc,
                                emq_errmsg(h));
                    }
                    k++;
                } else {
                    rc = emq_stream_append_batch(h, Q, "many", 5, nfv, fv,
                                                 NULL, ids, out);
                    if (rc != EMQ_OK) {
                        bad += 5;
                        fprintf(stderr, "batch: %d %s\n", rc,
                                emq_errmsg(h));
                    }
                    for (j = 0; rc == EMQ_OK && j < 5; j++)
                        if (out[j] != EMQ_OK) {
                            bad++;
                            fprintf(stderr, "batch record: %d\n", out[j]);
                        }
                    k += 5;
                }
            }
            emq_close(h);
            _exit(bad > 250 ? 250 : bad);
        }
    }
    for (p = 0; p < APROCS; p++) {
        ck_assert_int_eq(waitpid(pid[p], &st, 0), pid[p]);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                      "process %d: %d appends refused", p,
                      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    db = open_node(path, -1, NULL);
    ck_assert_int_eq(emq_stream_range(db, Q, "many", "-", "+", -1, &e, &n),
                     EMQ_OK);
    ck_assert_uint_eq(n, APROCS * APER);
    for (p = 0; p < APROCS; p++) {
        char v[16];
        const char *last = "";
        snprintf(v, sizeof v, "p%d", p);
        for (i = 0; i < n; i++)
            if (strcmp(e[i].fields[1].value, v) == 0) {
                ck_assert_int_gt(strcmp(e[i].fields[0].value, last), 0);
                last = e[i].fields[0].value;
            }
    }
    emq_stream_entries_free(e, n);
    emq_close(db);
    tdir_remove(dir);
}
END_TEST

/* ---------------------------------------------------------------- reads */

START_TEST(read_shapes_records)
{
    emq_db *db = topen(&clk);
    const void *a[6] = { "f", "x", "f", "y", "g", "z" };
    const void *b[6] = { "id", "EVT0JZGkP8smrx", "k", "1", "id", "other" };
    char xid[EMQ_XID_SIZE];
    emq_stream_entry *e;
    size_t n;
    emq_reply r = {0};
    ck_assert_int_eq(emq_stream_add(db, Q, "ev", "5-1", a, NULL, 6, xid),
                     EMQ_OK);
    ck_assert_int_eq(emq_stream_add(db, Q, "ev", "6-1", b, NULL, 6, xid),
                     EMQ_OK);
    ck_assert_int_eq(emq_stream_read(db, Q, "ev", NULL, NULL, -1, &e, &n),
                     EMQ_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(e[0].id, "");             /* no id field: nil */
    ck_assert_uint_eq(e[0].nfields, 2);        /* f once, first value */
    ck_assert_str_eq(e[0].fields[0].value, "x");
    ck_assert_str_eq(e[1].id, "EVT0JZGkP8smrx");
    /* the first id field is the record id; a later one is a field */
    ck_assert_uint_eq(e[1].nfields, 2);
    ck_assert_str_eq(e[1].fields[0].name, "k");
    ck_assert_str_eq(e[1].fields[1].name, "id");
    ck_assert_str_eq(e[1].fields[1].value, "other");
    ck_assert_str_eq(e[1].xid, "6-1");
    emq_stream_entries_free(e, n);
    /* The wire shape of the same read. */
    const char *argv[2] = { Q, "ev" };
    ck_assert_int_eq(emq_call(db, "read", 2, argv, NULL, &r), EMQ_OK);
    ck_assert_int_eq(r.elem[0].elem[0].type, EMQ_REPLY_NIL);
    ck_assert_int_eq(r.elem[0].elem[1].type, EMQ_REPLY_MAP);
    ck_assert_uint_eq(r.elem[0].elem[1].n, 4);
    ck_assert_str_eq(r.elem[1].elem[0].str, "EVT0JZGkP8smrx");
    ck_assert_uint_eq(r.elem[1].elem[1].n, 4);  /* k 1 id other */
    ck_assert_str_eq(r.elem[1].elem[1].elem[2].str, "id");
    emq_reply_clear(&r);
    ck_assert_int_eq(emq_stream_read_window(db, Q, "ev", 10, 9, -1, &e, &n),
                     EMQ_EREFUSED);
    ck_assert_str_eq(emq_errmsg(db), "inverted window");
    ck_assert_int_eq(emq_stream_read_window(db, Q, "ev", 6, 6, -1, &e, &n),
                     EMQ_OK);
    ck_assert_uint_eq(n, 1);
    emq_stream_entries_free(e, n);
    ck_assert_int_eq(emq_stream_read_since(db, Q, "ev", 5, 1, &e, &n),
                     EMQ_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(e[0].xid, "5-1");
    emq_stream_entries_free(e, n);
    emq_close(db);
}
END_TEST

/* D-16: approximate trims remove only whole leading blocks of 100 that
 * the exact trim would remove. */
START_TEST(approximate_trim_removes_whole_blocks)
{
    emq_db *db = topen(&clk);
    emq_reply r = {0};
    char line[200];
    int64_t removed;
    for (int i = 1; i <= 250; i++) {
        snprintf(line, sizeof line, "XADD " SK " %d-0 n %d", i, i);
        ck_assert_int_eq(xc(db, &r, line), EMQ_OK);
    }
    ck_assert_int_eq(emq_stream_trim(db, Q, "ev", EMQ_TRIM_MAXLEN, 200, 0,
                                     &removed), EMQ_OK);
    ck_assert_int_eq(removed, 0);   /* exact would remove 50 */
    ck_assert_int_eq(emq_stream_trim(db, Q, "ev", EMQ_TRIM_MAXLEN, 120, 0,
                                     &removed), EMQ_OK);
    ck_assert_int_eq(removed, 100); /* exact: 130 */
    ck_assert_int_eq(xc_int(db, "XTRIM " SK " MINID ~ 500 LIMIT 50"), 0);
    ck_assert_int_eq(emq_stream_trim(db, Q, "ev", EMQ_TRIM_MINID, 500, 0,
                                     &removed), EMQ_OK);
    ck_assert_int_eq(removed, 100); /* exact: 150 */
    ck_assert_int_eq(xc_int(db, "XLEN " SK), 50);
    ck_assert_int_eq(emq_stream_trim(db, Q, "ev", EMQ_TRIM_MINID, 500, 1,
                                     &removed), EMQ_OK);
    ck_assert_int_eq(removed, 50);
    ck_assert(tk_exists(db, SK));
    emq_reply_clear(&r);
    emq_close(db);
}
END_TEST

/* ------------------------------------------------------------- groups */

START_TEST(group_read_block_and_errors)
{
    emq_db *db = topen(&clk);
    emq_stream_entry *e;
    size_t n;
    append3(db, "ev");
    ck_assert_int_eq(emq_stream_group_read(db, Q, "ev", "g", "c1", ">", 0, -1,
                                           &e, &n), EMQ_EENGINE);
    ck_assert_str_eq(emq_errmsg(db), "NOGROUP No such key '" SK "' or "
                     "consumer group 'g' in XREADGROUP with GROUP option");
    ck_assert_int_eq(emq_stream_group_create(db, Q, "ev", "g", "$", 0),
                     EMQ_OK);
    ck_assert_int_eq(emq_stream_group_create(db, Q, "ev", "g", "0", 0),
                     EMQ_EENGINE);
    ck_assert_str_eq(emq_errmsg(db), "BUSYGROUP Consumer Group name already "
                                     "exists");
    /* Nothing new: the bounded wait answers empty, the consumer exists. */
    ck_assert_int_eq(emq_stream_group_read(db, Q, "ev", "g", "c1", ">", 10, 5,
                                           &e, &n), EMQ_EMPTY);
    ck_assert_uint_eq(n, 0);
    emq_stream_entries_free(e, n);
    ck_assert_int_eq(xc_int(db, "XGROUP CREATECONSUMER " SK " g c1"), 0);
    emq_close(db);
}
END_TEST

/* Issue 33, item 3: a read of one stream leaves its key and group to the
 * read itself; the errors and their order are Valkey's all the same (the
 * group's error before the id's, a wrong type, one stream or two). */
static void xerr(emq_db *db, const char *line, const char *want)
{
    emq_reply r = {0};
    (void)xc(db, &r, line);
    ck_assert_int_eq(r.type, EMQ_REPLY_ERROR);
    ck_assert_str_eq(r.str, want);
    emq_reply_clear(&r);
}

START_TEST(group_read_errors_in_order)
{
    emq_db *db = topen(&clk);
    emq_reply r = {0};
    static const char nog[] = "NOGROUP No such key '" SK "' or consumer "
                              "group 'g' in XREADGROUP with GROUP option";
    static const char dollar[] = "ERR The $ ID is meaningless in the "
        "context of XREADGROUP: you want to read the history of this "
        "consumer by specifying a proper ID, or use the > ID to get new "
        "messages. The $ ID would just return an empty result set.";
    static const char badid[] = "ERR Invalid stream ID specified as stream "
                                "command argument";
    const char *const lines[] = {
        "XREADGROUP GROUP g c STREAMS " SK " >",
        "XREADGROUP GROUP g c STREAMS " SK " $",
        "XREADGROUP GROUP g c STREAMS " SK " nonsense",
        "XREADGROUP GROUP g c STREAMS " SK " " SK " > >",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        xerr(db, lines[i], nog); /* no key */
    ck_assert_int_eq(xc(db, &r, "XADD " SK " 1-1 a 1"), EMQ_OK);
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        xerr(db, lines[i], nog); /* no group */
    ck_assert_int_eq(xc(db, &r, "XGROUP CREATE " SK " g 0"), EMQ_OK);
    xerr(db, lines[1], dollar);
    xerr(db, lines[2], badid);
    tk_set(db, "emq:{" Q "}:stream:w", "str");
    xerr(db, "XREADGROUP GROUP g c STREAMS emq:{" Q "}:stream:w >",
         EMQ_WRONGTYPE_MSG);
    ck_assert_int_eq(xc(db, &r, "XREADGROUP GROUP g c STREAMS " SK " >"),
                     EMQ_OK);
    ck_assert_int_eq(r.type, EMQ_REPLY_MAP);
    ck_assert_uint_eq(r.elem[1].n, 1);
    emq_reply_clear(&r);
    emq_close(db);
}
END_TEST

typedef struct settled {
    char seen[16][EMQ_XID_SIZE];
    int64_t attempts[16];
    int n;
    const char *fail;   /* fail this entry's first delivery */
} settled;

static int handler(void *ctx, const emq_stream_entry *e, int64_t attempts)
{
    settled *s = ctx;
    if (s->n < 16) {
        snprintf(s->seen[s->n], EMQ_XID_SIZE, "%s", e->xid);
        s->attempts[s->n++] = attempts;
    }
    return s->fail && strcmp(e->xid, s->fail) == 0 && attempts == 1;
}

/* T5.7: drain, autoclaim, read new; a failure stays pending and comes back
 * once idle, with its delivery count. */
START_TEST(consumer_loop_settles_at_least_once)
{
    emq_db *db = topen(&clk);
    emq_consumer_options o;
    settled s;
    emq_stream_pending *p;
    size_t np;
    memset(&s, 0, sizeof s);
    s.fail = "1767225600000-4097";
    emq_consumer_options_init(&o);
    o.min_idle_ms = 50;
    o.beat_ms = 1;
    o.rounds = 1;
    ck_assert_int_eq(emq_stream_consume(db, Q, "ev", "w", "w1", "head", &o,
                                        handler, &s), EMQ_OK);
    ck_assert_int_eq(s.n, 0);   /* created with mkstream, nothing yet */
    append3(db, "ev");
    ck_assert_int_eq(emq_stream_consume(db, Q, "ev", "w", "w1", "head", &o,
                                        handler, &s), EMQ_OK);
    ck_assert_int_eq(s.n, 3);
    ck_assert_int_eq(s.attempts[1], 1);
    ck_assert_int_eq(emq_stream_pending_range(db, Q, "ev", "w", "-", "+", 10,
                                              &p, &np), EMQ_OK);
    ck_assert_uint_eq(np, 1);
    ck_assert_str_eq(p[0].xid, "1767225600000-4097");
    emq_stream_pending_free(p, np);
    /* Not idle yet: another consumer's round leaves it; once idle it is
     * claimed and settled on its second delivery. */
    ck_assert_int_eq(emq_stream_consume(db, Q, "ev", "w", "w2", "head", &o,
                                        handler, &s), EMQ_OK);
    ck_assert_int_eq(s.n, 3);
    clk.now += 100;
    ck_assert_int_eq(emq_stream_consume(db, Q, "ev", "w", "w2", "head", &o,
                                        handler, &s), EMQ_OK);
    ck_assert_int_eq(s.n, 4);
    ck_assert_int_eq(s.attempts[3], 2);
    ck_assert_int_eq(emq_stream_pending_range(db, Q, "ev", "w", "-", "+", 10,
                                              &p, &np), EMQ_OK);
    ck_assert_uint_eq(np, 0);
    emq_stream_pending_free(p, np);
    ck_assert_int_eq(emq_stream_consume(db, Q, "ev", "w", "w3", "sideways",
                                        &o, handler, &s), EMQ_EINVAL);
    emq_close(db);
}
END_TEST

/* Issue 27, item 13: a pending entry whose delivery count is INT64_MAX
 * (an import or RETRYCOUNT can set it) claimed again — by XCLAIM, by
 * XAUTOCLAIM, by a group read of the consumer's history — keeps INT64_MAX
 * (it used to overflow: UBSan's report, and a negative count after). */
static int64_t pending_count(emq_db *db)
{
    emq_reply r = {0};
    ck_assert_int_eq(xc(db, &r, "XPENDING " SK " g - + 10"), EMQ_OK);
    ck_assert_int_eq(r.type, EMQ_REPLY_ARRAY);
    ck_assert_uint_eq(r.n, 1);
    ck_assert_uint_eq(r.elem[0].n, 4);
    int64_t v = r.elem[0].elem[3].integer;
    emq_reply_clear(&r);
    return v;
}

START_TEST(delivery_count_stops_at_its_largest)
{
    emq_db *db = topen(&clk);
    emq_reply r = {0};
    ck_assert_int_eq(xc(db, &r, "XADD " SK " 1-1 a 1"), EMQ_OK);
    ck_assert_int_eq(xc(db, &r, "XGROUP CREATE " SK " g 0"), EMQ_OK);
    ck_assert_int_eq(xc(db, &r, "XREADGROUP GROUP g c1 STREAMS " SK " >"),
                     EMQ_OK);
    ck_assert_int_eq(xc(db, &r, "XCLAIM " SK " g c2 0 1-1 RETRYCOUNT "
                                "9223372036854775807"), EMQ_OK);
    ck_assert_int_eq(pending_count(db), INT64_MAX);
    ck_assert_int_eq(xc(db, &r, "XCLAIM " SK " g c1 0 1-1"), EMQ_OK);
    ck_assert_int_eq(pending_count(db), INT64_MAX);
    ck_assert_int_eq(xc(db, &r, "XAUTOCLAIM " SK " g c2 0 0"), EMQ_OK);
    ck_assert_int_eq(pending_count(db), INT64_MAX);
    ck_assert_int_eq(xc(db, &r, "XREADGROUP GROUP g c2 STREAMS " SK " 0"),
                     EMQ_OK);
    ck_assert_int_eq(pending_count(db), INT64_MAX);
    /* JUSTID leaves the count; a count below the top still climbs */
    ck_assert_int_eq(xc(db, &r, "XCLAIM " SK " g c1 0 1-1 RETRYCOUNT "
                                "9223372036854775806"), EMQ_OK);
    ck_assert_int_eq(xc(db, &r, "XCLAIM " SK " g c2 0 1-1 JUSTID"), EMQ_OK);
    ck_assert_int_eq(pending_count(db), INT64_MAX - 1);
    ck_assert_int_eq(xc(db, &r, "XCLAIM " SK " g c1 0 1-1"), EMQ_OK);
    ck_assert_int_eq(pending_count(db), INT64_MAX);
    emq_reply_clear(&r);
    emq_close(db);
}
END_TEST

/* Issue 33, item 3: a group read of many entries writes their PEL records
 * 32 to a statement and the last few one by one. Every record is there,
 * owned by the reader with count 1, both when new and when a record of
 * the same id is replaced (the group's last id set back: Valkey gives the
 * entry to the new reader, count 1, time now). */
static void pel_all_owned(emq_db *db, const char *c, int64_t n)
{
    emq_reply r = {0};
    ck_assert_int_eq(xc(db, &r, "XPENDING " SK " g - + 1000"), EMQ_OK);
    ck_assert_int_eq(r.type, EMQ_REPLY_ARRAY);
    ck_assert_uint_eq(r.n, (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        const emq_reply *e = &r.elem[i];
        char id[32];
        snprintf(id, sizeof id, "1-%d", (int)i + 1);
        ck_assert_uint_eq(e->n, 4);
        ck_assert_uint_eq(e->elem[0].len, strlen(id));
        ck_assert(memcmp(e->elem[0].str, id, strlen(id)) == 0);
        ck_assert_uint_eq(e->elem[1].len, strlen(c));
        ck_assert(memcmp(e->elem[1].str, c, strlen(c)) == 0);
        ck_assert_int_eq(e->elem[3].integer, 1);
    }
    emq_reply_clear(&r);
}

START_TEST(group_read_of_many_records_every_entry)
{
    emq_db *db = topen(&clk);
    emq_reply r = {0};
    char line[96];
    for (int i = 1; i <= 70; i++) {
        snprintf(line, sizeof line, "XADD " SK " 1-%d a %d", i, i);
        ck_assert_int_eq(xc(db, &r, line), EMQ_OK);
    }
    ck_assert_int_eq(xc(db, &r, "XGROUP CREATE " SK " g 0"), EMQ_OK);
    ck_assert_int_eq(xc(db, &r, "XREADGROUP GROUP g c1 COUNT 100 STREAMS "
                                SK " >"), EMQ_OK);
    ck_assert_int_eq(r.type, EMQ_REPLY_MAP); /* key, entries */
    ck_assert_uint_eq(r.elem[1].n, 70);
    pel_all_owned(db, "c1", 70);
    ck_assert_int_eq(xc(db, &r, "XCLAIM " SK " g c1 0 1-5 1-40 1-70"),
                     EMQ_OK); /* counts above 1: the replace resets them */
    ck_assert_int_eq(xc(db, &r, "XGROUP SETID " SK " g 0"), EMQ_OK);
    ck_assert_int_eq(xc(db, &r, "XREADGROUP GROUP g c2 COUNT 70 STREAMS "
                                SK " >"), EMQ_OK);
    ck_assert_uint_eq(r.elem[1].n, 70);
    pel_all_owned(db, "c2", 70);
    ck_assert_int_eq(xc_int(db, "XACK " SK " g 1-1 1-33 1-70 1-71"), 3);
    emq_reply_clear(&r);
    emq_close(db);
}
END_TEST

/* ------------------------------------------------------------ transfer */

typedef struct mem {
    char *p;
    size_t n;
} mem;

static int mem_write(void *ctx, const void *p, size_t n)
{
    mem *m = ctx;
    char *q = realloc(m->p, m->n + n + 1);
    if (!q)
        return 1;
    memcpy(q + m->n, p, n);
    m->p = q;
    m->n += n;
    m->p[m->n] = '\0';
    return 0;
}

/* A stream with trimmed and deleted entries, two groups (one with a known
 * and one with an unknown entries-read), consumers with and without
 * pending entries, and a pending entry whose entry is gone. */
static void build(emq_db *db)
{
    emq_reply r = {0};
    const char *const cmds[] = {
        "XADD " SK " 1-1 a 1", "XADD " SK " 2-1 b 2 c 3",
        "XADD " SK " 3-1 d 4",
        "XADD " SK " 4-1 e 5", "XGROUP CREATE " SK " g1 0",
        "XREADGROUP GROUP g1 c1 COUNT 3 STREAMS " SK " >",
        "XGROUP CREATE " SK " g2 $", "XGROUP CREATECONSUMER " SK " g2 idle",
        "XDEL " SK " 2-1", "XCLAIM " SK " g1 c2 0 3-1 RETRYCOUNT 5",
        "XADD emq:{" Q "}:stream:empty 9-9 x y",
        "XTRIM emq:{" Q "}:stream:empty MAXLEN 0",
        "XGROUP CREATE emq:{" Q "}:stream:mk g 0 MKSTREAM",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
        ck_assert_msg(xc(db, &r, cmds[i]) == EMQ_OK, "%s", cmds[i]);
    emq_reply_clear(&r);
}

START_TEST(export_import_round_trip)
{
    emq_db *a = topen(&clk), *b = topen(&clk);
    emq_transfer_summary sa, sb, si;
    mem ea = { NULL, 0 }, eb = { NULL, 0 };
    build(a);
    ck_assert_int_eq(emq_export(a, NULL, mem_write, &ea, &sa), EMQ_OK);
    /* The commands Valkey's AOF rewrite restores a stream with. */
    ck_assert_ptr_nonnull(strstr(ea.p, "XSETID\r\n$18\r\n" SK "\r\n$3\r\n"
                                 "4-1\r\n$12\r\nENTRIESADDED\r\n$1\r\n4"
                                 "\r\n$12\r\nMAXDELETEDID\r\n$3\r\n2-1"));
    ck_assert_ptr_nonnull(strstr(ea.p, "ENTRIESREAD\r\n$1\r\n3"));
    ck_assert_ptr_nonnull(strstr(ea.p, "$4\r\nTIME\r\n"));
    ck_assert_ptr_nonnull(strstr(ea.p, "$6\r\nMAXLEN\r\n$1\r\n0\r\n"
                                       "$3\r\n0-1"));
    ck_assert_int_eq(emq_import(b, ea.p, ea.n, &si), EMQ_OK);
    ck_assert_int_eq(emq_export(b, NULL, mem_write, &eb, &sb), EMQ_OK);
    ck_assert_uint_eq(sa.digest, sb.digest);
    ck_assert_uint_eq(sa.digest, si.digest);
    ck_assert_uint_eq(ea.n, eb.n);
    ck_assert_int_eq(memcmp(ea.p, eb.p, ea.n), 0);
    /* The PEL record of the deleted 2-1 is not part of the image. */
    ck_assert_ptr_null(strstr(ea.p, "$3\r\n2-1\r\n$4\r\nTIME"));
    ck_assert_int_eq(emq_check(b, NULL, NULL, NULL), EMQ_OK);
    free(ea.p);
    free(eb.p);
    emq_close(a);
    emq_close(b);
}
END_TEST

/* The checker's findings: codes and keys. */
typedef struct findings {
    int n;
    char code[4][16], key[4][64];
} findings;

static void on_finding(void *ctx, const emq_finding *f)
{
    findings *x = ctx;
    if (f->severity != EMQ_CHECK_VIOLATION || x->n == 4)
        return;
    snprintf(x->code[x->n], sizeof x->code[0], "%s", f->code);
    snprintf(x->key[x->n], sizeof x->key[0], "%s", f->key);
    x->n++;
}

/* The checker knows stream keys by the grammar: streams (groups, PELs)
 * where the grammar puts them are clean; a stream anywhere else, or
 * another type at a stream key, is a type violation. */
START_TEST(the_checker_knows_stream_keys)
{
    emq_db *db = topen(&clk);
    emq_store *st = emq_db_store(db);
    emq_reply r = {0};
    findings f = {0};
    size_t nv = 9;
    build(db);
    ck_assert_int_eq(emq_check(db, on_finding, &f, &nv), EMQ_OK);
    ck_assert_uint_eq(nv, 0);
    const char *argv[5] = {"XADD", "emq:{" Q "}:pending", "1-1", "f", "v"};
    const size_t len[5] = {4, strlen(argv[1]), 3, 1, 1};
    ck_assert_int_eq(emq_xcmd_run(db, 5, argv, len, &r), EMQ_OK);
    emq_reply_clear(&r);
    ck_assert_int_eq(emq_store_begin(st, 1, clk.now), EMQ_OK);
    const char *sk = "emq:{" Q "}:stream:s";
    ck_assert_int_eq(emq_str_set(st, sk, strlen(sk), "x", 1, -1, 0, NULL),
                     EMQ_OK);
    ck_assert_int_eq(emq_store_commit(st), EMQ_OK);
    ck_assert_int_eq(emq_check(db, on_finding, &f, &nv), EMQ_ECORRUPT);
    ck_assert_int_eq(f.n, 2);
    ck_assert_str_eq(f.code[0], "type");
    ck_assert_str_eq(f.code[1], "type");
    ck_assert(strcmp(f.key[0], "emq:{" Q "}:pending") == 0 ||
              strcmp(f.key[1], "emq:{" Q "}:pending") == 0);
    ck_assert(strcmp(f.key[0], "emq:{" Q "}:stream:s") == 0 ||
              strcmp(f.key[1], "emq:{" Q "}:stream:s") == 0);
    emq_close(db);
}
END_TEST

START_TEST(import_refuses_bad_stream_commands)
{
    emq_db *db = topen(&clk);
    static const char v[] = "*3\r\n$3\r\nSET\r\n$13\r\n{emq}:version\r\n"
                            "$12\r\nechomq:4.0.0\r\n";
    static const char bad[] = "*5\r\n$4\r\nXADD\r\n$18\r\n" SK "\r\n$3\r\n"
                              "0-0\r\n$1\r\nf\r\n$1\r\nv\r\n";
    static const char alien[] = "*5\r\n$4\r\nXADD\r\n$5\r\nother\r\n$3\r\n"
                                "1-1\r\n$1\r\nf\r\n$1\r\nv\r\n";
    char buf[400];
    int n = snprintf(buf, sizeof buf, "%s%s", v, bad);
    ck_assert_int_eq(emq_import(db, buf, (size_t)n, NULL), EMQ_EPROTO);
    ck_assert_ptr_nonnull(strstr(emq_errmsg(db), "must be greater than 0-0"));
    n = snprintf(buf, sizeof buf, "%s%s", v, alien);
    ck_assert_int_eq(emq_import(db, buf, (size_t)n, NULL), EMQ_EPROTO);
    ck_assert(!tk_exists(db, SK));
    emq_close(db);
}
END_TEST

Suite *suite_stream(void)
{
    Suite *s = suite_create("stream");
    TCase *t = tcase_create("stream");
    clk.now = T0;
    tcase_add_test(t, stream_type_is_isolated_both_ways);
    tcase_add_test(t, stream_outlives_its_entries);
    tcase_add_test(t, append_gates_and_codes);
    tcase_add_test(t, appends_of_two_nodes_in_one_millisecond_land_in_order);
    tcase_add_test(t, appends_from_several_processes_all_land_in_order);
    tcase_add_test(t, append_batch_reports_every_receipt);
    tcase_add_test(t, read_shapes_records);
    tcase_add_test(t, approximate_trim_removes_whole_blocks);
    tcase_add_test(t, group_read_block_and_errors);
    tcase_add_test(t, group_read_errors_in_order);
    tcase_add_test(t, consumer_loop_settles_at_least_once);
    tcase_add_test(t, delivery_count_stops_at_its_largest);
    tcase_add_test(t, group_read_of_many_records_every_entry);
    tcase_add_test(t, export_import_round_trip);
    tcase_add_test(t, import_refuses_bad_stream_commands);
    tcase_add_test(t, the_checker_knows_stream_keys);
    suite_add_tcase(s, t);
    return s;
}
