/*
 * emqlite_nif.c — the Erlang NIF of the Elixir package: libemqlite's C API
 * (api/emqlite.h) for the BEAM.
 *
 * Handles are NIF resources: an `emq_db` with a mutex (a handle is not
 * thread-safe, and dirty schedulers are threads), closed by Emqlite.close/1
 * or by the resource destructor when the last term referring to it is
 * collected. Every call that touches the file runs on a dirty I/O
 * scheduler; the waiting claim is bounded by the caller (Elixir loops in
 * short waits), and emq_claim_wait_interrupt cuts one short from any
 * scheduler.
 *
 * Every verb of the registry runs through one function, call/3, over
 * emq_call(): argument binaries are passed to the library by pointer (no
 * copy), the wire reply comes back as terms (integers, binaries, lists,
 * maps, booleans, nil). A bulk string of at least BIG_BULK bytes is not
 * copied either: the reply's buffer becomes the binary's storage, owned by
 * a resource that frees it with emq_free when the binary is collected.
 *
 * The result code becomes an atom named as PROTOCOL.md Appendix A.4 names
 * the outcome (:enqueued, :duplicate, :stale, ...); lib/emqlite.ex shapes
 * the per-verb results.
 *
 * Fake clocks (Emqlite.Testing) are resources holding an atomic Unix-ms
 * value that the library reads through an emq_clock_fn: the test moves it,
 * the library reads it once per transition, no Erlang code runs on the
 * library's thread.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include <erl_nif.h>

#include "emqlite.h"
#include "emqlite_protocol.h"

#define BIG_BULK 256          /* bulk strings this long are not copied   */
#define MAX_ARGS 4096         /* emq_call arguments per call             */

typedef struct clock_res {
    _Atomic int64_t now_ms;
} clock_res;

typedef struct db_res {
    emq_db *db;               /* NULL once closed                          */
    ErlNifMutex *mu;          /* serialises calls on the handle            */
    ErlNifMutex *imu;         /* guards `db` for interrupt against close   */
    clock_res *clock;         /* a kept fake clock, or NULL                */
    atomic_int interrupted;   /* interrupt/1 was called since the last wait */
} db_res;

typedef struct buf_res {
    void *p;                  /* library memory, freed with emq_free       */
} buf_res;

static ErlNifResourceType *DB_RES;
static ErlNifResourceType *CLOCK_RES;
static ErlNifResourceType *BUF_RES;

static ERL_NIF_TERM A_OK, A_ERROR, A_NIL, A_TRUE, A_FALSE, A_WIRE_ERROR,
    A_REFUSED, A_CLOSED, A_EMPTY, A_VIOLATION, A_NOTE;

/* ------------------------------------------------------------ resources */

static void db_dtor(ErlNifEnv *env, void *obj)
{
    db_res *r = obj;
    (void)env;
    if (r->db != NULL) emq_close(r->db);
    r->db = NULL;
    if (r->clock != NULL) enif_release_resource(r->clock);
    r->clock = NULL;
    if (r->mu != NULL) enif_mutex_destroy(r->mu);
    if (r->imu != NULL) enif_mutex_destroy(r->imu);
}

static void buf_dtor(ErlNifEnv *env, void *obj)
{
    buf_res *b = obj;
    (void)env;
    emq_free(b->p);
    b->p = NULL;
}

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info)
{
    ErlNifResourceFlags fl = ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER;
    (void)priv;
    (void)info;
    DB_RES = enif_open_resource_type(env, NULL, "emqlite_db", db_dtor, fl,
                                     NULL);
    CLOCK_RES = enif_open_resource_type(env, NULL, "emqlite_clock", NULL, fl,
                                        NULL);
    BUF_RES = enif_open_resource_type(env, NULL, "emqlite_buf", buf_dtor, fl,
                                      NULL);
    if (DB_RES == NULL || CLOCK_RES == NULL || BUF_RES == NULL) return 1;
    A_OK = enif_make_atom(env, "ok");
    A_ERROR = enif_make_atom(env, "error");
    A_NIL = enif_make_atom(env, "nil");
    A_TRUE = enif_make_atom(env, "true");
    A_FALSE = enif_make_atom(env, "false");
    A_WIRE_ERROR = enif_make_atom(env, "wire_error");
    A_REFUSED = enif_make_atom(env, "refused");
    A_CLOSED = enif_make_atom(env, "closed");
    A_EMPTY = enif_make_atom(env, "empty");
    A_VIOLATION = enif_make_atom(env, "violation");
    A_NOTE = enif_make_atom(env, "note");
    return 0;
}

static int upgrade(ErlNifEnv *env, void **priv, void **old, ERL_NIF_TERM info)
{
    (void)old;
    return load(env, priv, info);
}

/* ---------------------------------------------------------------- terms */

