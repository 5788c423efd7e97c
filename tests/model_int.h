/*
 * model_int.h — what the model's files share (tests/model.c and the tier
 * files tests/model_t1.c ... model_t5.c): the toy keyspace's operations, the
 * key builders, the reply builders, the call context a verb body gets, and
 * the §6.0 group and flow definitions that several tiers use.
 *
 * Rules: keys are C strings built by the key builders (queue names, ids,
 * group ids and repeat names hold no NUL); values and members are bytes.
 * Every operation takes the model (for the clock of lazy expiry) and
 * answers as the Redis command it is named after.
 */
#ifndef EMQ_TEST_MODEL_INT_H
#define EMQ_TEST_MODEL_INT_H

#include <stddef.h>
#include <stdint.h>
#include "emqlite_protocol.h"
#include "model.h"

/* ---------------------------------------------------------------- values */

typedef struct mbs {
    unsigned char *p;   /* NUL-terminated copy                            */
    size_t n;
} mbs;

mbs mb_dup(const void *p, size_t n);
int mb_eq(const mbs *b, const void *p, size_t n);
/* memcmp order, a proper prefix first */
int mb_cmp(const void *a, size_t an, const void *b, size_t bn);

/* Shortest decimal form, and a strict parse of one (no sign '+', no
 * spaces). */
size_t m_fmt(char *b, int64_t v);
int m_parse(const void *p, size_t n, int64_t *out);
/* The number a Lua `tonumber` would read from a stored value, as a
 * double (0 with *ok = 0 when it is not one). */
double m_num(const void *p, size_t n, int *ok);

/* -------------------------------------------------------------- keyspace */

typedef struct mzm {
    mbs m;
    double s;
} mzm;

typedef struct mfv {
    mbs f, v;
    int64_t exp;        /* field expiry (Unix ms), -1 none                */
} mfv;

typedef struct mkey {
    mbs name;
    int type;           /* EMQ_T_*                                        */
    int64_t exp;        /* key expiry (Unix ms), -1 none                  */
    mbs str;
    mfv *h;
    size_t hn;
    mzm *z;
    size_t zn;
    mbs *l;
    size_t ln;
    mbs *s;
    size_t sn;
} mkey;

struct emq_model {
    mkey **k;
    size_t n;
    int64_t now;        /* the clock of the running call                  */
    int node;           /* minting: node id and the cell (ts<<12 | seq)   */
    int64_t cell;
    mbs pub_ch, pub_msg;
    int published;
};

/* The key `k` of `type`: 1 with *out, 0 absent (expired keys and empty
 * aggregates are absent), EMQ_EWRONGTYPE. With `create` an absent key is
 * made. */
int mk_get(emq_model *m, const char *k, int type, int create, mkey **out);
int mk_exists(emq_model *m, const char *k);
int mk_del(emq_model *m, const char *k);            /* 1 / 0           */
/* Drop `k` when it became an empty aggregate. */
void mk_tidy(emq_model *m, mkey *k);

/* strings */
int ms_get(emq_model *m, const char *k, const unsigned char **v, size_t *n);
void ms_set(emq_model *m, const char *k, const void *v, size_t n,
            int64_t exp);
int ms_incrby(emq_model *m, const char *k, int64_t by, int64_t *out);
int ms_pexpire(emq_model *m, const char *k, int64_t ttl);   /* 1 / 0    */
int64_t ms_pttl(emq_model *m, const char *k);   /* ms, -1 none, -2 absent */

/* hashes (fields by bytes) */
int mh_get(emq_model *m, const char *k, const void *f, size_t fl,
           const unsigned char **v, size_t *vl);          /* 1 / 0      */
/* HGET of a C-string field into a fresh copy (free .p); .p NULL absent */
mbs mh_dup(emq_model *m, const char *k, const char *f);
int mh_set(emq_model *m, const char *k, const void *f, size_t fl,
           const void *v, size_t vl);                     /* 1 created  */
int mh_sets(emq_model *m, const char *k, const char *f, const void *v,
            size_t vl);
