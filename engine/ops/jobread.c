/*
 * jobread.c — the pure reads of the read plane (PROTOCOL.md §6.2): T2.4
 * counts, T2.5 get_job / get_job_state, T2.6 get_metrics, T2.7 the dedup
 * read; and beyond the wire the operator's reads: the members of a job set
 * or a lane with their scores, paged, and a job's whole picture (row,
 * state, lease deadline, run-at, log count, lock).
 *
 * Rules: each runs in one read transaction and writes nothing; every typed
 * result is a fresh copy owned by the caller. A counter or metric that is
 * not a decimal integer reads as 0 (as Lua's tonumber(...) or 0 would).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "verb.h"

static const char *const state_names[] = {
    NULL, "pending", "active", "scheduled", "dead", "awaiting_children",
    "unknown", "absent",
};

const char *emq_state_name(int state)
{
    return state >= EMQ_STATE_PENDING && state <= EMQ_STATE_ABSENT
               ? state_names[state] : NULL;
}

/* The integer at hash field `f` of fixed key `kt` (0 when absent or not an
 * integer). */
static int hash_int(emq_store *st, const char *q, int kt, const char *f,
                    int64_t *out)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, kt);
    emq_buf v = {0};
    int rc = emq_hash_get(st, k, kl, f, strlen(f), &v);
    *out = 0;
    if (rc == EMQ_OK && emq_parse_i64(v.p, v.len, out) != 0) *out = 0;
    emq_buf_free(&v);
    return rc < 0 ? rc : EMQ_OK;
}

/* ------------------------------------------------------------ T2.4 counts */

static const char *const count_names[6] = {
    "pending", "active", "schedule", "dead", "completed", "failed",
};

static int count_index(const emq_varg *a)
{
    int i;
    for (i = 0; i < 6; i++)
        if (a->n == strlen(count_names[i]) &&
            memcmp(a->s, count_names[i], a->n) == 0)
            return i;
    return -1;
}

/*
 * T2.4 counts(q, names)
 * Host gate: the first name (in list order) outside {pending, active,
 * schedule, dead, completed, failed} → refusal "unknown_state(<name>)"
 * (EMQ_EREFUSED), before any store access.
 * Keys: B(q), B.<set> for each set name; B.metrics:<name> for each metric.
 * Reply: a map name → card(B.<name>) / integer of B.metrics:<name> count
 * (0 when absent), in list order, a repeated name once (a map's keys are
 * unique, as the reference host's map is); c->out, when given, gets an
 * int64 per name of the list, repeats included.
 * Clock: none.
 */
int emq_v_counts(emq_vctx *c)
{
    static const int kts[6] = {EMQ_KT_PENDING, EMQ_KT_ACTIVE,
                               EMQ_KT_SCHEDULE, EMQ_KT_DEAD,
                               EMQ_KT_METRICS_COMPLETED,
                               EMQ_KT_METRICS_FAILED};
    int64_t *out = c->out;
    size_t i;
    int rc;
    unsigned seen = 0;
    for (i = 1; i < c->argc; i++)
        if (count_index(&c->a[i]) < 0) {
            char m[320];
            snprintf(m, sizeof m, "unknown_state(%.*s)",
                     (int)(c->a[i].n > 280 ? 280 : c->a[i].n), c->a[i].s);
            return emq_db_wire(c->db, EMQ_EREFUSED, m);
        }
    if ((rc = emq_reply_array(c->r, EMQ_REPLY_MAP, 2 * (c->argc - 1))) < 0)
        return rc;
    for (i = 1; i < c->argc; i++) {
        int x = count_index(&c->a[i]);
        int64_t v;
        if (x < 4) {
            char k[EMQ_KEY_MAX];
            size_t kl = emq_key(k, c->a[0].s, kts[x]);
            rc = emq_zset_card(c->st, k, kl, &v);
        } else {
            rc = hash_int(c->st, c->a[0].s, kts[x], "count", &v);
        }
        if (rc < 0) return rc;
        if (out) out[i - 1] = v;
        if (seen & 1u << x) continue;
        seen |= 1u << x;
        if ((rc = emq_reply_push_bulk(c->r, c->a[i].s, c->a[i].n)) < 0 ||
            (rc = emq_reply_push_int(c->r, v)) < 0)
            return rc;
    }
    return EMQ_OK;
}

