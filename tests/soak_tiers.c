/*
 * soak_tiers.c — soaks for lanes, flows, streams, events and repeats (issue
 * 27), beside the Tier 1 soak of crash_test.c: several processes work one
 * file while the parent SIGKILLs (and restarts) or SIGSTOPs (then
 * SIGCONTs) one of them, picked at random, every few tens of
 * milliseconds. Each process writes what it did to its own ledger
 * (relutil.h: an intent line before every write, an acknowledgement after
 * it). At the end every process is killed, the parent drains what is left
 * with a clock an hour ahead (leases lapse, schedules fall due), and the
 * accounting over all the ledgers fails on any item lost, duplicated,
 * doubly delivered or stuck; then emq_check must find no violation.
 *
 *   tests/soak_tiers MODE [SECONDS]    MODE: lanes flows streams events
 *                                      repeats
 *
 * lanes    2 producers lane_enqueue into 4 groups, 3 workers lane_claim and
 *          complete. Every acknowledged enqueue is completed exactly once
 *          (by a worker or the drain); no (id, token) is claimed twice;
 *          nothing is left in any set or lane.
 * flows    2 producers add flows (a parent in F, two children in FC), 2
 *          workers claim and complete the children and the parents, a
 *          sweeper runs the pump sweep of FC. The drain runs
 *          emq_flow_recover, reaps, completes and sweeps until nothing
 *          moves: every acknowledged flow's parent is completed exactly
 *          once, no row is left (a parent left awaiting is stuck).
 * streams  3 appenders append_id records with minted EVT ids (EMQ_ENONMONO,
 *          the concurrent-append defect of issue 27 item 4 fixed on another
 *          branch, is counted and the append retried with a new id), 2
 *          readers read the group and ack. Every acknowledged append is in
 *          the stream exactly once, every record was intended, ids rise;
 *          no entry is handed to two ">" reads; after the drain (autoclaim
 *          and ack) nothing is pending.
 * events   3 publishers emq_publish with an intent line, 2 subscribers
 *          follow the log and must never see one event twice. Every
 *          acknowledged publish is in the log exactly once (a re-read from
 *          0 after the soak), every logged event was intended, sequence
 *          numbers rise, none was pruned.
 * repeats  5 registrations of 150 ms, 3 pumps (emq_sweep), 2 workers
 *          claiming the occurrences. Every registration fired at least
 *          once per 4 periods over the soak (a stopped or killed pump must
 *          not silence it), every occurrence is completed exactly once,
 *          and after the soak each registration is still due and fires.
 *
 * Prints the figures (operations, kills, stops, refusals) and "N passed,
 * N failed". Knobs: EMQ_SOAK_KILL_MS (mean pause between chaos events,
 * 40), EMQ_CRASH_SEED, EMQ_CRASH_DIR (keep the file and ledgers).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "emqlite.h"
#include "relutil.h"
#include "relwork.h"

#define MAXP 16
#define T_HOUR INT64_C(3600000)

enum { M_LANES, M_FLOWS, M_STREAMS, M_EVENTS, M_REPEATS };
static const char *const mode_names[] = {"lanes", "flows", "streams",
                                         "events", "repeats"};
static int mode;
static char dir[256], dbpath[400];

/* Counts a process keeps in shared memory (they survive its SIGKILL). */
typedef struct tally {
    long ops, nonmono, busy, errors;
} tally;
static tally *shared;

static int64_t wall_ms(void) { return rel_wall_ms(); }

