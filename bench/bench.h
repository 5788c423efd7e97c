/*
 * bench.h — the benchmark's shared vocabulary: one interface over the three
 * systems under test (emqlite, hand-written SQL over one jobs table, and a
 * redis-server running the Lua bundle of tests/lua), the workloads that drive
 * them, and the measuring helpers (clocks, percentiles, peak RSS, CPU pinning,
 * file sizes).
 *
 * Rules: every system does the same transitions with the same ids (minted by
 * bench_id from one counter, so FIFO order is byte order) and the same
 * 100-byte payloads; a workload checks every reply and fails loudly (a wrong
 * verdict, a wrong FIFO order, a payload of the wrong size), so a benchmark
 * that "ran" also proved the transitions did what they claim. Nothing here is
 * part of the library: this is a tool built on its public API (plus
 * storage/store.h for the store-level instruction count).
 */
#ifndef EMQ_BENCH_H
#define EMQ_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "emqlite.h"

#define BENCH_QUEUE "bench"
#define BENCH_PAYLOAD 100       /* bytes of every payload                  */
#define BENCH_LEASE_MS 30000    /* lease of every claim                    */
#define BENCH_BATCH 1000        /* items per enqueue_many batch           */
#define BENCH_WINDOW 100        /* peer: pipelined requests in flight      */

/* ---------------------------------------------------------------- systems */

typedef struct bench_item {
    char id[EMQ_ID_SIZE];
} bench_item;

typedef struct bsys bsys;

/** What a system answers about its footprint (-1: not applicable). */
typedef struct bench_foot {
    int64_t disk_bytes;   /* the database file (or the AOF directory)      */
    int64_t wal_bytes;    /* the -wal file, -1 for the peer                */
    int64_t mem_bytes;    /* peer: INFO used_memory; -1 otherwise          */
    int64_t server_hwm_kb;/* peer: the server's VmHWM; -1 otherwise        */
} bench_foot;

typedef struct bsys_ops {
    /* One transition each; 0 on success (a checked verdict), < 0 on error
     * with the message in bsys.err. */
    int (*enqueue)(bsys *s, const char *id);
    /* One batch in one transaction (peer: pipelined, BENCH_WINDOW deep). */
    int (*enqueue_many)(bsys *s, const bench_item *items, size_t n);
    /* 0 with id/token filled, 1 when empty, < 0 on error. The payload is
     * checked to be BENCH_PAYLOAD bytes. */
    int (*claim)(bsys *s, char id[EMQ_ID_SIZE], int64_t *token);
    int (*complete)(bsys *s, const char *id, int64_t token);
    int (*pending)(bsys *s, int64_t *n);
    /* Make the on-disk size meaningful (WAL checkpoint; peer: nothing). */
    int (*settle)(bsys *s);
    int (*footprint)(bsys *s, bench_foot *f);
    void (*close)(bsys *s);
} bsys_ops;

struct bsys {
    const bsys_ops *ops;
    const char *name;     /* "emqlite", "raw", "peer"                      */
    void *h;              /* the system's own state                        */
    char err[512];
    int rc;               /* emqlite: the library's code of the last
                             failure (EMQ_EBUSY, ...); 0 otherwise         */
};

/* bench_conf.history: the file's job history as it comes (on), or set off
 * or to its failures level before the run. */
enum { BENCH_HIST_ON = 0, BENCH_HIST_OFF = 1, BENCH_HIST_FAILURES = 2 };

/** Where and how a system runs. */
typedef struct bench_conf {
    const char *path;     /* emqlite / raw: the database file              */
    int sync;             /* EMQ_SYNC_NORMAL or EMQ_SYNC_FULL              */
    int exclusive;        /* emqlite / raw: locking_mode = EXCLUSIVE       */
    int checksums;        /* emqlite: emq_options.checksums (row sums)     */
    int history;          /* emqlite: BENCH_HIST_* (emq_history_config)   */
    int hist_full;        /* emqlite: history at its bounds (per_queue and
                             the completed jobs kept 1000): every entry
                             and kept job pushes an old one out          */
    int page_size;        /* emqlite / raw: a new file's page size (0:
                             emqlite's default, 1024, for both)          */
    int ckpt_frames;      /* emqlite / raw: checkpoint after this many WAL
                             frames (0: the default, 1000)                 */
    int port;             /* peer: the server's port on 127.0.0.1          */
    int server_pid;       /* peer: for VmHWM                               */
    const char *server_dir;/* peer: its --dir, for the AOF size             */
    const char *unix_path;/* peer: connect to this Unix socket instead of
                             127.0.0.1:port (bench_server.sock)            */
} bench_conf;

