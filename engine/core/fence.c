/*
 * fence.c — the version fence of PROTOCOL.md §5 (`{emq}:version`).
 *
 * Owns: the one check every open passes before the handle exists. A writable
 * open runs steps 1-3 in one write transaction (read; equal → pass; absent →
 * set only-if-absent and read back); a refusal rolls back, so a refused file
 * is left byte-for-byte as it was. A read-only open reads in a read
 * transaction and refuses an absent stamp as well as a foreign one.
 * The same rule runs earlier too, as the store's judge (emq_fence_judge):
 * inside the open's first, read-only look at the file, before the store
 * writes anything (WAL mode, schema), so a file of another wire is refused
 * without a byte of it changed, whatever its journal mode.
 * Rule: the comparison is exact (no minor-version tolerance, D-1), against
 * each identity of the table below (PROTOCOL.md §5; doc/DECISIONS.md,
 * "Wire identities"): a file is stamped with one of them at creation
 * (emq_options.wire, default
 * EMQ_WIRE) and keeps it; emq_set_wire changes it on request.
 *
 * Also owns: the wire identities themselves (emq_wire_table,
 * emq_wire_known), and the file's identity as a call (emq_wire,
 * emq_set_wire).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "db.h"

/* The identities whose L1/L2 this library implements exactly. What
 * distinguishes one from another: nothing but the stamp (doc/PROTOCOL.md
 * §5). "echomq:3.0.0" is the deployed EchoMQ runtime's (its connector
 * claims and fences on it). The first is the default of a new file. */
static const char *const wires[] = { EMQ_WIRE, "echomq:3.0.0", NULL };

const char *emq_wire_table(size_t i)
{
    return i < sizeof wires / sizeof *wires - 1 ? wires[i] : NULL;
}

const char *emq_wire_known(const void *p, size_t n)
{
    for (size_t i = 0; wires[i]; i++)
        if (p && strlen(wires[i]) == n && memcmp(wires[i], p, n) == 0)
            return wires[i];
    return NULL;
}

/* Render the found value for a message: printable ASCII verbatim, other
 * bytes as \xNN, cut at 64 bytes. */