static void msleep(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static emq_db *open_db(rel_clock *clk)
{
    emq_options o;
    emq_db *db = NULL;
    emq_options_init(&o);
    o.busy_timeout_ms = 2000;
    if (clk) {
        o.clock = rel_clock_fn;
        o.clock_ctx = clk;
    }
    if (emq_open(dbpath, &o, &db) != EMQ_OK) return NULL;
    return db;
}

static const char *group(int i)
{
    static char g[4][EMQ_ID_SIZE];
    if (!g[i][0]) emq_id_encode("GRP", (uint64_t)(1000 + i), g[i]);
    return g[i];
}

/* ----------------------------------------------------------- the roles */

enum { R_PRODUCER, R_WORKER, R_SWEEPER, R_READER };

static int role_of(int p)
{
    switch (mode) {
    case M_LANES: return p < 2 ? R_PRODUCER : R_WORKER;
    case M_FLOWS: return p < 2 ? R_PRODUCER : p < 4 ? R_WORKER : R_SWEEPER;
    case M_STREAMS: return p < 3 ? R_PRODUCER : R_READER;
    case M_EVENTS: return p < 3 ? R_PRODUCER : R_READER;
    default: return p < 3 ? R_SWEEPER : R_WORKER;
    }
}

static int nprocs(void) { return 5; }

static void count(tally *t, int rc)
{
    if (rc == EMQ_EBUSY) t->busy++;
    else if (rc == EMQ_ENONMONO) t->nonmono++;
    else if (rc < 0) t->errors++;
    else t->ops++;
}

/* Claim from q (or the lanes of q) and complete; ledger C, K, D. */
static int work_one(emq_db *db, rel_ledger *l, tally *t, const char *q,
                    int lanes)
{
    emq_job j;
    char g[EMQ_ID_SIZE];
    int rc = lanes ? emq_lane_claim(db, q, 2000, &j, g)
                   : emq_claim(db, q, 2000, &j);
    if (rc != EMQ_OK) {
        if (rc < 0) count(t, rc);
        return 0;
    }
    rel_ledger_put(l, L_CLAIM, j.id, j.attempts, 0);
    rel_ledger_put(l, L_COMPLETE_INTENT, j.id, j.attempts, 0);
    rc = emq_complete(db, q, j.id, j.attempts);
    if (rc == EMQ_OK) rel_ledger_put(l, L_DONE, j.id, j.attempts, 0);
    if (rc != EMQ_ESTALE && rc != EMQ_GONE) count(t, rc);
    emq_job_clear(&j);
    return 1;
}

/* The record id of a raw entry: its first field is `id`. */
static const char *rid(const emq_stream_entry *e)
{
    if (e->nfields >= 1 && strcmp(e->fields[0].name, "id") == 0)
        return e->fields[0].value;
    return "";
}

static void on_event(void *ctx, const emq_event *ev)
{
    rel_ledger *l = ctx;
    char id[EMQ_ID_SIZE];
    if (ev->job_len != EMQ_ID_LEN) return;
    memcpy(id, ev->job, EMQ_ID_LEN);
    id[EMQ_ID_LEN] = 0;
    rel_ledger_put(l, L_CLAIM, id, ev->seq, 0);
}

static void child(int p, uint64_t seed)
{
    char lp[400], id[EMQ_ID_SIZE];
    rel_ledger l;
    tally *t = &shared[p];
    emq_db *db = NULL;
    uint64_t s = seed | 1;
    rel_ledger_path(lp, sizeof lp, dir, p);
    if (rel_ledger_open(&l, lp) != 0) _exit(2);
    while (!(db = open_db(NULL))) msleep(5);
    if (mode == M_EVENTS) /* retention is a handle's: keep every event */
        emq_events_retention(db, 100000000, 0);
    int role = role_of(p);
    emq_sub *sub = NULL;
    if (mode == M_EVENTS && role == R_READER &&
        emq_subscribe(db, "E", EMQ_SUB_NOW, on_event, &l, &sub) != EMQ_OK)
        _exit(3);
    for (;;) {
        int rc;
        switch (mode * 8 + role) {
        case M_LANES * 8 + R_PRODUCER:
            emq_mint(db, "JOB", id);
            rel_ledger_put(&l, L_INTENT, id, 0, 0);
            rc = emq_lane_enqueue(db, "L", group((int)(rel_rnd(&s) % 4)), id,
                                  "x", 1);
            if (rc == EMQ_ENQUEUED) rel_ledger_put(&l, L_ENQ, id, 0, 0);
            count(t, rc);
            break;
        case M_LANES * 8 + R_WORKER:
            if (!work_one(db, &l, t, "L", 1)) msleep(2);
            break;
        case M_FLOWS * 8 + R_PRODUCER: {
            char c1[EMQ_ID_SIZE], c2[EMQ_ID_SIZE];
            emq_mint(db, "JOB", id);
            emq_mint(db, "JOB", c1);
            emq_mint(db, "JOB", c2);
            emq_flow_node kids[2] = {
                {c1, "c", 1, "FC", EMQ_FLOW_FP, NULL, 0},
                {c2, "c", 1, "FC", EMQ_FLOW_FP, NULL, 0}};
            emq_flow_node root = {id, "p", 1, NULL, 0, kids, 2};
            rel_ledger_put(&l, L_INTENT, id, 0, 0);
            rc = emq_flow_add(db, "F", &root);
            if (rc == EMQ_OK) rel_ledger_put(&l, L_ENQ, id, 0, 0);
            count(t, rc);
            msleep(1);
            break;
        }
        case M_FLOWS * 8 + R_WORKER:
            if (!work_one(db, &l, t, "FC", 0) && !work_one(db, &l, t, "F", 0))
                msleep(2);
            break;
        case M_FLOWS * 8 + R_SWEEPER:
        case M_REPEATS * 8 + R_SWEEPER: {
            emq_sweep_counts k;
            rc = emq_sweep(db, mode == M_FLOWS ? "FC" : "R", 100, &k);
            count(t, rc);
            msleep(mode == M_FLOWS ? 3 : 20);
            break;
        }
        case M_REPEATS * 8 + R_WORKER:
            if (!work_one(db, &l, t, "R", 0)) msleep(5);
            break;
        case M_STREAMS * 8 + R_PRODUCER: {
            const void *fv[2] = {"k", "v"};
            size_t fl[2] = {1, 1};
            emq_mint(db, "EVT", id);
            rel_ledger_put(&l, L_INTENT, id, 0, 0);
            rc = emq_stream_append_id(db, "S", "log", id, fv, fl, 2);
            if (rc == EMQ_OK) rel_ledger_put(&l, L_ENQ, id, 0, 0);
            count(t, rc); /* EMQ_ENONMONO: counted; the next loop retries
                             with a new id (issue 27 item 4, elsewhere) */
            break;
        }
        case M_STREAMS * 8 + R_READER: {
            emq_stream_entry *e = NULL;
            size_t n = 0;
            char cons[16];
            snprintf(cons, sizeof cons, "c%d", p);
            rc = emq_stream_group_read(db, "S", "log", "g", cons, ">", 10, -1,
                                       &e, &n);
            count(t, rc);
            for (size_t i = 0; rc == EMQ_OK && i < n; i++) {
                const char *x = e[i].xid;
                int64_t acked;
                rel_ledger_put(&l, L_CLAIM, rid(&e[i]), 0, 0);
                if (emq_stream_ack(db, "S", "log", "g", &x, 1, &acked) ==
                    EMQ_OK && acked == 1)
                    rel_ledger_put(&l, L_DONE, rid(&e[i]), 0, 0);
            }
            emq_stream_entries_free(e, n);
            if (n == 0) msleep(3);
            break;
        }
        case M_EVENTS * 8 + R_PRODUCER:
            emq_mint(db, "JOB", id);
            rel_ledger_put(&l, L_INTENT, id, 0, 0);
            rc = emq_publish(db, "E", "tick", id, 0, NULL, NULL, NULL);
            if (rc == EMQ_OK) rel_ledger_put(&l, L_ENQ, id, 0, 0);
            count(t, rc);
            break;
        case M_EVENTS * 8 + R_READER: {
            size_t n = 0;
            rc = emq_sub_wait(sub, 50, &n);
            if (rc < 0) count(t, rc);
            if (emq_sub_lost(sub) > 0) t->errors += 1000000;
            break;
        }
        default:
            _exit(4);
        }
    }
}

/* --------------------------------------------------------- the harness */

static pid_t pids[MAXP];
static int stopped[MAXP];

static pid_t start(int p, uint64_t *s)
{
    uint64_t seed = rel_rnd(s);
    pid_t pid = fork();
    if (pid == 0) {
        child(p, seed);
        _exit(0);
    }
    return pid;
}

/* ----------------------------------------------------------- accounting */

typedef struct ent {
    char id[EMQ_ID_LEN];
    unsigned char used;
    unsigned short intent, enq, claim, done, kint, present, drained;
} ent;
static ent *tab;
static size_t tcap = 1 << 20;

static ent *get(const char *id)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < EMQ_ID_LEN; i++)
        h = (h ^ (unsigned char)id[i]) * 1099511628211ULL;
    size_t i = h & (tcap - 1);
    while (tab[i].used && memcmp(tab[i].id, id, EMQ_ID_LEN) != 0)
        i = (i + 1) & (tcap - 1);
    if (!tab[i].used) {
        tab[i].used = 1;
        memcpy(tab[i].id, id, EMQ_ID_LEN);
    }
    return &tab[i];
}

