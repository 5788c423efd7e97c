/*
 * stream_roundtrip.c — streams through a real server and back: a file's
 * export replayed into redis-server, the server's own AOF rewrite imported
 * into a new file, and the two files compared (digest and export bytes).
 *
 *   tests/stream_roundtrip make DB OUT
 *       create DB with the stream fixture and write its export to OUT;
 *       prints "digest <hex> keys <n>"
 *   tests/stream_roundtrip back DB AOF DB2
 *       import the server's rewritten AOF into the new file DB2, then
 *       compare DB2 with DB: the same logical digest and the same export,
 *       byte for byte; prints "digest <hex> keys <n>"
 *   tests/stream_roundtrip same DB DB2
 *       compare two files the same way (after a push and a pull)
 *
 * The fixture covers what a stream carries: entries with binary fields,
 * deleted and trimmed entries (the max-deleted id, entries-added above the
 * length), an emptied stream, a stream made by MKSTREAM, groups with a
 * known and an unknown entries-read, consumers with and without pending
 * entries, pending entries with delivery counts above 1 and delivery times
 * in the past, and a pending entry whose entry was deleted (which no
 * server can recreate: §8.3.5; it is not part of the image). It runs on
 * the wall clock, because the server stamps consumers with its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emqlite.h"
#include "emqlite_protocol.h"
#include "xcmd.h"

static int fail(const char *what, const char *detail)
{
    fprintf(stderr, "stream_roundtrip: %s%s%s\n", what, detail ? ": " : "",
            detail ? detail : "");
    return 1;
}

static int cmd(emq_db *db, const char *line)
{
    char buf[512], *argv[32], *save = NULL;
    size_t len[32], n = 0;
    emq_reply r = {0};
    snprintf(buf, sizeof buf, "%s", line);
    for (char *t = strtok_r(buf, " ", &save); t && n < 32;
         t = strtok_r(NULL, " ", &save)) {
        argv[n] = t;
        len[n++] = strlen(t);
    }
    int rc = emq_xcmd_run(db, n, (const char *const *)argv, len, &r);
    emq_reply_clear(&r);
    if (rc != EMQ_OK)
        fprintf(stderr, "stream_roundtrip: %s: %s\n", line, emq_errmsg(db));
    return rc;
}

/* A server's AOF is a bare command stream: no export end record. */
static int import_raw(emq_db *db, const void *p, size_t n)
{
    emq_import_options o;
    emq_importer *im;
    int rc;
    emq_import_options_init(&o);
    o.format = EMQ_IMPORT_RAW;
    if ((rc = emq_import_begin(db, &o, &im)) != EMQ_OK)
        return rc;
    if ((rc = emq_import_feed(im, p, n)) != EMQ_OK) {
        emq_import_abort(im);
        return rc;
    }
    return emq_import_finish(im, NULL);
}

static int fixture(emq_db *db)
{
    char line[256];
    const void *bin[2] = { "blob", "a\0b\xff" };
    size_t binlen[2] = { 4, 4 };
    const void *fv[2] = { "job", "e" };
    int64_t past = emq_now(db) - 3600000;
    int rc = EMQ_OK;
    /* Records appended by the verbs, one with binary bytes. */
    for (int i = 0; i < 6 && rc == EMQ_OK; i++)
        rc = emq_stream_append(db, "rt", "ev", i == 2 ? bin : fv,
                               i == 2 ? binlen : NULL, 2, NULL);
    if (rc != EMQ_OK)
        return fail("append", emq_errmsg(db));
    static const char *const steps[] = {
        "XGROUP CREATE emq:{rt}:stream:ev workers 0",
        "XREADGROUP GROUP workers w1 COUNT 4 STREAMS emq:{rt}:stream:ev >",
        "XREADGROUP GROUP workers w2 COUNT 1 STREAMS emq:{rt}:stream:ev >",
        "XREADGROUP GROUP workers w1 STREAMS emq:{rt}:stream:ev 0",
        "XGROUP CREATE emq:{rt}:stream:ev late $",
        "XGROUP CREATECONSUMER emq:{rt}:stream:ev late idle",
        "XGROUP CREATE emq:{rt}:stream:ev counted 0 ENTRIESREAD 0",
        "XADD emq:{rt}:stream:raw 5-1 a 1",
        "XADD emq:{rt}:stream:raw 5-2 b 2",
        "XADD emq:{rt}:stream:raw 7-0 c 3 d 4",
        "XADD emq:{rt}:stream:raw 9-0 e 5",
        "XGROUP CREATE emq:{rt}:stream:raw g 0",
        "XREADGROUP GROUP g c1 STREAMS emq:{rt}:stream:raw >",
        "XDEL emq:{rt}:stream:raw 5-2",
        "XTRIM emq:{rt}:stream:raw MAXLEN 2",
        "XADD emq:{rt}:stream:gone 3-3 x y",
        "XTRIM emq:{rt}:stream:gone MAXLEN 0",
        "XGROUP CREATE emq:{rt}:stream:made g $ MKSTREAM",
        NULL };
    for (int i = 0; steps[i] && rc == EMQ_OK; i++)
        rc = cmd(db, steps[i]);
    /* A delivery long ago, with a count above 1, and an ack. */
    snprintf(line, sizeof line, "XCLAIM emq:{rt}:stream:raw g c2 0 9-0 TIME "
             "%lld RETRYCOUNT 4", (long long)past);
    if (rc == EMQ_OK)
        rc = cmd(db, line);
    if (rc == EMQ_OK)
        rc = cmd(db, "XACK emq:{rt}:stream:raw g 7-0");
    if (rc == EMQ_OK)
        rc = emq_stream_put_archived(db, "rt", "ev", "EVT0JZGkP8smrw", 14);
    return rc == EMQ_OK ? 0 : fail("fixture", emq_errmsg(db));
}

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
    return 0;
}

