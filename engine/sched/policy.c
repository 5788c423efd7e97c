/*
 * policy.c — retry policies: the attempts cap and the backoff a retry uses,
 * set once for a queue or for one job instead of on every retry, and
 * emq_policy_retry, which turns a failure into the T1.6 retry the
 * policy prescribes.
 *
 * Where they live: host-side configuration (L4), in the file's `hostconf`
 * table (storage/hostconf.c), namespace "retry", key the queue name (the
 * queue's policy) or queue ":" id (a job's; ':' is outside the queue
 * alphabet, so the two never collide), value the text
 * "max_attempts=N;backoff=SPEC" (SPEC as emq_backoff_parse reads it). The
 * keyspace is untouched: an export to Valkey, and the retry transitions
 * themselves, are what they are without a policy (the policy only chooses
 * the delay and the cap the caller passes, as T5.10 says a caller does).
 */
#include <stdio.h>
#include <string.h>
#include "verb.h"
#include "jobs.h"

#define NS "retry"
#define DEFAULT_MAX 3
#define DEFAULT_DELAY 1000

/* The hostconf key of (q, id): "q" or "q:id". */
static size_t conf_key(char *buf, const char *q, const char *id)
{
    size_t n = strlen(q);
    memcpy(buf, q, n);
    if (id) {
        buf[n++] = ':';
        memcpy(buf + n, id, EMQ_ID_LEN);
        n += EMQ_ID_LEN;
    }
    buf[n] = 0;
    return n;
}

static int encode(const emq_retry_policy *p, char *buf, size_t n)
{
    char spec[200];
    int k;
    if (p->max_attempts <= 0 ||
        emq_backoff_format(&p->backoff, spec, sizeof spec) == 0)
        return -1;
    k = snprintf(buf, n, "max_attempts=%lld;backoff=%s",
                 (long long)p->max_attempts, spec);
    return k > 0 && (size_t)k < n ? k : -1;
}

static int decode(const unsigned char *v, size_t n, emq_retry_policy *p)
{
    char tmp[256], *semi;
    if (n == 0 || n >= sizeof tmp) return -1;
    memcpy(tmp, v, n);
    tmp[n] = 0;
    if (strncmp(tmp, "max_attempts=", 13) != 0 ||
        (semi = strchr(tmp, ';')) == NULL ||
        strncmp(semi + 1, "backoff=", 8) != 0 ||
        emq_parse_i64(tmp + 13, (size_t)(semi - tmp - 13),
                      &p->max_attempts) != 0 ||
        p->max_attempts <= 0 ||
        emq_backoff_parse(semi + 9, &p->backoff) != EMQ_OK)
        return -1;
    return 0;
}

typedef struct pctx {
    const char *q, *id;
    const emq_retry_policy *set;   /* put: the policy, or NULL: delete   */
    emq_retry_policy *got;         /* get: the policy found              */
} pctx;

static int put_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    pctx *c = ctx;
    char k[EMQ_KEY_MAX], v[300];
    size_t kl = conf_key(k, c->q, c->id);
    int vl = 0;
    (void)now;
    if (c->set && (vl = encode(c->set, v, sizeof v)) < 0)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: policy");
    return emq_hostconf_put(st, NS, k, kl, c->set ? v : NULL, (size_t)vl);
}

/* The job's policy, else the queue's: EMQ_OK or EMQ_ABSENT. */
static int get_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    pctx *c = ctx;
    char k[EMQ_KEY_MAX];
    emq_buf v = {0};
    int rc = EMQ_NOTFOUND, pass;
    (void)now;
    for (pass = c->id ? 0 : 1; pass < 2 && rc == EMQ_NOTFOUND; pass++) {
        size_t kl = conf_key(k, c->q, pass == 0 ? c->id : NULL);
        rc = emq_hostconf_get(st, NS, k, kl, &v);
    }
    if (rc == EMQ_OK && decode(v.p, v.len, c->got) != 0)
        rc = emq_db_fail(db, EMQ_ECORRUPT, "a stored retry policy does not "
                         "parse");
    emq_buf_free(&v);
    return rc == EMQ_NOTFOUND ? EMQ_ABSENT : rc;
}

static int gate(emq_db *db, const char *q, const char *id)
{
    int rc;
    if ((rc = emq_gate_q(db, q)) < 0) return rc;
    return id ? emq_gate_id(db, id) : EMQ_OK;
}

int emq_policy_set(emq_db *db, const char *q, const char *id,
                   const emq_retry_policy *p)
{
    pctx c = {q, id, p, NULL};
    char tmp[300];
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((rc = gate(db, q, id)) < 0) return rc;
    if (p && encode(p, tmp, sizeof tmp) < 0)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: policy "
                           "(max_attempts > 0 and a valid backoff)");
    return emq_db_run(db, 1, put_tx, &c);
}

int emq_policy_get(emq_db *db, const char *q, const char *id,
                   emq_retry_policy *p)
{
    emq_retry_policy got;
    pctx c = {q, id, NULL, &got};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if ((rc = gate(db, q, id)) < 0) return rc;
    memset(&got, 0, sizeof got);
    rc = emq_db_run(db, 0, get_tx, &c);
    if (rc == EMQ_OK && p) *p = got;
    return rc;
}

int emq_policy_retry(emq_db *db, const char *q, const char *id,
                     int64_t token, const void *error, size_t error_len,
                     const emq_retry_policy *fallback)
{
    emq_retry_policy p;
    int64_t delay;
    int rc = emq_policy_get(db, q, id, &p);
    if (rc == EMQ_ABSENT) {
        if (fallback) {
            p = *fallback;
        } else {
            memset(&p, 0, sizeof p);
            p.max_attempts = DEFAULT_MAX;
            p.backoff.kind = EMQ_BACKOFF_FIXED;
            p.backoff.delay_ms = DEFAULT_DELAY;
        }
    } else if (rc < 0) {
        return rc;
    }
    /* A token below 1 has no attempt to back off from: no delay. */
    if (token < 1) delay = 0;
    else if (emq_backoff_delay(&p.backoff, token, emq_sched_random_cb, db,
                               &delay) < 0)
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: retry policy");
    return emq_retry(db, q, id, token, delay, p.max_attempts, error,
                     error_len);
}
