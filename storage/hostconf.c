/*
 * hostconf.c — host-side configuration kept in the file beside the
 * keyspace: the table `hostconf(ns, k, v)`, byte keys and values under a
 * namespace. It is not part of the keyspace: no key of it is a Redis key,
 * export, digest, check and import never read it, so an export to Valkey
 * is the same with or without it. (The engine keeps retry policies here,
 * PROTOCOL.md L4: host configuration is free.)
 *
 * Schema: the table is schema version 5 of the ladder (schema.c,
 * EMQ_HOSTCONF_DDL), so every file an open accepts has it. Statements are
 * prepared per call: these are rare, configuration calls.
 */
#include <string.h>
#include "store_int.h"

static int prepare(emq_store *st, const char *q, sqlite3_stmt **s)
{
    int rc = sqlite3_prepare_v2(st->db, q, -1, s, NULL);
    return rc == SQLITE_OK ? EMQ_OK : emq_store_fail(st, rc);
}

int emq_hostconf_get(emq_store *st, const char *ns, const void *k,
                     size_t klen, emq_buf *out)
{
    sqlite3_stmt *s = NULL;
    int rc;
    if ((rc = prepare(st, "SELECT v FROM hostconf WHERE ns = ?1 AND k = ?2",
                      &s)) != EMQ_OK)
        return rc;
    sqlite3_bind_text(s, 1, ns, -1, SQLITE_STATIC);
    emq_bind_blob(s, 2, k, klen);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        rc = emq_buf_set(out, sqlite3_column_blob(s, 0),
                         (size_t)sqlite3_column_bytes(s, 0)) == EMQ_OK
                 ? EMQ_OK
                 : emq_store_err(st, EMQ_ENOMEM, "out of memory");
    else if (rc == SQLITE_DONE)
        rc = EMQ_NOTFOUND;
    else
        rc = emq_store_fail(st, rc);
    sqlite3_finalize(s);
    return rc;
}

int emq_hostconf_put(emq_store *st, const char *ns, const void *k,
                     size_t klen, const void *v, size_t vlen)
{
    sqlite3_stmt *s = NULL;
    int rc;
    if (!st->tx_write)
        return emq_store_err(st, EMQ_EINTERNAL, "hostconf: no write "
                             "transaction");
    rc = prepare(st, v ? "INSERT OR REPLACE INTO hostconf(ns, k, v)"
                         " VALUES(?1, ?2, ?3)"
                       : "DELETE FROM hostconf WHERE ns = ?1 AND k = ?2",
                 &s);
    if (rc != EMQ_OK) return rc;
    sqlite3_bind_text(s, 1, ns, -1, SQLITE_STATIC);
    emq_bind_blob(s, 2, k, klen);
    if (v) emq_bind_blob(s, 3, v, vlen);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? EMQ_OK : emq_store_fail(st, rc);
}

int emq_hostconf_each(emq_store *st, const char *ns, emq_hostconf_cb cb,
                      void *ctx)
{
    sqlite3_stmt *s = NULL;
    int rc;
    if ((rc = prepare(st, "SELECT k, v FROM hostconf WHERE ns = ?1"
                          " ORDER BY k", &s)) != EMQ_OK)
        return rc;
    sqlite3_bind_text(s, 1, ns, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int r = cb(ctx, sqlite3_column_blob(s, 0),
                   (size_t)sqlite3_column_bytes(s, 0),
                   sqlite3_column_blob(s, 1),
                   (size_t)sqlite3_column_bytes(s, 1));
        if (r != 0) {
            sqlite3_finalize(s);
            return r;
        }
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? EMQ_OK : emq_store_fail(st, rc);
}
