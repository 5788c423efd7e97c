/*
 * emqlite_node.c — the Node-API addon of emqlite's Node package, in plain C
 * over node_api.h (ABI-stable across Node versions, NAPI_VERSION 8).
 *
 * The addon is deliberately small: the JavaScript layer (lib/) builds the
 * Queue / Worker API on top of it. What lives here:
 *
 *  - handles: open, close, finalised by the garbage collector when the
 *    JavaScript side forgot close() (an external with a finalizer);
 *  - every call that touches the file runs on the libuv thread pool
 *    (napi_create_async_work) and settles a Promise: the generic verb call
 *    (emq_call, so every row of the registry is reachable without binding
 *    code), the waiting claim, retries under the stored policy, policies,
 *    export, import, digest, check, stats, queue list, subscriptions;
 *  - a fake clock whose time lives in C (an atomic), so that transitions
 *    running on pool threads read it without calling into JavaScript.
 *
 * A handle is not thread-safe (emqlite.h): the JavaScript layer runs the
 * operations of one handle one at a time (lib/database.js keeps a chain);
 * each handle also carries a mutex, so a misuse of the raw addon
 * serialises instead of racing. An operation in flight holds a reference
 * to its handle's external, so the collector never finalises a handle
 * under a running operation.
 */
#define NAPI_VERSION 8
#include <node_api.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emqlite.h"
#include "emqlite_protocol.h"

/* ---------------------------------------------------------------- helpers */

/* Type tags of the three kinds of external, so that one kind passed where
 * another is expected is refused instead of misread. */
static const napi_type_tag TAG_CLOCK = {0x656d716c69746531ULL, 0x636c6f636b000001ULL};
static const napi_type_tag TAG_HANDLE = {0x656d716c69746531ULL, 0x68616e646c650002ULL};
static const napi_type_tag TAG_SUB = {0x656d716c69746531ULL, 0x7375620000000003ULL};

/* The data of external `v` when it carries `tag`, else NULL. */
static void *tagged(napi_env env, napi_value v, const napi_type_tag *tag)
{
    napi_valuetype t;
    bool ok = false;
    void *p = NULL;
    if (napi_typeof(env, v, &t) != napi_ok || t != napi_external) return NULL;
    if (napi_check_object_type_tag(env, v, tag, &ok) != napi_ok || !ok)
        return NULL;
    napi_get_value_external(env, v, &p);
    return p;
}

#define NAPI(call)                                                        \
    do {                                                                  \
        if ((call) != napi_ok) return throw_last(env);                    \
    } while (0)

static napi_value throw_last(napi_env env)
{
    const napi_extended_error_info *info = NULL;
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (!pending) {
        napi_get_last_error_info(env, &info);
        napi_throw_error(env, "EMQ_ENODE",
                         info && info->error_message ? info->error_message
                                                     : "a Node-API call failed");
    }
    return NULL;
}

static napi_value type_error(napi_env env, const char *msg)
{
    napi_throw_type_error(env, "EMQ_EINVAL", msg);
    return NULL;
}

/* The name of a result code ("EMQ_ESTALE"), for err.code, from the
 * library's one table of codes (EMQ_RESULT_MAP). */
static const char *code_name(int rc)
{
    switch (rc) {
#define C(name, code, wire, cls, exit, exc, kind, text) \
    case EMQ_##name: return "EMQ_" #name;
    EMQ_RESULT_MAP(C)
#undef C
    default: return "EMQ_EUNKNOWN";
    }
}

/* An Error with .code (the EMQ_E* name) and .rc (the number). */
static napi_value make_error(napi_env env, int rc, const char *msg)
{
    napi_value m, c, e, n;
    if (msg == NULL || *msg == '\0') msg = emq_strerror(rc);
    napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &m);
    napi_create_string_utf8(env, code_name(rc), NAPI_AUTO_LENGTH, &c);
    napi_create_error(env, c, m, &e);
    napi_create_int32(env, rc, &n);
    napi_set_named_property(env, e, "rc", n);
    return e;
}

static napi_value undefined(napi_env env)
{
    napi_value u;
    napi_get_undefined(env, &u);
    return u;
}

static napi_value null_value(napi_env env)
{
    napi_value u;
    napi_get_null(env, &u);
    return u;
}

static napi_value int64_value(napi_env env, int64_t v)
{
    napi_value r;
    if (v > 9007199254740991LL || v < -9007199254740991LL)
        napi_create_bigint_int64(env, v, &r);
    else
        napi_create_int64(env, v, &r);
    return r;
}

static napi_value bytes_value(napi_env env, const void *p, size_t n)
{
    napi_value r;
    void *dst;
    if (napi_create_buffer_copy(env, n, n ? p : "", &dst, &r) != napi_ok)
        return NULL;
    return r;
}

static void set_prop(napi_env env, napi_value obj, const char *k,
                     napi_value v)
{
    napi_set_named_property(env, obj, k, v);
}

static napi_value str_value(napi_env env, const char *s)
{
    napi_value r;
    napi_create_string_utf8(env, s ? s : "", NAPI_AUTO_LENGTH, &r);
    return r;
}

/* A JavaScript value read as bytes: a Buffer / Uint8Array (copied) or a
 * string (UTF-8). *out NULL for null / undefined (an absent argument). The
 * copy is always NUL-terminated. Returns 0, or -1 with a TypeError thrown. */
static int get_bytes(napi_env env, napi_value v, const char *what, char **out,
                     size_t *len)
{
    napi_valuetype t;
    bool is;
    *out = NULL;
    *len = 0;
    napi_typeof(env, v, &t);
    if (t == napi_null || t == napi_undefined) return 0;
    if (t == napi_string) {
        size_t n;
        napi_get_value_string_utf8(env, v, NULL, 0, &n);
        *out = malloc(n + 1);
        if (*out == NULL) goto nomem;
        napi_get_value_string_utf8(env, v, *out, n + 1, &n);
        *len = n;
        return 0;
    }
    napi_is_typedarray(env, v, &is);
    if (is) {
        napi_typedarray_type tt;
        size_t n;
        void *data;
        napi_get_typedarray_info(env, v, &tt, &n, &data, NULL, NULL);
        if (tt != napi_uint8_array && tt != napi_int8_array &&
            tt != napi_uint8_clamped_array)
            goto bad;
        *out = malloc(n + 1);
        if (*out == NULL) goto nomem;
        if (n) memcpy(*out, data, n);
        (*out)[n] = '\0';
        *len = n;
        return 0;
    }
bad: {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "%s: expected a string, a Buffer or a Uint8Array", what);
        napi_throw_type_error(env, "EMQ_EINVAL", msg);
        return -1;
    }
nomem:
    napi_throw_error(env, "EMQ_ENOMEM", "out of memory");
    return -1;
}

/* A required string argument (NUL-free). */
static int get_str(napi_env env, napi_value v, const char *what, char **out)
{
    size_t n;
    if (get_bytes(env, v, what, out, &n) != 0) return -1;
    if (*out == NULL || strlen(*out) != n) {
        char msg[160];
        free(*out);
        *out = NULL;
        snprintf(msg, sizeof msg, "%s: expected a string without NUL", what);
        napi_throw_type_error(env, "EMQ_EINVAL", msg);
        return -1;
    }
    return 0;
}

/* An optional string (null / undefined: NULL). */
static int get_opt_str(napi_env env, napi_value v, const char *what,
                       char **out)
{
    napi_valuetype t;
    napi_typeof(env, v, &t);
    *out = NULL;
    if (t == napi_null || t == napi_undefined) return 0;
    return get_str(env, v, what, out);
}

static int get_i64(napi_env env, napi_value v, const char *what, int64_t *out)
{
    napi_valuetype t;
    napi_typeof(env, v, &t);
    if (t == napi_number) {
        double d;
        napi_get_value_double(env, v, &d);
        if (d == (double)(int64_t)d) {
            *out = (int64_t)d;
            return 0;
        }
    } else if (t == napi_bigint) {
        bool lossless;
        napi_get_value_bigint_int64(env, v, out, &lossless);
        if (lossless) return 0;
    }
    {
        char msg[160];
        snprintf(msg, sizeof msg, "%s: expected an integer", what);
        napi_throw_type_error(env, "EMQ_EINVAL", msg);
    }
    return -1;
}