int emq_counts(emq_db *db, const char *q, size_t n, const char *const *names,
               int64_t *values)
{
    emq_varg stack[8], *a = stack;
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (n > 0 && (names == NULL || values == NULL)) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL names or "
                                           "values");
    }
    for (i = 0; i < n; i++)
        if (names[i] == NULL)
            return emq_db_wire(db, EMQ_EINVAL, "bad argument: a NULL name");
    if (n + 1 > 8 && (a = emq_mem_calloc(n + 1, sizeof *a)) == NULL)
        return emq_db_fail(db, EMQ_ENOMEM, NULL);
    a[0] = emq_varg_str(q);
    for (i = 0; i < n; i++) a[i + 1] = emq_varg_str(names[i]);
    rc = emq_verb_exec(db, EMQ_V_COUNTS, a, n + 1, NULL, values);
    if (a != stack) emq_mem_free(a);
    return rc;
}

/* ------------------------------------------------------- T2.5 get_job(_state) */

static int field_cb(void *ctx, const unsigned char *f, size_t flen,
                    const unsigned char *v, size_t vlen, int64_t expire_at)
{
    emq_reply *r = ctx;
    int rc;
    (void)expire_at;
    if ((rc = emq_reply_push_bulk(r, f, flen)) < 0) return rc;
    return emq_reply_push_bulk(r, v, vlen);
}

/* The row J(id) as a map into `r` (nil when no row): EMQ_OK or EMQ_GONE. */
static int row_map(emq_store *st, const char *q, const char *id,
                   emq_reply *r)
{
    char jk[EMQ_KEY_MAX];
    size_t jkl = emq_key_of(jk, q, EMQ_KT_JOB, id, EMQ_ID_LEN);
    int rc = emq_reply_array(r, EMQ_REPLY_MAP, 8);
    if (rc == EMQ_OK) rc = emq_hash_getall(st, jk, jkl, field_cb, r);
    if (rc < 0) return rc;
    if (r->n == 0) {
        emq_reply_clear(r);
        emq_reply_nil(r);
        return EMQ_GONE;
    }
    return EMQ_OK;
}

/*
 * T2.5 get_job(q, id): every field of J(id).
 * Keys: J(id). Replies: a map field → value (EMQ_OK) · nil, absent
 * (EMQ_GONE: no row). Clock: none (field expiry judged at the read's
 * clock).
 */
int emq_v_get_job(emq_vctx *c)
{
    return row_map(c->st, c->a[0].s, c->a[1].s, c->r);
}

/* The state lookup of T2.5 (first match wins) into *state. */
static int state_of(emq_store *st, const char *q, const char *id,
                    int *state)
{
    static const int sets[4] = {EMQ_KT_PENDING, EMQ_KT_ACTIVE,
                                EMQ_KT_SCHEDULE, EMQ_KT_DEAD};
    static const int states[4] = {EMQ_STATE_PENDING, EMQ_STATE_ACTIVE,
                                  EMQ_STATE_SCHEDULED, EMQ_STATE_DEAD};
    char k[EMQ_KEY_MAX];
    size_t kl;
    emq_buf v = {0};
    double s;
    int i, type, rc;
    for (i = 0; i < 4; i++) {
        kl = emq_key(k, q, sets[i]);
        rc = emq_zset_score(st, k, kl, id, EMQ_ID_LEN, &s);
        if (rc < 0) return rc;
        if (rc == EMQ_OK) {
            *state = states[i];
            return EMQ_OK;
        }
    }
    kl = emq_key_of(k, q, EMQ_KT_JOB, id, EMQ_ID_LEN);
    rc = emq_hash_get(st, k, kl, "state", 5, &v);
    if (rc == EMQ_OK && v.len == 17 && memcmp(v.p, "awaiting_children",
                                               17) == 0) {
        emq_buf_free(&v);
        *state = EMQ_STATE_AWAITING;
        return EMQ_OK;
    }
    emq_buf_free(&v);
    if (rc < 0) return rc;
    if ((rc = emq_key_type(st, k, kl, &type)) < 0) return rc;
    *state = type != EMQ_T_NONE ? EMQ_STATE_UNKNOWN : EMQ_STATE_ABSENT;
    return EMQ_OK;
}

