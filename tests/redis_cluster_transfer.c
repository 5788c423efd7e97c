/*
 * redis_cluster_transfer.c — emqlite files and a real Redis/Valkey Cluster
 * of three primaries (tests/redis_cluster.sh): the fixture whose queues
 * spread over every node, the Lua bundle continuing them on the nodes that
 * own them, and pushes during a live resharding of one queue's slot.
 *
 *   tests/redis_cluster_transfer fixture DB
 *       build the fixture in the new file DB at the wall clock T0 (printed):
 *       queues mail and b (slots 4247, 3300: the first primary's range),
 *       c and q1 (7365, 7450: the second's, beside {emq}:version's 9051),
 *       other and d (11361, 11298: the third's; other paused), each with
 *       pending, active, scheduled, dead and completed jobs and binary
 *       payloads, and the resharding queues q0 (3387) and q2 (11641) of
 *       240 jobs each
 *   tests/redis_cluster_transfer lua SEED LUADIR DB T0
 *       after `emqlite push` of the fixture: the fence read on its slot's
 *       node; per queue the pause gate, claim.lua and complete.lua through
 *       EVALSHA on the node owning the queue (at T0 + 1 s), the same
 *       claim and complete on DB (a copy of the fixture), the same replies;
 *       a script sent to another node answered MOVED; a script mixing two
 *       queues' keys refused (CROSSSLOT); then DB and the cluster verify
 *       equal (emq_verify)
 *   tests/redis_cluster_transfer reshard SEED DB QUEUE plain|by-slot
 *       flush the cluster, push DB while QUEUE's slot moves to the next
 *       primary (CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE of the keys
 *       the source holds, SETSLOT NODE), driven from the push's
 *       checkpoints (and, by slot, its TRYAGAIN wait), so that ASK and
 *       MOVED really happen; then the counts, verify and a pull back into a
 *       new file byte-identical to DB's export
 *   tests/redis_cluster_transfer bulk DB N QUEUES
 *       (by hand, for measurements) N jobs of 100-byte payloads over
 *       QUEUES queues bulk00, bulk01, …, enqueue_many in batches of 1000
 *
 * Each mode prints what it checked ("ok: …", "FAIL: …") and exits 0 when
 * everything held. The cluster must be private to the test (modes flush
 * it). Driven by tests/redis_cluster_transfer.sh.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <hiredis/hiredis.h>

#include "emqlite.h"
#include "emqlite_remote.h"
#include "luabundle.h"
#include "resp.h"

static int failures;

/* "ok: …" or "FAIL: …" (counted), one line. */
static void say(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(ok ? "ok: " : "FAIL: ", stdout);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    failures += !ok;
}

#define bad(...) say(0, __VA_ARGS__)
#define good(...) say(1, __VA_ARGS__)

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t clock_now;

static int64_t pinned(void *ctx)
{
    (void)ctx;
    return clock_now;
}

static emq_db *open_db(const char *path, int pin)
{
    emq_options o;
    emq_db *db;
    char err[256] = "";
    emq_options_init(&o);
    if (pin)
        o.clock = pinned;
    if (emq_open_ex(path, &o, &db, err, sizeof err) != EMQ_OK) {
        fprintf(stderr, "redis_cluster_transfer: open %s: %s\n", path, err);
        exit(99);
    }
    return db;
}

/* ------------------------------------------------------------ the cluster */

typedef struct node {
    int port;
    redisContext *c;
    char id[64];
} node;

typedef struct cluster {
    node n[8];
    size_t nn;
    int owner[16384];    /* slot -> index in n */
} cluster;

static redisReply *must(redisContext *c, void *r)
{
    if (!r) {
        fprintf(stderr, "redis_cluster_transfer: %s\n", c->errstr);
        exit(99);
    }
    return r;
}

