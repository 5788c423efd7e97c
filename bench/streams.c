/*
 * streams.c — emqlite-bench-streams: the Tier 5 stream verbs against a
 * redis-server doing the same with XADD / XREADGROUP / XACK, in one run.
 *
 *   bench/emqlite-bench-streams [--n N] [--repeat R] [--sync normal|full|
 *                                both] [--smoke]
 *   bench/emqlite-bench-streams --instr append|cycle|batch [--n N]
 *       (under valgrind --tool=callgrind --collect-atstart=no: collects
 *       the measured loop alone, emqlite only, synchronous NORMAL;
 *       bench/streams_instr.sh divides by the entries)
 *
 * Workloads (a record is the protocol's: field `id` = a minted EVT id, then
 * one 100-byte field):
 *  - append: N appends, one transition each (emq_stream_append: mint an
 *    EVT id, XADD under its entry id); the peer's client mints the same way
 *    and sends XADD key <entry id> id <EVT id> payload <100 bytes>;
 *  - read+ack: N records appended first, then N cycles of READ-GROUP `>`
 *    COUNT 1 and ACK of the entry read (two transitions / two round trips);
 *  - read+ack batch: the same by 100 (READ-GROUP COUNT 100, one ACK of the
 *    100 ids): entries per second.
 * Systems: emqlite on a fresh file (pinned to CPU 0); the peer, a private
 * redis-server with its client pinned to CPU 0 and the server on CPU 0
 * ("1 CPU", the pinned peer) or CPU 1 ("2 CPUs") over TCP, and on CPU 0
 * over its Unix socket ("unix, 1 CPU": the faster local path a user on
 * one machine would pick; issue 33 item 5). synchronous NORMAL is
 * paired with no persistence, FULL with appendonly yes + appendfsync
 * always. Best of R rounds, the systems interleaved. Every reply is
 * checked (ids, counts, the acked entries), so a run that finished also
 * showed the verbs did what they say. Prints a markdown table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "config.h"
#include "bench.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define STREAMS_CALLGRIND 1
#endif
#endif
#ifndef STREAMS_CALLGRIND
#define CALLGRIND_TOGGLE_COLLECT
#endif

#ifdef HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

#define Q "bench"
#define NAME "ev"
#define KEY "emq:{bench}:stream:ev"
#define BATCH 100

static int64_t n_ops = 20000;
static char workdir[512];
static char payload[BENCH_PAYLOAD];

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "emqlite-bench-streams: %s%s%s\n", what,
            detail ? ": " : "", detail ? detail : "");
    exit(1);
}

/* The entry id of an EVT branded id (PROTOCOL.md T5.1). */
static void entry_id(const char *id, char out[EMQ_XID_SIZE])
{
    uint64_t snow;
    if (emq_id_parse(id, EMQ_ID_LEN, NULL, &snow) != EMQ_OK)
        die("a minted id does not parse", id);
    snprintf(out, EMQ_XID_SIZE, "%lld-%llu",
             (long long)(EMQ_EPOCH_MS + (int64_t)(snow >> 22)),
             (unsigned long long)(snow & 0x3FFFFF));
}

/* ---------------------------------------------------------------- emqlite */

static emq_db *emq_fresh(int sync)
{
    char path[600];
    emq_options o;
    emq_db *db;
    snprintf(path, sizeof path, "%s/streams.db", workdir);
    unlink(path);
    snprintf(path + strlen(path), sizeof path - strlen(path), "-wal");
    unlink(path);
    path[strlen(path) - 4] = '\0';
    emq_options_init(&o);
    o.synchronous = sync;
    if (emq_open(path, &o, &db) != EMQ_OK)
        die("cannot open", path);
    return db;
}

static void emq_fill(emq_db *db, int64_t n)
{
    const void *fv[2] = { "payload", payload };
    size_t fl[2] = { 7, BENCH_PAYLOAD };
    for (int64_t i = 0; i < n; i++)
        if (emq_stream_append(db, Q, NAME, fv, fl, 2, NULL) != EMQ_OK)
            die("append", emq_errmsg(db));
}