static int get_args(napi_env env, napi_callback_info info, size_t want,
                    napi_value *argv)
{
    size_t argc = want;
    size_t i;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok)
        return -1;
    for (i = argc; i < want; i++) napi_get_undefined(env, &argv[i]);
    return 0;
}

/* -------------------------------------------------------------- the clock */

/* A fake clock: its time in C, shared by the handles opened on it (each
 * holds a count) and by its JavaScript external. */
typedef struct fclock {
    _Atomic int64_t ms;
    _Atomic int refs;
} fclock;

static int64_t fclock_read(void *ctx)
{
    return atomic_load(&((fclock *)ctx)->ms);
}

static void fclock_unref(fclock *c)
{
    if (c != NULL && atomic_fetch_sub(&c->refs, 1) == 1) free(c);
}

static void fclock_finalize(napi_env env, void *data, void *hint)
{
    (void)env;
    (void)hint;
    fclock_unref(data);
}

static fclock *get_clock(napi_env env, napi_value v)
{
    return tagged(env, v, &TAG_CLOCK);
}

/* clockNew(ms) -> external */
static napi_value js_clock_new(napi_env env, napi_callback_info info)
{
    napi_value argv[1], ext;
    int64_t ms;
    fclock *c;
    if (get_args(env, info, 1, argv) != 0) return throw_last(env);
    if (get_i64(env, argv[0], "clock start", &ms) != 0) return NULL;
    c = malloc(sizeof *c);
    if (c == NULL) return type_error(env, "out of memory");
    atomic_init(&c->ms, ms);
    atomic_init(&c->refs, 1);
    if (napi_create_external(env, c, fclock_finalize, NULL, &ext) != napi_ok) {
        free(c);
        return throw_last(env);
    }
    napi_type_tag_object(env, ext, &TAG_CLOCK);
    return ext;
}

/* clockSet(clock, ms) -> ms ; clockGet(clock) -> ms */
static napi_value js_clock_set(napi_env env, napi_callback_info info)
{
    napi_value argv[2];
    fclock *c;
    int64_t ms;
    if (get_args(env, info, 2, argv) != 0) return throw_last(env);
    if ((c = get_clock(env, argv[0])) == NULL)
        return type_error(env, "clock: expected a FakeClock");
    if (get_i64(env, argv[1], "ms", &ms) != 0) return NULL;
    atomic_store(&c->ms, ms);
    return int64_value(env, ms);
}

static napi_value js_clock_get(napi_env env, napi_callback_info info)
{
    napi_value argv[1];
    fclock *c;
    if (get_args(env, info, 1, argv) != 0) return throw_last(env);
    if ((c = get_clock(env, argv[0])) == NULL)
        return type_error(env, "clock: expected a FakeClock");
    return int64_value(env, atomic_load(&c->ms));
}

/* ------------------------------------------------------------- the handle */

typedef struct subbuf subbuf;

/* One event copied out of a callback, waiting for JavaScript. */
typedef struct evcopy {
    int64_t seq, at_ms;
    char *queue, *name, *job, *message;
    size_t queue_len, name_len, job_len, message_len;
} evcopy;

/* A subscription and the events its callback copied, owned by its handle
 * (the callback may run inside any later call on the handle). */
struct subbuf {
    emq_sub *sub;
    evcopy *ev;
    size_t n, cap;
    int failed;   /* an event could not be copied (out of memory)          */
    subbuf *next;
};

typedef struct nh {
    emq_db *db;           /* NULL once closed                              */
    fclock *clock;
    pthread_mutex_t mu;
    subbuf *subs;
    _Atomic int busy;     /* operations queued or running                  */
} nh;

static void subs_free(nh *h)
{
    subbuf *s = h->subs, *nx;
    for (; s != NULL; s = nx) {
        size_t i;
        nx = s->next;
        for (i = 0; i < s->n; i++) {
            free(s->ev[i].queue);
            free(s->ev[i].name);
            free(s->ev[i].job);
            free(s->ev[i].message);
        }
        free(s->ev);
        free(s);
    }
    h->subs = NULL;
}

static void nh_close(nh *h)
{
    if (h->db != NULL) {
        emq_close(h->db);   /* releases the subscriptions left */
        h->db = NULL;
    }
    subs_free(h);
    fclock_unref(h->clock);
    h->clock = NULL;
}