/* The outcome name of a result code (PROTOCOL.md A.4 where it has one). */
static const char *code_name(int rc)
{
    switch (rc) {
    case EMQ_OK: return "ok";
    case EMQ_ENQUEUED: return "enqueued";
    case EMQ_DUPLICATE: return "duplicate";
    case EMQ_SCHEDULED: return "scheduled";
    case EMQ_DEAD: return "dead";
    case EMQ_EMPTY: return "empty";
    case EMQ_GONE: return "gone";
    case EMQ_MORE: return "more";
    case EMQ_NOOP: return "noop";
    case EMQ_NOTPENDING: return "not_pending";
    case EMQ_EXISTS: return "exists";
    case EMQ_ABSENT: return "absent";
    case EMQ_EKIND: return "kind";
    case EMQ_ESTALE: return "stale";
    case EMQ_EWRONGTYPE: return "wrongtype";
    case EMQ_EWIRE: return "version_fence";
    case EMQ_EQUEUE: return "invalid_queue";
    case EMQ_EID: return "invalid_id";
    case EMQ_EINVAL: return "invalid_argument";
    case EMQ_EBUSY: return "busy";
    case EMQ_EIO: return "io";
    case EMQ_EFULL: return "disk_full";
    case EMQ_ENOMEM: return "out_of_memory";
    case EMQ_ENOTEMQ: return "not_emqlite";
    case EMQ_ESCHEMA: return "schema";
    case EMQ_ECORRUPT: return "corrupt";
    case EMQ_ETOOBIG: return "too_big";
    case EMQ_EREADONLY: return "readonly";
    case EMQ_ECANTOPEN: return "cantopen";
    case EMQ_EPROTO: return "malformed";
    case EMQ_EINTERNAL: return "internal";
    case EMQ_EEMPTY: return "empty_pipeline";
    case EMQ_ENOTSUP: return "not_supported";
    case EMQ_ELOCKED: return "locked";
    case EMQ_ENOTPAUSED: return "not_paused";
    case EMQ_EACTIVE: return "active";
    case EMQ_ENOTDEAD: return "not_dead";
    case EMQ_ERATE: return "rate";
    case EMQ_EREFUSED: return "refused";
    case EMQ_ENONMONO: return "nonmonotonic";
    case EMQ_EENGINE: return "engine";
    case EMQ_EEXIST: return "already_exists";
    case EMQ_EREMOTE: return "remote";
    case EMQ_EEXHAUSTED: return "exhausted";
    default: return NULL;
    }
}

static ERL_NIF_TERM code_term(ErlNifEnv *env, int rc)
{
    const char *n = code_name(rc);
    return n != NULL ? enif_make_atom(env, n) : enif_make_int(env, rc);
}

static ERL_NIF_TERM bin_copy(ErlNifEnv *env, const void *p, size_t n)
{
    ERL_NIF_TERM t;
    unsigned char *d = enif_make_new_binary(env, n, &t);
    if (n > 0) memcpy(d, p, n);
    return t;
}

static ERL_NIF_TERM str_term(ErlNifEnv *env, const char *s)
{
    return bin_copy(env, s, strlen(s));
}

/* A binary over library memory `*pp` (`n` bytes): large ones take the
 * buffer over (and clear *pp so the caller does not free it). */
static ERL_NIF_TERM bin_take(ErlNifEnv *env, char **pp, size_t n)
{
    buf_res *b;
    ERL_NIF_TERM t;
    if (*pp == NULL) return bin_copy(env, "", 0);
    if (n < BIG_BULK) return bin_copy(env, *pp, n);
    b = enif_alloc_resource(BUF_RES, sizeof *b);
    if (b == NULL) return bin_copy(env, *pp, n);
    b->p = *pp;
    *pp = NULL;
    t = enif_make_resource_binary(env, b, b->p, n);
    enif_release_resource(b);
    return t;
}

static ERL_NIF_TERM reply_term(ErlNifEnv *env, emq_reply *r)
{
    size_t i;
    switch (r->type) {
    case EMQ_REPLY_NIL: return A_NIL;
    case EMQ_REPLY_INT: return enif_make_int64(env, r->integer);
    case EMQ_REPLY_BOOL: return r->integer ? A_TRUE : A_FALSE;
    case EMQ_REPLY_BULK:
    case EMQ_REPLY_STATUS: return bin_take(env, &r->str, r->len);
    case EMQ_REPLY_ERROR:
        return enif_make_tuple2(env, A_WIRE_ERROR,
                                bin_copy(env, r->str ? r->str : "", r->len));
    case EMQ_REPLY_REFUSED:
        return enif_make_tuple2(env, A_REFUSED,
                                bin_copy(env, r->str ? r->str : "", r->len));
    case EMQ_REPLY_ARRAY: {
        ERL_NIF_TERM l = enif_make_list(env, 0);
        for (i = r->n; i > 0; i--)
            l = enif_make_list_cell(env, reply_term(env, &r->elem[i - 1]), l);
        return l;
    }
    case EMQ_REPLY_MAP: {
        ERL_NIF_TERM m = enif_make_new_map(env);
        for (i = 0; i + 1 < r->n; i += 2) {
            ERL_NIF_TERM k = reply_term(env, &r->elem[i]);
            ERL_NIF_TERM v = reply_term(env, &r->elem[i + 1]);
            enif_make_map_put(env, m, k, v, &m);
        }
        return m;
    }
    default: return enif_make_tuple2(env, A_ERROR, enif_make_int(env, r->type));
    }
}

/* {:error, code, message} for a failure on `db`. */
static ERL_NIF_TERM fail(ErlNifEnv *env, emq_db *db, int rc)
{
    const char *m = db != NULL ? emq_errmsg(db) : "";
    if (m == NULL || *m == 0) m = emq_strerror(rc);
    return enif_make_tuple3(env, A_ERROR, code_term(env, rc),
                            str_term(env, m));
}

static ERL_NIF_TERM closed(ErlNifEnv *env)
{
    return enif_make_tuple3(env, A_ERROR, A_CLOSED,
                            str_term(env, "the handle is closed"));
}

