/*
 * link.c — LINK (§6.0), the outbox entry layouts and their parser (T4.9),
 * and REEMIT (T4.14).
 *
 * Rule: LINK is the host read the reference performs before complete and
 * retry; emqlite performs it inside the transition's transaction, first,
 * before any write (PROTOCOL.md §1 rule 3), so its GATE-ID refusal rolls
 * back nothing.
 */
#include <string.h>
#include "link.h"
#include "db.h"

static int fetch(emq_store *st, const emq_buf *jk, const char *f,
                 emq_buf *out, int *present)
{
    int rc = emq_hash_get(st, jk->p, jk->len, f, strlen(f), out);
    *present = rc == EMQ_OK;
    return rc < 0 ? rc : EMQ_OK;
}

int emq_link_read(emq_store *st, const char *q, const void *id, size_t idlen,
                  emq_link *l)
{
    emq_buf jk = {0}, pol = {0};
    int has_p, has_q, has_pol, rc;
    char pid[EMQ_ID_SIZE];

    memset(l, 0, sizeof *l);
    if ((rc = emq_key_buf(&jk, q, EMQ_KT_JOB, id, idlen)) < 0) goto done;
    if ((rc = fetch(st, &jk, "parent", &l->parent, &has_p)) < 0) goto done;
    if (!has_p) { l->kind = EMQ_LINK_NONE; goto done; }
    if ((rc = fetch(st, &jk, "parent_queue", &l->pqueue, &has_q)) < 0)
        goto done;
    if ((rc = fetch(st, &jk, "parent_policy", &pol, &has_pol)) < 0) goto done;
    l->policy_id = has_pol && pol.len == 2 && memcmp(pol.p, "id", 2) == 0;
    if (has_q && !(l->pqueue.len == strlen(q) &&
                   memcmp(l->pqueue.p, q, l->pqueue.len) == 0)) {
        l->kind = EMQ_LINK_CROSS;
        goto done;
    }
    l->kind = EMQ_LINK_SAME;
    /* GATE-ID(parent): the host builds J(parent) from it. */
    if (l->parent.len != EMQ_ID_LEN) { rc = EMQ_EID; goto done; }
    memcpy(pid, l->parent.p, EMQ_ID_LEN);
    pid[EMQ_ID_LEN] = 0;
    if (!emq_id_valid(pid)) rc = EMQ_EID;
done:
    emq_buf_free(&jk);
    emq_buf_free(&pol);
    if (rc < 0) emq_link_free(l);
    return rc;
}

void emq_link_free(emq_link *l)
{
    emq_buf_free(&l->parent);
    emq_buf_free(&l->pqueue);
    memset(l, 0, sizeof *l);
}

static int put(emq_buf *b, const void *p, size_t n, int nul)
{
    int rc = emq_buf_append(b, p, n);
    if (rc == EMQ_OK && nul) rc = emq_buf_append(b, "", 1);
    return rc;
}

int emq_outbox_complete(emq_buf *b, const void *pq, size_t pql,
                        const void *parent, size_t pl, const void *child,
                        size_t cl, const void *r, size_t rl)
{
    int rc;
    b->len = 0;
    if ((rc = put(b, pq, pql, 1)) < 0) return rc;
    if ((rc = put(b, parent, pl, 1)) < 0) return rc;
    if ((rc = put(b, child, cl, 1)) < 0) return rc;
    return put(b, r, rl, 0);
}

int emq_outbox_fail(emq_buf *b, const void *pq, size_t pql,
                    const void *parent, size_t pl, const void *child,
                    size_t cl, int policy_id, const void *err, size_t el)
{
    int rc;
    b->len = 0;
    if ((rc = put(b, "", 0, 1)) < 0) return rc;
    if ((rc = put(b, "fail", 4, 1)) < 0) return rc;
    if ((rc = put(b, pq, pql, 1)) < 0) return rc;
    if ((rc = put(b, parent, pl, 1)) < 0) return rc;
    if ((rc = put(b, child, cl, 1)) < 0) return rc;
    if ((rc = put(b, policy_id ? "id" : "fp", 2, 1)) < 0) return rc;
    return put(b, err, el, 0);
}

