/*
 * transfer.c — a key's value in transfer form (transfer.h): the export's
 * commands and the digest record, built from elements.
 *
 * The record of a key (doc/EXPORT.md §3) is
 *     str(name) tag i64(expiry) body
 * where body is str(value) for a value of one element (EMQ_ORDER_ONE), and
 * otherwise u64(n) followed, for each element in the row's digest order, by
 * str(a), then str(b) for two-argument unscored elements (hash values),
 * i64(expiry) for rows whose elements carry one (hash fields), f64(score)
 * for scored rows (zsets). Integers are 8 bytes little-endian.
 *
 * Rules: commands are written in arrival order (a hash's stored field
 * order), 64 elements a command, then one HPEXPIREAT per element with an
 * expiry, then PEXPIREAT for the key's expiry.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>
#include "resp.h"
#include "transfer.h"

_Static_assert(sizeof(XXH3_state_t) <= sizeof(((emq_dg *)0)->state),
               "emq_dg too small for an XXH3 state");
_Static_assert(_Alignof(XXH3_state_t) <= 64, "emq_dg under-aligned");

#define ST(d) ((XXH3_state_t *)(void *)(d)->state)
#define CST(d) ((const XXH3_state_t *)(const void *)(d)->state)

/* ---------------------------------------------------------------- digest */

void emq_dg_init(emq_dg *d)
{
    memset(d, 0, sizeof *d);
    XXH3_64bits_reset(ST(d));
}

void emq_dg_feed(emq_dg *d, const void *p, size_t n)
{
    if (n)
        XXH3_64bits_update(ST(d), p, n);
}

uint64_t emq_dg_value(const emq_dg *d)
{
    return XXH3_64bits_digest(CST(d));
}

uint64_t emq_hash64(const void *p, size_t n)
{
    return XXH3_64bits(p, n);
}

/* Record bytes go to the running digest and, when asked, the key's own. */
static void feed(emq_keyout *ko, const void *p, size_t n)
{
    if (ko->dg)
        emq_dg_feed(ko->dg, p, n);
    if (ko->one)
        emq_dg_feed(&ko->rec, p, n);
}

static void f_u64(emq_keyout *ko, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    feed(ko, b, 8);
}

static void f_str(emq_keyout *ko, const void *p, size_t n)
{
    f_u64(ko, n);
    feed(ko, p, n);
}

static void f_head(emq_keyout *ko, uint64_t n)
{
    f_str(ko, ko->key, ko->klen);
    feed(ko, &ko->t->tag, 1);
    f_u64(ko, (uint64_t)ko->expire);
    if (ko->t->order != EMQ_ORDER_ONE && ko->t->order != EMQ_ORDER_OPAQUE)
        f_u64(ko, n);
}

static void f_elem(emq_keyout *ko, const emq_elem *e)
{
    const emq_typedef *t = ko->t;
    if (t->order == EMQ_ORDER_OPAQUE) { /* the body, as built */
        feed(ko, e->b.p, e->b.n);
        return;
    }
    f_str(ko, e->a.p, e->a.n);
    if (t->arity == 2 && !t->scored)
        f_str(ko, e->b.p, e->b.n);
    if (t->fexpire)
        f_u64(ko, (uint64_t)e->expire);
    if (t->scored) {
        double s = e->score == 0 ? 0 : e->score; /* -0 is written as +0 */
        uint64_t bits;
        memcpy(&bits, &s, 8);
        f_u64(ko, bits);
    }
}

/* ------------------------------------------------------------- commands */

size_t emq_score_text(char *buf, size_t cap, double s)
{
    if (s == floor(s) && fabs(s) < 9.2e18)
        return (size_t)snprintf(buf, cap, "%lld", (long long)s);
    return (size_t)snprintf(buf, cap, "%.17g", s);
}

/* One element's arguments in `cmd`. */
static int put_elem(emq_buf *out, const emq_typedef *t, const emq_elem *e)
{
    if (t->scored) {
        char num[40];
        size_t n = emq_score_text(num, sizeof num, e->score);
        if (emq_resp_write_bulk(out, num, n) != EMQ_OK)
            return EMQ_ENOMEM;
    }
    if (emq_resp_write_bulk(out, e->a.p, e->a.n) != EMQ_OK)
        return EMQ_ENOMEM;
    if (t->arity == 2 && !t->scored &&
        emq_resp_write_bulk(out, e->b.p, e->b.n) != EMQ_OK)
        return EMQ_ENOMEM;
    return EMQ_OK;
}

