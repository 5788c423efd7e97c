/*
 * relutil.h — helpers the reliability tests share (test_check, test_faults,
 * test_hostile, test_concurrency, crash_test): a settable clock, scratch
 * directories, file digests, the checker's counts, loop sizing under
 * EMQ_TEST_QUICK, and the append-only ledger files that forked processes
 * write and the parent merges.
 *
 * Rule: helpers never call Check's assertions, so the standalone programs
 * (which fork and do not link Check) can use them too; they return codes.
 */
#ifndef EMQ_TEST_RELUTIL_H
#define EMQ_TEST_RELUTIL_H

#include <stddef.h>
#include <stdint.h>
#include "emqlite.h"

/** A clock whose time the test sets: pass &clk as the clock ctx. */
typedef struct rel_clock { int64_t now; } rel_clock;
int64_t rel_clock_fn(void *ctx);

/** 1 when EMQ_TEST_QUICK is set to a non-empty value other than "0". */
int rel_quick(void);
/** `full` normally, `quick` under EMQ_TEST_QUICK. */
long rel_size(long full, long quick);
/** An integer environment knob, or `dflt` when unset or malformed. */
long rel_env_long(const char *name, long dflt);

/** Make a scratch directory (under $TMPDIR or /tmp) into dir[cap]. */
int rel_mkdtemp(char *dir, size_t cap, const char *tag);
/** Make a scratch directory in memory into dir[cap], for files whose
 *  durability a test does not take from the disk (the fault sweeps: their
 *  VFS simulates every sync and power loss): under $EMQ_TEST_MEMDIR, else
 *  /dev/shm when it is a writable folder, else as rel_mkdtemp. The files
 *  are the same SQLite files; only the page cache's write-back is gone. */
int rel_mkdtemp_mem(char *dir, size_t cap, const char *tag);
/** Remove a scratch directory and everything in it. */
void rel_rmrf(const char *dir);
/** dir + "/" + name into out[cap]. */
void rel_path(char *out, size_t cap, const char *dir, const char *name);

/** XXH3-64 of a file's bytes into *digest; 0, or -1 when it cannot be
 *  read (a missing file digests as 0 with *exists = 0). */
int rel_file_digest(const char *path, uint64_t *digest, int *exists);
/** Write n bytes to path (create/truncate). 0 or -1. */
int rel_write_file(const char *path, const void *p, size_t n);

/**
 * Run emq_check and count its findings. Returns emq_check's code. When
 * `verbose`, each finding is printed to stderr. `viol`/`notes` may be NULL.
 */
int rel_check(emq_db *db, size_t *viol, size_t *notes, int verbose);

/** emq_import of a bare, hand-written command stream: the raw format
 *  (EMQ_IMPORT_RAW), which needs no export end record. */
int rel_import_raw(emq_db *db, const void *p, size_t n,
                   emq_transfer_summary *sum);

/* ---------------------------------------------------------------- ledger */

/* A ledger line: one event a process observed, with the id and token. */
enum {
    L_ENQ = 'E',   /* enqueue acknowledged (EMQ_ENQUEUED)            */
    L_CLAIM = 'C', /* claim returned (id, token)                     */
    L_DONE = 'D',  /* complete acknowledged (EMQ_OK)                 */
    L_RETRY = 'R', /* retry acknowledged (EMQ_SCHEDULED)             */
    L_DEAD = 'X',  /* retry acknowledged (EMQ_DEAD)                  */
    L_INTENT = 'I' /* about to call the verb (crash test: the verb may
                      or may not have committed when the kill lands) */
};

/** The ledger file of process `proc`: dir + "/ledger-<proc>" into out[cap]. */
void rel_ledger_path(char *out, size_t cap, const char *dir, int proc);

typedef struct rel_ledger { int fd; } rel_ledger;
/** Open (append) the ledger file. 0 or -1. */
int rel_ledger_open(rel_ledger *l, const char *path);
/** Append one line "<ev> <id> <token>\n" with one write(2), so a SIGKILL
 *  leaves whole lines only. With `sync`, fdatasync after it. */
int rel_ledger_put(rel_ledger *l, int ev, const char *id, int64_t token,
                   int sync);
void rel_ledger_close(rel_ledger *l);

typedef struct rel_event {
    char ev;
    char id[EMQ_ID_SIZE];
    int64_t token;
    int proc;      /* index of the ledger file it came from */
} rel_event;

/** Parse one ledger line into *e (tagged with `proc`): 1, or 0 when it is
 *  not "<ev> <id> <token>" with a whole id. */
int rel_ledger_parse(const char *line, int proc, rel_event *e);

/** Read every whole line of ledger file `path` and append the events to
 *  *ev (realloc'd), tagging them with `proc`. 0 or -1. */
int rel_ledger_read(const char *path, int proc, rel_event **ev, size_t *n);

/* The standalone reliability programs' checks: EXPECT(cond, fmt, ...)
 * counts into rel_passed / rel_failed and prints each failure with its
 * place; the program ends with "N passed, N failed". */
extern long rel_passed, rel_failed;
#define EXPECT(cond, ...)                                                     \
    do {                                                                      \
        if (cond) {                                                           \
            rel_passed++;                                                     \
        } else {                                                              \
            rel_failed++;                                                     \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
        }                                                                     \
    } while (0)

#endif /* EMQ_TEST_RELUTIL_H */