/* --instr: the measured loops run with callgrind collecting. */
static int instr;

static double emq_append(int sync)
{
    emq_db *db = emq_fresh(sync);
    if (instr) emq_fill(db, BATCH);  /* statements prepared, cache warm */
    double t = bench_now();
    if (instr) CALLGRIND_TOGGLE_COLLECT;
    emq_fill(db, n_ops);
    if (instr) CALLGRIND_TOGGLE_COLLECT;
    t = bench_now() - t;
    emq_close(db);
    return (double)n_ops / t;
}

static double emq_cycle(int sync, int batch)
{
    emq_db *db = emq_fresh(sync);
    emq_stream_entry *e;
    size_t n;
    int64_t acked, done = 0;
    emq_fill(db, n_ops);
    if (emq_stream_group_create(db, Q, NAME, "g", "0", 0) != EMQ_OK)
        die("group create", emq_errmsg(db));
    double t = bench_now();
    if (instr) CALLGRIND_TOGGLE_COLLECT;
    while (done < n_ops) {
        const char *ids[BATCH];
        if (emq_stream_group_read(db, Q, NAME, "g", "c", ">", batch, -1, &e,
                                  &n) != EMQ_OK || n == 0)
            die("group read", emq_errmsg(db));
        for (size_t i = 0; i < n; i++)
            ids[i] = e[i].xid;
        if (emq_stream_ack(db, Q, NAME, "g", ids, n, &acked) != EMQ_OK ||
            acked != (int64_t)n)
            die("ack", emq_errmsg(db));
        done += (int64_t)n;
        emq_stream_entries_free(e, n);
    }
    if (instr) CALLGRIND_TOGGLE_COLLECT;
    t = bench_now() - t;
    emq_close(db);
    return (double)done / t;
}

/* ------------------------------------------------------------------ peer */

#ifdef HAVE_HIREDIS
typedef struct peer {
    bench_server sv;
    redisContext *c;
    emq_db *minter;   /* the client's id minting */
} peer;

static void peer_up(peer *p, int sync, int cpu, int unix_socket)
{
    if (bench_server_start(&p->sv, workdir, sync == EMQ_SYNC_FULL, cpu) != 0)
        die("cannot start the server", NULL);
    p->c = unix_socket ? redisConnectUnix(p->sv.sock)
                       : redisConnect("127.0.0.1", p->sv.port);
    if (!p->c || p->c->err)
        die("cannot connect to the server", p->c ? p->c->errstr : NULL);
    if (emq_open(":memory:", NULL, &p->minter) != EMQ_OK)
        die("cannot open the minter", NULL);
}

static void peer_down(peer *p)
{
    redisFree(p->c);
    emq_close(p->minter);
    bench_server_stop(&p->sv);
}

static void expect(redisReply *r, int type, const char *what)
{
    if (!r || r->type != type)
        die(what, r && r->type == REDIS_REPLY_ERROR ? r->str : "bad reply");
}

static void peer_fill(peer *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        char id[EMQ_ID_SIZE], xid[EMQ_XID_SIZE];
        if (emq_mint(p->minter, "EVT", id) != EMQ_OK)
            die("mint", NULL);
        entry_id(id, xid);
        const char *av[7] = { "XADD", KEY, xid, "id", id, "payload",
                              payload };
        size_t al[7] = { 4, sizeof KEY - 1, strlen(xid), 2, EMQ_ID_LEN, 7,
                         BENCH_PAYLOAD };
        redisReply *r = redisCommandArgv(p->c, 7, av, al);
        expect(r, REDIS_REPLY_STRING, "XADD");
        if (strcmp(r->str, xid) != 0)
            die("XADD answered another id", r->str);
        freeReplyObject(r);
    }
}

static double peer_append(int sync, int cpu, int unix_socket)
{
    peer p;
    peer_up(&p, sync, cpu, unix_socket);
    double t = bench_now();
    peer_fill(&p, n_ops);
    t = bench_now() - t;
    peer_down(&p);
    return (double)n_ops / t;
}