/* A NUL-terminated copy of a binary or iolist term into `buf` (`n`
 * bytes); 0 when it is not one, is too long or holds a NUL. */
static int cstr(ErlNifEnv *env, ERL_NIF_TERM t, char *buf, size_t n)
{
    ErlNifBinary b;
    if (!enif_inspect_iolist_as_binary(env, t, &b)) return 0;
    if (b.size >= n || memchr(b.data, 0, b.size) != NULL) return 0;
    memcpy(buf, b.data, b.size);
    buf[b.size] = 0;
    return 1;
}

static int get_i64(ErlNifEnv *env, ERL_NIF_TERM t, int64_t *v)
{
    ErlNifSInt64 x;
    if (!enif_get_int64(env, t, &x)) return 0;
    *v = (int64_t)x;
    return 1;
}

static int64_t fake_now(void *ctx)
{
    clock_res *c = ctx;
    return atomic_load(&c->now_ms);
}

/* Lock the handle of term `t`: 1 with *out locked (unlock with
 * enif_mutex_unlock((*out)->mu)), 0 for a bad argument. A closed handle
 * is returned locked with db NULL. */
static int lock_db(ErlNifEnv *env, ERL_NIF_TERM t, db_res **out)
{
    db_res *r;
    if (!enif_get_resource(env, t, DB_RES, (void **)&r)) return 0;
    enif_mutex_lock(r->mu);
    *out = r;
    return 1;
}

/* ------------------------------------------------------------- library */

static ERL_NIF_TERM nif_version(ErlNifEnv *env, int argc,
                                const ERL_NIF_TERM argv[])
{
    (void)argc;
    (void)argv;
    return enif_make_tuple3(env, str_term(env, emq_version()),
                            str_term(env, emq_sqlite_version()),
                            str_term(env, EMQ_WIRE));
}

static ERL_NIF_TERM nif_clock_new(ErlNifEnv *env, int argc,
                                  const ERL_NIF_TERM argv[])
{
    int64_t start;
    clock_res *c;
    ERL_NIF_TERM t;
    (void)argc;
    if (!get_i64(env, argv[0], &start)) return enif_make_badarg(env);
    c = enif_alloc_resource(CLOCK_RES, sizeof *c);
    if (c == NULL) return enif_make_badarg(env);
    atomic_store(&c->now_ms, start);
    t = enif_make_resource(env, c);
    enif_release_resource(c);
    return t;
}

/* clock_add(clock, delta) and clock_set(clock, ms): the new time. */
static ERL_NIF_TERM nif_clock_move(ErlNifEnv *env, int argc,
                                   const ERL_NIF_TERM argv[])
{
    clock_res *c;
    int64_t v, set;
    (void)argc;
    if (!enif_get_resource(env, argv[0], CLOCK_RES, (void **)&c) ||
        !get_i64(env, argv[1], &v) || !get_i64(env, argv[2], &set))
        return enif_make_badarg(env);
    if (set) {
        atomic_store(&c->now_ms, v);
        return enif_make_int64(env, v);
    }
    return enif_make_int64(env, atomic_fetch_add(&c->now_ms, v) + v);
}

static ERL_NIF_TERM nif_clock_now(ErlNifEnv *env, int argc,
                                  const ERL_NIF_TERM argv[])
{
    clock_res *c;
    (void)argc;
    if (!enif_get_resource(env, argv[0], CLOCK_RES, (void **)&c))
        return enif_make_badarg(env);
    return enif_make_int64(env, atomic_load(&c->now_ms));
}

/* open(path, clock | nil, [sync, busy_ms, node_id, readonly, exclusive,
 * max_payload, checkpoint_frames]) -> {:ok, db} | {:error, code, msg} */
static ERL_NIF_TERM nif_open(ErlNifEnv *env, int argc,
                             const ERL_NIF_TERM argv[])
{
    char path[4096], err[512];
    emq_options o;
    clock_res *c = NULL;
    db_res *r;
    emq_db *db = NULL;
    int rc, arity;
    const ERL_NIF_TERM *f;
    int64_t v[7];
    ERL_NIF_TERM t;
    (void)argc;
    if (!cstr(env, argv[0], path, sizeof path)) return enif_make_badarg(env);
    if (enif_compare(argv[1], A_NIL) != 0 &&
        !enif_get_resource(env, argv[1], CLOCK_RES, (void **)&c))
        return enif_make_badarg(env);
    if (!enif_get_tuple(env, argv[2], &arity, &f) || arity != 7)
        return enif_make_badarg(env);
    for (int i = 0; i < 7; i++)
        if (!get_i64(env, f[i], &v[i])) return enif_make_badarg(env);
    emq_options_init(&o);
    o.synchronous = (int)v[0];
    o.busy_timeout_ms = (int)v[1];
    o.node_id = (int)v[2];
    o.readonly = (int)v[3];
    o.exclusive = (int)v[4];
    if (v[5] > 0) o.max_payload = (uint64_t)v[5];
    if (v[6] >= 0) o.checkpoint_frames = (int)v[6];
    if (c != NULL) {
        o.clock = fake_now;
        o.clock_ctx = c;
    }
    err[0] = 0;
    rc = emq_open_ex(path, &o, &db, err, sizeof err);
    if (rc != EMQ_OK)
        return enif_make_tuple3(env, A_ERROR, code_term(env, rc),
                                str_term(env, err[0] ? err
                                                      : emq_strerror(rc)));
    r = enif_alloc_resource(DB_RES, sizeof *r);
    if (r == NULL) {
        emq_close(db);
        return fail(env, NULL, EMQ_ENOMEM);
    }
    memset(r, 0, sizeof *r);
    r->mu = enif_mutex_create("emqlite_db");
    r->imu = enif_mutex_create("emqlite_db_interrupt");
    r->db = db;
    if (c != NULL) {
        enif_keep_resource(c);
        r->clock = c;
    }
    t = enif_make_resource(env, r);
    enif_release_resource(r);
    if (r->mu == NULL || r->imu == NULL) return fail(env, NULL, EMQ_ENOMEM);
    return enif_make_tuple2(env, A_OK, t);
}