int mh_setnx(emq_model *m, const char *k, const void *f, size_t fl,
             const void *v, size_t vl);                   /* 1 set      */
int mh_del(emq_model *m, const char *k, const void *f, size_t fl);
int mh_incrby(emq_model *m, const char *k, const void *f, size_t fl,
              int64_t by, int64_t *out);
void mh_expire_field(emq_model *m, const char *k, const char *f,
                     int64_t exp);
/* The live fields of hash `k` (NULL when absent); fields in *n. */
mkey *mh_all(emq_model *m, const char *k);

/* zsets */
void mz_add(emq_model *m, const char *k, const void *mm, size_t ml,
            double s);
int mz_rem(emq_model *m, const char *k, const void *mm, size_t ml);
int64_t mz_card(emq_model *m, const char *k);
int mz_has(emq_model *m, const char *k, const void *mm, size_t ml);
/* Copies of up to `limit` members from the head (limit < 0: all), with
 * score <= max when `bounded`. Free with mb_free_list. */
size_t mz_head(emq_model *m, const char *k, int64_t limit, int bounded,
               double max, mbs **out);
void mb_free_list(mbs *v, size_t n);

/* lists */
int64_t ml_push(emq_model *m, const char *k, int right, const void *v,
                size_t n);                               /* new length  */
void ml_trim(emq_model *m, const char *k, int64_t start, int64_t stop);
void ml_rem_all(emq_model *m, const char *k, const void *v, size_t n);
int ml_has(emq_model *m, const char *k, const void *v, size_t n);
int64_t ml_len(emq_model *m, const char *k);
/* LMOVE k k LEFT RIGHT: a copy of the moved element, .p NULL when empty */
mbs ml_rotate(emq_model *m, const char *k);

/* sets */
int mset_add(emq_model *m, const char *k, const void *v, size_t n);
int mset_rem(emq_model *m, const char *k, const void *v, size_t n);
int mset_has(emq_model *m, const char *k, const void *v, size_t n);

/* ------------------------------------------------------------------ keys */

#define KMAX 800

/* emq:{q}:sfx */
void qk(char *b, const char *q, const char *sfx);
/* J(id) or J(id).sub of a member read as bytes (sub NULL: the row) */
void jk(char *b, const char *q, const void *id, size_t n, const char *sub);
/* lane(g) = emq:{q}:g:<g>:pending */
void lk(char *b, const char *q, const void *g, size_t n);

/* --------------------------------------------------------------- replies */

void mr_nil(emq_reply *r);
void mr_int(emq_reply *r, int64_t v);
void mr_bool(emq_reply *r, int v);
void mr_bulk(emq_reply *r, const void *p, size_t n);
void mr_status(emq_reply *r, const char *s);
void mr_array(emq_reply *r, int type);      /* EMQ_REPLY_ARRAY / _MAP   */
emq_reply *mr_push(emq_reply *r);           /* a zeroed new element     */
void mr_push_bulk(emq_reply *r, const void *p, size_t n);
void mr_push_int(emq_reply *r, int64_t v);

/* ---------------------------------------------------------------- a call */

/** One argument after binding and gating: bytes (NUL-terminated copy in
 *  the caller's buffer), the integer of a numeric kind, BOOL (1/0) or a
 *  WORD's index; `present` 0 for an absent optional one. */
typedef struct marg {
    const char *s;
    size_t n;
    int64_t i;
    int present;
} marg;

typedef struct mcall {
    emq_model *m;
    int64_t now;
    const marg *a;      /* in the model row's order; a tail repeats      */
    size_t argc;
    size_t nfixed;      /* a[nfixed .. argc) is the repeated tail        */
    emq_reply *r;
} mcall;

typedef int (*model_fn)(mcall *c);

/* An error reply of the wire class `code` with the exact `msg`; returns
 * the code. */
int mc_err(mcall *c, int code, const char *msg);
/* A host refusal (EMQ_REPLY_REFUSED) with its exact text. */
int mc_refuse(mcall *c, const char *msg);