/* `cmd key e[0] … e[n-1]`; an opaque element's commands as built. */
static int put_cmd(emq_keyout *ko, const emq_elem *e, size_t n)
{
    const emq_typedef *t = ko->t;
    if (t->order == EMQ_ORDER_OPAQUE) {
        for (size_t i = 0; i < n; i++) {
            if (emq_buf_append(ko->out, e[i].a.p, e[i].a.n) != EMQ_OK)
                return EMQ_ENOMEM;
            ko->commands += (uint64_t)e[i].score;
        }
        return EMQ_OK;
    }
    if (emq_resp_write_array(ko->out, 2 + n * t->arity) != EMQ_OK ||
        emq_resp_write_bulk(ko->out, t->cmd, strlen(t->cmd)) != EMQ_OK ||
        emq_resp_write_bulk(ko->out, ko->key, ko->klen) != EMQ_OK)
        return EMQ_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (put_elem(ko->out, t, &e[i]) != EMQ_OK)
            return EMQ_ENOMEM;
    ko->commands++;
    return EMQ_OK;
}

/* `<cmd> key <abs ms> [FIELDS 1 field]`. */
static int put_expiry(emq_keyout *ko, int64_t at, const emq_bytes *field)
{
    char num[24];
    size_t n = (size_t)snprintf(num, sizeof num, "%lld", (long long)at);
    emq_bytes argv[6] = {{"PEXPIREAT", 9}, {ko->key, ko->klen}, {num, n},
                         {"FIELDS", 6}, {"1", 1}, {NULL, 0}};
    if (field) {
        argv[0] = (emq_bytes){"HPEXPIREAT", 10};
        argv[5] = *field;
    }
    if (emq_resp_write_cmd(ko->out, field ? 6 : 3, argv) != EMQ_OK)
        return EMQ_ENOMEM;
    ko->commands++;
    return EMQ_OK;
}

/* ------------------------------------------------------------ elements */

/* A held element: offsets into ko->arena (which may move). */
struct emq_held {
    size_t a, an, b, bn;
    double score;
    int64_t expire;
};

static int hold(emq_keyout *ko, const emq_elem *e)
{
    if (ko->nh == ko->cap) {
        size_t cap = ko->cap ? 2 * ko->cap : EMQ_XFER_CHUNK;
        struct emq_held *h = emq_mem_realloc(ko->h, cap * sizeof *h);
        if (!h)
            return EMQ_ENOMEM;
        ko->h = h;
        ko->cap = cap;
    }
    struct emq_held *h = &ko->h[ko->nh];
    h->a = ko->arena.len;
    h->an = e->a.n;
    if (emq_buf_append(&ko->arena, e->a.p, e->a.n) != EMQ_OK)
        return EMQ_ENOMEM;
    h->b = ko->arena.len;
    h->bn = e->b.n;
    if (emq_buf_append(&ko->arena, e->b.p, e->b.n) != EMQ_OK)
        return EMQ_ENOMEM;
    h->score = e->score;
    h->expire = e->expire;
    ko->nh++;
    return EMQ_OK;
}

static emq_elem view(const emq_keyout *ko, const struct emq_held *h)
{
    emq_elem e = {{ko->arena.p + h->a, h->an}, {ko->arena.p + h->b, h->bn},
                  h->score, h->expire};
    return e;
}

/* Write the held elements [from, to) as commands, EMQ_XFER_CHUNK a time. */
static int put_held(emq_keyout *ko, size_t from, size_t to)
{
    emq_elem e[EMQ_XFER_CHUNK];
    while (from < to) {
        size_t k = to - from < EMQ_XFER_CHUNK ? to - from : EMQ_XFER_CHUNK;
        for (size_t i = 0; i < k; i++)
            e[i] = view(ko, &ko->h[from + i]);
        if (put_cmd(ko, e, k) != EMQ_OK)
            return EMQ_ENOMEM;
        from += k;
    }
    return EMQ_OK;
}

static int bytes_cmp(const unsigned char *a, size_t an, const unsigned char *b,
                     size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    return c ? c : (an > bn) - (an < bn);
}

/* qsort has no context: the arena being sorted is parked here. The store
 * is single-threaded per handle, but two handles may sort at once, so the
 * pointer is thread-local. */
static _Thread_local const unsigned char *sort_arena;

static int cmp_bytes(const void *x, const void *y)
{
    const struct emq_held *a = x, *b = y;
    return bytes_cmp(sort_arena + a->a, a->an, sort_arena + b->a, b->an);
}