static redisReply *cmdv(node *n, size_t argc, const char **argv)
{
    size_t lens[64];
    for (size_t i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    return must(n->c, redisCommandArgv(n->c, (int)argc, argv, lens));
}

/* One command whose reply is dropped; an error reply is a failure. */
static void run(node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = must(n->c, redisvCommand(n->c, fmt, ap));
    va_end(ap);
    if (r->type == REDIS_REPLY_ERROR)
        bad("127.0.0.1:%d: %s", n->port, r->str);
    freeReplyObject(r);
}

static long long integer(node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = must(n->c, redisvCommand(n->c, fmt, ap));
    va_end(ap);
    long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    freeReplyObject(r);
    return v;
}

static int port_of(const char *seed)
{
    const char *c = strrchr(seed, ':');
    return c ? atoi(c + 1) : 6379;
}

/* The primaries and the slot map (CLUSTER SLOTS of the seed). */
static void cluster_load(cluster *k, const char *seed)
{
    redisContext *s = redisConnect("127.0.0.1", port_of(seed));
    if (!s || s->err) {
        fprintf(stderr, "redis_cluster_transfer: cannot reach %s\n", seed);
        exit(99);
    }
    memset(k, 0, sizeof *k);
    redisReply *r = must(s, redisCommand(s, "CLUSTER SLOTS"));
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        redisReply *e = r->element[i];
        int port = (int)e->element[2]->element[1]->integer;
        size_t j;
        for (j = 0; j < k->nn && k->n[j].port != port; j++)
            ;
        if (j == k->nn) {
            k->n[j].port = port;
            k->n[j].c = redisConnect("127.0.0.1", port);
            redisReply *id = must(k->n[j].c, redisCommand(k->n[j].c,
                                                           "CLUSTER MYID"));
            snprintf(k->n[j].id, sizeof k->n[j].id, "%s", id->str);
            freeReplyObject(id);
            k->nn++;
        }
        for (long long sl = e->element[0]->integer;
             sl <= e->element[1]->integer; sl++)
            k->owner[sl] = (int)j;
    }
    freeReplyObject(r);
    redisFree(s);
    /* the primaries in slot order */
    for (size_t a = 0; a < k->nn; a++)
        for (size_t b = a + 1; b < k->nn; b++)
            if (k->n[b].port != k->n[a].port) {
                int fa = -1, fb = -1;
                for (int sl = 0; sl < 16384 && (fa < 0 || fb < 0); sl++) {
                    if (fa < 0 && k->owner[sl] == (int)a)
                        fa = sl;
                    if (fb < 0 && k->owner[sl] == (int)b)
                        fb = sl;
                }
                if (fb < fa) {
                    node t = k->n[a];
                    k->n[a] = k->n[b];
                    k->n[b] = t;
                    for (int sl = 0; sl < 16384; sl++)
                        k->owner[sl] = k->owner[sl] == (int)a   ? (int)b
                                       : k->owner[sl] == (int)b ? (int)a
                                                                : k->owner[sl];
                }
            }
}

static void cluster_free(cluster *k)
{
    for (size_t i = 0; i < k->nn; i++)
        redisFree(k->n[i].c);
}

static unsigned slot_of(const char *key)
{
    return emq_slot(key, strlen(key));
}

static node *owner(cluster *k, const char *key)
{
    return &k->n[k->owner[slot_of(key)]];
}

/* --------------------------------------------------------------- fixture */

/* The spread queues, one row a queue: its name and the first primary's
 * index it lands on with an even split of three. */
static const char *const spread[] = { "mail", "b", "c", "q1", "other", "d" };
#define NSPREAD (sizeof spread / sizeof spread[0])

static uint64_t seq = 1000;

static const char *next_id(char id[EMQ_ID_SIZE])
{
    emq_id_encode("JOB", seq++, id);
    return id;
}