/* (id, token) claims, for the "claimed twice" rule. */
typedef struct cl {
    char id[EMQ_ID_LEN];
    int64_t tok;
    unsigned char used;
} cl;
static cl *ctab;

static int claim_once(const char *id, int64_t tok)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)tok;
    for (int i = 0; i < EMQ_ID_LEN; i++)
        h = (h ^ (unsigned char)id[i]) * 1099511628211ULL;
    size_t i = h & (tcap - 1);
    while (ctab[i].used &&
           (memcmp(ctab[i].id, id, EMQ_ID_LEN) != 0 || ctab[i].tok != tok))
        i = (i + 1) & (tcap - 1);
    if (ctab[i].used) return 0;
    ctab[i].used = 1;
    memcpy(ctab[i].id, id, EMQ_ID_LEN);
    ctab[i].tok = tok;
    return 1;
}

static long dup_claims, reader_dups;

static void ingest(int p)
{
    char path[400];
    rel_event *ev = NULL;
    size_t n = 0;
    rel_ledger_path(path, sizeof path, dir, p);
    if (rel_ledger_read(path, p, &ev, &n) != 0) return;
    /* events readers: one subscription per process lifetime; a lifetime
     * starts where the ledger's sequence numbers stop rising */
    int64_t last_seq = -1;
    for (size_t i = 0; i < n; i++) {
        ent *e = get(ev[i].id);
        switch (ev[i].ev) {
        case L_INTENT: e->intent++; break;
        case L_ENQ: e->enq++; break;
        case L_CLAIM:
            e->claim++;
            if (mode == M_EVENTS) {
                if (ev[i].token == last_seq) reader_dups++;
                last_seq = ev[i].token;
            } else if (mode != M_STREAMS && !claim_once(ev[i].id,
                                                          ev[i].token)) {
                dup_claims++;
            }
            break;
        case L_COMPLETE_INTENT: e->kint++; break;
        case L_DONE: e->done++; break;
        }
    }
    free(ev);
}