static void show(char *out, size_t cap, const emq_buf *v)
{
    size_t o = 0, i;
    for (i = 0; i < v->len && i < 64 && o + 5 < cap; i++) {
        unsigned c = v->p[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    if (i < v->len && o + 4 < cap) { memcpy(out + o, "...", 3); o += 3; }
    out[o] = 0;
}

/* The table as one line: "echomq:4.0.0 or echomq:3.0.0". */
void emq_wire_list(char *out, size_t cap)
{
    size_t o = 0;
    out[0] = 0;
    for (size_t i = 0; wires[i] && o < cap; i++)
        o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? " or " : "",
                              wires[i]);
}

static int refuse(char *err, size_t errlen, const char *found)
{
    char known[100];
    emq_wire_list(known, sizeof known);
    if (err && errlen)
        snprintf(err, errlen,
                 "version_fence(%s): the file speaks another wire; this "
                 "library speaks %s (expected), nothing was written",
                 found, known);
    return EMQ_EWIRE;
}

static int matches(const emq_buf *v)
{
    return emq_wire_known(v->p, v->len) != NULL;
}

int emq_fence_judge(void *ctx, int type, const void *val, size_t len,
                    char *err, size_t errlen)
{
    const int *readonly = ctx;
    emq_buf v = {(unsigned char *)(uintptr_t)val, len, len};
    char shown[300];
    if (type == EMQ_T_NONE)
        return *readonly ? refuse(err, errlen, "absent, and a read-only open "
                                  "cannot stamp")
                         : EMQ_OK;
    if (type != EMQ_T_STRING)
        return refuse(err, errlen, "a key of another type");
    if (matches(&v))
        return EMQ_OK;
    show(shown, sizeof shown, &v);
    return refuse(err, errlen, shown);
}

/* The fence body; runs inside an open transaction. */
static int check(emq_store *st, int readonly, const char *wire, char *err,
                 size_t errlen)
{
    static const char key[] = EMQ_VERSION_KEY;
    const size_t kl = sizeof key - 1;
    emq_buf v = {0};
    char shown[300];
    int done, rc = emq_str_get(st, key, kl, &v);
    if (rc == EMQ_EWRONGTYPE) {
        rc = refuse(err, errlen, "a key of another type");
        goto out;
    }
    if (rc < 0) goto out;
    if (rc == EMQ_OK) {
        if (matches(&v)) goto out;
        show(shown, sizeof shown, &v);
        rc = refuse(err, errlen, shown);
        goto out;
    }
    /* absent */
    if (readonly) {
        rc = refuse(err, errlen, "absent, and a read-only open cannot stamp");
        goto out;
    }
    rc = emq_str_set(st, key, kl, wire, strlen(wire), -1, EMQ_SET_NX, &done);
    if (rc < 0) goto out;
    rc = emq_str_get(st, key, kl, &v);
    if (rc < 0) goto out;
    if (rc == EMQ_NOTFOUND || !matches(&v)) {
        if (rc == EMQ_NOTFOUND) snprintf(shown, sizeof shown, "absent");
        else show(shown, sizeof shown, &v);
        rc = refuse(err, errlen, shown);
        goto out;
    }
    rc = EMQ_OK;
out:
    emq_buf_free(&v);
    return rc;
}

int emq_fence_pass(emq_store *st, int readonly, const char *wire,
                   int64_t now, char *err, size_t errlen)
{
    int rc = emq_store_begin(st, readonly ? 0 : 1, now);
    if (rc < 0) {
        if (err && errlen)
            snprintf(err, errlen, "%s: %s", emq_strerror(rc),
                     emq_store_errmsg(st));
        return rc;
    }
    rc = check(st, readonly, wire ? wire : EMQ_WIRE, err, errlen);
    if (rc != EMQ_OK) {
        if (rc != EMQ_EWIRE && err && errlen)
            snprintf(err, errlen, "%s: %s", emq_strerror(rc),
                     emq_store_errmsg(st));
        emq_store_rollback(st);
        return rc;
    }
    rc = emq_store_commit(st);
    if (rc < 0 && err && errlen)
        snprintf(err, errlen, "%s: %s", emq_strerror(rc), emq_store_errmsg(st));
    return rc;
}

/* ------------------------------------------------- the file's identity */

typedef struct wire_ctx {
    const char *set;   /* emq_set_wire: the new identity; NULL: read */
    const char *got;   /* the identity found (before a change)       */
} wire_ctx;

static int wire_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    static const char key[] = EMQ_VERSION_KEY;
    wire_ctx *w = ctx;
    emq_buf v = {0};
    int done, rc = emq_str_get(st, key, sizeof key - 1, &v);
    (void)now;
    if (rc == EMQ_OK && !(w->got = emq_wire_known(v.p, v.len)))
        rc = emq_db_wire(db, EMQ_EWIRE, "the file's {emq}:version is no "
                         "identity of the table (changed since the open)");
    else if (rc == EMQ_NOTFOUND)
        rc = emq_db_wire(db, EMQ_EWIRE, "the file holds no {emq}:version "
                         "(removed since the open)");
    emq_buf_free(&v);
    if (rc < 0 || !w->set || w->set == w->got)
        return rc < 0 ? rc : EMQ_OK;
    rc = emq_str_set(st, key, sizeof key - 1, w->set, strlen(w->set), -1, 0,
                     &done);
    return rc < 0 ? rc : EMQ_OK;
}

int emq_wire(emq_db *db, const char **out)
{
    wire_ctx w = {NULL, NULL};
    int rc = emq_db_enter(db);
    if (rc < 0)
        return rc;
    if (!out)
        return emq_db_fail(db, EMQ_EINVAL, "wire: no output pointer");
    *out = NULL;
    if ((rc = emq_db_run(db, 0, wire_tx, &w)) == EMQ_OK)
        *out = w.got;
    return rc;
}

int emq_set_wire(emq_db *db, const char *wire, const char **was)
{
    wire_ctx w = {NULL, NULL};
    int rc = emq_db_enter(db);
    if (rc < 0)
        return rc;
    if (was)
        *was = NULL;
    if (!wire || !(w.set = emq_wire_known(wire, strlen(wire)))) {
        char known[100], msg[EMQ_ERRMSG_MAX];
        emq_wire_list(known, sizeof known);
        snprintf(msg, sizeof msg, "set_wire: '%.100s' is no identity of the "
                 "table (%s); nothing changed", wire ? wire : "(null)", known);
        return emq_db_fail(db, EMQ_EINVAL, msg);
    }
    if ((rc = emq_db_run(db, 1, wire_tx, &w)) == EMQ_OK && was)
        *was = w.got;
    return rc;
}
