/*
 * verb.h — the verb registry (internal to the engine): one declaration per
 * transition and read, in verbs.def, and the one way every caller runs one.
 *
 * Owns: the verb descriptor (wire name, tier, kind, declared keys, argument
 * specs with their gate kinds, reply shape, body), the parsed arguments a
 * body receives, the reply builders, and emq_verb_exec: gate every argument
 * by its spec, then run the body as one transition (a write or a read
 * transaction with NOW read once), or as a procedure that runs its own
 * transitions, and turn a wire error into an error reply.
 *
 * Rules: a body never gates its arguments again (the spec did), never
 * begins or ends a transaction (unless it is a procedure), and fills the
 * reply exactly as the wire answers; it returns the verdict (>= 0) the
 * typed C call reports, or an EMQ_E* code with the message set. Verb ids
 * are append-only: a row is never renumbered or reused.
 */
#ifndef EMQ_VERB_H
#define EMQ_VERB_H

#include <stddef.h>
#include <stdint.h>
#include "emqlite_protocol.h"
#include "db.h"

/* The argument specs, kinds and flags (emq_arg_info, EMQ_ARG_*,
 * EMQ_ARGF_*) and the verb descriptor's public part (emq_verb_info,
 * EMQ_VERB_*) are declared in emqlite.h: callers iterate the registry. */

/** One argument as a body sees it: the bytes (always NUL-terminated, so a
 *  queue, an id or a group is a C string), its integer for the numeric
 *  kinds and EMQ_ARG_BOOL (1/0), its index in `words` for EMQ_ARG_WORD. */
typedef struct emq_varg {
    const char *s;   /* NULL when absent                                 */
    size_t n;
    int64_t i;
    int present;
} emq_varg;

typedef struct emq_vctx emq_vctx;
typedef int (*emq_verb_fn)(emq_vctx *c);

typedef struct emq_verb {
    emq_verb_info info;        /* name, tier, kind, args, reply, keys ...  */
    emq_verb_fn fn;            /* the body                                  */
} emq_verb;

/** What a body gets: the handle, the open transaction and its NOW (WRITE
 *  and READ kinds; NULL / 0 otherwise), the arguments in spec order (a
 *  REST group repeats to argc), and the reply to fill. */
struct emq_vctx {
    emq_db *db;
    emq_store *st;
    int64_t now;
    const emq_verb *v;
    const emq_varg *a;
    size_t argc;
    emq_reply *r;
    void *out;                 /* a typed caller's extra output, or NULL   */
};

/* Verb ids: one enum entry per row of verbs.def. */
enum {
#define EMQ_VERB(ID, NAME, FAMILY, TIER, KIND, FN, ARGS, REPLY, KEYS, SUMMARY) \
    EMQ_V_##ID,
#include "verbs.def"
#undef EMQ_VERB
    EMQ_V_COUNT
};

/** The row of verb `id`, or NULL. */
const emq_verb *emq_verb_get(int id);

/**
 * Run verb `id` with `argc` arguments (`a[i].s` NUL-terminated, or NULL
 * for an absent optional one; `a[i].n` its length): gate them by the spec,
 * run the body, and fill `r` (may be NULL: a scalar reply is then dropped;
 * a verb that returns memory needs it). `out` is passed to the body as
 * c->out. Returns the body's verdict or an EMQ_E* code; on a wire error `r`
 * holds the error reply (EMQ_REPLY_ERROR, the exact text).
 */
int emq_verb_exec(emq_db *db, int id, const emq_varg *a, size_t argc,
                  emq_reply *r, void *out);

/** Shorthands for typed wrappers: an argument from a C string (NULL stays
 *  absent), from bytes, from an integer. An integer goes to the gate as
 *  it is (no decimal text: `s` is NULL, `present` EMQ_VARG_TYPED): the
 *  gate checks its bounds for the numeric kinds and refuses it for any
 *  other kind; a body that needs the decimal text of an integer argument
 *  renders it with emq_varg_text. */
#define EMQ_VARG_TYPED 2
emq_varg emq_varg_str(const char *s);
emq_varg emq_varg_bytes(const void *p, size_t n);
emq_varg emq_varg_int(int64_t v);
/** The bytes of argument `a`: its own for a byte-string argument, the
 *  shortest decimal of its integer (into `buf`, >= 24) for a typed one. */
emq_bytes emq_varg_text(const emq_varg *a, char *buf);

/* --------------------------------------------------------- reply builders */
/* Each returns EMQ_OK or EMQ_ENOMEM; `r` must be cleared (zeroed) first or
 * hold a scalar. Strings are copied (emq_mem). */

void emq_reply_nil(emq_reply *r);
void emq_reply_int(emq_reply *r, int64_t v);
void emq_reply_bool(emq_reply *r, int v);
int emq_reply_bulk(emq_reply *r, const void *p, size_t n);
int emq_reply_status(emq_reply *r, const char *s);
int emq_reply_error(emq_reply *r, int type, const char *msg);
/** Move the pairs of map reply `r` into a fresh emq_field array (`*fields`
 *  NULL and `*n` 0 for an empty map; free with emq_fields_free): what a
 *  typed call of a map read hands back. EMQ_OK, or EMQ_ENOMEM set on `db`
 *  (`r` keeps its strings then). */
int emq_reply_take_fields(emq_db *db, emq_reply *r, emq_field **fields,
                          size_t *n);
/** An empty array (or map with EMQ_REPLY_MAP) with room for `hint`. */
int emq_reply_array(emq_reply *r, int type, size_t hint);
/** Append one zeroed element to an array or map and return it (NULL when
 *  out of memory). The pointer is valid until the next push on `r`. */
emq_reply *emq_reply_push(emq_reply *r);
/** Append a bulk / integer element. */
int emq_reply_push_bulk(emq_reply *r, const void *p, size_t n);
int emq_reply_push_int(emq_reply *r, int64_t v);

/** Bodies named in verbs.def (declared here so verbs.c can table them). */
#define EMQ_VERB(ID, NAME, FAMILY, TIER, KIND, FN, ARGS, REPLY, KEYS, SUMMARY) \
    int FN(emq_vctx *c);
#include "verbs.def"
#undef EMQ_VERB

#endif /* EMQ_VERB_H */
