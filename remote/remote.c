/*
 * remote.c — the remote (emqlite_remote.h) and the reads every transfer
 * shares (remote.h): the capability probe, failures, sending and reading
 * with each connection's tally, the version fence, SCAN on every primary,
 * and the pipelined reading of keys into elements.
 *
 * Rules: a value is read with its row's `read` command and cut into
 * elements by the row's shape (storage/types.h): `arity` replies an
 * element, the score second for scored rows. Nothing here knows a type by
 * name. Keyed reads go through batches (batch.c), so that on a cluster each
 * reaches its slot's node and redirections are followed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include "remote.h"
#include "keys.h"
#include "rules.h"

/* ------------------------------------------------------------ failures */

int rm_io(emq_db *db, emq_remote *r, const char *what)
{
    char msg[EMQ_ERRMSG_MAX];
    const char *e = r->t.error ? r->t.error(r->ctx) : NULL;
    snprintf(msg, sizeof msg, "%s: %s%s%s", r->name, what,
             e && e[0] ? ": " : "", e ? e : "");
    return emq_db_wire(db, EMQ_EIO, msg);
}

int rm_refused(emq_db *db, emq_remote *r, const char *err, size_t elen,
               const void *key, size_t klen)
{
    char msg[EMQ_ERRMSG_MAX], k[200] = "";
    if (key)
        emq_show_bytes(k, sizeof k, key, klen);
    snprintf(msg, sizeof msg, "%s refused: %.*s%s%s%s", r->name,
             (int)(elen > 300 ? 300 : elen), err, key ? " (key " : "",
             key ? k : "", key ? ")" : "");
    return emq_db_wire(db, EMQ_EREMOTE, msg);
}

const emq_rreply *rm_error_in(const emq_rreply *r)
{
    if (r->type == EMQ_RREPLY_ERROR)
        return r;
    if (r->type == EMQ_RREPLY_ARRAY)
        for (size_t i = 0; i < r->elements; i++) {
            const emq_rreply *e = rm_error_in(&r->element[i]);
            if (e)
                return e;
        }
    return NULL;
}

/* ------------------------------------------------------------ commands */

