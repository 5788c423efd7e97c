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
 * Rule: the comparison is exact (no minor-version tolerance, D-1).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "db.h"

#define WIRE_LEN (sizeof EMQ_WIRE - 1)

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

static int refuse(char *err, size_t errlen, const char *found)
{
    if (err && errlen)
        snprintf(err, errlen,
                 "version_fence(%s): the file speaks another wire; this "
                 "library speaks %s (expected), nothing was written",
                 found, EMQ_WIRE);
    return EMQ_EWIRE;
}

static int matches(const emq_buf *v)
{
    return v->len == WIRE_LEN && memcmp(v->p, EMQ_WIRE, WIRE_LEN) == 0;
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
static int check(emq_store *st, int readonly, char *err, size_t errlen)
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
    rc = emq_str_set(st, key, kl, EMQ_WIRE, WIRE_LEN, -1, EMQ_SET_NX, &done);
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

int emq_fence_pass(emq_store *st, int readonly, int64_t now, char *err,
                   size_t errlen)
{
    int rc = emq_store_begin(st, readonly ? 0 : 1, now);
    if (rc < 0) {
        if (err && errlen)
            snprintf(err, errlen, "%s: %s", emq_strerror(rc),
                     emq_store_errmsg(st));
        return rc;
    }
    rc = check(st, readonly, err, errlen);
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