static ERL_NIF_TERM nif_close(ErlNifEnv *env, int argc,
                              const ERL_NIF_TERM argv[])
{
    db_res *r;
    (void)argc;
    if (!lock_db(env, argv[0], &r)) return enif_make_badarg(env);
    enif_mutex_lock(r->imu);
    if (r->db != NULL) emq_close(r->db);
    r->db = NULL;
    enif_mutex_unlock(r->imu);
    enif_mutex_unlock(r->mu);
    return A_OK;
}

/* Not dirty and not under the call mutex: it must reach a waiting claim. */
static ERL_NIF_TERM nif_interrupt(ErlNifEnv *env, int argc,
                                  const ERL_NIF_TERM argv[])
{
    db_res *r;
    (void)argc;
    if (!enif_get_resource(env, argv[0], DB_RES, (void **)&r))
        return enif_make_badarg(env);
    atomic_store(&r->interrupted, 1);
    enif_mutex_lock(r->imu);
    if (r->db != NULL) emq_claim_wait_interrupt(r->db);
    enif_mutex_unlock(r->imu);
    return A_OK;
}

/* call(db, verb, [binary | nil]) -> {code, reply} | {:error, code, msg} */
static ERL_NIF_TERM nif_call(ErlNifEnv *env, int argc,
                             const ERL_NIF_TERM argv[])
{
    db_res *r;
    char verb[128];
    unsigned n;
    const char **av = NULL;
    size_t *al = NULL;
    ERL_NIF_TERM l, h, out;
    emq_reply reply;
    int rc;
    (void)argc;
    if (!cstr(env, argv[1], verb, sizeof verb) ||
        !enif_get_list_length(env, argv[2], &n) || n > MAX_ARGS)
        return enif_make_badarg(env);
    if (n > 0) {
        av = enif_alloc(n * sizeof *av);
        al = enif_alloc(n * sizeof *al);
        if (av == NULL || al == NULL) {
            enif_free(av);
            enif_free(al);
            return fail(env, NULL, EMQ_ENOMEM);
        }
    }
    l = argv[2];
    for (unsigned i = 0; i < n; i++) {
        ErlNifBinary b;
        enif_get_list_cell(env, l, &h, &l);
        if (enif_compare(h, A_NIL) == 0) {
            av[i] = NULL;
            al[i] = 0;
        } else if (enif_inspect_binary(env, h, &b)) {
            av[i] = (const char *)b.data;
            al[i] = b.size;
        } else {
            enif_free(av);
            enif_free(al);
            return enif_make_badarg(env);
        }
    }
    if (!lock_db(env, argv[0], &r)) {
        enif_free(av);
        enif_free(al);
        return enif_make_badarg(env);
    }
    if (r->db == NULL) {
        enif_mutex_unlock(r->mu);
        enif_free(av);
        enif_free(al);
        return closed(env);
    }
    memset(&reply, 0, sizeof reply);
    rc = emq_call(r->db, verb, n, av, al, &reply);
    if (rc < 0 && reply.type != EMQ_REPLY_ERROR &&
        reply.type != EMQ_REPLY_REFUSED)
        out = fail(env, r->db, rc);
    else if (rc < 0)
        out = enif_make_tuple3(env, A_ERROR, code_term(env, rc),
                               bin_copy(env, reply.str ? reply.str : "",
                                        reply.len));
    else
        out = enif_make_tuple2(env, code_term(env, rc),
                               reply_term(env, &reply));
    emq_reply_clear(&reply);
    enif_mutex_unlock(r->mu);
    enif_free(av);
    enif_free(al);
    return out;
}

static ERL_NIF_TERM job_term(ErlNifEnv *env, emq_job *job)
{
    ERL_NIF_TERM p = job->payload == NULL
                         ? A_NIL
                         : bin_take(env, (char **)&job->payload,
                                    job->payload_len);
    return enif_make_tuple3(env, str_term(env, job->id), p,
                            enif_make_int64(env, job->attempts));
}

/* claim_wait(db, q, lease_ms, timeout_ms) -> {:ok, {id, payload, att}} |
 * :empty | :interrupted (interrupt/1 ended it, or came before it) |
 * {:error, code, msg} */
static ERL_NIF_TERM nif_claim_wait(ErlNifEnv *env, int argc,
                                   const ERL_NIF_TERM argv[])
{
    db_res *r;
    char q[256];
    int64_t lease, timeout;
    emq_job job;
    int rc;
    ERL_NIF_TERM out;
    (void)argc;
    if (!cstr(env, argv[1], q, sizeof q) || !get_i64(env, argv[2], &lease) ||
        !get_i64(env, argv[3], &timeout) || timeout < 0)
        return enif_make_badarg(env);
    if (!lock_db(env, argv[0], &r)) return enif_make_badarg(env);
    if (r->db == NULL) {
        enif_mutex_unlock(r->mu);
        return closed(env);
    }
    memset(&job, 0, sizeof job);
    rc = emq_claim_wait(r->db, q, lease, timeout, &job);
    if (rc == EMQ_OK)
        out = enif_make_tuple2(env, A_OK, job_term(env, &job));
    else if (rc == EMQ_EMPTY)
        out = atomic_exchange(&r->interrupted, 0)
                  ? enif_make_atom(env, "interrupted")
                  : A_EMPTY;
    else
        out = fail(env, r->db, rc);
    emq_job_clear(&job);
    enif_mutex_unlock(r->mu);
    return out;
}