static size_t digits(unsigned long long v)
{
    size_t n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* The bytes of a reply in RESP2. */
static uint64_t reply_size(const emq_rreply *x)
{
    switch (x->type) {
    case EMQ_RREPLY_STRING:
        return 1 + digits(x->len) + 2 + x->len + 2;
    case EMQ_RREPLY_INTEGER:
        return 1 + (x->integer < 0) +
               digits(x->integer < 0 ? 0ULL - (unsigned long long)x->integer
                                     : (unsigned long long)x->integer) + 2;
    case EMQ_RREPLY_ARRAY: {
        uint64_t n = 1 + digits(x->elements) + 2;
        for (size_t i = 0; i < x->elements; i++)
            n += reply_size(&x->element[i]);
        return n;
    }
    case EMQ_RREPLY_NIL:
        return 5;
    default:
        return 1 + x->len + 2;
    }
}

int rm_send(emq_remote *r, size_t argc, const char *const *argv,
            const size_t *lens)
{
    uint64_t n = 1 + digits(argc) + 2;
    for (size_t i = 0; i < argc; i++)
        n += 1 + digits(lens[i]) + 2 + lens[i] + 2;
    if (r->tally.first == 0)
        r->tally.first = rm_mono();
    r->tally.commands++;
    r->tally.bytes_out += n;
    if (r->t.send(r->ctx, argc, argv, lens) != 0)
        return -1;
    r->pending++;
    return 0;
}

int rm_sendz(emq_remote *r, size_t argc, const char *const *argv)
{
    size_t lens[8];
    for (size_t i = 0; i < argc && i < 8; i++)
        lens[i] = strlen(argv[i]);
    return argc > 8 ? -1 : rm_send(r, argc, argv, lens);
}

int rm_recv(emq_remote *r, const emq_rreply **out)
{
    *out = NULL;
    if (r->t.recv(r->ctx, out) != 0 || !*out)
        return -1;
    if (r->pending)
        r->pending--;
    r->tally.bytes_in += reply_size(*out);
    r->tally.last = rm_mono();
    return 0;
}

void rm_release(emq_remote *r, const emq_rreply *rep)
{
    if (rep)
        r->t.release(r->ctx, rep);
}

emq_remote *rm_flush(emq_remote *r)
{
    for (size_t i = 0; i < rm_nodes_n(r); i++) {
        emq_remote *n = rm_node_at(r, i);
        if (n->pending && n->t.flush && n->t.flush(n->ctx) != 0)
            return n;
    }
    return NULL;
}

/* Where the key is in a command: argv[1], except for the commands below.
 * A stream's import commands (XADD, XSETID, XCLAIM: argv[1]; XGROUP
 * CREATE/CREATECONSUMER key: argv[2]) route like any other. */
const char *rm_cmd_key(size_t argc, const char *const *argv,
                       const size_t *lens, size_t *klen)
{
    static const struct {
        const char *cmd;
        size_t at;
    } at[] = { { "XGROUP", 2 }, { "MULTI", 0 }, { "EXEC", 0 },
               { "ASKING", 0 }, { "SCAN", 0 }, { "COMMAND", 0 },
               { "CLUSTER", 0 } };
    size_t k = 1;
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        if (argc && lens[0] == strlen(at[i].cmd) &&
            strncasecmp(argv[0], at[i].cmd, lens[0]) == 0)
            k = at[i].at;
    if (k == 0 || k >= argc)
        return NULL;
    *klen = lens[k];
    return argv[k];
}

/* One command on the one connection r, one reply: 0, or the failure
 * (reported). For commands that name no key (SCAN). */
static int round_trip(emq_db *db, emq_remote *r, size_t argc,
                      const char *const *argv, const char *what,
                      const emq_rreply **out)
{
    if (rm_sendz(r, argc, argv) != 0 || rm_recv(r, out) != 0)
        return rm_io(db, r, what);
    return EMQ_OK;
}

int rm_version(emq_db *db, emq_remote *r, int *present, const char **wire)
{
    const char *av[2] = { "GET", RM_VKEY };
    const emq_rreply *rep;
    emq_remote *at;
    rm_batch b;
    int rc;
    *present = 0;
    if (wire)
        *wire = NULL;
    rm_batch_init(&b, r);
    rm_batch_addz(&b, 2, av);
    if ((rc = rm_batch_run(db, &b, "GET " RM_VKEY)) != EMQ_OK)
        goto done;
    rep = rm_batch_reply(&b, 0);
    at = rm_batch_node(&b, 0);
    if (rep->type == EMQ_RREPLY_STRING) {
        const char *w = emq_wire_known(rep->str, rep->len);
        *present = 1;
        if (wire)
            *wire = w;
        if (!w) {
            char found[100], msg[EMQ_ERRMSG_MAX + 300], known[100];
            emq_show_bytes(found, sizeof found, rep->str, rep->len);
            emq_wire_list(known, sizeof known);
            snprintf(msg, sizeof msg, "%s holds " RM_VKEY " '%s'; this "
                     "emqlite speaks %s: nothing was transferred",
                     at->name, found, known);
            rc = emq_db_wire(db, EMQ_EWIRE, msg);
        }
    } else if (rep->type != EMQ_RREPLY_NIL) {
        rc = rep->type == EMQ_RREPLY_ERROR
                 ? rm_refused(db, at, rep->str, rep->len, RM_VKEY, RM_VKEY_LEN)
                 : rm_refused(db, at, RM_VKEY " is not a string",
                              sizeof RM_VKEY " is not a string" - 1, RM_VKEY,
                              RM_VKEY_LEN);
    }
done:
    rm_batch_free(&b);
    return rc;
}

int rm_version_claim(emq_db *db, emq_remote *r, const char *wire,
                     const char **got)
{
    const char *av[4] = { "SET", RM_VKEY, wire, "NX" };
    rm_batch b;
    int rc, present;
    rm_batch_init(&b, r);
    rm_batch_addz(&b, 4, av);
    rc = rm_batch_run(db, &b, "SET " RM_VKEY " NX");
    if (rc == EMQ_OK && rm_batch_reply(&b, 0)->type == EMQ_RREPLY_ERROR) {
        const emq_rreply *x = rm_batch_reply(&b, 0);
        rc = rm_refused(db, rm_batch_node(&b, 0), x->str, x->len, RM_VKEY,
                        RM_VKEY_LEN);
    }
    rm_batch_free(&b);
    if (rc != EMQ_OK)
        return rc;
    /* Read back: another writer may have set another wire meanwhile. */
    rc = rm_version(db, r, &present, got);
    if (rc == EMQ_OK && !present)
        rc = rm_refused(db, r, RM_VKEY " could not be set",
                        sizeof RM_VKEY " could not be set" - 1, RM_VKEY,
                        RM_VKEY_LEN);
    return rc;
}

/* --------------------------------------------------------------- names */

void rm_names_free(rm_names *l)
{
    emq_buf_free(&l->data);
    emq_mem_free(l->off);
    emq_mem_free(l->v);
    memset(l, 0, sizeof *l);
}

int rm_names_add(rm_names *l, const void *p, size_t n)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        size_t *o = emq_mem_realloc(l->off, 2 * cap * sizeof *o);
        if (!o)
            return EMQ_ENOMEM;
        l->off = o;
        l->cap = cap;
    }
    l->off[2 * l->n] = l->data.len;
    l->off[2 * l->n + 1] = n;
    l->n++;
    return emq_buf_append(&l->data, p, n);
}