/* The drain: with the clock an hour ahead, reap, recover, sweep, claim and
 * complete until nothing moves; marks what it completed. */
static long drain(emq_db *db, rel_clock *clk)
{
    long moved_total = 0;
    clk->now = wall_ms() + T_HOUR;
    for (int round = 0; round < 1000; round++) {
        long moved = 0;
        int64_t c;
        emq_job j;
        char g[EMQ_ID_SIZE];
        const char *qs[2] = {"L", NULL};
        if (mode == M_FLOWS) {
            qs[0] = "FC";
            qs[1] = "F";
            emq_flow_recover(db, &c);
            moved += c;
        }
        if (mode == M_REPEATS) qs[0] = "R";
        for (int k = 0; k < 2 && qs[k]; k++) {
            if (emq_reap(db, qs[k], &c) == EMQ_OK) moved += c;
            if (mode == M_LANES)
                for (int gi = 0; gi < 4; gi++)
                    if (emq_lane_reap(db, qs[k], group(gi), 1000, &c) ==
                        EMQ_OK)
                        moved += c;
            if (mode == M_FLOWS && k == 0) {
                emq_sweep_counts sc;
                if (emq_sweep(db, "FC", 1000, &sc) == EMQ_OK)
                    moved += sc.delivered;
            }
            for (;;) {
                int rc = mode == M_LANES ? emq_lane_claim(db, qs[k], 1000,
                                                          &j, g)
                                         : emq_claim(db, qs[k], 1000, &j);
                if (rc != EMQ_OK) break;
                EXPECT(claim_once(j.id, j.attempts),
                       "drain: (%s, %lld) was claimed before", j.id,
                       (long long)j.attempts);
                if (emq_complete(db, qs[k], j.id, j.attempts) == EMQ_OK)
                    get(j.id)->drained++;
                emq_job_clear(&j);
                moved++;
            }
        }
        moved_total += moved;
        if (moved == 0) break;
    }
    return moved_total;
}

