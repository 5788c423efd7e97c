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