static int bytes_cmp(const emq_bytes *x, const emq_bytes *y)
{
    size_t n = x->n < y->n ? x->n : y->n;
    int c = n ? memcmp(x->p, y->p, n) : 0;
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

static int cmp_names(const void *a, const void *b)
{
    return bytes_cmp(a, b);
}

int rm_names_sort(rm_names *l)
{
    emq_mem_free(l->v);
    l->nv = 0;
    if (!(l->v = emq_mem_malloc((l->n ? l->n : 1) * sizeof *l->v)))
        return EMQ_ENOMEM;
    for (size_t i = 0; i < l->n; i++)
        l->v[i] = (emq_bytes){l->data.p + l->off[2 * i], l->off[2 * i + 1]};
    qsort(l->v, l->n, sizeof *l->v, cmp_names);
    for (size_t i = 0; i < l->n; i++)
        if (l->nv == 0 || bytes_cmp(&l->v[l->nv - 1], &l->v[i]) != 0)
            l->v[l->nv++] = l->v[i];
    return EMQ_OK;
}

int rm_scan(emq_db *db, emq_remote *r, const char *match, rm_names *out)
{
    char cursor[32] = "0";
    int rc = EMQ_OK;
    do {
        const char *av[6] = { "SCAN", cursor, "MATCH", match, "COUNT",
                              "1000" };
        const emq_rreply *rep;
        if ((rc = round_trip(db, r, 6, av, "SCAN", &rep)) != EMQ_OK)
            return rc;
        if (rep->type != EMQ_RREPLY_ARRAY || rep->elements != 2 ||
            rep->element[0].type != EMQ_RREPLY_STRING ||
            rep->element[0].len >= sizeof cursor ||
            rep->element[1].type != EMQ_RREPLY_ARRAY) {
            rc = rep->type == EMQ_RREPLY_ERROR
                     ? rm_refused(db, r, rep->str, rep->len, NULL, 0)
                     : rm_refused(db, r, "SCAN answered an unexpected reply",
                                  33, NULL, 0);
            rm_release(r, rep);
            return rc;
        }
        memcpy(cursor, rep->element[0].str, rep->element[0].len);
        cursor[rep->element[0].len] = '\0';
        const emq_rreply *keys = &rep->element[1];
        for (size_t i = 0; i < keys->elements && rc == EMQ_OK; i++)
            if (keys->element[i].type == EMQ_RREPLY_STRING)
                rc = rm_names_add(out, keys->element[i].str,
                               keys->element[i].len);
        rm_release(r, rep);
        if (rc != EMQ_OK)
            return emq_db_fail(db, rc, NULL);
    } while (strcmp(cursor, "0") != 0);
    return EMQ_OK;
}

int rm_scan_all(emq_db *db, emq_remote *r, const char *match, rm_names *out)
{
    int rc = EMQ_OK;
    for (size_t i = 0; i < rm_nodes_n(r) && rc == EMQ_OK; i++)
        rc = rm_scan(db, rm_node_at(r, i), match, out);
    return rc;
}

int rm_selection(emq_db *db, emq_remote *r, const char *const *q, size_t nq,
                 rm_names *out)
{
    int rc = EMQ_OK;
    if (!nq) {
        if ((rc = rm_scan_all(db, r, "emq:*", out)) == EMQ_OK)
            rc = rm_scan_all(db, r, "{emq}:*", out);
    } else {
        for (size_t i = 0; i < nq && rc == EMQ_OK; i++) {
            char m[300];
            if (!q[i] || !emq_queue_valid(q[i]))
                return emq_db_fail(db, EMQ_EINVAL, "invalid queue name in "
                                                   "the selection");
            snprintf(m, sizeof m, "emq:{%s}:*", q[i]);
            rc = rm_scan_all(db, r, m, out);
        }
        if (rc == EMQ_OK)
            rc = rm_scan_all(db, r, RM_VKEY, out);
    }
    if (rc == EMQ_OK && rm_names_sort(out) != EMQ_OK)
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
    return rc;
}

char *rm_strndup(const void *p, size_t n)
{
    char *s = emq_mem_malloc(n + 1);
    if (s) {
        if (n)
            memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

int rm_key_queue(const void *key, size_t klen, const char **q, size_t *qlen)
{
    emq_keyinfo ki;
    if (!emq_key_parse(key, klen, &ki) || ki.family != EMQ_K_QUEUE)
        return 0;
    *q = ki.q;
    *qlen = ki.qlen;
    return 1;
}

/* --------------------------------------------------------- reading keys */

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The reply of the field expiries of field j, or -1. */
static int64_t field_exp(const emq_rreply *fx, size_t j)
{
    if (!fx || fx->type != EMQ_RREPLY_ARRAY || j >= fx->elements ||
        fx->element[j].type != EMQ_RREPLY_INTEGER)
        return -1;
    return fx->element[j].integer >= 0 ? fx->element[j].integer : -1;
}

/* Cut a value reply into elements (into *e, grown as needed). 0, or -1
 * for a reply of another shape (the key changed since TYPE: skipped), or
 * -2 for a score that is not a number, -3 out of memory. */
static int elements(const emq_typedef *t, const emq_rreply *v,
                    const emq_rreply *fx, emq_elem **e, size_t *cap,
                    size_t *n)
{
    size_t k;
    if (t->order == EMQ_ORDER_ONE) {
        if (v->type != EMQ_RREPLY_STRING)
            return -1;
        k = 1;
    } else {
        if (v->type != EMQ_RREPLY_ARRAY || v->elements == 0)
            return -1;
        k = v->elements / t->arity;
    }
    if (k > *cap) {
        emq_elem *p = emq_mem_realloc(*e, k * sizeof *p);
        if (!p)
            return -3;
        *e = p;
        *cap = k;
    }
    for (size_t j = 0; j < k; j++) {
        const emq_rreply *a = t->order == EMQ_ORDER_ONE
                                 ? v : &v->element[j * t->arity];
        emq_elem *x = &(*e)[j];
        *x = (emq_elem){{a->str ? (const void *)a->str : "", a->len},
                        {"", 0}, 0, -1};
        if (t->arity == 2) {
            const emq_rreply *b = &v->element[j * 2 + 1];
            if (t->scored) {
                if (!emq_parse_score(b->str, b->len, &x->score))
                    return -2;
            } else {
                x->b = (emq_bytes){b->str ? (const void *)b->str : "",
                                   b->len};
            }
        }
        if (t->fexpire)
            x->expire = field_exp(fx, j);
    }
    *n = k;
    return 0;
}

/* A key of a type without a row: not supported. */
static int unsupported(emq_db *db, emq_remote *r, const emq_bytes *k,
                       const emq_rreply *t)
{
    char kk[200], msg[EMQ_ERRMSG_MAX + 512];
    emq_show_bytes(kk, sizeof kk, k->p, k->n);
    snprintf(msg, sizeof msg, "%s: key %s is a %.*s: emqlite files hold "
             "strings, hashes, lists, sets, sorted sets and streams", r->name, kk,
             (int)(t->len > 40 ? 40 : t->len), t->str);
    return emq_db_wire(db, EMQ_ENOTSUP, msg);
}

/* The three rounds of one group of keys: TYPE and PEXPIRETIME (2 per
 * key), the values, the field expiries; `vi`/`fi` map a key to its
 * command in the value and field-expiry rounds (-1: none). */
typedef struct rounds {
    rm_batch ty, val, fx;
    emq_buf xcmds, xbody;   /* a stream's element (rm_xstream)         */
    const emq_typedef *t[RM_KEYBATCH];
    long vi[RM_KEYBATCH], fi[RM_KEYBATCH];
} rounds;

/* Add one command of a key: argv[0], the key, then rest (NULL-ended). */
static void add_keyed(rm_batch *b, const char *cmd, const emq_bytes *k,
                      const char *const *rest)
{
    const char *av[8];
    size_t al[8], n = 2;
    av[0] = cmd;
    al[0] = strlen(cmd);
    av[1] = k->p;
    al[1] = k->n;
    for (; rest && *rest && n < 8; rest++, n++) {
        av[n] = *rest;
        al[n] = strlen(*rest);
    }
    rm_batch_add(b, emq_slot(k->p, k->n), NULL, n, av, al);
}

/* Round 3: HPEXPIRETIME key FIELDS n f1 … fn for a held hash. */
static void add_fexp(rm_batch *b, const emq_bytes *k, const emq_rreply *v)
{
    size_t nf = v->elements / 2, ac = 4 + nf;
    const char **av = emq_mem_malloc(ac * sizeof *av);
    size_t *al = emq_mem_malloc(ac * sizeof *al);
    char num[24];
    if (av && al) {
        snprintf(num, sizeof num, "%zu", nf);
        av[0] = "HPEXPIRETIME";
        al[0] = 12;
        av[1] = k->p;
        al[1] = k->n;
        av[2] = "FIELDS";
        al[2] = 6;
        av[3] = num;
        al[3] = strlen(num);
        for (size_t j = 0; j < nf; j++) {
            av[4 + j] = v->element[2 * j].str;
            al[4 + j] = v->element[2 * j].len;
        }
        rm_batch_add(b, emq_slot(k->p, k->n), NULL, ac, av, al);
    } else if (!b->fail) {
        b->fail = EMQ_ENOMEM;
    }
    emq_mem_free(av);
    emq_mem_free(al);
}

#define NOTNUM "a score that is not a number in a sorted set"
#define XSHAPE "XINFO STREAM FULL answered an unexpected reply"

static int read_group(emq_db *db, emq_remote *r, const emq_bytes *names,
                      size_t k, rounds *b, rm_visit_fn fn, void *ctx,
                      emq_elem **e, size_t *cap)
{
    const char *const none[] = { NULL };
    int64_t now = wall_ms();
    size_t i;
    int rc;
    long nv = 0, nf = 0;
    for (i = 0; i < k; i++) {
        add_keyed(&b->ty, "TYPE", &names[i], none);
        add_keyed(&b->ty, r->pexpiretime ? "PEXPIRETIME" : "PTTL", &names[i],
                  none);
    }
    if ((rc = rm_batch_run(db, &b->ty, "reading the keys")) != EMQ_OK)
        return rc;
    for (i = 0; i < k; i++) {
        const emq_rreply *ty = rm_batch_reply(&b->ty, 2 * i);
        const emq_rreply *ex = rm_batch_reply(&b->ty, 2 * i + 1);
        emq_remote *at = rm_batch_node(&b->ty, 2 * i);
        b->t[i] = NULL;
        b->vi[i] = b->fi[i] = -1;
        if (ty->type == EMQ_RREPLY_ERROR)
            return rm_refused(db, at, ty->str, ty->len, names[i].p,
                              names[i].n);
        if (ex->type == EMQ_RREPLY_ERROR)
            return rm_refused(db, rm_batch_node(&b->ty, 2 * i + 1), ex->str,
                              ex->len, names[i].p, names[i].n);
        if (ty->type != EMQ_RREPLY_STATUS || ex->type != EMQ_RREPLY_INTEGER)
            return rm_refused(db, at, "TYPE answered an unexpected reply", 33,
                              names[i].p, names[i].n);
        if (ty->len == 4 && memcmp(ty->str, "none", 4) == 0)
            continue; /* gone since SCAN */
        /* A type without a row is refused here, before any value is
         * asked for; a row's `read` is one command whose reply `elements`
         * cuts by the row's shape (a stream's, rm_xstream). */
        if (!(b->t[i] = emq_typedef_named(ty->str, ty->len)))
            return unsupported(db, at, &names[i], ty);
    }
    for (i = 0; i < k; i++) {
        if (!b->t[i])
            continue;
        rm_batch_node(&b->ty, 2 * i)->tally.keys++;
        if (b->t[i]->order == EMQ_ORDER_OPAQUE) {
            /* XINFO STREAM <key> FULL COUNT 0: the key after "STREAM" */
            const char *const *rd = b->t[i]->read;
            const char *av[6] = { rd[0], rd[1], names[i].p, rd[2], rd[3],
                                  rd[4] };
            size_t al[6];
            for (size_t j = 0; j < 6; j++)
                al[j] = j == 2 ? names[i].n : strlen(av[j]);
            rm_batch_add(&b->val, emq_slot(names[i].p, names[i].n), NULL, 6,
                         av, al);
        } else {
            add_keyed(&b->val, b->t[i]->read[0], &names[i],
                      b->t[i]->read + 1);
        }
        b->vi[i] = nv++;
    }
    if ((rc = rm_batch_run(db, &b->val, "reading the keys")) != EMQ_OK)
        return rc;
    if (r->hpexpiretime) {
        for (i = 0; i < k; i++) {
            const emq_rreply *v = b->vi[i] >= 0
                                      ? rm_batch_reply(&b->val, (size_t)b->vi[i])
                                      : NULL;
            if (v && b->t[i]->fexpire && v->type == EMQ_RREPLY_ARRAY &&
                v->elements >= 2) {
                add_fexp(&b->fx, &names[i], v);
                b->fi[i] = nf++;
            }
        }
        if ((rc = rm_batch_run(db, &b->fx, "reading field expiries")) !=
            EMQ_OK)
            return rc;
    }
    for (i = 0; i < k; i++) {
        size_t n = 0;
        if (b->vi[i] < 0)
            continue;
        int64_t exp = rm_batch_reply(&b->ty, 2 * i + 1)->integer;
        const emq_rreply *v = rm_batch_reply(&b->val, (size_t)b->vi[i]);
        const emq_rreply *fx = b->fi[i] >= 0
                                   ? rm_batch_reply(&b->fx, (size_t)b->fi[i])
                                   : NULL;
        if (exp == -2)
            continue; /* gone since TYPE */
        if (exp >= 0 && !r->pexpiretime)
            exp += now;
        if (exp < 0)
            exp = -1;
        const emq_rreply *err = rm_error_in(v);
        if (err && b->t[i]->order == EMQ_ORDER_OPAQUE && err == v &&
            err->len >= 15 && memcmp(err->str, "ERR no such key", 15) == 0)
            continue; /* the stream went since TYPE */
        if (err)
            return rm_refused(db, rm_batch_node(&b->val, (size_t)b->vi[i]),
                              err->str, err->len, names[i].p, names[i].n);
        if (b->t[i]->order == EMQ_ORDER_OPAQUE) {
            uint64_t ncmd = 0;
            b->xcmds.len = b->xbody.len = 0;
            rc = rm_xstream(v, names[i].p, names[i].n, &b->xcmds, &b->xbody,
                            &ncmd);
            if (rc == -1)
                return rm_refused(db, rm_batch_node(&b->val,
                                                    (size_t)b->vi[i]),
                                  XSHAPE, sizeof XSHAPE - 1, names[i].p,
                                  names[i].n);
            if (rc == -2)
                return emq_db_fail(db, EMQ_ENOMEM, NULL);
            emq_elem x = {{b->xcmds.p ? (const void *)b->xcmds.p : "",
                           b->xcmds.len},
                          {b->xbody.p ? (const void *)b->xbody.p : "",
                           b->xbody.len},
                          (double)ncmd, -1};
            if ((rc = fn(ctx, &names[i], b->t[i], exp, &x, 1)) != EMQ_OK)
                return rc;
            continue;
        }
        rc = elements(b->t[i], v, fx, e, cap, &n);
        if (rc == -1)
            continue; /* emptied or replaced since TYPE */
        if (rc == -2)
            return rm_refused(db, rm_batch_node(&b->val, (size_t)b->vi[i]),
                              NOTNUM, sizeof NOTNUM - 1, names[i].p,
                              names[i].n);
        if (rc == -3)
            return emq_db_fail(db, EMQ_ENOMEM, NULL);
        if ((rc = fn(ctx, &names[i], b->t[i], exp, *e, n)) != EMQ_OK)
            return rc;
    }
    return EMQ_OK;
}

int rm_read(emq_db *db, emq_remote *r, const emq_bytes *names, size_t n,
            rm_visit_fn fn, void *ctx, emq_progress_fn pg, void *pgctx,
            const char *what)
{
    rounds *b = emq_mem_calloc(1, sizeof *b);
    emq_elem *e = NULL;
    size_t cap = 0;
    int rc = EMQ_OK;
    if (!b)
        return emq_db_fail(db, EMQ_ENOMEM, NULL);
    rm_batch_init(&b->ty, r);
    rm_batch_init(&b->val, r);
    rm_batch_init(&b->fx, r);
    for (size_t at = 0; at < n && rc == EMQ_OK; at += RM_KEYBATCH) {
        size_t k = n - at < RM_KEYBATCH ? n - at : RM_KEYBATCH;
        rc = read_group(db, r, names + at, k, b, fn, ctx, &e, &cap);
        rm_batch_clear(&b->ty);
        rm_batch_clear(&b->val);
        rm_batch_clear(&b->fx);
        if (pg)
            pg(pgctx, what, at + k, n, "keys");
    }
    rm_batch_free(&b->ty);
    rm_batch_free(&b->val);
    rm_batch_free(&b->fx);
    emq_buf_free(&b->xcmds);
    emq_buf_free(&b->xbody);
    emq_mem_free(e);
    emq_mem_free(b);
    return rc;
}

/* ---------------------------------------------------------- the remote */

void emq_remote_options_init_size(emq_remote_options *o, size_t size)
{
    emq_remote_options d;
    memset(&d, 0, sizeof d);
    d.connect_timeout_ms = 10000;
    d.io_timeout_ms = 600000;
    emq_struct_out(o, size, &d, sizeof d);
}

static void put_err(char *err, size_t errlen, const char *msg)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", msg);
}

/* Ask the server which commands it has. A scratch handle carries the
 * message (the remote is not tied to a file). */
static int probe(emq_remote *r, char *err, size_t errlen)
{
    const char *av[6] = { "COMMAND", "INFO", "PEXPIRETIME", "HPEXPIRETIME",
                          "HPEXPIREAT", "UNLINK" };
    const emq_rreply *rep = NULL;
    char msg[600];
    if (rm_sendz(r, 6, av) != 0 || rm_recv(r, &rep) != 0) {
        const char *e = r->t.error ? r->t.error(r->ctx) : "";
        snprintf(msg, sizeof msg, "%s: COMMAND INFO%s%s", r->name,
                 e && e[0] ? ": " : "", e ? e : "");
        put_err(err, errlen, msg);
        return EMQ_EIO;
    }
    if (rep->type == EMQ_RREPLY_ERROR) {
        snprintf(msg, sizeof msg, "%s refused: %.*s", r->name,
                 (int)(rep->len > 300 ? 300 : rep->len), rep->str);
        put_err(err, errlen, msg);
        rm_release(r, rep);
        return EMQ_EREMOTE;
    }
    int *has[4] = { &r->pexpiretime, &r->hpexpiretime, &r->hpexpireat,
                    &r->unlink_ok };
    for (size_t i = 0; rep->type == EMQ_RREPLY_ARRAY && i < rep->elements &&
                       i < 4; i++)
        *has[i] = rep->element[i].type == EMQ_RREPLY_ARRAY &&
                  rep->element[i].elements > 0;
    rm_release(r, rep);
    return EMQ_OK;
}

int emq_remote_open(const emq_transport *t, void *ctx, const char *name,
                    emq_remote **out, char *err, size_t errlen)
{
    emq_remote *r;
    int rc;
    if (out)
        *out = NULL;
    if (!t || !t->send || !t->recv || !t->release || !out) {
        put_err(err, errlen, "emq_remote_open: no transport");
        if (t && t->close)
            t->close(ctx);
        return EMQ_EINVAL;
    }
    if (!(r = emq_mem_calloc(1, sizeof *r))) {
        put_err(err, errlen, "out of memory");
        if (t->close)
            t->close(ctx);
        return EMQ_ENOMEM;
    }
    r->t = *t;
    r->ctx = ctx;
    snprintf(r->name, sizeof r->name, "%s", name ? name : "server");
    if ((rc = probe(r, err, errlen)) != EMQ_OK) {
        emq_remote_close(r);
        return rc;
    }
    *out = r;
    return EMQ_OK;
}

void emq_remote_close(emq_remote *r)
{
    if (!r)
        return;
    rm_cluster_close(r);
    if (r->t.close)
        r->t.close(r->ctx);
    emq_mem_free(r->dial_own);
    emq_mem_free(r);
}

const char *emq_remote_name(const emq_remote *r)
{
    return r ? r->name : "";
}