static int spec_policy(ErlNifEnv *env, ERL_NIF_TERM max, ERL_NIF_TERM spec,
                       emq_retry_policy *p)
{
    char s[256];
    int64_t m;
    if (!get_i64(env, max, &m) || !cstr(env, spec, s, sizeof s)) return 0;
    memset(p, 0, sizeof *p);
    p->max_attempts = m;
    return emq_backoff_parse(s, &p->backoff) == EMQ_OK;
}

/* retry_by_policy(db, q, id, token, error, max | nil, spec | nil) */
static ERL_NIF_TERM nif_retry_by_policy(ErlNifEnv *env, int argc,
                                        const ERL_NIF_TERM argv[])
{
    db_res *r;
    char q[256], id[64];
    int64_t token;
    ErlNifBinary e;
    emq_retry_policy fb, *fbp = NULL;
    int rc;
    ERL_NIF_TERM out;
    (void)argc;
    if (!cstr(env, argv[1], q, sizeof q) || !cstr(env, argv[2], id, sizeof id)
        || !get_i64(env, argv[3], &token) ||
        !enif_inspect_iolist_as_binary(env, argv[4], &e))
        return enif_make_badarg(env);
    if (enif_compare(argv[5], A_NIL) != 0) {
        if (!spec_policy(env, argv[5], argv[6], &fb))
            return enif_make_tuple3(env, A_ERROR,
                                    code_term(env, EMQ_EINVAL),
                                    str_term(env, "retry: the fallback "
                                             "policy is not valid"));
        fbp = &fb;
    }
    if (!lock_db(env, argv[0], &r)) return enif_make_badarg(env);
    if (r->db == NULL) {
        enif_mutex_unlock(r->mu);
        return closed(env);
    }
    rc = emq_policy_retry(r->db, q, id, token, e.data, e.size, fbp);
    out = rc >= 0 ? code_term(env, rc) : fail(env, r->db, rc);
    enif_mutex_unlock(r->mu);
    return out;
}

/* policy_set(db, q, id | nil, max | nil, spec | nil): nil max removes. */
static ERL_NIF_TERM nif_policy_set(ErlNifEnv *env, int argc,
                                   const ERL_NIF_TERM argv[])
{
    db_res *r;
    char q[256], id[64];
    emq_retry_policy p, *pp = NULL;
    int rc, has_id = enif_compare(argv[2], A_NIL) != 0;
    ERL_NIF_TERM out;
    (void)argc;
    if (!cstr(env, argv[1], q, sizeof q) ||
        (has_id && !cstr(env, argv[2], id, sizeof id)))
        return enif_make_badarg(env);
    if (enif_compare(argv[3], A_NIL) != 0) {
        if (!spec_policy(env, argv[3], argv[4], &p))
            return enif_make_tuple3(
                env, A_ERROR, code_term(env, EMQ_EINVAL),
                str_term(env, "policy: backoff must be fixed:MS, "
                              "exponential:BASE:CAP or jitter:POLICY"));
        pp = &p;
    }
    if (!lock_db(env, argv[0], &r)) return enif_make_badarg(env);
    if (r->db == NULL) {
        enif_mutex_unlock(r->mu);
        return closed(env);
    }
    rc = emq_policy_set(r->db, q, has_id ? id : NULL, pp);
    out = rc >= 0 ? A_OK : fail(env, r->db, rc);
    enif_mutex_unlock(r->mu);
    return out;
}

/* policy_get(db, q, id | nil) -> {:ok, {max, spec}} | :absent */
static ERL_NIF_TERM nif_policy_get(ErlNifEnv *env, int argc,
                                   const ERL_NIF_TERM argv[])
{
    db_res *r;
    char q[256], id[64], spec[256];
    emq_retry_policy p;
    int rc, has_id = enif_compare(argv[2], A_NIL) != 0;
    ERL_NIF_TERM out;
    (void)argc;
    if (!cstr(env, argv[1], q, sizeof q) ||
        (has_id && !cstr(env, argv[2], id, sizeof id)))
        return enif_make_badarg(env);
    if (!lock_db(env, argv[0], &r)) return enif_make_badarg(env);
    if (r->db == NULL) {
        enif_mutex_unlock(r->mu);
        return closed(env);
    }
    rc = emq_policy_get(r->db, q, has_id ? id : NULL, &p);
    if (rc == EMQ_OK) {
        size_t n = emq_backoff_format(&p.backoff, spec, sizeof spec);
        out = enif_make_tuple2(
            env, A_OK,
            enif_make_tuple2(env, enif_make_int64(env, p.max_attempts),
                             bin_copy(env, spec, n)));
    } else if (rc >= 0) {
        out = code_term(env, rc);
    } else {
        out = fail(env, r->db, rc);
    }
    enif_mutex_unlock(r->mu);
    return out;
}

typedef struct sink {
    ErlNifBinary bin;
    size_t used;
    int ok;
} sink;

