/*
 * emqlite_protocol.h — the protocol-level surface of emqlite, for bindings,
 * the command-line tool, test harnesses and other tools; applications need
 * only emqlite.h (which this header includes).
 *
 * Contents:
 *   1. the verb registry (emq_call, emq_reply, emq_verb_info, emq_arg_info)
 *   2. flow protocol steps (the single transitions emq_flow_add and
 *      emq_flow_sweep are made of)
 *
 * The same rules as emqlite.h hold here (return codes, naming, structs and
 * the ABI, _clear vs _free); every function declared here is exported by
 * libemqlite like those of emqlite.h.
 */
#ifndef EMQLITE_PROTOCOL_H
#define EMQLITE_PROTOCOL_H

#include "emqlite.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------- 1. the verb registry */

/*
 * Every transition and read of the protocol is one row of emqlite's verb
 * registry, callable by its wire name with byte-string arguments through
 * emq_call(), which answers the wire-shaped reply the EchoMQ scripts answer
 * inside Valkey. The typed calls of this header are thin wrappers over the
 * same rows. Tools (the CLI's `emqlite call`, bindings, test harnesses)
 * iterate the registry with emq_verb_count() / emq_verb_at().
 */

/** Reply types (RESP-shaped; a map is RESP3's: key, value, key, value). */
enum emq_reply_type {
    EMQ_REPLY_NIL = 0,  /**< nil (an absent value)                         */
    EMQ_REPLY_INT,      /**< `integer`                                     */
    EMQ_REPLY_BULK,     /**< `str`, `len` (binary-safe, NUL-terminated)    */
    EMQ_REPLY_STATUS,   /**< `str` (a simple string such as "OK")          */
    EMQ_REPLY_ARRAY,    /**< `elem[0 .. n)`                                */
    EMQ_REPLY_MAP,      /**< `elem[0 .. n)`, n even: key, value, ...       */
    EMQ_REPLY_BOOL,     /**< `integer` 0 or 1                              */
    EMQ_REPLY_ERROR,    /**< `str`: the exact wire error string            */
    EMQ_REPLY_REFUSED   /**< `str`: a host refusal (Appendix A.3), exact   */
};

/** A reply. Initialise to all zeroes ({0}); release with
 *  emq_reply_clear(). Everything it points to is owned by it. */
typedef struct emq_reply {
    int type;                /**< enum emq_reply_type                      */
    int64_t integer;
    char *str;
    size_t len;
    struct emq_reply *elem;
    size_t n;
    size_t cap;              /**< private: room in elem                    */
} emq_reply;

/** Free what `r` holds and zero it (safe on a zeroed reply). */
void emq_reply_clear(emq_reply *r);

/** Argument kinds: the gate each argument passes before any store access. */
enum emq_arg_kind {
    EMQ_ARG_QUEUE = 1, /**< a queue name (GATE-Q)                            */
    EMQ_ARG_ID,        /**< a branded id (GATE-ID)                           */
    EMQ_ARG_GROUP,     /**< a lane's group id (GATE-G)                       */
    EMQ_ARG_BYTES,     /**< any bytes up to the handle's max_payload         */
    EMQ_ARG_INT,       /**< a decimal int64                                  */
    EMQ_ARG_POS,       /**< a decimal int64 > 0                              */
    EMQ_ARG_NNEG,      /**< a decimal int64 >= 0                             */
    EMQ_ARG_BOOL,      /**< 1, 0, true or false                              */
    EMQ_ARG_WORD,      /**< one of the words in `words` ("in|at")            */
    EMQ_ARG_DID,       /**< a dedup id, [A-Za-z0-9._-]{1,255}                */
    EMQ_ARG_NAME       /**< a stream or repeat name: 1..255 bytes, no NUL
                            and no ':'                                     */
};
#define EMQ_ARGF_OPT  1 /**< may be absent (a NULL argument)                 */
#define EMQ_ARGF_REST 2 /**< this and the later specs repeat to the end      */
#define EMQ_ARGF_MIN1 4 /**< the repeated tail holds at least one group
                             (else EMQ_EEMPTY, empty_pipeline)              */

/** One argument of a verb. */
typedef struct emq_arg_info {
    const char *name;   /**< as PROTOCOL.md §6 names it ("lease_ms")       */
    int kind;           /**< enum emq_arg_kind                             */
    int flags;          /**< EMQ_ARGF_*                                    */
    const char *words;  /**< EMQ_ARG_WORD: the allowed words, '|'-separated */
} emq_arg_info;

/** How a verb runs. */
enum emq_verb_kind {
    EMQ_VERB_WRITE = 1, /**< one write transaction                          */
    EMQ_VERB_READ,      /**< one read transaction                           */
    EMQ_VERB_PROC,      /**< a procedure of several transactions ([multi-tx]) */
    EMQ_VERB_HOST       /**< host-side only, no store access                */
};

/** A row of the registry, as tools see it. The library owns it; new
 *  members are only ever appended, so read the ones your header has. */