static void account_jobs(emq_db *db)
{
    long lost = 0, dup = 0, stuck = 0, phantom = 0, acked = 0;
    const char *q = mode == M_LANES ? "L" : mode == M_FLOWS ? "F" : "R";
    for (size_t i = 0; i < tcap; i++) {
        ent *e = &tab[i];
        char id[EMQ_ID_SIZE];
        int st;
        if (!e->used) continue;
        memcpy(id, e->id, EMQ_ID_LEN);
        id[EMQ_ID_LEN] = 0;
        if (mode == M_REPEATS || (mode == M_FLOWS && !e->intent)) {
            /* occurrences and flow children: not in the producers'
             * ledgers; each completed at most once */
            if (e->done + e->drained > 1) dup++;
            continue;
        }
        if (!e->intent) phantom++;
        if (e->enq) acked++;
        if (e->done + e->drained > 1) dup++;
        if (emq_job_state(db, q, id, &st) == EMQ_OK &&
            st != EMQ_STATE_ABSENT) {
            stuck++;
            if (stuck < 5) fprintf(stderr, "stuck: %s state %d\n", id, st);
        } else if (e->enq && e->done + e->drained == 0 && !e->kint) {
            lost++;
            if (lost < 5) fprintf(stderr, "lost: %s\n", id);
        }
    }
    printf("%s: %ld acknowledged; lost %ld, completed twice %ld, "
           "(id, token) claimed twice %ld, stuck %ld, phantom %ld\n",
           mode_names[mode], acked, lost, dup, dup_claims, stuck, phantom);
    EXPECT(acked > 0, "nothing was acknowledged");
    EXPECT(lost == 0, "%ld lost", lost);
    EXPECT(dup == 0, "%ld completed twice", dup);
    EXPECT(dup_claims == 0, "%ld (id, token) claimed twice", dup_claims);
    EXPECT(stuck == 0, "%ld stuck", stuck);
    EXPECT(phantom == 0, "%ld phantom", phantom);
    if (mode == M_LANES || mode == M_FLOWS) {
        const char *names[3] = {"pending", "active", "schedule"};
        int64_t v[3];
        for (int k = 0; k < (mode == M_FLOWS ? 2 : 1); k++) {
            const char *qq = k ? "FC" : q;
            if (emq_counts(db, qq, 3, names, v) == EMQ_OK)
                EXPECT(v[0] + v[1] + v[2] == 0, "%s: %lld %lld %lld left",
                       qq, (long long)v[0], (long long)v[1],
                       (long long)v[2]);
        }
    }
}