static int slurp(const char *path, mem *m)
{
    FILE *f = fopen(path, "rb");
    char buf[65536];
    size_t n;
    if (!f)
        return -1;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        if (mem_write(m, buf, n)) {
            fclose(f);
            return -1;
        }
    fclose(f);
    return 0;
}

static int open_file(const char *path, int fresh, emq_db **db)
{
    char err[512];
    if (fresh)
        remove(path);
    if (emq_open_ex(path, NULL, db, err, sizeof err) != EMQ_OK)
        return fail("cannot open", err);
    return 0;
}

int main(int argc, char **argv)
{
    emq_db *db, *db2;
    emq_transfer_summary s1, s2;
    mem a = { NULL, 0 }, b = { NULL, 0 }, aof = { NULL, 0 };
    if (argc == 4 && strcmp(argv[1], "make") == 0) {
        FILE *f;
        if (open_file(argv[2], 1, &db) || fixture(db))
            return 1;
        if (emq_export(db, NULL, mem_write, &a, &s1) != EMQ_OK)
            return fail("export", emq_errmsg(db));
        if (!(f = fopen(argv[3], "wb")) || fwrite(a.p, 1, a.n, f) != a.n ||
            fclose(f) != 0)
            return fail("cannot write", argv[3]);
        printf("digest %016llx keys %llu\n", (unsigned long long)s1.digest,
               (unsigned long long)s1.keys);
        emq_close(db);
        free(a.p);
        return 0;
    }
    int back = argc == 5 && strcmp(argv[1], "back") == 0;
    if (back || (argc == 4 && strcmp(argv[1], "same") == 0)) {
        if (back && slurp(argv[3], &aof))
            return fail("cannot read", argv[3]);
        if (open_file(argv[2], 0, &db) ||
            open_file(argv[back ? 4 : 3], back, &db2))
            return 1;
        if (back && import_raw(db2, aof.p, aof.n) != EMQ_OK)
            return fail("import of the server's AOF", emq_errmsg(db2));
        if (emq_export(db, NULL, mem_write, &a, &s1) != EMQ_OK ||
            emq_export(db2, NULL, mem_write, &b, &s2) != EMQ_OK)
            return fail("export", NULL);
        printf("digest %016llx keys %llu\n", (unsigned long long)s2.digest,
               (unsigned long long)s2.keys);
        if (s1.digest != s2.digest)
            return fail("the file that came back differs", "digest");
        if (a.n != b.n || memcmp(a.p, b.p, a.n) != 0)
            return fail("the file that came back differs", "export bytes");
        if (emq_check(db2, NULL, NULL, NULL) != EMQ_OK)
            return fail("the file that came back", "fails emq_check");
        emq_close(db);
        emq_close(db2);
        free(a.p);
        free(b.p);
        free(aof.p);
        return 0;
    }
    fprintf(stderr, "usage: %s make DB OUT | back DB AOF DB2 | same DB DB2\n",
            argv[0]);
    return 2;
}