/*
 * T2.5 get_job_state(q, id): pending, active, scheduled, dead (the flat
 * set holding the id, in that order), awaiting_children (from the row),
 * unknown (a row in no set; lanes are not consulted, D-13), absent.
 * Keys: B.pending, B.active, B.schedule, B.dead, J(id). Reply: the state
 * string (c->out, when given: the EMQ_STATE_* code). Clock: none.
 */
int emq_v_get_job_state(emq_vctx *c)
{
    int st, rc = state_of(c->st, c->a[0].s, c->a[1].s, &st);
    if (rc < 0) return rc;
    if (c->out) *(int *)c->out = st;
    rc = emq_reply_bulk(c->r, state_names[st], strlen(state_names[st]));
    return rc < 0 ? rc : EMQ_OK;
}

int emq_job_state(emq_db *db, const char *q, const char *id, int *state)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_str(id)};
    int st = 0, rc = emq_verb_exec(db, EMQ_V_GET_JOB_STATE, a, 2, NULL, &st);
    if (state) *state = rc == EMQ_OK ? st : 0;
    return rc;
}

int emq_job_get(emq_db *db, const char *q, const char *id,
                emq_field **fields, size_t *n)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_str(id)};
    emq_reply r = {0};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (fields) *fields = NULL;
    if (n) *n = 0;
    if (fields == NULL || n == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0 || (rc = emq_gate_id(db, id)) < 0)
            return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL fields or n");
    }
    rc = emq_verb_exec(db, EMQ_V_GET_JOB, a, 2, &r, NULL);
    if (rc == EMQ_OK) rc = emq_reply_take_fields(db, &r, fields, n);
    emq_reply_clear(&r);
    return rc;
}

int emq_reply_take_fields(emq_db *db, emq_reply *r, emq_field **fields,
                          size_t *n)
{
    size_t i, m = r->n / 2;
    emq_field *f = NULL;
    if (m && (f = emq_mem_calloc(m, sizeof *f)) == NULL)
        return emq_db_fail(db, EMQ_ENOMEM, NULL);
    for (i = 0; i < m; i++) {
        /* the reply's strings move into the fields (both are emq_mem) */
        f[i].name = r->elem[2 * i].str;
        f[i].name_len = r->elem[2 * i].len;
        f[i].value = r->elem[2 * i + 1].str;
        f[i].value_len = r->elem[2 * i + 1].len;
        r->elem[2 * i].str = r->elem[2 * i + 1].str = NULL;
        r->elem[2 * i].type = r->elem[2 * i + 1].type = EMQ_REPLY_NIL;
    }
    *fields = f;
    *n = m;
    return EMQ_OK;
}

/* --------------------------------------------------------- T2.6 get_metrics */

/*
 * T2.6 get_metrics(q, which ∈ {completed, failed})
 * Keys: B.metrics:<which>, B.metrics:<which>:data. Reply: the map
 * {count: integer of field count (0 if absent), data_points: length of the
 * data list (0 if absent)}. Clock: none.
 */
int emq_v_get_metrics(emq_vctx *c)
{
    int completed = c->a[1].i == 0;
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, completed
                                          ? EMQ_KT_METRICS_COMPLETED_DATA
                                          : EMQ_KT_METRICS_FAILED_DATA);
    int64_t count, points, *out = c->out;
    int rc = hash_int(c->st, c->a[0].s, completed ? EMQ_KT_METRICS_COMPLETED
                                                  : EMQ_KT_METRICS_FAILED,
                      "count", &count);
    if (rc == EMQ_OK) rc = emq_list_len(c->st, k, kl, &points);
    if (rc == EMQ_OK) rc = emq_reply_array(c->r, EMQ_REPLY_MAP, 4);
    if (rc == EMQ_OK) rc = emq_reply_push_bulk(c->r, "count", 5);
    if (rc == EMQ_OK) rc = emq_reply_push_int(c->r, count);
    if (rc == EMQ_OK) rc = emq_reply_push_bulk(c->r, "data_points", 11);
    if (rc == EMQ_OK) rc = emq_reply_push_int(c->r, points);
    if (rc == EMQ_OK && out) {
        out[0] = count;
        out[1] = points;
    }
    return rc;
}

int emq_metrics_get(emq_db *db, const char *q, const char *which,
                    int64_t *count, int64_t *data_points)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_str(which)};
    int64_t out[2] = {0, 0};
    int rc = emq_verb_exec(db, EMQ_V_GET_METRICS, a, 2, NULL, out);
    if (count) *count = out[0];
    if (data_points) *data_points = out[1];
    return rc;
}