static int cmp_score(const void *x, const void *y)
{
    const struct emq_held *a = x, *b = y;
    if (a->score != b->score)
        return a->score < b->score ? -1 : 1;
    return cmp_bytes(x, y);
}

static int cmp_elem_bytes(const void *x, const void *y)
{
    const emq_elem *a = x, *b = y;
    return bytes_cmp(a->a.p, a->a.n, b->a.p, b->a.n);
}

static int cmp_elem_score(const void *x, const void *y)
{
    const emq_elem *a = x, *b = y;
    if (a->score != b->score)
        return a->score < b->score ? -1 : 1;
    return cmp_elem_bytes(x, y);
}

void emq_elems_sort(const emq_typedef *t, emq_elem *e, size_t n)
{
    if (t->order == EMQ_ORDER_BYTES)
        qsort(e, n, sizeof *e, cmp_elem_bytes);
    else if (t->order == EMQ_ORDER_SCORE)
        qsort(e, n, sizeof *e, cmp_elem_score);
}

/* ---------------------------------------------------------------- a key */

int emq_keyout_begin(emq_keyout *ko, const emq_typedef *t, const void *key,
                     size_t klen, int64_t expire, int64_t n)
{
    ko->t = t;
    ko->key = key;
    ko->klen = klen;
    ko->expire = expire;
    ko->n = 0;
    ko->hash = 0;
    ko->nh = 0;
    ko->arena.len = 0;
    ko->rc = EMQ_OK;
    /* A value whose elements carry expiries is held: their commands follow
     * the data commands. */
    ko->streamed = n >= 0 && !t->fexpire;
    ko->announced = n >= 0 ? (uint64_t)n : 0;
    if (ko->one)
        emq_dg_init(&ko->rec);
    if (ko->streamed && n > 0)
        f_head(ko, (uint64_t)n);
    return EMQ_OK;
}

int emq_keyout_add(emq_keyout *ko, const emq_elem *e)
{
    if (ko->rc != EMQ_OK)
        return ko->rc;
    ko->n++;
    if (!ko->streamed || ko->out) {
        if ((ko->rc = hold(ko, e)) != EMQ_OK)
            return ko->rc;
    }
    if (ko->streamed) {
        f_elem(ko, e);
        if (ko->out && ko->nh == EMQ_XFER_CHUNK) {
            ko->rc = put_held(ko, 0, ko->nh);
            ko->nh = 0;
            ko->arena.len = 0;
        }
    }
    return ko->rc;
}

int emq_keyout_elem_fn(void *ko, const emq_elem *e)
{
    return emq_keyout_add(ko, e) != EMQ_OK;
}

int emq_keyout_end(emq_keyout *ko)
{
    int rc = ko->rc;
    if (rc != EMQ_OK || ko->n == 0)
        goto done;
    if (ko->streamed && ko->n != ko->announced) {
        /* the caller promised a count it did not keep */
        rc = EMQ_EINTERNAL;
        goto done;
    }
    if (ko->out && (rc = put_held(ko, 0, ko->nh)) != EMQ_OK)
        goto done;
    if (!ko->streamed) {
        if (ko->out && ko->t->fexpire)
            for (size_t i = 0; i < ko->nh; i++) {
                emq_elem e = view(ko, &ko->h[i]);
                if (e.expire >= 0 &&
                    (rc = put_expiry(ko, e.expire, &e.a)) != EMQ_OK)
                    goto done;
            }
        if (ko->dg || ko->one) {
            sort_arena = ko->arena.p;
            if (ko->t->order == EMQ_ORDER_BYTES)
                qsort(ko->h, ko->nh, sizeof *ko->h, cmp_bytes);
            else if (ko->t->order == EMQ_ORDER_SCORE)
                qsort(ko->h, ko->nh, sizeof *ko->h, cmp_score);
            sort_arena = NULL;
            f_head(ko, ko->nh);
            for (size_t i = 0; i < ko->nh; i++) {
                emq_elem e = view(ko, &ko->h[i]);
                f_elem(ko, &e);
            }
        }
    }
    if (ko->out && ko->expire >= 0)
        rc = put_expiry(ko, ko->expire, NULL);
    if (ko->one)
        ko->hash = emq_dg_value(&ko->rec);
done:
    ko->nh = 0;
    ko->arena.len = 0;
    return rc;
}

void emq_keyout_free(emq_keyout *ko)
{
    emq_mem_free(ko->h);
    emq_buf_free(&ko->arena);
    ko->h = NULL;
    ko->nh = ko->cap = 0;
}