#define TRY(x, want) do { int r_ = (x); if (r_ != (want)) { \
        bad("%s: %d %s", #x, r_, emq_errmsg(db)); goto out; } } while (0)

static int do_fixture(const char *path)
{
    char id[EMQ_ID_SIZE], pay[64];
    emq_job job;
    remove(path);
    clock_now = wall_ms();
    emq_db *db = open_db(path, 1);
    for (size_t q = 0; q < NSPREAD; q++) {
        const char *name = spread[q];
        for (int j = 0; j < 6; j++) {
            int n = snprintf(pay, sizeof pay, "%s\r\n%d", name, j);
            pay[n++] = '\0';
            pay[n++] = (char)0xff;
            TRY(emq_enqueue(db, name, next_id(id), pay, (size_t)n),
                EMQ_ENQUEUED);
        }
        TRY(emq_claim(db, name, 600000, &job), EMQ_OK); /* stays active */
        emq_job_clear(&job);
        TRY(emq_claim(db, name, 1000, &job), EMQ_OK);
        TRY(emq_retry(db, name, job.id, job.attempts, 0, 1, "fatal\0x", 7),
            EMQ_DEAD);
        emq_job_clear(&job);
        TRY(emq_claim(db, name, 1000, &job), EMQ_OK);
        TRY(emq_retry(db, name, job.id, job.attempts, 60000, 5, "flaky", 5),
            EMQ_SCHEDULED);
        emq_job_clear(&job);
        TRY(emq_claim(db, name, 1000, &job), EMQ_OK);
        TRY(emq_complete(db, name, job.id, job.attempts), EMQ_OK);
        emq_job_clear(&job);
        TRY(emq_enqueue_at(db, name, next_id(id), "later", 5,
                           clock_now + 86400000), EMQ_SCHEDULED);
        /* a stream with a group and a pending entry: one key at the
         * queue's slot like the others (issue 16) */
        const void *fv[4] = { "kind", "sent", "q", name };
        emq_stream_entry *e;
        size_t ne;
        for (int j = 0; j < 2; j++)
            TRY(emq_stream_append(db, name, "events", fv, NULL, 4, NULL),
                EMQ_OK);
        TRY(emq_stream_group_create(db, name, "events", "w", "0", 0),
            EMQ_OK);
        TRY(emq_stream_group_read(db, name, "events", "w", "c1", ">", 1, -1,
                                  &e, &ne), EMQ_OK);
        emq_stream_entries_free(e, ne);
    }
    TRY(emq_queue_pause(db, "other"), EMQ_OK);
    for (int q = 0; q < 2; q++)
        for (int j = 0; j < 240; j++) {
            int n = snprintf(pay, sizeof pay, "reshard %d", j);
            TRY(emq_enqueue(db, q ? "q2" : "q0", next_id(id), pay, (size_t)n),
                EMQ_ENQUEUED);
        }
    printf("%lld\n", (long long)clock_now);
out:
    emq_close(db);
    return failures != 0;
}

/* ------------------------------------------------------------------ lua */

enum { S_CLAIM, S_COMPLETE, S_N };
static const char *const scripts[S_N] = { "claim", "complete" };

static void reply_text(char *out, size_t cap, const redisReply *r)
{
    size_t k = 0;
    if (r->type == REDIS_REPLY_INTEGER) {
        snprintf(out, cap, "%lld", r->integer);
    } else if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS ||
               r->type == REDIS_REPLY_ERROR) {
        for (size_t i = 0; i < r->len && k + 5 < cap; i++)
            k += (size_t)snprintf(out + k, cap - k,
                                  r->str[i] >= 0x20 && r->str[i] < 0x7f
                                      ? "%c" : "\\x%02x",
                                  (unsigned char)r->str[i]);
    } else if (r->type == REDIS_REPLY_ARRAY) {
        out[k++] = '[';
        for (size_t i = 0; i < r->elements && k + 8 < cap; i++) {
            if (i)
                out[k++] = ',';
            reply_text(out + k, cap - k, r->element[i]);
            k += strlen(out + k);
        }
        snprintf(out + k, cap - k, "]");
    } else {
        snprintf(out, cap, "nil");
    }
}

