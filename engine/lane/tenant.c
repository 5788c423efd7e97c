/*
 * tenant.c — readable names for lane groups (issue 34 item 7): a stable,
 * file-wide mapping from a tenant name ("acme") to a PRT branded id, the
 * group id its lanes are named by in every queue of the file.
 *
 * Where it lives: host configuration (PROTOCOL.md L4), the file's
 * `hostconf` table (storage/hostconf.c, schema version 5), namespace
 * "tenant" (name -> id) and "tenant-group" (id -> name). Never a key: an
 * export, the digest and the checker do not see it, so an export to Valkey
 * is byte-identical with or without names. No schema step of its own.
 *
 * A name is 1..EMQ_TENANT_NAME_MAX bytes of [A-Za-z0-9._:@-] that does
 * not begin with 3 capitals (a branded id's namespace), so a command
 * argument is a group id or a name, never both ("acme", "Acme", not
 * "ACME"). The first use mints the id (PRT, the file's id clock) and
 * writes both directions in one transaction; a name never changes its id.
 */
#include <stdio.h>
#include <string.h>
#include "emqlite.h"
#include "db.h"
#include "abi.h"

#define NS_NAME "tenant"
#define NS_GROUP "tenant-group"

static int name_ok(const char *n, size_t *len)
{
    size_t i;
    for (i = 0; n[i]; i++) {
        char ch = n[i];
        if (i >= EMQ_TENANT_NAME_MAX) return 0;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
              ch == ':' || ch == '@' || ch == '-'))
            return 0;
    }
    *len = i;
    /* never the shape of an id's namespace: an argument that begins with
     * 3 capitals is read as a group id, so no name can */
    if (i >= 3 && n[0] >= 'A' && n[0] <= 'Z' && n[1] >= 'A' &&
        n[1] <= 'Z' && n[2] >= 'A' && n[2] <= 'Z')
        return 0;
    return i > 0;
}

static int gate_name(emq_db *db, const char *name, size_t *len)
{
    char msg[300];
    if (name != NULL && name_ok(name, len)) return EMQ_OK;
    snprintf(msg, sizeof msg, "bad argument: name '%.*s%s' (a tenant name "
             "is 1 to 128 characters of A-Z a-z 0-9 . _ : @ -, not beginning "
             "with 3 capitals as a branded id does)", 64, name ? name : "(null)",
             name && strlen(name) > 64 ? "..." : "");
    return emq_db_wire(db, EMQ_EINVAL, msg);
}

typedef struct tctx {
    const char *name;
    size_t len;
    const char *minted;    /* put: the id to keep when none is            */
    char *out;             /* the id (EMQ_ID_SIZE), or the name (size)    */
    size_t size;
} tctx;

static int get_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    tctx *t = ctx;
    emq_buf v = {0};
    int rc = emq_hostconf_get(st, NS_NAME, t->name, t->len, &v);
    (void)now;
    if (rc == EMQ_OK && v.len != EMQ_ID_LEN)
        rc = emq_db_fail(db, EMQ_ECORRUPT, "a stored tenant id is not a "
                         "branded id");
    if (rc == EMQ_OK) {
        memcpy(t->out, v.p, EMQ_ID_LEN);
        t->out[EMQ_ID_LEN] = 0;
    }
    emq_buf_free(&v);
    return rc;
}

static int put_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    tctx *t = ctx;
    int rc = get_tx(db, st, now, ctx);
    if (rc != EMQ_NOTFOUND) return rc;  /* kept already (or a failure) */
    rc = emq_hostconf_put(st, NS_NAME, t->name, t->len, t->minted,
                          EMQ_ID_LEN);
    if (rc == EMQ_OK)
        rc = emq_hostconf_put(st, NS_GROUP, t->minted, EMQ_ID_LEN, t->name,
                              t->len);
    if (rc == EMQ_OK) memcpy(t->out, t->minted, EMQ_ID_SIZE);
    return rc;
}

int emq_tenant_group(emq_db *db, const char *name, int create,
                     char group[EMQ_ID_SIZE])
{
    char minted[EMQ_ID_SIZE];
    tctx t = {name, 0, NULL, group, EMQ_ID_SIZE};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (group == NULL) return emq_db_wire(db, EMQ_EINVAL, "bad argument: "
                                          "group (NULL)");
    if ((rc = gate_name(db, name, &t.len)) < 0) return rc;
    rc = emq_db_run(db, 0, get_tx, &t);
    if (rc != EMQ_NOTFOUND) return rc;
    if (!create) return EMQ_GONE;
    /* Minted outside the write: a name another process kept meanwhile
     * wins, and this id is simply never used. */
    if ((rc = emq_mint(db, "PRT", minted)) < 0) return rc;
    t.minted = minted;
    return emq_db_run(db, 1, put_tx, &t);
}

static int name_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    tctx *t = ctx;
    emq_buf v = {0};
    int rc = emq_hostconf_get(st, NS_GROUP, t->name, EMQ_ID_LEN, &v);
    (void)now;
    if (rc == EMQ_OK && v.len >= t->size)
        rc = emq_db_wire(db, EMQ_EINVAL, "bad argument: size (the name "
                         "does not fit)");
    if (rc == EMQ_OK) {
        memcpy(t->out, v.p, v.len);
        t->out[v.len] = 0;
    }
    emq_buf_free(&v);
    return rc;
}

int emq_tenant_name(emq_db *db, const char *group, char *name, size_t size)
{
    tctx t = {group, 0, NULL, name, size};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (name == NULL || size == 0)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: name (no room)");
    if (group == NULL || !emq_id_valid(group))
        return emq_db_wire(db, EMQ_EID, "bad argument: group (not a "
                           "branded id)");
    rc = emq_db_run(db, 0, name_tx, &t);
    return rc == EMQ_NOTFOUND ? EMQ_GONE : rc;
}

typedef struct lctx {
    emq_tenant_fn fn;
    void *ctx;
} lctx;

static int list_cb(void *ctx, const unsigned char *k, size_t klen,
                   const unsigned char *v, size_t vlen)
{
    lctx *l = ctx;
    char name[EMQ_TENANT_NAME_MAX + 1], gid[EMQ_ID_SIZE];
    if (klen > EMQ_TENANT_NAME_MAX || vlen != EMQ_ID_LEN) return 0;
    memcpy(name, k, klen);
    name[klen] = 0;
    memcpy(gid, v, EMQ_ID_LEN);
    gid[EMQ_ID_LEN] = 0;
    return l->fn(l->ctx, name, gid) != 0 ? 1 : 0;
}

static int list_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    int rc = emq_hostconf_each(st, NS_NAME, list_cb, ctx);
    (void)db;
    (void)now;
    return rc == 1 ? EMQ_OK : rc;
}

int emq_tenant_list(emq_db *db, emq_tenant_fn fn, void *ctx)
{
    lctx l = {fn, ctx};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (fn == NULL) return emq_db_wire(db, EMQ_EINVAL, "bad argument: fn");
    return emq_db_run(db, 0, list_tx, &l);
}