static int sink_write(void *ctx, const void *p, size_t n)
{
    sink *s = ctx;
    if (s->used + n > s->bin.size) {
        size_t want = s->bin.size * 2;
        while (want < s->used + n) want *= 2;
        if (!enif_realloc_binary(&s->bin, want)) {
            s->ok = 0;
            return 1;
        }
    }
    memcpy(s->bin.data + s->used, p, n);
    s->used += n;
    return 0;
}

static ERL_NIF_TERM summary_term(ErlNifEnv *env, const emq_transfer_summary *s)
{
    ERL_NIF_TERM m = enif_make_new_map(env);
    enif_make_map_put(env, m, enif_make_atom(env, "keys"),
                      enif_make_uint64(env, s->keys), &m);
    enif_make_map_put(env, m, enif_make_atom(env, "commands"),
                      enif_make_uint64(env, s->commands), &m);
    enif_make_map_put(env, m, enif_make_atom(env, "bytes"),
                      enif_make_uint64(env, s->bytes), &m);
    enif_make_map_put(env, m, enif_make_atom(env, "digest"),
                      enif_make_uint64(env, s->digest), &m);
    return m;
}

/* export(db, [queue] | nil, by_slot) -> {:ok, binary} ; digest(db) ->
 * {:ok, summary}: one function, `argv[3]` 1 for the digest. */
static ERL_NIF_TERM nif_export(ErlNifEnv *env, int argc,
                               const ERL_NIF_TERM argv[])
{
    db_res *r;
    emq_export_options o;
    unsigned nq = 0;
    char (*qs)[256] = NULL;
    const char **qp = NULL;
    int by_slot, digest, rc;
    sink s;
    emq_transfer_summary sum;
    ERL_NIF_TERM out, l, h;
    (void)argc;
    if (!enif_get_int(env, argv[2], &by_slot) ||
        !enif_get_int(env, argv[3], &digest))
        return enif_make_badarg(env);
    emq_export_options_init(&o);
    o.by_slot = by_slot;
    if (enif_compare(argv[1], A_NIL) != 0) {
        if (!enif_get_list_length(env, argv[1], &nq) || nq > 1024)
            return enif_make_badarg(env);
        qs = enif_alloc((nq ? nq : 1) * sizeof *qs);
        qp = enif_alloc((nq ? nq : 1) * sizeof *qp);
        l = argv[1];
        for (unsigned i = 0; i < nq; i++) {
            enif_get_list_cell(env, l, &h, &l);
            if (!cstr(env, h, qs[i], sizeof qs[i])) {
                enif_free(qs);
                enif_free(qp);
                return enif_make_badarg(env);
            }
            qp[i] = qs[i];
        }
        o.queues = qp;
        o.n_queues = nq;
    }
    if (!lock_db(env, argv[0], &r)) {
        enif_free(qs);
        enif_free(qp);
        return enif_make_badarg(env);
    }
    if (r->db == NULL) {
        enif_mutex_unlock(r->mu);
        enif_free(qs);
        enif_free(qp);
        return closed(env);
    }
    memset(&sum, 0, sizeof sum);
    if (digest) {
        rc = emq_digest(r->db, &o, &sum);
        out = rc == EMQ_OK ? enif_make_tuple2(env, A_OK, summary_term(env, &sum))
                           : fail(env, r->db, rc);
    } else {
        s.used = 0;
        s.ok = enif_alloc_binary(4096, &s.bin);
        if (!s.ok) {
            out = fail(env, NULL, EMQ_ENOMEM);
        } else {
            rc = emq_export(r->db, &o, sink_write, &s, &sum);
            if (rc == EMQ_OK && s.ok) {
                enif_realloc_binary(&s.bin, s.used);
                out = enif_make_tuple2(env, A_OK, enif_make_binary(env, &s.bin));
            } else {
                enif_release_binary(&s.bin);
                out = fail(env, r->db, s.ok ? rc : EMQ_ENOMEM);
            }
        }
    }
    enif_mutex_unlock(r->mu);
    enif_free(qs);
    enif_free(qp);
    return out;
}

static ERL_NIF_TERM nif_import(ErlNifEnv *env, int argc,
                               const ERL_NIF_TERM argv[])
{
    db_res *r;
    ErlNifBinary b;
    emq_transfer_summary sum;
    int rc;
    ERL_NIF_TERM out;
    (void)argc;
    if (!enif_inspect_iolist_as_binary(env, argv[1], &b))
        return enif_make_badarg(env);
    if (!lock_db(env, argv[0], &r)) return enif_make_badarg(env);
    if (r->db == NULL) {
        enif_mutex_unlock(r->mu);
        return closed(env);
    }
    rc = emq_import(r->db, b.data, b.size, &sum);
    out = rc == EMQ_OK ? enif_make_tuple2(env, A_OK, summary_term(env, &sum))
                       : fail(env, r->db, rc);
    enif_mutex_unlock(r->mu);
    return out;
}

/* mint(db, ns) / now(db) / node_id(db) / checkpoint(db): `argv` decides. */
static ERL_NIF_TERM nif_mint(ErlNifEnv *env, int argc,
                             const ERL_NIF_TERM argv[])
{
    db_res *r;
    char ns[8], id[EMQ_ID_SIZE];
    int rc;
    ERL_NIF_TERM out;
    (void)argc;
    if (!cstr(env, argv[1], ns, sizeof ns)) return enif_make_badarg(env);
    if (!lock_db(env, argv[0], &r)) return enif_make_badarg(env);
    if (r->db == NULL) {
        enif_mutex_unlock(r->mu);
        return closed(env);
    }
    rc = emq_mint(r->db, ns, id);
    out = rc == EMQ_OK ? enif_make_tuple2(env, A_OK, str_term(env, id))
                       : fail(env, r->db, rc);
    enif_mutex_unlock(r->mu);
    return out;
}