static int do_lua(const char *seed, const char *lua, const char *path,
                  int64_t T0)
{
    cluster k;
    char sha[8][S_N][41], err[512], key[4][128], now[32], tok[32], text[512];
    emq_job job;
    cluster_load(&k, seed);
    for (size_t i = 0; i < k.nn; i++)
        if (emq_luabundle_load(k.n[i].c, lua, scripts, S_N, sha[i], err,
                               sizeof err) != 0) {
            bad("SCRIPT LOAD on 127.0.0.1:%d: %s", k.n[i].port, err);
            return 1;
        }
    /* The fence, at connect: on the node owning {emq}:version's slot. */
    node *vn = owner(&k, "{emq}:version");
    redisReply *v = must(vn->c, redisCommand(vn->c, "GET {emq}:version"));
    if (v->type == REDIS_REPLY_STRING && strcmp(v->str, "echomq:4.0.0") == 0)
        good("the fence {emq}:version (slot 9051) on 127.0.0.1:%d reads "
             "echomq:4.0.0", vn->port);
    else
        bad("the fence on 127.0.0.1:%d", vn->port);
    freeReplyObject(v);
    clock_now = T0 + 1000;
    snprintf(now, sizeof now, "%lld", (long long)clock_now);
    emq_db *db = open_db(path, 1);
    for (size_t q = 0; q < NSPREAD; q++) {
        const char *name = spread[q];
        snprintf(key[0], sizeof key[0], "emq:{%s}:pending", name);
        snprintf(key[1], sizeof key[1], "emq:{%s}:active", name);
        snprintf(key[2], sizeof key[2], "emq:{%s}:job:", name);
        snprintf(key[3], sizeof key[3], "emq:{%s}:meta", name);
        node *n = owner(&k, key[0]);
        size_t ni = (size_t)(n - k.n);
        int rc = emq_claim(db, name, 30000, &job);
        if (integer(n, "HEXISTS %s paused", key[3]) == 1) {
            if (rc == EMQ_EMPTY)
                good("%s (slot %u, 127.0.0.1:%d): paused, nothing claimed on "
                     "either side", name, slot_of(key[0]), n->port);
            else
                bad("%s: paused on the server, emqlite claimed (%d)", name,
                    rc);
            emq_job_clear(&job);
            continue;
        }
        const char *av[] = { "EVALSHA", sha[ni][S_CLAIM], "2", key[0], key[1],
                             key[2], "30000", now };
        redisReply *c = cmdv(n, 8, av);
        if (rc != EMQ_OK || c->type != REDIS_REPLY_ARRAY || c->elements != 3 ||
            strcmp(c->element[0]->str, job.id) != 0 ||
            c->element[1]->len != job.payload_len ||
            memcmp(c->element[1]->str, job.payload, job.payload_len) != 0 ||
            c->element[2]->integer != job.attempts) {
            reply_text(text, sizeof text, c);
            bad("%s: claim on 127.0.0.1:%d answered %s, emqlite %d %s", name,
                n->port, text, rc, rc == EMQ_OK ? job.id : "");
            freeReplyObject(c);
            emq_job_clear(&job);
            continue;
        }
        freeReplyObject(c);
        /* complete, on the same node */
        char row[160], base[128];
        snprintf(row, sizeof row, "emq:{%s}:job:%s", name, job.id);
        snprintf(base, sizeof base, "emq:{%s}:", name);
        snprintf(tok, sizeof tok, "%lld", (long long)job.attempts);
        const char *cv[] = { "EVALSHA", sha[ni][S_COMPLETE], "2", key[1], row,
                             job.id, tok, base, now };
        redisReply *d = cmdv(n, 9, cv);
        rc = emq_complete(db, name, job.id, job.attempts);
        if (d->type == REDIS_REPLY_INTEGER && d->integer == 1 && rc == EMQ_OK)
            good("%s (slot %u, 127.0.0.1:%d): claim.lua and complete.lua "
                 "answered as emqlite (%s, token %lld)", name,
                 slot_of(key[0]), n->port, job.id, (long long)job.attempts);
        else
            bad("%s: complete answered %lld, emqlite %d", name,
                d->type == REDIS_REPLY_INTEGER ? d->integer : -99, rc);
        freeReplyObject(d);
        emq_job_clear(&job);
    }
    /* A runtime that sends a queue's script elsewhere is redirected. */
    node *mn = owner(&k, "emq:{mail}:pending");
    node *other = &k.n[(size_t)(mn - k.n + 1) % k.nn];
    const char *mv[] = { "EVALSHA", sha[0][S_CLAIM], "2", "emq:{mail}:pending",
                         "emq:{mail}:active", "emq:{mail}:job:", "30000",
                         now };
    redisReply *m = cmdv(other, 8, mv);
    if (m->type == REDIS_REPLY_ERROR && strncmp(m->str, "MOVED 4247 ", 11) == 0)
        good("claim.lua sent to 127.0.0.1:%d: %s", other->port, m->str);
    else
        bad("claim.lua on a node not owning mail's slot was not redirected");
    freeReplyObject(m);
    /* Keys of two queues (two slots) never go in one script call. */
    const char *xv[] = { "EVALSHA", sha[0][S_COMPLETE], "2",
                         "emq:{mail}:active", "emq:{c}:job:JOB00000000001",
                         "JOB00000000001", "1", "emq:{mail}:" };
    redisReply *x = cmdv(mn, 8, xv);
    if (x->type == REDIS_REPLY_ERROR && strncmp(x->str, "CROSSSLOT", 9) == 0)
        good("a script given two queues' keys is refused: %s", x->str);
    else
        bad("a cross-slot script call was not refused");
    freeReplyObject(x);
    /* The file continued as the cluster did: the same keyspace. */
    emq_remote *r = NULL;
    emq_verify_report vr;
    if (emq_remote_connect(seed, NULL, &r, err, sizeof err) != EMQ_OK) {
        bad("connect %s: %s", seed, err);
    } else if (emq_verify(db, r, NULL, &vr) != EMQ_OK || !vr.equal) {
        bad("verify after the bundle: %s %s", vr.first ? vr.first : "",
            vr.reason);
        emq_verify_report_free(&vr);
    } else {
        good("after the bundle on %zu nodes the continued file and the "
             "cluster verify equal (%llu keys, digest %016llx)",
             emq_remote_nodes(r), (unsigned long long)vr.file_keys,
             (unsigned long long)vr.file_digest);
        emq_verify_report_free(&vr);
    }
    emq_remote_close(r);
    emq_close(db);
    cluster_free(&k);
    return failures != 0;
}