static void account_stream(emq_db *db)
{
    emq_stream_entry *e = NULL;
    size_t n = 0;
    long lost = 0, dup = 0, phantom = 0, acked = 0, order = 0, twice = 0;
    EXPECT(emq_stream_range(db, "S", "log", "-", "+", -1, &e, &n) ==
           EMQ_OK, "range: %s", emq_errmsg(db));
    for (size_t i = 0; i < n; i++) {
        const char *r = rid(&e[i]);
        if (strlen(r) != EMQ_ID_LEN) {
            phantom++;
            continue;
        }
        ent *x = get(r);
        x->present++;
        if (i > 0 && strcmp(e[i - 1].xid, e[i].xid) >= 0 &&
            strlen(e[i - 1].xid) >= strlen(e[i].xid))
            order++;
    }
    emq_stream_entries_free(e, n);
    /* the drain: everything pending to the group, read and acked */
    for (int r = 0; r < 100; r++) {
        char next[EMQ_XID_SIZE];
        size_t k = 0;
        e = NULL;
        if (emq_stream_autoclaim(db, "S", "log", "g", "drain", 0, "0-0", 1000,
                                 next, &e, &k, NULL, NULL) != EMQ_OK)
            break;
        for (size_t i = 0; i < k; i++) {
            const char *x = e[i].xid;
            int64_t a;
            /* delivered to a reader killed before its ledger line or its
             * ack: handed on once more, by design (at least once) */
            get(rid(&e[i]))->drained++;
            emq_stream_ack(db, "S", "log", "g", &x, 1, &a);
        }
        emq_stream_entries_free(e, k);
        e = NULL;
        size_t m = 0;
        if (emq_stream_group_read(db, "S", "log", "g", "drain", ">", 1000, -1,
                                  &e, &m) == EMQ_OK)
            for (size_t i = 0; i < m; i++) {
                const char *x = e[i].xid;
                int64_t a;
                get(rid(&e[i]))->claim++;
                emq_stream_ack(db, "S", "log", "g", &x, 1, &a);
            }
        emq_stream_entries_free(e, m);
        if (k == 0 && m == 0) break;
    }
    char next[EMQ_XID_SIZE];
    size_t left = 0;
    e = NULL;
    emq_stream_autoclaim(db, "S", "log", "g", "drain", 0, "0-0", 1000, next,
                         &e, &left, NULL, NULL);
    emq_stream_entries_free(e, left);
    for (size_t i = 0; i < tcap; i++) {
        ent *x = &tab[i];
        if (!x->used) continue;
        if (x->enq) acked++;
        if (x->present > 1) dup++;
        if (x->present && !x->intent) phantom++;
        if (x->enq && !x->present) lost++;
        if (x->present && x->claim > 1) twice++;
        if (x->present && x->claim == 0 && x->drained == 0) lost++;
    }
    printf("streams: %ld acknowledged appends, %ld refused EMQ_ENONMONO "
           "(issue 27 item 4, retried); lost %ld, duplicated %ld, handed to "
           "two reads %ld, out of order %ld, phantom %ld, pending after the "
           "drain %zu\n", acked, shared ? shared[0].nonmono + shared[1].nonmono
           + shared[2].nonmono : 0, lost, dup, twice, order, phantom, left);
    EXPECT(acked > 0, "nothing was appended");
    EXPECT(lost == 0 && dup == 0 && twice == 0 && order == 0 &&
           phantom == 0 && left == 0, "stream accounting failed");
}

static void on_replay(void *ctx, const emq_event *ev)
{
    int64_t *last = ctx;
    char id[EMQ_ID_SIZE];
    if (ev->seq <= *last) last[1]++;
    last[0] = ev->seq;
    if (ev->job_len != EMQ_ID_LEN) return;
    memcpy(id, ev->job, EMQ_ID_LEN);
    id[EMQ_ID_LEN] = 0;
    get(id)->present++;
}