/* ----------------------------------------------------- T2.7 the dedup read */

/*
 * T2.7 get_deduplication_job_id(q, did)
 * Keys: B.de:<did>. Replies: its value (EMQ_OK) · nil, absent (EMQ_ABSENT).
 * Clock: none (key expiry judged at the read's clock).
 */
int emq_v_get_deduplication_job_id(emq_vctx *c)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key_of(k, c->a[0].s, EMQ_KT_DEDUP, c->a[1].s, c->a[1].n);
    emq_buf v = {0};
    int rc = emq_str_get(c->st, k, kl, &v);
    if (rc == EMQ_OK) rc = emq_reply_bulk(c->r, v.p, v.len);
    else if (rc == EMQ_NOTFOUND) rc = EMQ_ABSENT;
    emq_buf_free(&v);
    return rc;
}

int emq_dedup_get(emq_db *db, const char *q, const char *did, char **value,
                  size_t *len)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_str(did)};
    emq_reply r = {0};
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (value) *value = NULL;
    if (len) *len = 0;
    if (value == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL value");
    }
    rc = emq_verb_exec(db, EMQ_V_GET_DEDUPLICATION_JOB_ID, a, 2, &r, NULL);
    if (rc == EMQ_OK) {
        *value = r.str;     /* moves out of the reply */
        if (len) *len = r.len;
        r.str = NULL;
        r.type = EMQ_REPLY_NIL;
    }
    emq_reply_clear(&r);
    return rc;
}

/* ------------------------------------------------- listing sets and lanes */

#define LIST_DEFAULT 100

static int64_t score_int(double s)
{
    if (s >= 9.2e18) return INT64_MAX;
    if (s <= -9.2e18) return INT64_MIN;
    return (int64_t)s;
}

static int member_cb(void *ctx, const unsigned char *m, size_t mlen,
                     double score)
{
    emq_reply *e = emq_reply_push(ctx);
    int rc;
    if (e == NULL) return EMQ_ENOMEM;
    if ((rc = emq_reply_array(e, EMQ_REPLY_ARRAY, 2)) < 0) return rc;
    if ((rc = emq_reply_push_bulk(e, m, mlen)) < 0) return rc;
    return emq_reply_push_int(e, score_int(score));
}

/* A page of zset `k`: args offset (a[o]), count (a[o+1]), from (a[o+2]). */
static int page(emq_vctx *c, const void *k, size_t kl, size_t o)
{
    int64_t offset = c->a[o].present ? c->a[o].i : 0;
    int64_t count = c->a[o + 1].present ? c->a[o + 1].i : LIST_DEFAULT;
    int rev = c->a[o + 2].present && c->a[o + 2].i == 1;
    int rc = emq_reply_array(c->r, EMQ_REPLY_ARRAY, 0);
    if (rc == EMQ_OK)
        rc = emq_zset_page(c->st, k, kl, rev, offset, count, member_cb, c->r);
    return rc < 0 ? rc : EMQ_OK;
}

/*
 * list_set(q, set ∈ {pending, active, schedule, dead}, offset = 0,
 * count = 100, from ∈ {head, tail} = head) — beyond the wire: `count`
 * members of B.<set> with their scores after skipping `offset`, in zset
 * order from the head (lowest score, then bytes) or from the tail.
 * Keys: B.<set>. Reply: [[member, score], ...] (scores: 0 in pending and
 * dead, the lease deadline in active, the run-at in schedule, integer ms).
 * Clock: none. Cost: O(log n + offset + count).
 */
int emq_v_list_set(emq_vctx *c)
{
    static const int kts[4] = {EMQ_KT_PENDING, EMQ_KT_ACTIVE,
                               EMQ_KT_SCHEDULE, EMQ_KT_DEAD};
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, c->a[0].s, kts[c->a[1].i]);
    return page(c, k, kl, 2);
}

/*
 * list_lane(q, g, offset = 0, count = 100, from = head) — beyond the
 * wire: a page of lane(g) (every score 0), as list_set.
 * Keys: B.g:<g>:pending. Reply: [[member, 0], ...]. Clock: none.
 */