static double peer_cycle(int sync, int cpu, int unix_socket, int batch)
{
    peer p;
    int64_t done = 0;
    char cnt[16];
    peer_up(&p, sync, cpu, unix_socket);
    peer_fill(&p, n_ops);
    redisReply *r = redisCommand(p.c, "XGROUP CREATE %s g 0", KEY);
    expect(r, REDIS_REPLY_STATUS, "XGROUP CREATE");
    freeReplyObject(r);
    snprintf(cnt, sizeof cnt, "%d", batch);
    double t = bench_now();
    while (done < n_ops) {
        const char *rv[9] = { "XREADGROUP", "GROUP", "g", "c", "COUNT", cnt,
                              "STREAMS", KEY, ">" };
        r = redisCommandArgv(p.c, 9, rv, NULL);
        expect(r, REDIS_REPLY_ARRAY, "XREADGROUP");
        redisReply *es = r->element[0]->element[1];
        size_t n = es->elements;
        const char *av[3 + BATCH];
        size_t al[3 + BATCH];
        av[0] = "XACK", av[1] = KEY, av[2] = "g";
        al[0] = 4, al[1] = sizeof KEY - 1, al[2] = 1;
        for (size_t i = 0; i < n; i++) {
            av[3 + i] = es->element[i]->element[0]->str;
            al[3 + i] = es->element[i]->element[0]->len;
        }
        redisReply *a = redisCommandArgv(p.c, (int)(3 + n), av, al);
        expect(a, REDIS_REPLY_INTEGER, "XACK");
        if (a->integer != (long long)n)
            die("XACK acked another count", NULL);
        freeReplyObject(a);
        freeReplyObject(r);
        done += (int64_t)n;
    }
    t = bench_now() - t;
    peer_down(&p);
    return (double)done / t;
}
#endif

/* ------------------------------------------------------------------ main */

enum { W_APPEND, W_CYCLE, W_BATCH, NW };
enum { S_EMQ, S_PEER1, S_PEER2, S_PEERU, NS };
static const char *const sname[NS] = { "emqlite", "peer, 1 CPU",
                                       "peer, 2 CPUs", "peer unix, 1 CPU" };

static const char *const wname[NW] = {
    "append, records/s (1 transition each)",
    "read+ack, cycles/s (READ-GROUP COUNT 1, ACK 1)",
    "read+ack by 100, entries/s (READ-GROUP COUNT 100, ACK 100)" };

static double measure(int sys, int w, int sync)
{
    if (sys == S_EMQ)
        return w == W_APPEND ? emq_append(sync)
                             : emq_cycle(sync, w == W_CYCLE ? 1 : BATCH);
#ifdef HAVE_HIREDIS
    int cpu = sys == S_PEER2 ? 1 : 0, ux = sys == S_PEERU;
    return w == W_APPEND ? peer_append(sync, cpu, ux)
                         : peer_cycle(sync, cpu, ux, w == W_CYCLE ? 1 : BATCH);
#else
    (void)w;
    (void)sync;
    return -1;
#endif
}

static void ratio(double a, double b)
{
    if (a > 0 && b > 0)
        printf(" %.2f× |", a / b);
    else
        printf(" — |");
}