/* -------------------------------------------------------------- reshard */

typedef struct mover {
    cluster *k;
    unsigned slot;
    node *from, *to;
    int by_slot, state;
    long long moved;
    uint64_t open_at;     /* by slot: commands once the block is open */
    int waits;
} mover;

static void begin_move(mover *m)
{
    run(m->to, "CLUSTER SETSLOT %u IMPORTING %s", m->slot, m->from->id);
    run(m->from, "CLUSTER SETSLOT %u MIGRATING %s", m->slot, m->to->id);
}

/* MIGRATE every key the source holds in the slot, 100 at a time. */
static void migrate_keys(mover *m)
{
    for (;;) {
        redisReply *ks = must(m->from->c,
                              redisCommand(m->from->c,
                                           "CLUSTER GETKEYSINSLOT %u 100",
                                           m->slot));
        if (ks->type != REDIS_REPLY_ARRAY || ks->elements == 0) {
            freeReplyObject(ks);
            return;
        }
        const char *av[112];
        size_t al[112], n = 0;
        char port[16];
        snprintf(port, sizeof port, "%d", m->to->port);
        const char *head[] = { "MIGRATE", "127.0.0.1", port, "", "0", "5000",
                               "KEYS" };
        for (; n < 7; n++) {
            av[n] = head[n];
            al[n] = strlen(head[n]);
        }
        for (size_t i = 0; i < ks->elements; i++, n++) {
            av[n] = ks->element[i]->str;
            al[n] = ks->element[i]->len;
        }
        redisReply *r = must(m->from->c, redisCommandArgv(m->from->c, (int)n,
                                                          av, al));
        if (r->type == REDIS_REPLY_ERROR)
            bad("MIGRATE: %s", r->str);
        freeReplyObject(r);
        freeReplyObject(ks);
    }
}