static void account_events(emq_db *db)
{
    emq_sub *sub;
    int64_t last[2] = {-1, 0};
    size_t n;
    long lost = 0, dup = 0, phantom = 0, acked = 0;
    EXPECT(emq_subscribe(db, "E", 0, on_replay, last, &sub) == EMQ_OK,
           "subscribe: %s", emq_errmsg(db));
    while (emq_sub_poll(sub, 10000, &n) == EMQ_OK && n > 0) {
    }
    EXPECT(emq_sub_lost(sub) == 0, "%lld events pruned",
           (long long)emq_sub_lost(sub));
    emq_unsubscribe(sub);
    for (size_t i = 0; i < tcap; i++) {
        ent *x = &tab[i];
        if (!x->used) continue;
        if (x->enq) acked++;
        if (x->present > 1) dup++;
        if (x->present && !x->intent) phantom++;
        if (x->enq && !x->present) lost++;
    }
    printf("events: %ld acknowledged publishes; lost %ld, duplicated %ld, "
           "seen twice by one subscription %ld, out of order %lld, phantom "
           "%ld\n", acked, lost, dup, reader_dups, (long long)last[1],
           phantom);
    EXPECT(acked > 0, "nothing was published");
    EXPECT(lost == 0 && dup == 0 && reader_dups == 0 && last[1] == 0 &&
           phantom == 0, "event accounting failed");
}

/* repeats: each registration fired often enough, and still fires. */
static void account_repeats(emq_db *db, rel_clock *clk, int64_t secs)
{
    emq_repeat *r = NULL;
    size_t n = 0;
    long fired = 0, dup = 0;
    for (size_t i = 0; i < tcap; i++)
        if (tab[i].used) {
            fired += tab[i].done + tab[i].drained ? 1 : 0;
            dup += tab[i].done + tab[i].drained > 1;
        }
    EXPECT(dup == 0, "%ld occurrences completed twice", dup);
    EXPECT(dup_claims == 0, "%ld (id, token) claimed twice", dup_claims);
    int64_t want = secs * 1000 / 150 / 4 * 5;
    printf("repeats: %ld occurrences of 5 registrations of 150 ms in %lld s "
           "(at least %lld wanted)\n", fired, (long long)secs,
           (long long)want);
    EXPECT(fired >= want, "only %ld occurrences", fired);
    EXPECT(emq_repeat_list(db, "R", &r, &n) == EMQ_OK && n == 5,
           "%zu registrations left", n);
    emq_repeats_free(r, n);
    emq_sweep_counts k;
    clk->now += T_HOUR;
    EXPECT(emq_sweep(db, "R", 100, &k) == EMQ_OK && k.fired == 5,
           "a sweep an hour later fired %lld", (long long)k.fired);
}