int main(int argc, char **argv)
{
    int repeat = 3, smoke = 0, syncs[2] = { EMQ_SYNC_NORMAL, EMQ_SYNC_FULL };
    int nsync = 2, what = -1;
    double best[2][NW][NS];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--instr") && i + 1 < argc) {
            const char *w = argv[++i];
            what = !strcmp(w, "append") ? W_APPEND
                 : !strcmp(w, "cycle") ? W_CYCLE
                 : !strcmp(w, "batch") ? W_BATCH : -2;
            if (what == -2) {
                fprintf(stderr, "%s: --instr append|cycle|batch\n", argv[0]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n_ops = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--smoke"))
            smoke = 1;
        else if (!strcmp(argv[i], "--sync") && i + 1 < argc) {
            const char *s = argv[++i];
            nsync = strcmp(s, "both") ? 1 : 2;
            syncs[0] = strcmp(s, "full") ? EMQ_SYNC_NORMAL : EMQ_SYNC_FULL;
        } else {
            fprintf(stderr, "usage: %s [--n N] [--repeat R] [--sync "
                    "normal|full|both] [--smoke]\n"
                    "       %s --instr append|cycle|batch [--n N]\n",
                    argv[0], argv[0]);
            return 2;
        }
    }
    if (smoke) {
        n_ops = 300;
        repeat = 1;
    }
    if (n_ops < BATCH || n_ops % BATCH)
        die("--n must be a multiple of 100", NULL);
    memset(payload, 'p', sizeof payload);
    snprintf(workdir, sizeof workdir, "%s/emqlite-bench-streams.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(workdir))
        die("mkdtemp", workdir);
    if (what >= 0) {
        char cmd[600];
        instr = 1;
        measure(S_EMQ, what, EMQ_SYNC_NORMAL);
        printf("instr %s n=%lld callgrind-macros=%s\n",
               what == W_APPEND ? "append" : what == W_CYCLE ? "cycle"
                                                           : "batch",
               (long long)n_ops,
#ifdef STREAMS_CALLGRIND
               "yes"
#else
               "no"
#endif
        );
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", workdir);
        return system(cmd) != 0;
    }
    int peer = bench_server_binary() != NULL;
#ifndef HAVE_HIREDIS
    peer = 0;
#endif
    if (bench_ncpu() < 2 && peer)
        fprintf(stderr, "emqlite-bench-streams: one CPU: the 2-CPU peer runs "
                "on CPU 0 too\n");
    bench_pin(0);
    for (int s = 0; s < nsync; s++)
        for (int w = 0; w < NW; w++)
            for (int k = 0; k < NS; k++)
                best[s][w][k] = -1;
    for (int round = 0; round < repeat; round++)
        for (int s = 0; s < nsync; s++)
            for (int w = 0; w < NW; w++)
                for (int k = 0; k < NS; k++) {
                    if (k != S_EMQ && !peer)
                        continue;
                    fprintf(stderr, "  streams: round %d/%d: %s, %s, %s ...\n",
                            round + 1, repeat, wname[w], sname[k],
                            syncs[s] == EMQ_SYNC_FULL ? "FULL" : "NORMAL");
                    double v = measure(k, w, syncs[s]);
                    if (v > best[s][w][k])
                        best[s][w][k] = v;
                }
    printf("emqlite %s, SQLite %s; %lld operations per phase, best of %d; "
           "client pinned to CPU 0, server on CPU 0 (1 CPU) or CPU 1 "
           "(2 CPUs), over TCP or (unix) its Unix socket\n\n",
           emq_version(), emq_sqlite_version(),
           (long long)n_ops, repeat);
    for (int s = 0; s < nsync; s++) {
        printf("#### synchronous %s — peer %s\n\n",
               syncs[s] == EMQ_SYNC_FULL ? "FULL" : "NORMAL",
               syncs[s] == EMQ_SYNC_FULL ? "appendonly yes, appendfsync always"
                                         : "no persistence");
        printf("| | emqlite | peer, 1 CPU | peer, 2 CPUs | peer unix, 1 CPU "
               "| emqlite/peer 1 CPU | emqlite/peer 2 CPUs "
               "| emqlite/peer unix |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int w = 0; w < NW; w++) {
            printf("| %s |", wname[w]);
            for (int k = 0; k < NS; k++)
                if (best[s][w][k] > 0)
                    printf(" %.0f |", best[s][w][k]);
                else
                    printf(" — |");
            ratio(best[s][w][S_EMQ], best[s][w][S_PEER1]);
            ratio(best[s][w][S_EMQ], best[s][w][S_PEER2]);
            ratio(best[s][w][S_EMQ], best[s][w][S_PEERU]);
            printf("\n");
        }
        printf("\n");
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", workdir);
    if (system(cmd) != 0)
        fprintf(stderr, "emqlite-bench-streams: could not remove %s\n",
                workdir);
    return 0;
}