int bench_emq_open(const bench_conf *c, bsys *s);
int bench_raw_open(const bench_conf *c, bsys *s);
/** Returns -2 (with a message) when the peer was not built (no hiredis). */
int bench_peer_open(const bench_conf *c, bsys *s);
int bench_err(bsys *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* emqlite's handle under a system (the many-process benchmark's waiting
 * claim). */
emq_db *bench_emq_db(bsys *s);
/* The SQLite connection under a system (page-count mode). */
struct sqlite3 *bench_emq_sqlite(bsys *s);
struct sqlite3 *bench_raw_sqlite(bsys *s);

/* ------------------------------------------------------------ the server */

typedef struct bench_server {
    int pid, port, persist;   /* persist: 0 none, 1 appendonly + always   */
    char dir[512];
    char sock[600];           /* its Unix socket, <dir>/s.sock             */
} bench_server;

/** Path of redis-server (or valkey-server), or NULL when absent. */
const char *bench_server_binary(void);
/** Start a private server pinned to `cpu` (-1: unpinned) in a fresh
 *  directory under `parent`. 0 or -1 (message on stderr). */
int bench_server_start(bench_server *sv, const char *parent, int persist,
                       int cpu);
/** Stop it by its pid and remove its directory. */
void bench_server_stop(bench_server *sv);
/** Remove a directory this program made (mkdtemp), recursively. */
void bench_rmrf(const char *dir);

/* ------------------------------------------------------------ workloads */

/** Latency summary in microseconds. */
typedef struct bench_lat {
    double p50, p99, mean;
} bench_lat;

typedef struct bench_phase {
    double rate;              /* ops/s, jobs/s or cycles/s                */
    bench_lat claim;          /* cycle and depth phases                   */
    int64_t ops;
    int64_t hwm_kb;           /* this process's VmHWM after the phase     */
    bench_foot foot;          /* depth phases                             */
    int64_t depth;
    uint64_t next_seq;        /* id counter after the phase               */
} bench_phase;

/** Ids: the branded id "JOB" + base62 of (1 << 40) + seq. */
void bench_id(uint64_t seq, char out[EMQ_ID_SIZE]);
/** emqlite's default checkpoint interval (emq_options_init's), which raw
 *  SQL follows too unless --checkpoint-frames says otherwise. */
int bench_default_ckpt(void);
/** The 100-byte payload every system stores. */
extern const unsigned char bench_payload[BENCH_PAYLOAD];

int bench_w_enqueue(bsys *s, uint64_t *seq, int64_t n, bench_phase *out);
int bench_w_many(bsys *s, uint64_t *seq, int64_t batches, bench_phase *out);
int bench_w_cycle(bsys *s, uint64_t *seq, int64_t n, bench_phase *out);
/** Top the queue up to `depth` pending with enqueue_many, measure the
 *  footprint, then run `n` steady cycles (claim timed, complete, enqueue one
 *  to hold the depth). `*oldest` is the seq of the oldest pending job (the
 *  one the next claim must return); updated. */
int bench_w_depth(bsys *s, uint64_t *seq, uint64_t *oldest, int64_t depth,
                  int64_t n, bench_phase *out);

/* -------------------------------------------------------------- helpers */

double bench_now(void);                     /* monotonic seconds          */
void bench_lat_summary(double *us, size_t n, bench_lat *out); /* sorts   */
int64_t bench_hwm_kb(int pid);              /* VmHWM of pid (0 = self)    */
int bench_hwm_reset(void);                  /* clear_refs 5; 0 if done    */
int bench_pin(int cpu);                     /* this process; -1 = all     */
int bench_ncpu(void);
int64_t bench_file_size(const char *path);  /* -1 when absent             */
int64_t bench_dir_size(const char *path);   /* bytes of files, recursive  */

/* Instruction-count and page-count modes (instr.c). */
int bench_instr_main(const char *what, const char *dir, int64_t n,
                     int exclusive);
int bench_pages_main(const char *dir, FILE *out);
/* --page-size and --checkpoint-frames for --instr */
extern int bench_instr_page_size, bench_instr_ckpt_frames;

#endif /* EMQ_BENCH_H */
