/*
 * resume.c — what `emq_push` with `resume` need not send: the file's keys
 * the target already holds equal (doc/EXPORT.md §7, "Resuming a push").
 *
 * Owns: the per-key comparison. The file's side is one digest walk
 * (engine/transfer/export.h), keeping each key's name and the XXH3-64 of
 * its record alone; the target's side is the reads verify makes (rm_read:
 * TYPE, PEXPIRETIME, the value, HPEXPIRETIME), each key's record built by
 * storage/transfer.h exactly as the file's is, so equal keys have equal
 * hashes on any server that serves those reads (Redis 7, Valkey 7.2 to 9,
 * one server or a cluster, each key read at its slot's node).
 *
 * Rules: nothing is written here; the push deletes `del` and streams the
 * export, leaving out the keys found equal. A key the target holds that
 * differs from the file's (a key cut half way by the stopped push, or
 * changed since) is deleted and sent whole, because the export's commands
 * add to a key (HSET, RPUSH, ZADD) rather than replace it.
 */
#include <stdlib.h>
#include <string.h>
#include "remote.h"
#include "export.h"
#include "transfer.h"

typedef struct planner {
    emq_db *db;
    rm_resume *rs;
    emq_keyout ko;
    emq_dg dg;
} planner;

static int on_file_key(void *ctx, const emq_keyrec *r)
{
    planner *p = ctx;
    rm_resume *rs = p->rs;
    if (rs->nk == rs->cap) {
        size_t cap = rs->cap ? 2 * rs->cap : 256;
        struct rm_rkey *k = emq_mem_realloc(rs->k, cap * sizeof *k);
        if (!k)
            return emq_db_fail(p->db, EMQ_ENOMEM, NULL);
        rs->k = k;
        rs->cap = cap;
    }
    rs->k[rs->nk] = (struct rm_rkey){ rs->names.len, r->klen, r->hash, 0 };
    if (emq_buf_append(&rs->names, r->key, r->klen) != EMQ_OK)
        return emq_db_fail(p->db, EMQ_ENOMEM, NULL);
    rs->nk++;
    return 0;
}

static int name_cmp(const void *a, size_t an, const void *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    return c ? c : (an > bn) - (an < bn);
}

/* The file's entry of `key`, or NULL (the walk gave them in name order). */
static struct rm_rkey *find(const rm_resume *rs, const void *key, size_t klen)
{
    size_t lo = 0, hi = rs->nk;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        struct rm_rkey *k = &rs->k[mid];
        int c = name_cmp(rs->names.p + k->off, k->len, key, klen);
        if (c == 0)
            return k;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int rm_resume_equal(const rm_resume *rs, const void *key, size_t klen)
{
    const struct rm_rkey *k = find(rs, key, klen);
    return k && k->equal;
}

/* A target key read: equal to the file's, or to be deleted. */
static int visit(void *ctx, const emq_bytes *key, const emq_typedef *t,
                 int64_t expire, emq_elem *e, size_t n)
{
    planner *p = ctx;
    rm_resume *rs = p->rs;
    struct rm_rkey *k;
    int rc;
    emq_keyout_begin(&p->ko, t, key->p, key->n, expire, -1);
    for (size_t i = 0; i < n; i++)
        emq_keyout_add(&p->ko, &e[i]);
    if ((rc = emq_keyout_end(&p->ko)) != EMQ_OK)
        return emq_db_fail(p->db, rc, NULL);
    if (!p->ko.n)
        return EMQ_OK; /* no element: the key does not exist */
    k = find(rs, key->p, key->n);
    if (k && k->hash == p->ko.hash) {
        k->equal = 1;
        rs->equal++;
        return EMQ_OK;
    }
    if (k)
        rs->differ++;
    else
        rs->extra++;
    if (rm_names_add(&rs->del, key->p, key->n) != EMQ_OK)
        return emq_db_fail(p->db, EMQ_ENOMEM, NULL);
    return EMQ_OK;
}

int rm_resume_plan(emq_db *db, emq_remote *r, const emq_export_options *eo,
                   const rm_names *target, rm_resume *rs, emq_progress_fn pg,
                   void *pgctx)
{
    planner p;
    rm_names all;
    emq_transfer_summary sum;
    int rc;
    memset(rs, 0, sizeof *rs);
    memset(&p, 0, sizeof p);
    memset(&all, 0, sizeof all);
    p.db = db;
    p.rs = rs;
    if ((rc = emq_digest_each(db, eo, on_file_key, &p, &sum)) != EMQ_OK)
        return rc;
    /* Read the target's keys of the pushed queues and every other name
     * the file holds ({emq}:version): sorted, once each. */
    for (size_t i = 0; i < target->nv; i++)
        if (rm_names_add(&all, target->v[i].p, target->v[i].n) != EMQ_OK)
            goto oom;
    for (size_t i = 0; i < rs->nk; i++)
        if (rm_names_add(&all, rs->names.p + rs->k[i].off, rs->k[i].len) !=
            EMQ_OK)
            goto oom;
    if (rm_names_sort(&all) != EMQ_OK)
        goto oom;
    emq_dg_init(&p.dg);
    p.ko.dg = &p.dg;
    p.ko.one = 1;
    rc = rm_read(db, r, all.v, all.nv, visit, &p, pg, pgctx,
                 "reading the target");
    if (rc == EMQ_OK && rm_names_sort(&rs->del) != EMQ_OK)
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
    emq_keyout_free(&p.ko);
    rm_names_free(&all);
    return rc;
oom:
    rm_names_free(&all);
    return emq_db_fail(db, EMQ_ENOMEM, NULL);
}

void rm_resume_free(rm_resume *rs)
{
    emq_buf_free(&rs->names);
    emq_mem_free(rs->k);
    rm_names_free(&rs->del);
    memset(rs, 0, sizeof *rs);
}