static ERL_NIF_TERM nif_info(ErlNifEnv *env, int argc,
                             const ERL_NIF_TERM argv[])
{
    db_res *r;
    char what[16];
    ERL_NIF_TERM out;
    int rc;
    (void)argc;
    if (!cstr(env, argv[1], what, sizeof what)) return enif_make_badarg(env);
    if (!lock_db(env, argv[0], &r)) return enif_make_badarg(env);
    if (r->db == NULL) {
        enif_mutex_unlock(r->mu);
        return closed(env);
    }
    if (strcmp(what, "now") == 0) {
        out = enif_make_tuple2(env, A_OK, enif_make_int64(env, emq_now(r->db)));
    } else if (strcmp(what, "node_id") == 0) {
        out = enif_make_tuple2(env, A_OK,
                               enif_make_int(env, emq_node_id(r->db)));
    } else if (strcmp(what, "checkpoint") == 0) {
        rc = emq_checkpoint(r->db);
        out = rc == EMQ_OK ? A_OK : fail(env, r->db, rc);
    } else if (strcmp(what, "queues") == 0) {
        char **qs = NULL;
        size_t n = 0;
        rc = emq_queues(r->db, &qs, &n);
        if (rc == EMQ_OK) {
            ERL_NIF_TERM l = enif_make_list(env, 0);
            for (size_t i = n; i > 0; i--)
                l = enif_make_list_cell(env, str_term(env, qs[i - 1]), l);
            emq_queues_free(qs, n);
            out = enif_make_tuple2(env, A_OK, l);
        } else {
            out = fail(env, r->db, rc);
        }
    } else {
        out = enif_make_badarg(env);
    }
    enif_mutex_unlock(r->mu);
    return out;
}

typedef struct finds {
    ErlNifEnv *env;
    ERL_NIF_TERM list;
} finds;

static void on_finding(void *ctx, const emq_finding *f)
{
    finds *fs = ctx;
    ErlNifEnv *env = fs->env;
    ERL_NIF_TERM t = enif_make_tuple4(
        env, f->severity == EMQ_CHECK_VIOLATION ? A_VIOLATION : A_NOTE,
        str_term(env, f->code), str_term(env, f->key),
        str_term(env, f->message));
    fs->list = enif_make_list_cell(env, t, fs->list);
}

/* check(db) -> {:ok, [finding]} (newest last) | {:error, code, msg} */
static ERL_NIF_TERM nif_check(ErlNifEnv *env, int argc,
                              const ERL_NIF_TERM argv[])
{
    db_res *r;
    finds fs;
    size_t nv = 0;
    int rc;
    ERL_NIF_TERM out, rev;
    (void)argc;
    if (!lock_db(env, argv[0], &r)) return enif_make_badarg(env);
    if (r->db == NULL) {
        enif_mutex_unlock(r->mu);
        return closed(env);
    }
    fs.env = env;
    fs.list = enif_make_list(env, 0);
    rc = emq_check(r->db, on_finding, &fs, &nv);
    if (rc == EMQ_OK || rc == EMQ_ECORRUPT) {
        enif_make_reverse_list(env, fs.list, &rev);
        out = enif_make_tuple2(env, A_OK, rev);
    } else {
        out = fail(env, r->db, rc);
    }
    enif_mutex_unlock(r->mu);
    return out;
}

/* ---------------------------------------------------------- job history */

typedef struct hist_acc {
    ErlNifEnv *env;
    ERL_NIF_TERM list;
} hist_acc;

static ERL_NIF_TERM num_or_nil(ErlNifEnv *env, int64_t v)
{
    return v >= 0 ? enif_make_int64(env, v) : A_NIL;
}

static int on_entry(void *ctx, const emq_history_entry *e)
{
    hist_acc *h = ctx;
    ErlNifEnv *env = h->env;
    const char *kind = emq_history_kind_name(e->kind);
    ERL_NIF_TERM m = enif_make_new_map(env);
    static const char *const keys[] = {
        "seq", "at", "kind", "queue", "job", "attempts", "delay", "run_at",
        "error", "host", "pid", "worker"};
    ERL_NIF_TERM v[12];
    v[0] = enif_make_int64(env, e->seq);
    v[1] = enif_make_int64(env, e->at_ms);
    v[2] = str_term(env, kind ? kind : "?");
    v[3] = str_term(env, e->queue);
    v[4] = str_term(env, e->id);
    v[5] = num_or_nil(env, e->attempts);
    v[6] = num_or_nil(env, e->delay_ms);
    v[7] = num_or_nil(env, e->run_at_ms);
    v[8] = e->error ? bin_copy(env, e->error, e->error_len) : A_NIL;
    v[9] = e->host ? str_term(env, e->host) : A_NIL;
    v[10] = num_or_nil(env, e->pid);
    v[11] = e->worker ? str_term(env, e->worker) : A_NIL;
    for (int i = 0; i < 12; i++)
        enif_make_map_put(env, m, enif_make_atom(env, keys[i]), v[i], &m);
    h->list = enif_make_list_cell(env, m, h->list);
    return 0;
}