/* Cut one NUL-terminated field off [*p, end): 0 when no NUL is left. */
static int cut(const unsigned char **p, const unsigned char *end,
               emq_bytes *f)
{
    const unsigned char *z = memchr(*p, 0, (size_t)(end - *p));
    if (z == NULL) return 0;
    f->p = *p;
    f->n = (size_t)(z - *p);
    *p = z + 1;
    return 1;
}

int emq_outbox_parse(const void *e, size_t n, emq_outbox_entry *out)
{
    const unsigned char *p = e, *end = p + n;
    emq_bytes tag;
    memset(out, 0, sizeof *out);
    if (n > 0 && p[0] == 0) {
        p++;
        out->fail = 1;
        if (!cut(&p, end, &tag) || tag.n != 4 || memcmp(tag.p, "fail", 4) ||
            !cut(&p, end, &out->pq) || !cut(&p, end, &out->parent) ||
            !cut(&p, end, &out->child) || !cut(&p, end, &out->policy))
            return 0;
    } else if (!cut(&p, end, &out->pq) || !cut(&p, end, &out->parent) ||
               !cut(&p, end, &out->child)) {
        return 0;
    }
    out->value.p = p;
    out->value.n = (size_t)(end - p);
    return 1;
}

/* The bytes as a C string into buf[cap]: 0 when they do not fit or hold
 * a NUL (then no gate can pass them). */
static int as_cstr(const emq_bytes *b, char *buf, size_t cap)
{
    if (b->n >= cap || memchr(b->p, 0, b->n)) return 0;
    memcpy(buf, b->p, b->n);
    buf[b->n] = '\0';
    return 1;
}

int emq_outbox_deliverable(const void *e, size_t n, const char **why)
{
    emq_outbox_entry x;
    char pq[EMQ_KEY_MAX], parent[EMQ_ID_SIZE];
    const char *w = NULL;
    if (!emq_outbox_parse(e, n, &x))
        w = "not an outbox entry (a COMPLETE entry is parent_queue NUL "
            "parent NUL child NUL result; a FAIL entry NUL \"fail\" NUL "
            "parent_queue NUL parent NUL child NUL policy NUL error)";
    else if (!as_cstr(&x.parent, parent, sizeof parent) ||
             !emq_id_valid(parent))
        w = "its parent is not a JOB id";
    else if (!as_cstr(&x.pq, pq, sizeof pq) || !emq_queue_valid(pq))
        w = "its parent queue is not a valid queue name";
    if (why) *why = w;
    return w == NULL;
}

int emq_outbox_reemit(emq_store *st, const char *nq, const void *node,
                      size_t nlen, const void *err, size_t elen,
                      int64_t *outlen)
{
    emq_buf jk = {0}, parent = {0}, pqueue = {0}, pol = {0}, e = {0};
    char ok[EMQ_KEY_MAX];
    size_t okl = emq_key(ok, nq, EMQ_KT_OUTBOX);
    const void *pq;
    size_t pql;
    int has_p, has_q, has_pol, rc;
    int64_t len = -1;

    if ((rc = emq_key_buf(&jk, nq, EMQ_KT_JOB, node, nlen)) < 0) goto done;
    if ((rc = fetch(st, &jk, "parent", &parent, &has_p)) < 0) goto done;
    if (!has_p) goto done;
    if ((rc = fetch(st, &jk, "parent_queue", &pqueue, &has_q)) < 0) goto done;
    if ((rc = fetch(st, &jk, "parent_policy", &pol, &has_pol)) < 0) goto done;
    if (has_q && !(pqueue.len == strlen(nq) &&
                   memcmp(pqueue.p, nq, pqueue.len) == 0)) {
        pq = pqueue.p;
        pql = pqueue.len;
    } else {
        pq = nq;
        pql = strlen(nq);
    }
    rc = emq_outbox_fail(&e, pq, pql, parent.p, parent.len, node, nlen,
                         has_pol && pol.len == 2 && !memcmp(pol.p, "id", 2),
                         err, elen);
    if (rc < 0) goto done;
    rc = emq_list_push(st, ok, okl, 1, e.p, e.len, &len);
done:
    if (outlen) *outlen = len;
    emq_buf_free(&jk);
    emq_buf_free(&parent);
    emq_buf_free(&pqueue);
    emq_buf_free(&pol);
    emq_buf_free(&e);
    return rc < 0 ? rc : EMQ_OK;
}