/* SETSLOT NODE on every primary, the new owner first. */
static void end_move(mover *m)
{
    run(m->to, "CLUSTER SETSLOT %u NODE %s", m->slot, m->to->id);
    for (size_t i = 0; i < m->k->nn; i++)
        if (&m->k->n[i] != m->to)
            run(&m->k->n[i], "CLUSTER SETSLOT %u NODE %s", m->slot, m->to->id);
}

static long long in_slot(node *n, unsigned slot)
{
    return integer(n, "CLUSTER COUNTKEYSINSLOT %u", slot);
}

/* Plain: once the source holds 20 of the queue's keys, start the move and
 * migrate them (later keys must follow ASK); once the target holds more
 * than were migrated (ASK was followed), end it (later ones: MOVED). By
 * slot: start the move while the queue's MULTI block is open. */
static void on_checkpoint(void *ctx, uint64_t commands)
{
    mover *m = ctx;
    if (m->by_slot) {
        if (m->state == 0 && m->open_at && commands >= m->open_at) {
            begin_move(m);
            m->state = 1;
            printf("   at command %llu (the block of slot %u open on "
                   "127.0.0.1:%d): slot %u migrating to 127.0.0.1:%d\n",
                   (unsigned long long)commands, m->slot, m->from->port,
                   m->slot, m->to->port);
        }
        return;
    }
    if (m->state == 0 && in_slot(m->from, m->slot) >= 20) {
        begin_move(m);
        migrate_keys(m);
        m->moved = in_slot(m->to, m->slot);
        m->state = 1;
        printf("   at command %llu: slot %u migrating, %lld keys migrated to "
               "127.0.0.1:%d\n", (unsigned long long)commands, m->slot,
               m->moved, m->to->port);
    } else if (m->state == 1 && in_slot(m->to, m->slot) > m->moved) {
        long long there = in_slot(m->to, m->slot);
        migrate_keys(m);
        end_move(m);
        m->state = 2;
        printf("   at command %llu: %lld keys on 127.0.0.1:%d (ASK followed); "
               "slot %u now 127.0.0.1:%d's\n", (unsigned long long)commands,
               there, m->to->port, m->slot, m->to->port);
    }
}

/* TRYAGAIN (a block of new keys into the importing node): the migration
 * ends while the push waits. */
static void on_wait(void *ctx, unsigned ms)
{
    mover *m = ctx;
    (void)ms;
    m->waits++;
    if (m->state == 1) {
        migrate_keys(m);
        end_move(m);
        m->state = 2;
        printf("   TRYAGAIN wait %d: slot %u now 127.0.0.1:%d's\n", m->waits,
               m->slot, m->to->port);
    }
}

static int to_buf(void *ctx, const void *p, size_t n)
{
    emq_buf *b = ctx;
    return emq_buf_append(b, p, n) == EMQ_OK ? 0 : 1;
}

/* The count of stream commands sent once the first command of `slot`'s
 * block (after its MULTI) is sent, in a by-slot export. */
static uint64_t block_start(emq_db *db, unsigned slot)
{
    emq_export_options eo;
    emq_transfer_summary s;
    emq_buf b = {0};
    emq_resp_cmd c;
    uint64_t n = 0, found = 0;
    size_t at = 0;
    memset(&c, 0, sizeof c);
    emq_export_options_init(&eo);
    eo.by_slot = 1;
    if (emq_export(db, &eo, to_buf, &b, &s) != EMQ_OK)
        return 0;
    int after_multi = 0;
    while (at < b.len && !found &&
           emq_resp_parse(b.p + at, b.len - at, at, &c, NULL) == EMQ_OK) {
        n++;
        if (c.argc == 1 && c.lens[0] == 5)
            after_multi = 1;
        else if (after_multi && emq_slot(c.argv[1], c.lens[1]) == slot)
            found = n + 3; /* a few of its commands queued */
        else
            after_multi = 0;
        at += c.size;
    }
    emq_resp_cmd_free(&c);
    emq_buf_free(&b);
    return found;
}

