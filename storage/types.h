/*
 * types.h — the store's key types, one row each: what TYPE answers, how an
 * aggregate's elements are probed and dropped, how a value is read and
 * counted, the shape it travels in (the export's commands, a server's
 * replies, the digest record) and the commands an import applies to it.
 *
 * Owns: emq_elem (one element of a value) and the type table. Everything
 * that used to switch over the types (kv.c, export, import, the digest, the
 * checker's reads, the transfer module, the tests' dumps) looks its row up
 * here instead.
 *
 * Rules: a row is data plus functions over store.h; it knows Redis types
 * and their commands, nothing of jobs or queues. Rows are never removed or
 * renumbered (enum emq_type values are stored in files). Adding a type is one
 * row in types.c plus the file that implements its functions; a stream
 * (xsout.c) travels as one opaque element (EMQ_ORDER_OPAQUE).
 */
#ifndef EMQ_TYPES_H
#define EMQ_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include "store.h"

/**
 * One element of a key's value, as views of bytes owned by someone else.
 *   string: a = the value
 *   hash:   a = the field, b = the value, expire = the field's expiry
 *   zset:   a = the member, score
 *   list:   a = the element (head to tail)
 *   set:    a = the member
 *   stream: one element for the whole value (EMQ_ORDER_OPAQUE): a = the
 *           commands an export writes for it (RESP, as written), b = the
 *           body of its digest record, score = the number of commands
 */
typedef struct emq_elem {
    emq_bytes a, b;
    double score;
    int64_t expire;   /* absolute ms, or -1 */
} emq_elem;

/** Receives elements; nonzero stops the walk and is returned. */
typedef int (*emq_elem_fn)(void *ctx, const emq_elem *e);

/** The order of a value's elements in its digest record. */
enum emq_order {
    EMQ_ORDER_ONE,    /* exactly one element, no count (a string)       */
    EMQ_ORDER_KEPT,   /* as stored (a list: head to tail)               */
    EMQ_ORDER_BYTES,  /* memcmp order of `a` (hash fields, set members) */
    EMQ_ORDER_SCORE,  /* (score, memcmp of `a`) (a zset)                */
    EMQ_ORDER_OPAQUE  /* one element carrying its own commands and record
                         body (a stream: storage/xsout.h)                */
};

/** Why an import command's arguments were refused: a sentence, and the
 *  index of the argument to show (or -1). */
typedef struct emq_why {
    const char *msg;
    long arg;
} emq_why;

/**
 * A command an import applies. `check` judges the arguments alone
 * (argv[0] is the name, argv[1] the key); `apply` runs the command on the
 * store, as Valkey runs it. Both return EMQ_OK, or `check` EMQ_EPROTO with
 * `why` filled; `apply` returns a store result.
 */
typedef struct emq_cmddef {
    const char *name;
    int (*check)(const emq_bytes *argv, size_t argc, emq_why *why);
    int (*apply)(emq_store *st, const emq_bytes *argv, size_t argc);
} emq_cmddef;

typedef struct emq_typedef {
    int type;              /* enum emq_type (stored in files)              */
    const char *name;      /* TYPE's answer                                */
    unsigned char tag;     /* the type byte of a digest record             */
    int s_any, s_drop;     /* aggregates: statements probing for an element
                              and deleting every element (store_int.h);
                              -1: the value lives in the key row         */

    /* How the value travels (storage/transfer.c). */
    const char *cmd;       /* the command writing elements: `cmd key e...` */
    unsigned char arity;   /* arguments per element, in `cmd` and in the
                              reply of `read`                            */
    unsigned char scored;  /* `score` is the element's first argument in
                              `cmd` (ZADD score member) and its second in
                              the reply (ZRANGE WITHSCORES)              */
    unsigned char fexpire; /* elements may carry an expiry (hash fields)   */
    unsigned char order;   /* enum emq_order                               */
    unsigned char sorted;  /* `scan` yields the digest's order             */
    const char *const *read; /* a server's read of the whole value: the
                              command, then (after the key) its other
                              arguments, NULL-terminated                  */
    const emq_cmddef *cmds;  /* the import commands on this type, ending
                              with a NULL name                           */

    /* Store access. */
    int (*count)(emq_store *st, const void *key, size_t klen, int64_t *n);
    int (*scan)(emq_store *st, const void *key, size_t klen, emq_elem_fn fn,
                void *ctx);
} emq_typedef;

/** Every row, in enum emq_type order; `*n` receives their number. */
const emq_typedef *emq_typedefs(size_t *n);
/** The row of `type`, or NULL (EMQ_T_NONE, unknown). */
const emq_typedef *emq_typedef_of(int type);
/** The row whose TYPE answer is `name` (n bytes), or NULL. */
const emq_typedef *emq_typedef_named(const void *name, size_t n);

/** The import commands that work on a key of any type (PEXPIREAT), ending
 *  with a NULL name. */
extern const emq_cmddef emq_key_cmds[];

/** A score as text: a decimal integer or anything strtod reads whole, not
 *  NaN and without white space. 1 and *out set, or 0. */
int emq_parse_score(const void *p, size_t n, double *out);

/** 1 when argument `i` of argv equals `word` ignoring ASCII case. */
int emq_arg_is(const emq_bytes *argv, size_t argc, size_t i,
               const char *word);

#endif /* EMQ_TYPES_H */
