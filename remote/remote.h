/*
 * remote.h — what the files of remote/ share: the remote (a transport and
 * what its server can do), failures as handle messages, the version fence
 * on a server, key names from SCAN, and the pipelined reading of keys into
 * elements (storage/types.h).
 *
 * Rules: remote/ sits beside api/: it reaches the file through the public
 * calls and engine/export.h, the keyspace's shapes through storage/types.h
 * and storage/transfer.h, and the server only through its transport, one
 * command and one reply at a time. Every failure sets the handle's message
 * and returns its code. Commands are routed by slot (rm_route) so that a
 * cluster (several transports, one per node) can be added behind it.
 */
#ifndef EMQ_REMOTE_INT_H
#define EMQ_REMOTE_INT_H

#include <stddef.h>
#include <stdint.h>
#include "emqlite.h"
#include "emqlite_remote.h"
#include "db.h"
#include "types.h"

#define RM_VKEY EMQ_VERSION_KEY
#define RM_VKEY_LEN (sizeof RM_VKEY - 1)
#define RM_KEYBATCH 512 /* keys read per pipelined round */

struct emq_remote {
    emq_transport t;
    void *ctx;
    char name[256];
    int pexpiretime;  /* PEXPIRETIME (Redis 7.0, Valkey 7.2)               */
    int hpexpiretime; /* HPEXPIRETIME (Redis 7.4, Valkey 9.0)              */
    int hpexpireat;
    int unlink_ok;
};

/* ------------------------------------------------------------ failures */

/** The connection failed: EMQ_EIO, "<name>: <what>: <transport's error>". */
int rm_io(emq_db *db, emq_remote *r, const char *what);
/** The server answered an error: EMQ_EREMOTE, "<name> refused: <err>
 *  (key K)"; key may be NULL. */
int rm_refused(emq_db *db, emq_remote *r, const char *err, size_t elen,
               const void *key, size_t klen);
/** The first error inside a reply (EXEC answers an array), or NULL. */
const emq_rreply *rm_error_in(const emq_rreply *r);

/* ------------------------------------------------------------ commands */

/** Route: the connection that owns `slot` (one server: always `r`). */
emq_remote *rm_route(emq_remote *r, unsigned slot);
int rm_send(emq_remote *r, size_t argc, const char *const *argv,
            const size_t *lens);
/** Send NUL-terminated arguments. */
int rm_sendz(emq_remote *r, size_t argc, const char *const *argv);
int rm_recv(emq_remote *r, const emq_rreply **out);
void rm_release(emq_remote *r, const emq_rreply *rep);

/** The server's {emq}:version: *present 0 (absent) or 1 (this wire);
 *  another value is EMQ_EWIRE. */
int rm_version(emq_db *db, emq_remote *r, int *present);

/* --------------------------------------------------------------- names */

/** Names (byte strings), sorted and unique after rm_names_sort. */
typedef struct rm_names {
    emq_buf data;
    size_t *off;  /* pairs: offset, length */
    size_t n, cap;
    emq_bytes *v; /* after rm_names_sort */
    size_t nv;
} rm_names;

void rm_names_free(rm_names *l);
int rm_names_sort(rm_names *l);
/** SCAN with `match`, adding every name (no filter). */
int rm_scan(emq_db *db, emq_remote *r, const char *match, rm_names *out);
/** The EchoMQ keys of the selection, sorted: every emq:… and {emq}:… key,
 *  or the version key and the keys of the listed (valid) queues. */
int rm_selection(emq_db *db, emq_remote *r, const char *const *q, size_t nq,
                 rm_names *out);

/* --------------------------------------------------------- reading keys */

/** Receives each key read: its row, absolute expiry (-1: none) and its
 *  elements (views into the replies, valid during the call). Returns
 *  EMQ_OK or a failure (with the message set). */
typedef int (*rm_visit_fn)(void *ctx, const emq_bytes *key,
                           const emq_typedef *t, int64_t expire,
                           emq_elem *e, size_t n);

/**
 * Read the named keys, RM_KEYBATCH at a time, in three pipelined rounds:
 * TYPE and PEXPIRETIME (PTTL added to the wall clock on servers without
 * it), the value by its row's read command, and HPEXPIRETIME for the
 * fields of types whose elements expire where the server has it. Keys that
 * vanish in between are skipped; a type without a row is EMQ_ENOTSUP.
 */
int rm_read(emq_db *db, emq_remote *r, const emq_bytes *names, size_t n,
            rm_visit_fn fn, void *ctx, emq_progress_fn pg, void *pgctx,
            const char *what);

/** Copy `n` bytes as a NUL-terminated string (emq_mem; NULL: no memory). */
char *rm_strndup(const void *p, size_t n);
/** The queue of an `emq:{q}:` key: 1 and q/qlen, or 0. */
int rm_key_queue(const void *key, size_t klen, const char **q, size_t *qlen);

#endif /* EMQ_REMOTE_INT_H */