static int do_reshard(const char *seed, const char *path, const char *queue,
                      const char *mode)
{
    cluster k;
    char err[512], qkey[160];
    mover m;
    emq_remote *r = NULL;
    emq_push_options po;
    emq_push_report pr;
    emq_verify_report vr;
    emq_pull_report lr;
    cluster_load(&k, seed);
    for (size_t i = 0; i < k.nn; i++)
        run(&k.n[i], "FLUSHALL");
    snprintf(qkey, sizeof qkey, "emq:{%s}:", queue);
    memset(&m, 0, sizeof m);
    m.k = &k;
    m.slot = slot_of(qkey);
    m.from = owner(&k, qkey);
    m.to = &k.n[(size_t)(m.from - k.n + 1) % k.nn];
    m.by_slot = strcmp(mode, "by-slot") == 0;
    emq_db *db = open_db(path, 0);
    if (m.by_slot && !(m.open_at = block_start(db, m.slot)))
        bad("no block of slot %u in the by-slot export", m.slot);
    printf("reshard (%s): queue %s, slot %u, 127.0.0.1:%d -> 127.0.0.1:%d\n",
           mode, queue, m.slot, m.from->port, m.to->port);
    if (emq_remote_connect(seed, NULL, &r, err, sizeof err) != EMQ_OK) {
        bad("connect %s: %s", seed, err);
        goto out;
    }
    emq_push_options_init(&po);
    po.by_slot = m.by_slot;
    po.checkpoint_every = m.by_slot ? 1 : 20;
    po.checkpoint = on_checkpoint;
    po.checkpoint_ctx = &m;
    po.wait = on_wait;
    po.wait_ctx = &m;
    int rc = emq_push(db, r, &po, &pr);
    if (rc != EMQ_OK) {
        bad("push: %d %s", rc, emq_errmsg(db));
        emq_push_report_free(&pr);
        goto out;
    }
    for (size_t i = 0; i < pr.n_nodes; i++)
        printf("   node %s: %llu keys, %llu commands; answered MOVED %llu, "
               "ASK %llu, TRYAGAIN %llu\n", pr.nodes[i].node,
               (unsigned long long)pr.nodes[i].keys,
               (unsigned long long)pr.nodes[i].commands,
               (unsigned long long)pr.nodes[i].moved,
               (unsigned long long)pr.nodes[i].asked,
               (unsigned long long)pr.nodes[i].tryagain);
    if (m.state == 2)
        good("the slot moved during the push");
    else
        bad("the slot did not move (state %d)", m.state);
    if (pr.asked && pr.moved && (!m.by_slot || pr.tryagain))
        good("the push followed ASK %llu times, MOVED %llu times, waited out "
             "TRYAGAIN %llu times", (unsigned long long)pr.asked,
             (unsigned long long)pr.moved, (unsigned long long)pr.tryagain);
    else
        bad("redirections: ASK %llu, MOVED %llu, TRYAGAIN %llu",
            (unsigned long long)pr.asked, (unsigned long long)pr.moved,
            (unsigned long long)pr.tryagain);
    if (pr.match)
        good("every queue's four sets and rows match (%zu queues)",
             pr.n_queues);
    else
        bad("the counts disagree");
    long long left = in_slot(m.from, m.slot), there = in_slot(m.to, m.slot);
    if (left == 0 && there > 0)
        good("slot %u: %lld keys on 127.0.0.1:%d, none left on 127.0.0.1:%d",
             m.slot, there, m.to->port, m.from->port);
    else
        bad("slot %u: %lld keys left on the source, %lld on the target",
            m.slot, left, there);
    if (emq_verify(db, r, NULL, &vr) == EMQ_OK && vr.equal &&
        vr.server_digest == pr.digest)
        good("verify: equal, %llu keys, digest %016llx (nothing lost, "
             "nothing twice)", (unsigned long long)vr.server_keys,
             (unsigned long long)vr.server_digest);
    else
        bad("verify: %s %s", vr.first ? vr.first : "", vr.reason);
    emq_verify_report_free(&vr);
    /* pull back into a new file: the export's bytes */
    char back[4200];
    snprintf(back, sizeof back, "%s.back", path);
    remove(back);
    emq_db *bd = open_db(back, 0);
    if (emq_pull(bd, r, NULL, &lr) != EMQ_OK || !lr.match) {
        bad("pull back: %s", emq_errmsg(bd));
    } else {
        emq_buf a = {0}, b = {0};
        emq_transfer_summary s;
        emq_export(db, NULL, to_buf, &a, &s);
        emq_export(bd, NULL, to_buf, &b, &s);
        if (a.len == b.len && memcmp(a.p, b.p, a.len) == 0)
            good("pulled back from %zu nodes into a new file: its export is "
                 "byte-identical (%zu bytes)", lr.n_nodes, a.len);
        else
            bad("the pulled file's export differs");
        emq_buf_free(&a);
        emq_buf_free(&b);
    }
    emq_pull_report_free(&lr);
    emq_close(bd);
    remove(back);
    emq_push_report_free(&pr);
out:
    emq_remote_close(r);
    emq_close(db);
    cluster_free(&k);
    return failures != 0;
}