#define MSG_KIND "EMQKIND job id must be JOB-namespaced"
#define MSG_GONE "EMQSTALE job gone"

/* KIND(id): the first three bytes are JOB. */
int m_is_job(const void *id, size_t n);
/* TOKEN: the stored attempts string equals the decimal token. */
int m_token_eq(const unsigned char *att, size_t n, int64_t token);
/* valid(id) of §4.1 and the queue rule of §2.2, for the gates and for
 * DELIVER. */
int m_id_valid(const void *id, size_t n);
int m_queue_valid(const void *q, size_t n);
/* A fresh JOB id minted from `now` by §4.2 (15 bytes with the NUL). */
void m_mint(emq_model *m, int64_t now, char out[15]);

/* -------------------------------------------- shared definitions (§6.0) */

int64_t g_act(emq_model *m, const char *q, const void *g, size_t gn);
int g_paused(emq_model *m, const char *q, const void *g, size_t gn);
int64_t g_depth(emq_model *m, const char *q, const void *g, size_t gn);
void g_wake(emq_model *m, const char *q);
void g_offer(emq_model *m, const char *q, const void *g, size_t gn,
             int64_t act);
/* hincrby gactive[g] by `by`, deleting the field at <= 0; the result */
int64_t g_charge(emq_model *m, const char *q, const void *g, size_t gn,
                 int64_t by);
void g_unring(emq_model *m, const char *q, const void *g, size_t gn);
void g_dering(emq_model *m, const char *q, const void *g, size_t gn,
              int64_t act);

/* Steps 3-5 of T1.5 (group handling); 1 when the job was active. */
int t1_settle(emq_model *m, const char *q, const char *id, size_t idn);
/* A claim's steps 3-5 for popped member `id`: attempts, state, lease;
 * the new attempts in *att. */
void t1_lease(emq_model *m, const char *q, const mbs *id, int64_t deadline,
              int64_t *att);
/* Make `t` the claimed tuple [id, payload or nil, att (, g)]. */
void t1_fill_claimed(emq_model *m, emq_reply *t, const char *q,
                     const mbs *id, int64_t att, const mbs *g);
/* Pop the first member of zset `k`: a copy, .p NULL when empty. */
mbs t1_pop_first(emq_model *m, const char *k);
/* B.meta has the field paused. */
int t1_queue_paused(emq_model *m, const char *q);
/* A flow parent's dependency satisfied: decrement J(p).dependencies and
 * release the parent to pending at <= 0 (T1.5 step 7, T1.6, T4.11/T4.12). */
void t1_dep_done(emq_model *m, const char *q, const void *p, size_t pn);
/* Reply the cardinality of zset B.<sfx> of the call's queue. */
int mc_card(mcall *c, const char *sfx);
/* JOBDEL(id) / OBDEL(id) */
void t1_jobdel(emq_model *m, const char *q, const void *id, size_t n,
               int lock_too);
/* T1.7 promote and the flow sweep, shared by the sweep of T5.9 */
int64_t t1_promote(emq_model *m, const char *q, int64_t now, int64_t batch);
void t1_promote_one(emq_model *m, const char *q, const mbs *id);
int64_t t4_deliver_all(emq_model *m, const char *q, int64_t batch);
/* T1.1 admission (1 enqueued, 0 duplicate, EMQ_EKIND) */
int t1_admit(emq_model *m, const char *q, const void *id, size_t idn,
             const void *p, size_t pn, const char *set, double score);
/* REEMIT(nq, node, error) of T4.14: the new outbox length, 0 when the
 * node has no parent */
int64_t t4_reemit(emq_model *m, const char *q, const void *node, size_t nn,
                  const void *err, size_t en);

/* ---------------------------------------------------------------- bodies */

/* One declaration per row of tests/model_verbs.def. */
#define MV(NAME, TIER, FN, ARGS) int FN(mcall *c);
#include "model_verbs.def"
#undef MV

#endif /* EMQ_TEST_MODEL_INT_H */