typedef struct emq_verb_info {
    int id;                    /**< stable number (append-only)            */
    const char *name;          /**< the wire name ("enqueue")              */
    int tier;                  /**< PROTOCOL.md tier 1..5; 0 beyond the wire */
    int kind;                  /**< enum emq_verb_kind                     */
    const emq_arg_info *args;  /**< nargs specs                            */
    size_t nargs;
    int reply;                 /**< enum emq_reply_type of a success reply */
    const char *keys;          /**< the declared keys, in order (§6.6)     */
    const char *summary;       /**< one line                               */
    const char *family;        /**< the engine family ("queue", "lane", ...) */
} emq_verb_info;

/** The number of registered verbs. */
size_t emq_verb_count(void);
/** Row `i` (0 .. count-1) in registry order, or NULL. */
const emq_verb_info *emq_verb_at(size_t i);
/** The row named `name`, or NULL. */
const emq_verb_info *emq_verb_find(const char *name);

/**
 * Run the verb named `verb` with `argc` byte-string arguments
 * (`argv[i]`, `argvlen[i]` bytes; `argvlen` may be NULL for NUL-terminated
 * strings; a NULL `argv[i]` is an absent optional argument). Arguments are
 * gated by the row's specs (EMQ_EQUEUE, EMQ_EID, EMQ_EINVAL, EMQ_ETOOBIG
 * with a message naming the argument; an unknown verb is EMQ_EINVAL).
 * `reply` (may be NULL) receives the wire reply: on success the value the
 * verb answers, on a wire error an EMQ_REPLY_ERROR with the exact text, on
 * a host refusal an EMQ_REPLY_REFUSED; clear it with emq_reply_clear().
 * Returns the same result code the typed call returns.
 */
int emq_call(emq_db *db, const char *verb, size_t argc,
             const char *const *argv, const size_t *argvlen,
             emq_reply *reply);

/* ------------------------------------------------- 2. flow protocol steps */

/* The single transitions the procedures above are made of, one
 * transaction each, as the golden traces record them (callers normally use
 * emq_flow_add and emq_flow_sweep; these are the protocol's own steps). */

/** T4.1 steps 1-5 enqueue_flow: KIND of every id, then each child (in q)
 *  pending with `parent`, the parent held with dependencies = n. No
 *  parent_policy is written (see emq_flow_set_policy). EMQ_OK or EMQ_EKIND
 *  (nothing written). */
int emq_flow_enqueue(emq_db *db, const char *q, const char *parent,
                     const void *payload, size_t len,
                     const emq_item *children, size_t n);
/** T4.2 hold_parent: hold `parent` with dependencies = n (>= 0). EMQ_OK or
 *  EMQ_EKIND. */
int emq_flow_hold(emq_db *db, const char *q, const char *parent,
                  const void *payload, size_t len, int64_t n);
/** T4.3 flow_child on the child's queue cq: pending with `parent`, and
 *  `parent_queue` = pq unless pq is NULL or "" (the parent shares cq).
 *  EMQ_OK or EMQ_EKIND. */
int emq_flow_child(emq_db *db, const char *cq, const char *child,
                   const void *payload, size_t len, const char *parent,
                   const char *pq);
/** The host write of a child's parent_policy (EMQ_FLOW_FP / EMQ_FLOW_ID).
 *  EMQ_OK. */
int emq_flow_set_policy(emq_db *db, const char *q, const char *id,
                        int policy);
/** The host write linking a held node to its parent (T4.5): `parent`,
 *  `parent_queue` (NULL or "": same queue, not written) and
 *  `parent_policy`. EMQ_OK. */
int emq_flow_set_link(emq_db *db, const char *q, const char *id,
                      const char *parent, const char *parent_queue,
                      int policy);
/** T4.11 flow_deliver on the parent's queue: record `result` for child
 *  once, count down, release the parent at 0. EMQ_OK. */
int emq_flow_deliver(emq_db *db, const char *q, const char *parent,
                     const char *child, const void *result, size_t len);
/** T4.12 flow_fail_deliver on the parent's queue: policy "fp" records the
 *  error in `failed` once and kills the parent; any other policy records
 *  it in `unsuccessful` once and counts down. EMQ_OK. */
int emq_flow_fail_deliver(emq_db *db, const char *q, const char *parent,
                          const char *child, const void *error, size_t len,
                          const char *policy);
/** T4.10 step 1: the first `batch` (> 0) entries of q's outbox into
 *  `entries` (an array reply of bulk strings; clear it with
 *  emq_reply_clear). EMQ_OK. */
int emq_flow_outbox_read(emq_db *db, const char *q, int64_t batch,
                         emq_reply *entries);
/** T4.10 step 3: drop the first n (>= 0) entries of q's outbox. EMQ_OK. */
int emq_flow_outbox_trim(emq_db *db, const char *q, int64_t n);
/** T4.14 REEMIT: push the node's death onto q's outbox for its parent.
 *  EMQ_OK with the outbox length in `*outbox_len` (may be NULL), or
 *  EMQ_ABSENT when the node has no parent (nothing pushed). */
int emq_flow_reemit(emq_db *db, const char *q, const char *id,
                    const void *error, size_t len, int64_t *outbox_len);

#ifdef __cplusplus
}
#endif
#endif /* EMQLITE_PROTOCOL_H */