int main(int argc, char **argv)
{
    int64_t secs;
    long kill_ms = rel_env_long("EMQ_SOAK_KILL_MS", 40);
    uint64_t seed = (uint64_t)rel_env_long("EMQ_CRASH_SEED",
                                           (long)time(NULL));
    long kills = 0, stops = 0;
    mode = -1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 0; argc > 1 && i < 5; i++)
        if (strcmp(argv[1], mode_names[i]) == 0) mode = i;
    if (mode < 0) {
        fprintf(stderr, "usage: soak_tiers lanes|flows|streams|events|"
                "repeats [SECONDS]\n");
        return 2;
    }
    secs = argc > 2 ? atol(argv[2]) : rel_quick() ? 2 : 3;
    if (getenv("EMQ_CRASH_DIR")) {
        snprintf(dir, sizeof dir, "%s", getenv("EMQ_CRASH_DIR"));
    } else if (rel_mkdtemp(dir, sizeof dir, "soak") != 0) {
        return 2;
    }
    rel_path(dbpath, sizeof dbpath, dir, "soak.emq");
    shared = mmap(NULL, MAXP * sizeof *shared, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    tab = calloc(tcap, sizeof *tab);
    ctab = calloc(tcap, sizeof *ctab);
    if (shared == MAP_FAILED || !tab || !ctab) return 2;
    memset(shared, 0, MAXP * sizeof *shared);
    printf("soak %s: %lld s, seed %llu, a chaos event every ~%ld ms, in %s\n",
           mode_names[mode], (long long)secs, (unsigned long long)seed,
           kill_ms, dir);
    {
        emq_db *db = open_db(NULL);
        if (!db) return 2;
        if (mode == M_STREAMS)
            EXPECT(emq_stream_group_create(db, "S", "log", "g", "0", 1) ==
                   EMQ_OK, "group: %s", emq_errmsg(db));
        if (mode == M_EVENTS)
            emq_events_retention(db, 100000000, 0);
        if (mode == M_REPEATS)
            for (int i = 0; i < 5; i++) {
                char name[16];
                snprintf(name, sizeof name, "r%d", i);
                EXPECT(emq_repeat_register(db, "R", name, 150, name, 2, 0) >=
                       0, "register: %s", emq_errmsg(db));
            }
        emq_close(db);
    }
    int np = nprocs();
    for (int p = 0; p < np; p++) pids[p] = start(p, &seed);
    int64_t end = wall_ms() + secs * 1000;
    while (wall_ms() < end) {
        msleep((int)(rel_rnd(&seed) % (uint64_t)(2 * kill_ms + 1)));
        int p = (int)(rel_rnd(&seed) % (uint64_t)np);
        if (stopped[p]) {
            kill(pids[p], SIGCONT);
            stopped[p] = 0;
        } else if (rel_rnd(&seed) % 2) {
            kill(pids[p], SIGKILL);
            waitpid(pids[p], NULL, 0);
            pids[p] = start(p, &seed);
            kills++;
        } else {
            kill(pids[p], SIGSTOP);
            stopped[p] = 1;
            stops++;
        }
    }
    for (int p = 0; p < np; p++) {
        kill(pids[p], SIGKILL);
        waitpid(pids[p], NULL, 0);
    }
    long ops = 0, busy = 0, errors = 0, nonmono = 0;
    for (int p = 0; p < np; p++) {
        ops += shared[p].ops;
        busy += shared[p].busy;
        errors += shared[p].errors;
        nonmono += shared[p].nonmono;
        ingest(p);
    }
    printf("%ld operations (%.0f/s), %ld SIGKILLs, %ld SIGSTOPs, %ld "
           "EMQ_EBUSY, %ld EMQ_ENONMONO, %ld other errors\n", ops,
           (double)ops / (double)secs, kills, stops, busy, nonmono, errors);
    EXPECT(errors == 0, "%ld unexpected errors", errors);
    rel_clock clk = {wall_ms()};
    emq_db *db = open_db(&clk);
    EXPECT(db != NULL, "open after the soak");
    if (!db) return 1;
    if (mode == M_LANES || mode == M_FLOWS || mode == M_REPEATS) {
        long d = mode == M_REPEATS ? 0 : drain(db, &clk);
        if (mode == M_REPEATS) {
            /* complete the occurrences left, at the real time */
            emq_job j;
            int64_t c;
            clk.now = wall_ms() + T_HOUR;
            emq_reap(db, "R", &c);
            while (emq_claim(db, "R", 1000, &j) == EMQ_OK) {
                if (emq_complete(db, "R", j.id, j.attempts) == EMQ_OK)
                    get(j.id)->drained++;
                emq_job_clear(&j);
                d++;
            }
        }
        printf("the drain moved %ld\n", d);
        if (mode == M_REPEATS) account_repeats(db, &clk, secs);
        else account_jobs(db);
    } else if (mode == M_STREAMS) {
        account_stream(db);
    } else {
        account_events(db);
    }
    size_t viol = 0, notes = 0;
    EXPECT(rel_check(db, &viol, &notes, 1) == EMQ_OK && viol == 0,
           "check: %zu violations", viol);
    emq_close(db);
    if (!getenv("EMQ_CRASH_DIR")) rel_rmrf(dir);
    printf("%ld passed, %ld failed\n", rel_passed, rel_failed);
    return rel_failed ? 1 : 0;
}