/* ----------------------------------------------------------------- bulk */

static int do_bulk(const char *path, long n, int nq)
{
    emq_db *db;
    emq_item items[1000];
    int verdicts[1000];
    char ids[1000][EMQ_ID_SIZE], q[16];
    unsigned char payload[1000][100];
    remove(path);
    if (emq_open(path, NULL, &db) != EMQ_OK)
        return 1;
    double t0 = (double)wall_ms();
    for (long done = 0, batch = 0; done < n; batch++) {
        size_t k = n - done < 1000 ? (size_t)(n - done) : 1000;
        snprintf(q, sizeof q, "bulk%02d", (int)(batch % nq));
        for (size_t i = 0; i < k; i++) {
            emq_mint(db, "JOB", ids[i]);
            for (int b = 0; b < 100; b++)
                payload[i][b] = (unsigned char)((done + (long)i) * 31 + b);
            items[i].id = ids[i];
            items[i].payload = payload[i];
            items[i].len = 100;
        }
        if (emq_enqueue_many(db, q, items, k, verdicts) != EMQ_OK) {
            fprintf(stderr, "enqueue_many: %s\n", emq_errmsg(db));
            emq_close(db);
            return 1;
        }
        done += (long)k;
    }
    printf("enqueued %ld jobs over %d queues in %.2f s\n", n, nq,
           ((double)wall_ms() - t0) / 1000);
    emq_close(db);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && strcmp(argv[1], "fixture") == 0)
        return do_fixture(argv[2]);
    if (argc == 6 && strcmp(argv[1], "lua") == 0)
        return do_lua(argv[2], argv[3], argv[4], strtoll(argv[5], NULL, 10));
    if (argc == 6 && strcmp(argv[1], "reshard") == 0)
        return do_reshard(argv[2], argv[3], argv[4], argv[5]);
    if (argc == 5 && strcmp(argv[1], "bulk") == 0)
        return do_bulk(argv[2], atol(argv[3]), atoi(argv[4]));
    fprintf(stderr, "usage: %s fixture DB | lua SEED LUADIR DB T0 | reshard "
            "SEED DB QUEUE plain|by-slot | bulk DB N QUEUES\n", argv[0]);
    return 2;
}