int emq_v_list_lane(emq_vctx *c)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key_of(k, c->a[0].s, EMQ_KT_LANE, c->a[1].s, c->a[1].n);
    return page(c, k, kl, 2);
}

void emq_members_free(emq_member *m, size_t n)
{
    size_t i;
    if (m == NULL) return;
    for (i = 0; i < n; i++) emq_mem_free(m[i].member);
    emq_mem_free(m);
}

int emq_list(emq_db *db, const char *q, const char *set, const char *g,
             int64_t offset, int64_t count, int from_tail, emq_member **out,
             size_t *n)
{
    emq_varg a[5];
    emq_reply r = {0};
    emq_member *m = NULL;
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (out) *out = NULL;
    if (n) *n = 0;
    if (out == NULL || n == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL output");
    }
    a[0] = emq_varg_str(q);
    a[1] = emq_varg_str(g ? g : set);
    a[2] = emq_varg_int(offset);
    a[3] = emq_varg_int(count);
    a[4] = emq_varg_str(from_tail ? "tail" : "head");
    rc = emq_verb_exec(db, g ? EMQ_V_LIST_LANE : EMQ_V_LIST_SET, a, 5, &r,
                       NULL);
    if (rc != EMQ_OK) goto done;
    if ((m = emq_mem_calloc(r.n ? r.n : 1, sizeof *m)) == NULL) {
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        goto done;
    }
    for (i = 0; i < r.n; i++) {
        emq_reply *p = &r.elem[i];
        m[i].member = p->elem[0].str;   /* moves out of the reply */
        m[i].len = p->elem[0].len;
        m[i].score = p->elem[1].integer;
        p->elem[0].str = NULL;
        p->elem[0].type = EMQ_REPLY_NIL;
    }
    *out = m;
    *n = r.n;
done:
    emq_reply_clear(&r);
    return rc;
}

/* ------------------------------------------------------------ job_info */

/* Push map key `k` and return its (zeroed) value element. */
static emq_reply *map_key(emq_reply *r, const char *k)
{
    if (emq_reply_push_bulk(r, k, strlen(k)) < 0) return NULL;
    return emq_reply_push(r);
}

/* The integer score of `id` in the fixed set `kt` into `e`, nil when it
 * is not a member. */
static int score_into(emq_store *st, const char *q, int kt, const char *id,
                      emq_reply *e)
{
    char k[EMQ_KEY_MAX];
    size_t kl = emq_key(k, q, kt);
    double s;
    int rc = emq_zset_score(st, k, kl, id, EMQ_ID_LEN, &s);
    if (rc == EMQ_OK) emq_reply_int(e, score_int(s));
    return rc < 0 ? rc : EMQ_OK;
}

/*
 * job_info(q, id) — beyond the wire: everything an operator asks about a
 * job, in one read: {state: the T2.5 lookup, row: the map of J(id) or nil,
 * deadline: its B.active score (the lease deadline) or nil, run_at: its
 * B.schedule score or nil, logs: the length of J(id).logs, locked: 1 when
 * J(id).lock exists or the row has an unexpired `lock` field, else 0}.
 * Keys: B.pending, B.active, B.schedule, B.dead, J(id), J(id).logs,
 * J(id).lock. Replies: that map (EMQ_OK; EMQ_GONE when there is no row,
 * the map still filled). Clock: none.
 */
