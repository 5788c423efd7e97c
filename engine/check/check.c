/*
 * check.c — the invariant checker, emq_check() (doc/RELIABILITY.md).
 *
 * Owns: one read-only pass over the whole file, inside one read transaction,
 * that reports every broken invariant (not just the first) through a
 * callback: the SQLite integrity check and stamp, the schema objects, the
 * key rows' checksums (when the file keeps them), then every key judged by
 * the rule set of rules.c (the one an import is judged by too): the version
 * fence, the key grammar and the type of every key, expiries, the members
 * and scores of the job sets and lanes, decimal counters, and the agreement
 * of every job row's `state` with the sets that hold its id.
 *
 * Rules: the checker never writes. What is a violation and what a note is
 * rules.c's; this file adds only what concerns the file itself. Tests
 * assert zero violations always and zero notes where the workload is
 * disciplined.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "db.h"
#include "keys.h"
#include "rules.h"

typedef struct checker {
    emq_store *st;
    emq_check_fn cb;
    void *ctx;
    size_t nviol, nnote;
    emq_rkeys keys;
    emq_buf *sumbad;     /* keys whose checksum failed: their unreadable
                            value is not a second finding              */
    size_t nsumbad;
    int oom;
} checker;

static int sum_failed(const checker *c, const void *key, size_t klen)
{
    for (size_t i = 0; i < c->nsumbad; i++)
        if (c->sumbad[i].len == klen && memcmp(c->sumbad[i].p, key, klen) == 0)
            return 1;
    return 0;
}

/* ------------------------------------------------------------- reporting */

/* A finding of the rules (or of the file checks): counted, and handed to
 * the caller with the key made printable. */
static void on_rule(void *ctx, int sev, const char *code, const void *key,
                    size_t klen, const char *msg)
{
    checker *c = ctx;
    char kbuf[700];
    emq_finding f;
    if (strcmp(code, "checksum") != 0 && sum_failed(c, key, klen))
        return; /* already reported as a failed checksum */
    emq_show_bytes(kbuf, sizeof kbuf, key, klen);
    if (sev == EMQ_CHECK_VIOLATION)
        c->nviol++;
    else
        c->nnote++;
    if (c->cb) {
        f.severity = sev;
        f.code = code;
        f.key = kbuf;
        f.message = msg;
        c->cb(c->ctx, &f);
    }
}

static void report(checker *c, int sev, const char *code, const void *key,
                   size_t klen, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void report(checker *c, int sev, const char *code, const void *key,
                   size_t klen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emq_rule_vreport(on_rule, c, sev, code, key, klen, fmt, ap);
    va_end(ap);
}

#define VIOL EMQ_CHECK_VIOLATION

/* ------------------------------------------------------------ file level */

static void schema_cb(void *ctx, const char *finding)
{
    report(ctx, VIOL, "schema", NULL, 0, "the file's schema has a %s (only "
           "emqlite's own objects belong in it)", finding);
}

static void row_cb(void *ctx, const void *key, size_t klen, const char *why)
{
    checker *c = ctx;
    emq_buf *v = emq_mem_realloc(c->sumbad, (c->nsumbad + 1) * sizeof *v);
    report(c, VIOL, "checksum", key, klen, "%s", why);
    if (v == NULL) {
        c->oom = 1;
        return;
    }
    c->sumbad = v;
    memset(&v[c->nsumbad], 0, sizeof *v);
    if (emq_buf_set(&v[c->nsumbad], key, klen) < 0) c->oom = 1;
    c->nsumbad++;
}

static void file_cb(void *ctx, const char *rule, const char *finding)
{
    report(ctx, VIOL, rule, NULL, 0, "%s", finding);
}

/* The file itself (storage/schema.c): SQLite's integrity check and the
 * stamps, the schema objects, the row checksums. */
static int check_file(checker *c)
{
    int rc;
    if ((rc = emq_store_check_file(c->st, file_cb, c)) < 0) return rc;
    if (rc > 0) return EMQ_OK; /* corrupt: nothing more can be read */
    if ((rc = emq_store_check_schema(c->st, schema_cb, c)) < 0 ||
        (rc = emq_store_check_rows(c->st, row_cb, c)) < 0)
        return rc;
    return c->oom ? EMQ_ENOMEM : EMQ_OK;
}

/* ----------------------------------------------------------------- walk */

static int walk(checker *c)
{
    emq_judge *j = NULL;
    int rc;
    if ((rc = check_file(c)) < 0) return rc;
    if ((rc = emq_rkeys_scan(c->st, "", 0, &c->keys)) != EMQ_OK)
        return rc < 0 ? rc : EMQ_EINTERNAL;
    if ((rc = emq_judge_new(c->st, on_rule, c, &j)) != EMQ_OK) return rc;
    if ((rc = emq_judge_keys(j, c->keys.k, c->keys.n)) == 0)
        emq_judge_file_done(j);
    emq_judge_free(j);
    return rc;
}

int emq_check(emq_db *db, emq_check_fn cb, void *ctx, size_t *nviolations)
{
    checker c;
    int rc;
    if (db == NULL) return EMQ_EINVAL; /* no handle, no message to set */
    if (nviolations) *nviolations = 0;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    memset(&c, 0, sizeof c);
    c.st = emq_db_store(db);
    c.cb = cb;
    c.ctx = ctx;
    rc = emq_store_begin(c.st, 0, emq_now(db));
    if (rc < 0) {
        emq_db_fail(db, rc, emq_store_errmsg(c.st));
        goto done;
    }
    rc = walk(&c);
    emq_store_rollback(c.st);
    if (rc < 0) {
        emq_db_fail(db, rc, rc == EMQ_ENOMEM ? "" : emq_store_errmsg(c.st));
        goto done;
    }
    if (c.nviol) {
        char m[96];
        snprintf(m, sizeof m, "%zu invariant violation%s", c.nviol,
                 c.nviol == 1 ? "" : "s");
        rc = emq_db_fail(db, EMQ_ECORRUPT, m);
    } else {
        rc = EMQ_OK;
    }
done:
    if (nviolations) *nviolations = c.nviol;
    emq_rkeys_free(&c.keys);
    for (size_t i = 0; i < c.nsumbad; i++) emq_buf_free(&c.sumbad[i]);
    emq_mem_free(c.sumbad);
    return rc;
}
