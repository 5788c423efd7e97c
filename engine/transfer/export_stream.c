/*
 * export_stream.c — the stream commands of an import (export_stream.h;
 * doc/EXPORT.md §2): run through engine/stream/xcmd.c with Valkey's semantics. A
 * stream's export and digest form is the store's (storage/xsout.c).
 */
#include <stdio.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "db.h"
#include "keys.h"
#include "xcmd.h"
#include "stream.h"
#include "export_stream.h"

/* -------------------------------------------------------------- import */

static int word(const emq_resp_cmd *c, size_t i, const char *w)
{
    size_t n = strlen(w);
    if (i >= c->argc || c->lens[i] != n)
        return 0;
    for (size_t k = 0; k < n; k++) {
        unsigned char a = c->argv[i][k];
        if (a >= 'a' && a <= 'z')
            a = (unsigned char)(a - 32);
        if (a != (unsigned char)w[k])
            return 0;
    }
    return 1;
}

int emq_stream_import_cmd(const emq_resp_cmd *c)
{
    static const char *const cmds[] = { "XADD", "XDEL", "XTRIM", "XSETID",
                                        "XGROUP", "XCLAIM", "XACK", NULL };
    for (int i = 0; cmds[i]; i++)
        if (word(c, 0, cmds[i]))
            return 1;
    return 0;
}

static int refused(emq_db *db, const emq_resp_cmd *c, const char *why)
{
    char msg[EMQ_ERRMSG_MAX];
    snprintf(msg, sizeof msg, "import refused at byte %llu: %s",
             (unsigned long long)c->offset, why);
    return emq_db_wire(db, EMQ_EPROTO, msg);
}

int emq_stream_import(emq_db *db, emq_store *st, const emq_resp_cmd *c)
{
    size_t ki = word(c, 0, "XGROUP") ? 2 : 1, total = 0;
    emq_keyinfo info;
    emq_reply r = {0};
    const char **argv = NULL;
    char *bytes = NULL, *at;
    int rc;
    if (c->argc <= ki)
        return refused(db, c, "a stream command without its key");
    if (!emq_key_parse(c->argv[ki], c->lens[ki], &info) ||
        info.family != EMQ_K_QUEUE || info.kt != EMQ_KT_STREAM)
        return refused(db, c, "a stream command on a key that is not a "
                              "stream key of the EchoMQ grammar");
    /* xcmd reads C strings: each argument copied with a NUL after it. */
    for (size_t i = 0; i < c->argc; i++)
        total += c->lens[i] + 1;
    if (!(argv = emq_mem_malloc(c->argc * sizeof *argv)) ||
        !(bytes = emq_mem_malloc(total))) {
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        goto done;
    }
    at = bytes;
    for (size_t i = 0; i < c->argc; i++) {
        if (c->lens[i])
            memcpy(at, c->argv[i], c->lens[i]);
        at[c->lens[i]] = '\0';
        argv[i] = at;
        at += c->lens[i] + 1;
    }
    rc = emq_xcmd(st, c->argc, argv, c->lens, &r, NULL);
    if (rc < 0 && r.type == EMQ_REPLY_ERROR)
        rc = refused(db, c, r.str);
done:
    emq_reply_clear(&r);
    emq_mem_free(argv);
    emq_mem_free(bytes);
    return rc < 0 ? rc : EMQ_OK;
}

/* ------------------------------------------------ records Valkey lacks */

/* The pending records whose entry is gone, per stream and group: what no
 * Valkey command recreates (XCLAIM ... FORCE needs the entry), so what an
 * export or a push cannot carry. */
typedef struct unheld {
    const emq_export_options *eo;
    emq_unheld_fn fn;
    void *ctx;
    emq_store *st;
    emq_buf keys, groups;   /* length-prefixed names                     */
    const unsigned char *key;
    size_t klen;
    uint64_t n;
    int oom;
} unheld;

static int put_name(emq_buf *b, const void *p, size_t n)
{
    uint32_t l = (uint32_t)n;
    return emq_buf_append(b, &l, sizeof l) == EMQ_OK &&
                   emq_buf_append(b, p, n) == EMQ_OK
               ? 0 : 1;
}

static int on_stream_key(void *ctx, const unsigned char *key, size_t klen,
                         int type)
{
    unheld *u = ctx;
    if (type != EMQ_T_STREAM)
        return 0;
    return (u->oom = put_name(&u->keys, key, klen));
}

static int on_group(void *ctx, const emq_xgroup_info *g)
{
    unheld *u = ctx;
    return (u->oom = put_name(&u->groups, g->name, g->nlen));
}

static int on_pel(void *ctx, emq_xid id, const unsigned char *c, size_t clen,
                  int64_t delivered, int64_t count)
{
    unheld *u = ctx;
    int rc = EMQ_OK;
    (void)c, (void)clen, (void)delivered, (void)count;
    if (!emq_xs_exists(u->st, u->key, u->klen, id, &rc) && rc == EMQ_OK)
        u->n++;
    return rc;
}

static int unheld_tx(struct emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    unheld *u = ctx;
    int rc = EMQ_OK;
    (void)db, (void)now;
    u->st = st;
    if (u->eo && u->eo->queues && u->eo->n_queues) {
        for (size_t i = 0; i < u->eo->n_queues && rc == EMQ_OK; i++) {
            char pre[300];
            int n = snprintf(pre, sizeof pre, "emq:{%s}:", u->eo->queues[i]);
            if (n > 0 && (size_t)n < sizeof pre)
                rc = emq_key_scan(st, pre, (size_t)n, on_stream_key, u);
        }
    } else {
        rc = emq_key_scan(st, "", 0, on_stream_key, u);
    }
    for (size_t at = 0; rc == EMQ_OK && at < u->keys.len;) {
        uint32_t kl;
        memcpy(&kl, u->keys.p + at, sizeof kl);
        u->key = u->keys.p + at + sizeof kl;
        u->klen = kl;
        at += sizeof kl + kl;
        u->groups.len = 0;
        rc = emq_xs_groups(st, u->key, u->klen, on_group, u);
        for (size_t g = 0; rc == EMQ_OK && g < u->groups.len;) {
            uint32_t gl;
            memcpy(&gl, u->groups.p + g, sizeof gl);
            const unsigned char *gn = u->groups.p + g + sizeof gl;
            g += sizeof gl + gl;
            u->n = 0;
            rc = emq_xs_pel(st, u->key, u->klen, gn, gl, NULL, 0, 0, on_pel,
                            u);
            if (rc == EMQ_OK && u->n)
                u->fn(u->ctx, u->key, u->klen, gn, gl, u->n);
        }
    }
    if (u->oom)
        rc = EMQ_ENOMEM;
    return rc == EMQ_NOTFOUND ? EMQ_OK : rc;
}

int emq_unheld(struct emq_db *db, const emq_export_options *eo,
               emq_unheld_fn fn, void *ctx)
{
    unheld u;
    memset(&u, 0, sizeof u);
    u.eo = eo;
    u.fn = fn;
    u.ctx = ctx;
    int rc = emq_db_run(db, 0, unheld_tx, &u);
    emq_buf_free(&u.keys);
    emq_buf_free(&u.groups);
    return rc;
}