int emq_v_job_info(emq_vctx *c)
{
    emq_store *st = c->st;
    const char *q = c->a[0].s, *id = c->a[1].s;
    char k[EMQ_KEY_MAX];
    size_t kl;
    emq_reply *e;
    int64_t logs;
    int state, type, field, verdict, rc;

    if ((rc = state_of(st, q, id, &state)) < 0) return rc;
    if ((rc = emq_reply_array(c->r, EMQ_REPLY_MAP, 12)) < 0) return rc;
    if ((e = map_key(c->r, "state")) == NULL) return EMQ_ENOMEM;
    rc = emq_reply_bulk(e, state_names[state], strlen(state_names[state]));
    if (rc < 0) return rc;
    if ((e = map_key(c->r, "row")) == NULL) return EMQ_ENOMEM;
    if ((verdict = row_map(st, q, id, e)) < 0) return verdict;
    if ((e = map_key(c->r, "deadline")) == NULL) return EMQ_ENOMEM;
    if ((rc = score_into(st, q, EMQ_KT_ACTIVE, id, e)) < 0) return rc;
    if ((e = map_key(c->r, "run_at")) == NULL) return EMQ_ENOMEM;
    if ((rc = score_into(st, q, EMQ_KT_SCHEDULE, id, e)) < 0) return rc;
    kl = emq_key_of(k, q, EMQ_KT_JOB_LOGS, id, EMQ_ID_LEN);
    if ((rc = emq_list_len(st, k, kl, &logs)) < 0) return rc;
    if ((e = map_key(c->r, "logs")) == NULL) return EMQ_ENOMEM;
    emq_reply_int(e, logs);
    kl = emq_key_of(k, q, EMQ_KT_JOB_LOCK, id, EMQ_ID_LEN);
    if ((rc = emq_key_type(st, k, kl, &type)) < 0) return rc;
    kl = emq_key_of(k, q, EMQ_KT_JOB, id, EMQ_ID_LEN);
    if ((rc = emq_hash_exists(st, k, kl, "lock", 4, &field)) < 0) return rc;
    if ((e = map_key(c->r, "locked")) == NULL) return EMQ_ENOMEM;
    emq_reply_int(e, type != EMQ_T_NONE || field);
    return verdict;
}

/* The value of map `r`'s key `k`, or NULL. */
static emq_reply *map_get(emq_reply *r, const char *k)
{
    size_t i, n = strlen(k);
    for (i = 0; i + 1 < r->n; i += 2)
        if (r->elem[i].len == n && memcmp(r->elem[i].str, k, n) == 0)
            return &r->elem[i + 1];
    return NULL;
}

void emq_job_info_clear(emq_job_info *info)
{
    if (info == NULL) return;
    emq_fields_free(info->fields, info->nfields);
    memset(info, 0, sizeof *info);
}

int emq_job_inspect(emq_db *db, const char *q, const char *id,
                    emq_job_info *info)
{
    emq_varg a[2] = {emq_varg_str(q), emq_varg_str(id)};
    emq_reply r = {0}, *row, *v;
    size_t i;
    int rc;
    if ((rc = emq_db_enter(db)) < 0) return rc;
    if (info == NULL) {
        if ((rc = emq_gate_q(db, q)) < 0) return rc;
        return emq_db_wire(db, EMQ_EINVAL, "bad argument: NULL info");
    }
    memset(info, 0, sizeof *info);
    rc = emq_verb_exec(db, EMQ_V_JOB_INFO, a, 2, &r, NULL);
    if (rc != EMQ_OK && rc != EMQ_GONE) goto done;
    info->state = EMQ_STATE_ABSENT;
    for (i = EMQ_STATE_PENDING; i <= EMQ_STATE_ABSENT; i++)
        if ((v = map_get(&r, "state")) && v->len == strlen(state_names[i]) &&
            memcmp(v->str, state_names[i], v->len) == 0)
            info->state = (int)i;
    row = map_get(&r, "row");
    if (row && row->type == EMQ_REPLY_MAP && row->n > 0) {
        size_t m = row->n / 2;
        if ((info->fields = emq_mem_calloc(m, sizeof *info->fields)) ==
            NULL) {
            rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
            goto done;
        }
        for (i = 0; i < m; i++) {
            emq_field *f = &info->fields[i];
            f->name = row->elem[2 * i].str;
            f->name_len = row->elem[2 * i].len;
            f->value = row->elem[2 * i + 1].str;
            f->value_len = row->elem[2 * i + 1].len;
            row->elem[2 * i].str = row->elem[2 * i + 1].str = NULL;
            row->elem[2 * i].type = row->elem[2 * i + 1].type = EMQ_REPLY_NIL;
        }
        info->nfields = m;
    }
    if ((v = map_get(&r, "deadline")) && v->type == EMQ_REPLY_INT) {
        info->has_deadline = 1;
        info->deadline_ms = v->integer;
    }
    if ((v = map_get(&r, "run_at")) && v->type == EMQ_REPLY_INT) {
        info->has_run_at = 1;
        info->run_at_ms = v->integer;
    }
    if ((v = map_get(&r, "logs"))) info->logs = v->integer;
    if ((v = map_get(&r, "locked"))) info->locked = (int)v->integer;
done:
    if (rc < 0) emq_job_info_clear(info);
    emq_reply_clear(&r);
    return rc;
}