static void nh_finalize(napi_env env, void *data, void *hint)
{
    nh *h = data;
    (void)env;
    (void)hint;
    /* No operation runs: each holds a reference to the external. */
    nh_close(h);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

static nh *get_handle(napi_env env, napi_value v)
{
    nh *h = tagged(env, v, &TAG_HANDLE);
    if (h == NULL) type_error(env, "handle: expected an emqlite handle");
    return h;
}

/* --------------------------------------------------- asynchronous operations */

/* One job history entry, copied out of the library's callback. */
typedef struct hent {
    int64_t seq, at, attempts, delay, run_at, pid;
    int kind;
    char *queue, *id, *host, *worker, *error;
    size_t error_len;
} hent;

typedef struct op op;
typedef int (*run_fn)(op *o);                     /* on a pool thread   */
typedef napi_value (*done_fn)(napi_env env, op *o); /* main thread, rc>=0 */

#define NS 8
struct op {
    napi_async_work work;
    napi_deferred deferred;
    napi_ref href;
    nh *h;
    run_fn run;
    done_fn done;
    int rc;
    char *err;            /* the handle's message on failure (copied)     */
    /* arguments */
    char *s[NS];
    size_t sl[NS];
    int64_t i[NS];
    char **argv;          /* the generic call's arguments                 */
    size_t *argvlen;
    size_t argc;
    emq_retry_policy pol;
    int has_pol;
    emq_options opts;
    fclock *clock;        /* open: the clock to install                   */
    subbuf *sub;          /* subscription ops                             */
    /* results */
    emq_reply reply;
    emq_job job;
    char *buf;
    size_t len, cap;
    emq_stats stats;
    emq_transfer_summary sum;
    char **names;
    size_t nnames;
    size_t nviol;
    nh *opened;           /* open: the new handle                         */
    size_t delivered;
    hent *hist;           /* history: the entries                         */
    size_t nhist, chist;
};

static void op_free(op *o)
{
    size_t k;
    for (k = 0; k < NS; k++) free(o->s[k]);
    for (k = 0; k < o->argc; k++) free(o->argv[k]);
    free(o->argv);
    free(o->argvlen);
    free(o->err);
    emq_reply_clear(&o->reply);
    emq_job_clear(&o->job);
    free(o->buf);
    fclock_unref(o->clock);  /* an open that failed keeps its count */
    if (o->names) {
        for (k = 0; k < o->nnames; k++) free(o->names[k]);
        free(o->names);
    }
    for (k = 0; k < o->nhist; k++) {
        free(o->hist[k].queue);
        free(o->hist[k].id);
        free(o->hist[k].host);
        free(o->hist[k].worker);
        free(o->hist[k].error);
    }
    free(o->hist);
    free(o);
}

static int run_close(op *o);

static void op_execute(napi_env env, void *data)
{
    op *o = data;
    (void)env;
    if (o->h != NULL) {
        pthread_mutex_lock(&o->h->mu);
        if (o->h->db == NULL && o->run == run_close) {
            o->rc = EMQ_OK;     /* close is idempotent */
        } else if (o->h->db == NULL) {
            o->rc = EMQ_EINVAL;
            o->err = strdup("the database is closed");
        } else {
            o->rc = o->run(o);
            if (o->rc < 0 && o->err == NULL)
                o->err = strdup(emq_errmsg(o->h->db));
        }
        pthread_mutex_unlock(&o->h->mu);
    } else {
        o->rc = o->run(o);
    }
}

static void op_complete(napi_env env, napi_status status, void *data)
{
    op *o = data;
    napi_value v = NULL;
    if (o->h != NULL) atomic_fetch_sub(&o->h->busy, 1);
    if (status != napi_ok) {
        napi_reject_deferred(env, o->deferred,
                             make_error(env, EMQ_EINTERNAL,
                                        "the operation was cancelled"));
    } else if (o->rc < 0) {
        napi_reject_deferred(env, o->deferred,
                             make_error(env, o->rc, o->err));
    } else {
        v = o->done ? o->done(env, o) : undefined(env);
        if (v == NULL) {
            napi_value exc;
            bool pending = false;
            napi_is_exception_pending(env, &pending);
            if (pending) {
                napi_get_and_clear_last_exception(env, &exc);
                napi_reject_deferred(env, o->deferred, exc);
            } else {
                napi_reject_deferred(env, o->deferred,
                                     make_error(env, EMQ_ENOMEM,
                                                "out of memory"));
            }
        } else {
            napi_resolve_deferred(env, o->deferred, v);
        }
    }
    if (o->href) napi_delete_reference(env, o->href);
    napi_delete_async_work(env, o->work);
    op_free(o);
}

static op *op_new(void)
{
    op *o = calloc(1, sizeof *o);
    return o;
}

/* Queue `o` on the pool; `hv` the handle's external (NULL for open).
 * Returns the Promise; on failure frees `o` and throws. */
static napi_value op_start(napi_env env, op *o, napi_value hv, run_fn run,
                           done_fn done)
{
    napi_value promise, name;
    o->run = run;
    o->done = done;
    if (hv != NULL) {
        if (napi_create_reference(env, hv, 1, &o->href) != napi_ok) {
            op_free(o);
            return throw_last(env);
        }
    }
    napi_create_string_utf8(env, "emqlite", NAPI_AUTO_LENGTH, &name);
    if (napi_create_promise(env, &o->deferred, &promise) != napi_ok ||
        napi_create_async_work(env, NULL, name, op_execute, op_complete, o,
                               &o->work) != napi_ok) {
        if (o->href) napi_delete_reference(env, o->href);
        op_free(o);
        return throw_last(env);
    }
    if (o->h != NULL) atomic_fetch_add(&o->h->busy, 1);
    if (napi_queue_async_work(env, o->work) != napi_ok) {
        if (o->h != NULL) atomic_fetch_sub(&o->h->busy, 1);
        napi_delete_async_work(env, o->work);
        if (o->href) napi_delete_reference(env, o->href);
        op_free(o);
        return throw_last(env);
    }
    return promise;
}

/* The common prologue: an op on the handle argv[0]. */
static op *op_for(napi_env env, napi_value hv)
{
    nh *h = get_handle(env, hv);
    op *o;
    if (h == NULL) return NULL;
    o = op_new();
    if (o == NULL) {
        napi_throw_error(env, "EMQ_ENOMEM", "out of memory");
        return NULL;
    }
    o->h = h;
    return o;
}

/* ---------------------------------------------------------------- open/close */

static int run_open(op *o)
{
    emq_db *db = NULL;
    char err[512] = "";
    nh *h;
    int rc;
    if (o->clock != NULL) {
        o->opts.clock = fclock_read;
        o->opts.clock_ctx = o->clock;
    }
    rc = emq_open_ex(o->s[0], &o->opts, &db, err, sizeof err);
    if (rc != EMQ_OK) {
        o->err = strdup(err);
        return rc;
    }
    h = calloc(1, sizeof *h);
    if (h == NULL) {
        emq_close(db);
        return EMQ_ENOMEM;
    }
    pthread_mutex_init(&h->mu, NULL);
    h->db = db;
    h->clock = o->clock;   /* the count taken at the call moves here */
    o->clock = NULL;
    o->opened = h;
    return EMQ_OK;
}

static napi_value done_open(napi_env env, op *o)
{
    napi_value ext;
    if (napi_create_external(env, o->opened, nh_finalize, NULL, &ext) !=
        napi_ok) {
        nh_finalize(env, o->opened, NULL);
        o->opened = NULL;
        return NULL;
    }
    o->opened = NULL;
    napi_type_tag_object(env, ext, &TAG_HANDLE);
    return ext;
}

static int get_opt_int(napi_env env, napi_value obj, const char *k,
                       int64_t *out, int *present)
{
    napi_value v;
    napi_valuetype t;
    *present = 0;
    if (napi_get_named_property(env, obj, k, &v) != napi_ok) return -1;
    napi_typeof(env, v, &t);
    if (t == napi_undefined || t == napi_null) return 0;
    *present = 1;
    return get_i64(env, v, k, out);
}

/* open(path, {synchronous, busyTimeoutMs, nodeId, readonly, exclusive,
 *             maxPayload, checkpointFrames, checksums, pageSize},
 *      clock | null) -> Promise<handle> */
static napi_value js_open(napi_env env, napi_callback_info info)
{
    napi_value argv[3];
    op *o;
    napi_valuetype t;
    static const char *const keys[] = {
        "synchronous", "busyTimeoutMs", "nodeId", "readonly", "exclusive",
        "maxPayload", "checkpointFrames", "checksums", "pageSize"};
    size_t k;
    if (get_args(env, info, 3, argv) != 0) return throw_last(env);
    o = op_new();
    if (o == NULL) return type_error(env, "out of memory");
    if (get_str(env, argv[0], "path", &o->s[0]) != 0) goto fail;
    emq_options_init(&o->opts);
    napi_typeof(env, argv[1], &t);
    if (t == napi_object) {
        for (k = 0; k < sizeof keys / sizeof *keys; k++) {
            int64_t v;
            int present;
            if (get_opt_int(env, argv[1], keys[k], &v, &present) != 0)
                goto fail;
            if (!present) continue;
            switch (k) {
            case 0: o->opts.synchronous = (int)v; break;
            case 1: o->opts.busy_timeout_ms = (int)v; break;
            case 2: o->opts.node_id = (int)v; break;
            case 3: o->opts.readonly = (int)v; break;
            case 4: o->opts.exclusive = (int)v; break;
            case 5: o->opts.max_payload = (uint64_t)v; break;
            case 6: o->opts.checkpoint_frames = (int)v; break;
            case 7: o->opts.checksums = (int)v; break;
            case 8: o->opts.page_size = (int)v; break;
            }
        }
    }
    napi_typeof(env, argv[2], &t);
    if (t != napi_null && t != napi_undefined) {
        o->clock = get_clock(env, argv[2]);
        if (o->clock == NULL) {
            type_error(env, "clock: expected a FakeClock or null");
            goto fail;
        }
        atomic_fetch_add(&o->clock->refs, 1);
    }
    {
        napi_value p = op_start(env, o, NULL, run_open, done_open);
        return p;
    }
fail:
    op_free(o);
    return NULL;
}

static int run_close(op *o)
{
    nh_close(o->h);
    return EMQ_OK;
}

/* close(handle) -> Promise<undefined> (idempotent) */
static napi_value js_close(napi_env env, napi_callback_info info)
{
    napi_value argv[1];
    op *o;
    if (get_args(env, info, 1, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    return op_start(env, o, argv[0], run_close, NULL);
}

/* interrupt(handle): a waiting claim in flight returns empty promptly. */
static napi_value js_interrupt(napi_env env, napi_callback_info info)
{
    napi_value argv[1];
    nh *h;
    if (get_args(env, info, 1, argv) != 0) return throw_last(env);
    if ((h = get_handle(env, argv[0])) == NULL) return NULL;
    if (h->db != NULL) emq_claim_wait_interrupt(h->db);
    return undefined(env);
}

/* nodeId(handle) */
static napi_value js_node_id(napi_env env, napi_callback_info info)
{
    napi_value argv[1], r;
    nh *h;
    if (get_args(env, info, 1, argv) != 0) return throw_last(env);
    if ((h = get_handle(env, argv[0])) == NULL) return NULL;
    napi_create_int32(env, h->db ? emq_node_id(h->db) : -1, &r);
    return r;
}

/* ------------------------------------------------------------ the verb call */

static napi_value reply_value(napi_env env, const emq_reply *r)
{
    napi_value v, e;
    size_t k;
    switch (r->type) {
    case EMQ_REPLY_NIL:
        return null_value(env);
    case EMQ_REPLY_INT:
        return int64_value(env, r->integer);
    case EMQ_REPLY_BOOL:
        napi_get_boolean(env, r->integer != 0, &v);
        return v;
    case EMQ_REPLY_BULK:
        return bytes_value(env, r->str, r->len);
    case EMQ_REPLY_STATUS:
        napi_create_string_utf8(env, r->str ? r->str : "", r->len, &v);
        return v;
    case EMQ_REPLY_ERROR:
    case EMQ_REPLY_REFUSED: {
        char *m = malloc(r->len + 1);
        if (m == NULL) return NULL;
        memcpy(m, r->str ? r->str : "", r->len);
        m[r->len] = '\0';
        v = make_error(env, r->type == EMQ_REPLY_ERROR ? EMQ_EENGINE
                                                        : EMQ_EREFUSED, m);
        free(m);
        return v;
    }
    case EMQ_REPLY_ARRAY:
        napi_create_array_with_length(env, r->n, &v);
        for (k = 0; k < r->n; k++) {
            if ((e = reply_value(env, &r->elem[k])) == NULL) return NULL;
            napi_set_element(env, v, (uint32_t)k, e);
        }
        return v;
    case EMQ_REPLY_MAP:
        napi_create_object(env, &v);
        for (k = 0; k + 1 < r->n; k += 2) {
            napi_value key;
            const emq_reply *kr = &r->elem[k];
            if (kr->type == EMQ_REPLY_INT) {
                key = int64_value(env, kr->integer);
                napi_coerce_to_string(env, key, &key);
            } else {
                napi_create_string_utf8(env, kr->str ? kr->str : "", kr->len,
                                        &key);
            }
            if ((e = reply_value(env, &r->elem[k + 1])) == NULL) return NULL;
            napi_set_property(env, v, key, e);
        }
        return v;
    default:
        return make_error(env, EMQ_EINTERNAL, "unknown reply type");
    }
}

static int run_call(op *o)
{
    return emq_call(o->h->db, o->s[0], o->argc, (const char *const *)o->argv,
                    o->argvlen, &o->reply);
}

static napi_value done_call(napi_env env, op *o)
{
    return reply_value(env, &o->reply);
}

/* call(handle, verb, [args]) -> Promise<reply>; each argument a string, a
 * Buffer / Uint8Array, or null / undefined (absent). */
static napi_value js_call(napi_env env, napi_callback_info info)
{
    napi_value argv[3];
    op *o;
    uint32_t n, k;
    bool isarr;
    if (get_args(env, info, 3, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    if (get_str(env, argv[1], "verb", &o->s[0]) != 0) goto fail;
    napi_is_array(env, argv[2], &isarr);
    if (!isarr) {
        type_error(env, "args: expected an array");
        goto fail;
    }
    napi_get_array_length(env, argv[2], &n);
    o->argv = calloc(n ? n : 1, sizeof *o->argv);
    o->argvlen = calloc(n ? n : 1, sizeof *o->argvlen);
    if (o->argv == NULL || o->argvlen == NULL) {
        napi_throw_error(env, "EMQ_ENOMEM", "out of memory");
        goto fail;
    }
    o->argc = n;
    for (k = 0; k < n; k++) {
        napi_value e;
        char what[48];
        napi_get_element(env, argv[2], k, &e);
        snprintf(what, sizeof what, "argument %u", (unsigned)k + 1);
        if (get_bytes(env, e, what, &o->argv[k], &o->argvlen[k]) != 0)
            goto fail;
    }
    return op_start(env, o, argv[0], run_call, done_call);
fail:
    op_free(o);
    return NULL;
}

static int run_mint_call(op *o)
{
    char id[EMQ_ID_SIZE];
    int rc = emq_mint(o->h->db, o->s[1], id);
    size_t k = (size_t)o->i[0];
    if (rc != EMQ_OK) return rc;
    o->s[2] = malloc(EMQ_ID_SIZE);
    if (o->s[2] == NULL) return EMQ_ENOMEM;
    memcpy(o->s[2], id, EMQ_ID_SIZE);
    if (o->s[0] == NULL) return EMQ_OK;      /* mint only */
    if (k < o->argc) {
        free(o->argv[k]);
        o->argv[k] = strdup(id);
        if (o->argv[k] == NULL) return EMQ_ENOMEM;
        o->argvlen[k] = EMQ_ID_LEN;
    }
    return emq_call(o->h->db, o->s[0], o->argc, (const char *const *)o->argv,
                    o->argvlen, &o->reply);
}

static napi_value done_mint_call(napi_env env, op *o)
{
    napi_value r, v;
    if (o->s[0] == NULL) return str_value(env, o->s[2]);
    napi_create_array_with_length(env, 2, &r);
    napi_set_element(env, r, 0, str_value(env, o->s[2]));
    if ((v = reply_value(env, &o->reply)) == NULL) return NULL;
    napi_set_element(env, r, 1, v);
    return r;
}

/* mintCall(handle, ns, verb | null, [args], index) -> Promise<[id, reply]>
 * (verb null: Promise<id>): mint a branded id in namespace ns and run the
 * verb with it as argument `index`, in one trip to the pool. The id is
 * minted (and reserved) even when the verb then fails. */
static napi_value js_mint_call(napi_env env, napi_callback_info info)
{
    napi_value argv[5];
    op *o;
    uint32_t n = 0, k;
    bool isarr = false;
    if (get_args(env, info, 5, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    if (get_str(env, argv[1], "namespace", &o->s[1]) != 0 ||
        get_opt_str(env, argv[2], "verb", &o->s[0]) != 0)
        goto fail;
    if (o->s[0] != NULL) {
        if (get_i64(env, argv[4], "index", &o->i[0]) != 0) goto fail;
        napi_is_array(env, argv[3], &isarr);
        if (!isarr) {
            type_error(env, "args: expected an array");
            goto fail;
        }
        napi_get_array_length(env, argv[3], &n);
    }
    o->argv = calloc(n ? n : 1, sizeof *o->argv);
    o->argvlen = calloc(n ? n : 1, sizeof *o->argvlen);
    if (o->argv == NULL || o->argvlen == NULL) {
        napi_throw_error(env, "EMQ_ENOMEM", "out of memory");
        goto fail;
    }
    o->argc = n;
    for (k = 0; k < n; k++) {
        napi_value e;
        char what[48];
        napi_get_element(env, argv[3], k, &e);
        snprintf(what, sizeof what, "argument %u", (unsigned)k + 1);
        if (get_bytes(env, e, what, &o->argv[k], &o->argvlen[k]) != 0)
            goto fail;
    }
    return op_start(env, o, argv[0], run_mint_call, done_mint_call);
fail:
    op_free(o);
    return NULL;
}

/* verbs() -> [{id, name, tier, kind, args: [{name, kind, optional, rest,
 *             words}], reply, keys, summary}] (synchronous: no file) */
static napi_value js_verbs(napi_env env, napi_callback_info info)
{
    static const char *const kinds[] = {"", "write", "read", "procedure",
                                        "host"};
    static const char *const akinds[] = {"", "queue", "id", "group", "bytes",
                                         "int", "pos", "nneg", "bool", "word",
                                         "did", "name"};
    napi_value arr;
    size_t i, n = emq_verb_count();
    (void)info;
    NAPI(napi_create_array_with_length(env, n, &arr));
    for (i = 0; i < n; i++) {
        const emq_verb_info *vi = emq_verb_at(i);
        napi_value o, args, v;
        size_t k;
        napi_create_object(env, &o);
        napi_create_int32(env, vi->id, &v);
        set_prop(env, o, "id", v);
        set_prop(env, o, "name", str_value(env, vi->name));
        napi_create_int32(env, vi->tier, &v);
        set_prop(env, o, "tier", v);
        set_prop(env, o, "kind",
                 str_value(env, vi->kind >= 1 && vi->kind <= 4
                                    ? kinds[vi->kind] : "?"));
        napi_create_array_with_length(env, vi->nargs, &args);
        for (k = 0; k < vi->nargs; k++) {
            const emq_arg_info *a = &vi->args[k];
            napi_value ao;
            napi_create_object(env, &ao);
            set_prop(env, ao, "name", str_value(env, a->name));
            set_prop(env, ao, "kind",
                     str_value(env, a->kind >= 1 && a->kind <= 11
                                        ? akinds[a->kind] : "?"));
            napi_get_boolean(env, (a->flags & EMQ_ARGF_OPT) != 0, &v);
            set_prop(env, ao, "optional", v);
            napi_get_boolean(env, (a->flags & EMQ_ARGF_REST) != 0, &v);
            set_prop(env, ao, "rest", v);
            set_prop(env, ao, "words",
                     a->words ? str_value(env, a->words) : null_value(env));
            napi_set_element(env, args, (uint32_t)k, ao);
        }
        set_prop(env, o, "args", args);
        napi_create_int32(env, vi->reply, &v);
        set_prop(env, o, "reply", v);
        set_prop(env, o, "keys", str_value(env, vi->keys));
        set_prop(env, o, "summary", str_value(env, vi->summary));
        napi_set_element(env, arr, (uint32_t)i, o);
    }
    return arr;
}

/* ------------------------------------------------------- the waiting claim */

static int run_claim_wait(op *o)
{
    return emq_claim_wait(o->h->db, o->s[0], o->i[0], o->i[1], &o->job);
}

static napi_value job_value(napi_env env, const emq_job *j)
{
    napi_value r;
    napi_create_array_with_length(env, 3, &r);
    napi_set_element(env, r, 0, str_value(env, j->id));
    napi_set_element(env, r, 1, int64_value(env, j->attempts));
    napi_set_element(env, r, 2,
                     bytes_value(env, j->payload, j->payload ? j->payload_len
                                                             : 0));
    return r;
}

static napi_value done_claim_wait(napi_env env, op *o)
{
    if (o->rc == EMQ_EMPTY) return null_value(env);
    return job_value(env, &o->job);
}

/* claimWait(handle, q, leaseMs, timeoutMs) -> Promise<[id, attempts,
 * payload] | null> */
static napi_value js_claim_wait(napi_env env, napi_callback_info info)
{
    napi_value argv[4];
    op *o;
    if (get_args(env, info, 4, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    if (get_str(env, argv[1], "queue", &o->s[0]) != 0 ||
        get_i64(env, argv[2], "leaseMs", &o->i[0]) != 0 ||
        get_i64(env, argv[3], "timeoutMs", &o->i[1]) != 0) {
        op_free(o);
        return NULL;
    }
    return op_start(env, o, argv[0], run_claim_wait, done_claim_wait);
}

/* ---------------------------------------------------------------- policies */

/* A policy from {maxAttempts, backoff: "fixed:MS" | "exponential:B:C" |
 * "jitter:..."}. */
static int get_policy(napi_env env, napi_value v, emq_retry_policy *p)
{
    napi_value b;
    char *spec = NULL;
    int present, rc;
    memset(p, 0, sizeof *p);
    if (get_opt_int(env, v, "maxAttempts", &p->max_attempts, &present) != 0)
        return -1;
    if (!present) {
        type_error(env, "policy.maxAttempts: expected an integer > 0");
        return -1;
    }
    napi_get_named_property(env, v, "backoff", &b);
    if (get_str(env, b, "policy.backoff", &spec) != 0) return -1;
    rc = emq_backoff_parse(spec, &p->backoff);
    if (rc != EMQ_OK) {
        char msg[300];
        snprintf(msg, sizeof msg,
                 "policy.backoff: \"%.200s\" is not fixed:MS, "
                 "exponential:BASE:CAP or jitter:POLICY", spec);
        free(spec);
        napi_throw_range_error(env, "EMQ_EINVAL", msg);
        return -1;
    }
    free(spec);
    return 0;
}

static int run_policy_set(op *o)
{
    return emq_policy_set(o->h->db, o->s[0], o->s[1],
                          o->has_pol ? &o->pol : NULL);
}

/* policySet(handle, q, id | null, policy | null) -> Promise<undefined> */
static napi_value js_policy_set(napi_env env, napi_callback_info info)
{
    napi_value argv[4];
    napi_valuetype t;
    op *o;
    if (get_args(env, info, 4, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    if (get_str(env, argv[1], "queue", &o->s[0]) != 0 ||
        get_opt_str(env, argv[2], "id", &o->s[1]) != 0)
        goto fail;
    napi_typeof(env, argv[3], &t);
    if (t == napi_object) {
        if (get_policy(env, argv[3], &o->pol) != 0) goto fail;
        o->has_pol = 1;
    }
    return op_start(env, o, argv[0], run_policy_set, NULL);
fail:
    op_free(o);
    return NULL;
}

static int run_policy_get(op *o)
{
    return emq_policy_get(o->h->db, o->s[0], o->s[1], &o->pol);
}

static napi_value done_policy_get(napi_env env, op *o)
{
    napi_value r;
    char spec[200];
    if (o->rc == EMQ_ABSENT) return null_value(env);
    napi_create_object(env, &r);
    set_prop(env, r, "maxAttempts", int64_value(env, o->pol.max_attempts));
    if (emq_backoff_format(&o->pol.backoff, spec, sizeof spec) == 0)
        spec[0] = '\0';
    set_prop(env, r, "backoff", str_value(env, spec));
    return r;
}

/* policyGet(handle, q, id | null) -> Promise<{maxAttempts, backoff}|null> */
static napi_value js_policy_get(napi_env env, napi_callback_info info)
{
    napi_value argv[3];
    op *o;
    if (get_args(env, info, 3, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    if (get_str(env, argv[1], "queue", &o->s[0]) != 0 ||
        get_opt_str(env, argv[2], "id", &o->s[1]) != 0) {
        op_free(o);
        return NULL;
    }
    return op_start(env, o, argv[0], run_policy_get, done_policy_get);
}

static int run_retry_policy(op *o)
{
    return emq_policy_retry(o->h->db, o->s[0], o->s[1], o->i[0], o->s[2],
                            o->sl[2], o->has_pol ? &o->pol : NULL);
}

static napi_value done_retry_policy(napi_env env, op *o)
{
    return str_value(env, o->rc == EMQ_DEAD ? "dead" : "scheduled");
}

/* retryByPolicy(handle, q, id, token, error, fallback | null) ->
 * Promise<"scheduled" | "dead"> */
static napi_value js_retry_policy(napi_env env, napi_callback_info info)
{
    napi_value argv[6];
    napi_valuetype t;
    op *o;
    if (get_args(env, info, 6, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    if (get_str(env, argv[1], "queue", &o->s[0]) != 0 ||
        get_str(env, argv[2], "id", &o->s[1]) != 0 ||
        get_i64(env, argv[3], "token", &o->i[0]) != 0 ||
        get_bytes(env, argv[4], "error", &o->s[2], &o->sl[2]) != 0)
        goto fail;
    napi_typeof(env, argv[5], &t);
    if (t == napi_object) {
        if (get_policy(env, argv[5], &o->pol) != 0) goto fail;
        o->has_pol = 1;
    }
    return op_start(env, o, argv[0], run_retry_policy, done_retry_policy);
fail:
    op_free(o);
    return NULL;
}

/* ------------------------------------------------- export, import, digest */

static int sink(void *ctx, const void *p, size_t n)
{
    op *o = ctx;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 65536;
        char *nb;
        while (cap < o->len + n) cap *= 2;
        nb = realloc(o->buf, cap);
        if (nb == NULL) return 1;
        o->buf = nb;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
    return 0;
}

static void export_opts(op *o, emq_export_options *eo)
{
    emq_export_options_init(eo);
    eo->queues = (const char *const *)o->argv;
    eo->n_queues = o->argc;
    if (o->argc == 0 && o->i[1] == 0) eo->queues = NULL;
    eo->by_slot = (int)o->i[0];
}

static int run_export(op *o)
{
    emq_export_options eo;
    export_opts(o, &eo);
    return emq_export(o->h->db, &eo, sink, o, &o->sum);
}

static napi_value summary_value(napi_env env, const emq_transfer_summary *s)
{
    napi_value r;
    char hex[17];
    napi_create_object(env, &r);
    set_prop(env, r, "keys", int64_value(env, (int64_t)s->keys));
    set_prop(env, r, "commands", int64_value(env, (int64_t)s->commands));
    set_prop(env, r, "bytes", int64_value(env, (int64_t)s->bytes));
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)s->digest);
    set_prop(env, r, "digest", str_value(env, hex));
    return r;
}

static napi_value done_export(napi_env env, op *o)
{
    napi_value r = bytes_value(env, o->buf, o->len);
    if (r == NULL) return NULL;
    return r;
}

/* The queue filter: argv[k] an array of names or null. */
static int get_queue_filter(napi_env env, napi_value v, op *o)
{
    bool isarr;
    uint32_t n, k;
    napi_is_array(env, v, &isarr);
    if (!isarr) return 0;
    napi_get_array_length(env, v, &n);
    o->argv = calloc(n ? n : 1, sizeof *o->argv);
    if (o->argv == NULL) {
        napi_throw_error(env, "EMQ_ENOMEM", "out of memory");
        return -1;
    }
    o->i[1] = 1;  /* a filter, even an empty one */
    for (k = 0; k < n; k++) {
        napi_value e;
        napi_get_element(env, v, k, &e);
        if (get_str(env, e, "queues[]", &o->argv[k]) != 0) return -1;
        o->argc = k + 1;
    }
    return 0;
}

/* exportDb(handle, queues | null, bySlot) -> Promise<Buffer> */
static napi_value js_export(napi_env env, napi_callback_info info)
{
    napi_value argv[3];
    bool by = false;
    op *o;
    if (get_args(env, info, 3, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    if (get_queue_filter(env, argv[1], o) != 0) {
        op_free(o);
        return NULL;
    }
    napi_get_value_bool(env, argv[2], &by);
    o->i[0] = by ? 1 : 0;
    return op_start(env, o, argv[0], run_export, done_export);
}

static int run_digest(op *o)
{
    emq_export_options eo;
    export_opts(o, &eo);
    return emq_digest(o->h->db, &eo, &o->sum);
}

static napi_value done_summary(napi_env env, op *o)
{
    return summary_value(env, &o->sum);
}

/* digest(handle, queues | null) -> Promise<summary> */
static napi_value js_digest(napi_env env, napi_callback_info info)
{
    napi_value argv[2];
    op *o;
    if (get_args(env, info, 2, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    if (get_queue_filter(env, argv[1], o) != 0) {
        op_free(o);
        return NULL;
    }
    return op_start(env, o, argv[0], run_digest, done_summary);
}

static int run_import(op *o)
{
    return emq_import(o->h->db, o->s[0], o->sl[0], &o->sum);
}

/* importDb(handle, bytes) -> Promise<summary> */
static napi_value js_import(napi_env env, napi_callback_info info)
{
    napi_value argv[2];
    op *o;
    if (get_args(env, info, 2, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    if (get_bytes(env, argv[1], "data", &o->s[0], &o->sl[0]) != 0 ||
        o->s[0] == NULL) {
        if (!o->s[0]) type_error(env, "data: expected a Buffer");
        op_free(o);
        return NULL;
    }
    return op_start(env, o, argv[0], run_import, done_summary);
}

/* ------------------------------------------------- check, stats, queues */

static void check_cb(void *ctx, const emq_finding *f)
{
    op *o = ctx;
    char line[1200];
    int n = snprintf(line, sizeof line, "%s\t%s\t%s\t%s",
                     f->severity == EMQ_CHECK_VIOLATION ? "violation"
                                                        : "note",
                     f->code, f->key, f->message);
    if (n < 0) return;
    if ((size_t)n >= sizeof line) n = sizeof line - 1;
    if (o->nnames % 16 == 0) {
        char **nn = realloc(o->names, (o->nnames + 16) * sizeof *nn);
        if (nn == NULL) return;
        o->names = nn;
    }
    o->names[o->nnames] = strdup(line);
    if (o->names[o->nnames] != NULL) o->nnames++;
}

static int run_check(op *o)
{
    int rc = emq_check(o->h->db, check_cb, o, &o->nviol);
    return rc == EMQ_ECORRUPT ? EMQ_OK : rc;
}

static napi_value done_check(napi_env env, op *o)
{
    napi_value r, arr;
    size_t k;
    napi_create_object(env, &r);
    set_prop(env, r, "violations", int64_value(env, (int64_t)o->nviol));
    napi_create_array_with_length(env, o->nnames, &arr);
    for (k = 0; k < o->nnames; k++) {
        napi_value f;
        char *p[4], *s = o->names[k];
        int j;
        napi_create_object(env, &f);
        for (j = 0; j < 4; j++) {
            p[j] = s;
            s = j < 3 && s ? strchr(s, '\t') : NULL;
            if (s) *s++ = '\0';
        }
        set_prop(env, f, "severity", str_value(env, p[0]));
        set_prop(env, f, "code", str_value(env, p[1]));
        set_prop(env, f, "key", str_value(env, p[2]));
        set_prop(env, f, "message", str_value(env, p[3]));
        napi_set_element(env, arr, (uint32_t)k, f);
    }
    set_prop(env, r, "findings", arr);
    return r;
}

/* check(handle) -> Promise<{violations, findings}> */
static napi_value js_check(napi_env env, napi_callback_info info)
{
    napi_value argv[1];
    op *o;
    if (get_args(env, info, 1, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    return op_start(env, o, argv[0], run_check, done_check);
}

static int run_stats(op *o)
{
    return emq_stats_get(o->h->db, o->s[0], &o->stats);
}

static napi_value done_stats(napi_env env, op *o)
{
    napi_value r, b;
    napi_create_object(env, &r);
    set_prop(env, r, "pending", int64_value(env, o->stats.pending));
    set_prop(env, r, "active", int64_value(env, o->stats.active));
    set_prop(env, r, "scheduled", int64_value(env, o->stats.scheduled));
    set_prop(env, r, "dead", int64_value(env, o->stats.dead));
    set_prop(env, r, "completed", int64_value(env, o->stats.completed));
    set_prop(env, r, "failed", int64_value(env, o->stats.failed));
    napi_get_boolean(env, o->stats.paused != 0, &b);
    set_prop(env, r, "paused", b);
    return r;
}

/* stats(handle, q) -> Promise<stats> */
static napi_value js_stats(napi_env env, napi_callback_info info)
{
    napi_value argv[2];
    op *o;
    if (get_args(env, info, 2, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    if (get_str(env, argv[1], "queue", &o->s[0]) != 0) {
        op_free(o);
        return NULL;
    }
    return op_start(env, o, argv[0], run_stats, done_stats);
}

static int run_queues(op *o)
{
    return emq_queues(o->h->db, &o->names, &o->nnames);
}

static napi_value done_names(napi_env env, op *o)
{
    napi_value arr;
    size_t k;
    napi_create_array_with_length(env, o->nnames, &arr);
    for (k = 0; k < o->nnames; k++)
        napi_set_element(env, arr, (uint32_t)k, str_value(env, o->names[k]));
    return arr;
}

/* queues(handle) -> Promise<string[]> */
static napi_value js_queues(napi_env env, napi_callback_info info)
{
    napi_value argv[1];
    op *o;
    if (get_args(env, info, 1, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    return op_start(env, o, argv[0], run_queues, done_names);
}

/* ------------------------------------------------------- job history */

/* A NUL-terminated copy of p[0..n) (NULL for NULL); *failed on ENOMEM. */
static char *dup_or_null(const void *p, size_t n, int *failed)
{
    char *d;
    if (p == NULL) return NULL;
    if ((d = malloc(n + 1)) == NULL) {
        *failed = 1;
        return NULL;
    }
    memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

static char *dup_str(const char *s, int *failed)
{
    return s ? dup_or_null(s, strlen(s), failed) : NULL;
}

static int hist_cb(void *ctx, const emq_history_entry *e)
{
    op *o = ctx;
    hent *h;
    int failed = 0;
    if (o->nhist == o->chist) {
        size_t c = o->chist ? 2 * o->chist : 16;
        hent *n = realloc(o->hist, c * sizeof *n);
        if (n == NULL) return EMQ_ENOMEM;
        o->hist = n;
        o->chist = c;
    }
    h = &o->hist[o->nhist];
    memset(h, 0, sizeof *h);
    o->nhist++; /* op_free frees what was copied, also on a failure */
    h->seq = e->seq;
    h->at = e->at_ms;
    h->attempts = e->attempts;
    h->delay = e->delay_ms;
    h->run_at = e->run_at_ms;
    h->pid = e->pid;
    h->kind = e->kind;
    h->queue = dup_str(e->queue, &failed);
    h->id = dup_str(e->id, &failed);
    h->host = dup_str(e->host, &failed);
    h->worker = dup_str(e->worker, &failed);
    h->error = dup_or_null(e->error, e->error_len, &failed);
    h->error_len = e->error_len;
    return failed ? EMQ_ENOMEM : 0;
}

static int run_history(op *o)
{
    return emq_job_history(o->h->db, o->s[0], o->s[1], hist_cb, o);
}

static napi_value num_or_null(napi_env env, int64_t v)
{
    return v >= 0 ? int64_value(env, v) : null_value(env);
}

static napi_value done_history(napi_env env, op *o)
{
    napi_value arr;
    size_t k;
    napi_create_array_with_length(env, o->nhist, &arr);
    for (k = 0; k < o->nhist; k++) {
        const hent *h = &o->hist[k];
        const char *kind = emq_history_kind_name(h->kind);
        napi_value e;
        napi_create_object(env, &e);
        set_prop(env, e, "seq", int64_value(env, h->seq));
        set_prop(env, e, "at", int64_value(env, h->at));
        set_prop(env, e, "kind", str_value(env, kind ? kind : "?"));
        set_prop(env, e, "queue", str_value(env, h->queue));
        set_prop(env, e, "job", str_value(env, h->id));
        set_prop(env, e, "attempts", num_or_null(env, h->attempts));
        set_prop(env, e, "delay", num_or_null(env, h->delay));
        set_prop(env, e, "runAt", num_or_null(env, h->run_at));
        set_prop(env, e, "error", h->error ? bytes_value(env, h->error,
                                                         h->error_len)
                                           : null_value(env));
        set_prop(env, e, "host", h->host ? str_value(env, h->host)
                                         : null_value(env));
        set_prop(env, e, "pid", num_or_null(env, h->pid));
        set_prop(env, e, "worker", h->worker ? str_value(env, h->worker)
                                             : null_value(env));
        napi_set_element(env, arr, (uint32_t)k, e);
    }
    return arr;
}

/* history(handle, queue|null, id) -> Promise<entry[]> */
static napi_value js_history(napi_env env, napi_callback_info info)
{
    napi_value argv[3];
    op *o;
    if (get_args(env, info, 3, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    if (get_opt_str(env, argv[1], "queue", &o->s[0]) != 0 ||
        get_str(env, argv[2], "id", &o->s[1]) != 0) {
        op_free(o);
        return NULL;
    }
    return op_start(env, o, argv[0], run_history, done_history);
}

/* The history level: o->i[0] in and out (-1: read it). */
static int run_hlevel(op *o)
{
    emq_history_config c;
    int rc = emq_history_config_get(o->h->db, &c);
    if (rc < 0) return rc;
    if (o->i[0] < 0) {
        o->i[0] = c.enabled;
        return rc;
    }
    c.enabled = (int)o->i[0];
    return emq_history_config_set(o->h->db, &c);
}

static napi_value done_hlevel(napi_env env, op *o)
{
    return int64_value(env, o->i[0]);
}

/* historyLevel(handle, level|-1) -> Promise<level> */
static napi_value js_hlevel(napi_env env, napi_callback_info info)
{
    napi_value argv[2];
    op *o;
    if (get_args(env, info, 2, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    if (get_i64(env, argv[1], "level", &o->i[0]) != 0) {
        op_free(o);
        return NULL;
    }
    return op_start(env, o, argv[0], run_hlevel, done_hlevel);
}

static int run_checkpoint(op *o)
{
    return emq_checkpoint(o->h->db);
}

/* checkpoint(handle) -> Promise<undefined> */
static napi_value js_checkpoint(napi_env env, napi_callback_info info)
{
    napi_value argv[1];
    op *o;
    if (get_args(env, info, 1, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    return op_start(env, o, argv[0], run_checkpoint, NULL);
}

/* ------------------------------------------------------------ subscriptions */

static char *dupn(const char *p, size_t n)
{
    char *r = malloc(n + 1);
    if (r == NULL) return NULL;
    if (n) memcpy(r, p, n);
    r[n] = '\0';
    return r;
}

static void sub_cb(void *ctx, const emq_event *ev)
{
    subbuf *s = ctx;
    evcopy *e;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        evcopy *ne = realloc(s->ev, cap * sizeof *ne);
        if (ne == NULL) {
            s->failed = 1;
            return;
        }
        s->ev = ne;
        s->cap = cap;
    }
    e = &s->ev[s->n];
    e->seq = ev->seq;
    e->at_ms = ev->at_ms;
    e->queue = dupn(ev->queue, ev->queue_len);
    e->name = dupn(ev->name, ev->name_len);
    e->job = dupn(ev->job, ev->job_len);
    e->message = dupn(ev->message, ev->message_len);
    e->queue_len = ev->queue_len;
    e->name_len = ev->name_len;
    e->job_len = ev->job_len;
    e->message_len = ev->message_len;
    if (!e->queue || !e->name || !e->job || !e->message) {
        free(e->queue);
        free(e->name);
        free(e->job);
        free(e->message);
        s->failed = 1;
        return;
    }
    s->n++;
}

typedef struct subref {
    nh *h;
    subbuf *s;
} subref;

static void subref_finalize(napi_env env, void *data, void *hint)
{
    (void)env;
    (void)hint;
    free(data);  /* the subscription itself belongs to the handle */
}

static int run_subscribe(op *o)
{
    subbuf *s = calloc(1, sizeof *s);
    int rc;
    if (s == NULL) return EMQ_ENOMEM;
    rc = emq_subscribe(o->h->db, o->s[0], o->i[0], sub_cb, s, &s->sub);
    if (rc != EMQ_OK) {
        free(s);
        return rc;
    }
    s->next = o->h->subs;
    o->h->subs = s;
    o->sub = s;
    return EMQ_OK;
}

static napi_value done_subscribe(napi_env env, op *o)
{
    napi_value ext;
    subref *r = malloc(sizeof *r);
    if (r == NULL) return NULL;
    r->h = o->h;
    r->s = o->sub;
    if (napi_create_external(env, r, subref_finalize, NULL, &ext) !=
        napi_ok) {
        free(r);
        return NULL;
    }
    napi_type_tag_object(env, ext, &TAG_SUB);
    return ext;
}

/* subscribe(handle, q | null, after) -> Promise<sub> */
static napi_value js_subscribe(napi_env env, napi_callback_info info)
{
    napi_value argv[3];
    op *o;
    if (get_args(env, info, 3, argv) != 0) return throw_last(env);
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    if (get_opt_str(env, argv[1], "queue", &o->s[0]) != 0 ||
        get_i64(env, argv[2], "after", &o->i[0]) != 0) {
        op_free(o);
        return NULL;
    }
    return op_start(env, o, argv[0], run_subscribe, done_subscribe);
}

static subbuf *sub_live(nh *h, subbuf *s)
{
    subbuf *p;
    for (p = h->subs; p != NULL; p = p->next)
        if (p == s && p->sub != NULL) return p;
    return NULL;
}

static subref *get_subref(napi_env env, napi_value v)
{
    subref *r = tagged(env, v, &TAG_SUB);
    if (r == NULL) type_error(env, "sub: expected a subscription");
    return r;
}

/* Move the events copied so far into a JavaScript array (main thread, no
 * operation of the handle running) and empty the buffer. */
static napi_value events_array(napi_env env, subbuf *s)
{
    napi_value arr, v;
    size_t k;
    napi_create_array_with_length(env, s ? s->n : 0, &arr);
    if (s == NULL) return arr;
    for (k = 0; k < s->n; k++) {
        evcopy *e = &s->ev[k];
        napi_value ev;
        napi_create_object(env, &ev);
        set_prop(env, ev, "seq", int64_value(env, e->seq));
        set_prop(env, ev, "atMs", int64_value(env, e->at_ms));
        napi_create_string_utf8(env, e->queue, e->queue_len, &v);
        set_prop(env, ev, "queue", v);
        napi_create_string_utf8(env, e->name, e->name_len, &v);
        set_prop(env, ev, "name", v);
        napi_create_string_utf8(env, e->job, e->job_len, &v);
        set_prop(env, ev, "job", v);
        v = bytes_value(env, e->message, e->message_len);
        set_prop(env, ev, "message", v ? v : null_value(env));
        free(e->queue);
        free(e->name);
        free(e->job);
        free(e->message);
        napi_set_element(env, arr, (uint32_t)k, ev);
    }
    s->n = 0;
    return arr;
}

/* subTake(handle, sub) -> events copied during the handle's own calls */
static napi_value js_sub_take(napi_env env, napi_callback_info info)
{
    napi_value argv[2];
    subref *r;
    if (get_args(env, info, 2, argv) != 0) return throw_last(env);
    if ((r = get_subref(env, argv[1])) == NULL) return NULL;
    if (get_handle(env, argv[0]) != r->h)
        return type_error(env, "sub: not a subscription of this handle");
    return events_array(env, sub_live(r->h, r->s));
}

static int run_sub_poll(op *o)
{
    if (sub_live(o->h, o->sub) == NULL) {
        o->err = strdup("the subscription has ended");
        return EMQ_EINVAL;
    }
    if (o->i[0] < 0) return emq_sub_poll(o->sub->sub, 0, &o->delivered);
    {
        int rc = emq_sub_wait(o->sub->sub, o->i[0], &o->delivered);
        return rc == EMQ_EMPTY ? EMQ_OK : rc;
    }
}

static napi_value done_sub_poll(napi_env env, op *o)
{
    napi_value r;
    napi_create_object(env, &r);
    set_prop(env, r, "events", events_array(env, sub_live(o->h, o->sub)));
    set_prop(env, r, "cursor",
             int64_value(env, sub_live(o->h, o->sub)
                                  ? emq_sub_cursor(o->sub->sub) : 0));
    set_prop(env, r, "lost",
             int64_value(env, sub_live(o->h, o->sub)
                                  ? emq_sub_lost(o->sub->sub) : 0));
    return r;
}

/* subPoll(handle, sub, waitMs): waitMs < 0 polls, else waits up to waitMs
 * -> Promise<{events, cursor, lost}> */
static napi_value js_sub_poll(napi_env env, napi_callback_info info)
{
    napi_value argv[3];
    subref *r;
    op *o;
    if (get_args(env, info, 3, argv) != 0) return throw_last(env);
    if ((r = get_subref(env, argv[1])) == NULL) return NULL;
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    if (o->h != r->h) {
        op_free(o);
        return type_error(env, "sub: not a subscription of this handle");
    }
    o->sub = r->s;
    if (get_i64(env, argv[2], "waitMs", &o->i[0]) != 0) {
        op_free(o);
        return NULL;
    }
    return op_start(env, o, argv[0], run_sub_poll, done_sub_poll);
}

static int run_unsubscribe(op *o)
{
    subbuf **pp;
    for (pp = &o->h->subs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == o->sub) {
            subbuf *s = *pp;
            size_t k;
            *pp = s->next;
            emq_unsubscribe(s->sub);
            for (k = 0; k < s->n; k++) {
                free(s->ev[k].queue);
                free(s->ev[k].name);
                free(s->ev[k].job);
                free(s->ev[k].message);
            }
            free(s->ev);
            free(s);
            break;
        }
    }
    return EMQ_OK;
}

/* unsubscribe(handle, sub) -> Promise<undefined> */
static napi_value js_unsubscribe(napi_env env, napi_callback_info info)
{
    napi_value argv[2];
    subref *r;
    op *o;
    if (get_args(env, info, 2, argv) != 0) return throw_last(env);
    if ((r = get_subref(env, argv[1])) == NULL) return NULL;
    if ((o = op_for(env, argv[0])) == NULL) return NULL;
    o->sub = r->s;
    return op_start(env, o, argv[0], run_unsubscribe, NULL);
}

/* -------------------------------------------------------------- module */

static napi_value js_version(napi_env env, napi_callback_info info)
{
    napi_value r;
    (void)info;
    napi_create_object(env, &r);
    set_prop(env, r, "library", str_value(env, emq_version()));
    set_prop(env, r, "sqlite", str_value(env, emq_sqlite_version()));
    set_prop(env, r, "wire", str_value(env, EMQ_WIRE));
    return r;
}

static napi_value js_strerror(napi_env env, napi_callback_info info)
{
    napi_value argv[1];
    int64_t rc;
    if (get_args(env, info, 1, argv) != 0) return throw_last(env);
    if (get_i64(env, argv[0], "rc", &rc) != 0) return NULL;
    return str_value(env, emq_strerror((int)rc));
}

static napi_value js_busy(napi_env env, napi_callback_info info)
{
    napi_value argv[1], r;
    nh *h;
    if (get_args(env, info, 1, argv) != 0) return throw_last(env);
    if ((h = get_handle(env, argv[0])) == NULL) return NULL;
    napi_create_int32(env, atomic_load(&h->busy), &r);
    return r;
}

static napi_value init(napi_env env, napi_value exports)
{
    static const struct {
        const char *name;
        napi_callback fn;
    } fns[] = {
        {"version", js_version},       {"strerror", js_strerror},
        {"verbs", js_verbs},           {"clockNew", js_clock_new},
        {"clockSet", js_clock_set},    {"clockGet", js_clock_get},
        {"open", js_open},             {"close", js_close},
        {"interrupt", js_interrupt},   {"nodeId", js_node_id},
        {"call", js_call},             {"mintCall", js_mint_call},             {"claimWait", js_claim_wait},
        {"policySet", js_policy_set},  {"policyGet", js_policy_get},
        {"retryByPolicy", js_retry_policy},
        {"exportDb", js_export},       {"importDb", js_import},
        {"digest", js_digest},         {"check", js_check},
        {"stats", js_stats},           {"queues", js_queues},
        {"history", js_history},       {"historyLevel", js_hlevel},
        {"checkpoint", js_checkpoint}, {"subscribe", js_subscribe},
        {"subPoll", js_sub_poll},      {"subTake", js_sub_take},
        {"unsubscribe", js_unsubscribe}, {"busy", js_busy},
    };
    size_t k;
    for (k = 0; k < sizeof fns / sizeof *fns; k++) {
        napi_value f;
        NAPI(napi_create_function(env, fns[k].name, NAPI_AUTO_LENGTH,
                                  fns[k].fn, NULL, &f));
        NAPI(napi_set_named_property(env, exports, fns[k].name, f));
    }
    return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