/* history(db, queue | nil, id) -> {:ok, [entry map]} (oldest first) */
static ERL_NIF_TERM nif_history(ErlNifEnv *env, int argc,
                                const ERL_NIF_TERM argv[])
{
    db_res *r;
    hist_acc h;
    char q[1024], id[256];
    int has_q, rc;
    ERL_NIF_TERM out, rev;
    (void)argc;
    has_q = !enif_is_identical(argv[1], A_NIL);
    if ((has_q && !cstr(env, argv[1], q, sizeof q)) ||
        !cstr(env, argv[2], id, sizeof id))
        return enif_make_badarg(env);
    if (!lock_db(env, argv[0], &r)) return enif_make_badarg(env);
    if (r->db == NULL) {
        enif_mutex_unlock(r->mu);
        return closed(env);
    }
    h.env = env;
    h.list = enif_make_list(env, 0);
    rc = emq_job_history(r->db, has_q ? q : NULL, id, on_entry, &h);
    if (rc == EMQ_OK) {
        enif_make_reverse_list(env, h.list, &rev);
        out = enif_make_tuple2(env, A_OK, rev);
    } else {
        out = fail(env, r->db, rc);
    }
    enif_mutex_unlock(r->mu);
    return out;
}

/* history_level(db, level | -1) -> {:ok, level} (-1: read it) */
static ERL_NIF_TERM nif_history_level(ErlNifEnv *env, int argc,
                                      const ERL_NIF_TERM argv[])
{
    db_res *r;
    emq_history_config c;
    int64_t level;
    int rc;
    ERL_NIF_TERM out;
    (void)argc;
    if (!get_i64(env, argv[1], &level)) return enif_make_badarg(env);
    if (!lock_db(env, argv[0], &r)) return enif_make_badarg(env);
    if (r->db == NULL) {
        enif_mutex_unlock(r->mu);
        return closed(env);
    }
    rc = emq_history_config_get(r->db, &c);
    if (rc == EMQ_OK && level >= 0) {
        c.enabled = level > 1000 ? 1000 : (int)level;
        rc = emq_history_config_set(r->db, &c);
    }
    out = rc == EMQ_OK ? enif_make_tuple2(env, A_OK,
                                          enif_make_int(env, c.enabled))
                       : fail(env, r->db, rc);
    enif_mutex_unlock(r->mu);
    return out;
}

static const char *kind_name(int k)
{
    switch (k) {
    case EMQ_VERB_WRITE: return "write";
    case EMQ_VERB_READ: return "read";
    case EMQ_VERB_PROC: return "procedure";
    case EMQ_VERB_HOST: return "host";
    default: return "unknown";
    }
}

/* verbs() -> [{name, tier, kind, [{arg, optional?, repeated?}], summary}] */
static ERL_NIF_TERM nif_verbs(ErlNifEnv *env, int argc,
                              const ERL_NIF_TERM argv[])
{
    ERL_NIF_TERM l = enif_make_list(env, 0);
    (void)argc;
    (void)argv;
    for (size_t i = emq_verb_count(); i > 0; i--) {
        const emq_verb_info *v = emq_verb_at(i - 1);
        ERL_NIF_TERM args = enif_make_list(env, 0);
        if (v == NULL) continue;
        for (size_t j = v->nargs; j > 0; j--) {
            const emq_arg_info *a = &v->args[j - 1];
            args = enif_make_list_cell(
                env,
                enif_make_tuple3(env, str_term(env, a->name),
                                 (a->flags & EMQ_ARGF_OPT) ? A_TRUE : A_FALSE,
                                 (a->flags & EMQ_ARGF_REST) ? A_TRUE
                                                            : A_FALSE),
                args);
        }
        l = enif_make_list_cell(
            env,
            enif_make_tuple5(env, str_term(env, v->name),
                             enif_make_int(env, v->tier),
                             enif_make_atom(env, kind_name(v->kind)), args,
                             str_term(env, v->summary ? v->summary : "")),
            l);
    }
    return l;
}

#define DIRTY ERL_NIF_DIRTY_JOB_IO_BOUND

static ErlNifFunc funcs[] = {
    {"nif_version", 0, nif_version, 0},
    {"nif_verbs", 0, nif_verbs, 0},
    {"nif_clock_new", 1, nif_clock_new, 0},
    {"nif_clock_move", 3, nif_clock_move, 0},
    {"nif_clock_now", 1, nif_clock_now, 0},
    {"nif_interrupt", 1, nif_interrupt, 0},
    {"nif_open", 3, nif_open, DIRTY},
    {"nif_close", 1, nif_close, DIRTY},
    {"nif_call", 3, nif_call, DIRTY},
    {"nif_claim_wait", 4, nif_claim_wait, DIRTY},
    {"nif_retry_by_policy", 7, nif_retry_by_policy, DIRTY},
    {"nif_policy_set", 5, nif_policy_set, DIRTY},
    {"nif_policy_get", 3, nif_policy_get, DIRTY},
    {"nif_export", 4, nif_export, DIRTY},
    {"nif_import", 2, nif_import, DIRTY},
    {"nif_mint", 2, nif_mint, DIRTY},
    {"nif_info", 2, nif_info, DIRTY},
    {"nif_check", 1, nif_check, DIRTY},
    {"nif_history", 3, nif_history, DIRTY},
    {"nif_history_level", 2, nif_history_level, DIRTY},
};

ERL_NIF_INIT(Elixir.Emqlite.Native, funcs, load, NULL, upgrade, NULL)
