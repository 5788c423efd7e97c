/*
 * keys.h — the EchoMQ key grammar (internal to the engine and tools).
 *
 * Owns: building every per-queue key `emq:{q}:<suffix>` and reserve key
 * `{emq}:<unit>`, the name gates for queues and dedup ids, and the parser
 * that classifies an arbitrary byte string as a grammar key (import and the
 * checker use it). Builders write into caller buffers of EMQ_KEY_MAX bytes
 * and return the length; they never allocate. A key that would not fit
 * (with its NUL) is not written: the builder returns 0 and leaves "".
 */
#ifndef EMQ_KEYS_H
#define EMQ_KEYS_H

#include <stddef.h>
#include "emqlite.h"

/* Longest key a builder produces: "emq:{" q(128) "}:" + the longest suffix
 * ("job:" id(14) ":unsuccessful", "de:" did(255), "g:" gid(14) ":pending").*/
#define EMQ_KEY_MAX 512

#define EMQ_VERSION_KEY "{emq}:version"

/** The per-queue key types of keys.def (EMQ_KT_PENDING, EMQ_KT_JOB, ...). */
enum emq_key_kind {
    EMQ_KT_NONE = 0,
#define EMQ_KEYDEF(ID, TEXT, FORM, TYPE, ROLE, RULE) EMQ_KT_##ID,
#include "keys.def"
#undef EMQ_KEYDEF
    EMQ_KT_COUNT
};

/** The forms a key type takes (keys.def's FORM column). */
enum emq_key_form {
    EMQ_KF_FIXED = 1, EMQ_KF_JOB, EMQ_KF_JOBSUB, EMQ_KF_LANE, EMQ_KF_DEDUP,
    EMQ_KF_REPEAT, EMQ_KF_STREAM, EMQ_KF_ARCHIVED
};

/** A row of keys.def. */
typedef struct emq_keydef {
    int kt;            /* enum emq_key_kind                         */
    const char *text;  /* the suffix, subkey or prefix              */
    int form;          /* enum emq_key_form                         */
    int type;          /* the store type (enum emq_type of store.h) */
    int role;          /* enum emq_key_role                         */
    const char *rule;  /* the checker's rule, one sentence          */
} emq_keydef;

/** The row of key type `kt`, or NULL. */
const emq_keydef *emq_keydef_get(int kt);

/** The fixed key `emq:{q}:<suffix of kt>` (FIXED forms). Returns the
 *  length (0 when it would not fit, or kt is not FIXED). */
size_t emq_key(char *buf, const char *q, int kt);
/** A key of a parameterised family — `part` is the job id (JOB, JOBSUB),
 *  the group id (LANE), the dedup id, the repeat or stream name — into a
 *  buffer of EMQ_KEY_MAX bytes. Returns the length, 0 when too long. */
size_t emq_key_of(char *buf, const char *q, int kt, const void *part,
                  size_t n);
/** As emq_key_of into a growable buffer (reset first), for parts read
 *  from the store (any length). EMQ_OK or EMQ_ENOMEM. */
struct emq_buf;
int emq_key_buf(struct emq_buf *b, const char *q, int kt, const void *part,
                size_t n);

/** 1 when `did` matches [A-Za-z0-9._-]{1,255}. */
int emq_dedup_valid(const char *did, size_t len);

/** What a parsed key is. */
enum emq_key_family {
    EMQ_K_INVALID = 0,
    EMQ_K_VERSION,   /* {emq}:version                                  */
    EMQ_K_RESERVE,   /* another {emq}: unit (locks, bundle, migration:*) */
    EMQ_K_QUEUE      /* emq:{q}:<suffix> with a registered suffix       */
};

/** What the transitions hold in a per-queue key (keys.def's ROLE column). */
enum emq_key_role {
    EMQ_ROLE_OTHER = 0,
    EMQ_ROLE_JOBSET,  /* pending, active, schedule, dead: job ids     */
    EMQ_ROLE_LANE,    /* g:<gid>:pending: job ids of one group        */
    EMQ_ROLE_METRICS, /* metrics:completed / metrics:failed: `count`  */
    EMQ_ROLE_META,    /* meta: paused, concurrency, max               */
    EMQ_ROLE_SERIES,  /* the reserved metrics data lists              */
    EMQ_ROLE_COUNTER, /* an integer string (limiter, dependencies)    */
    EMQ_ROLE_WAKE,    /* wake tokens                                  */
    EMQ_ROLE_RING,    /* the ring of serviceable groups               */
    EMQ_ROLE_GROUPS,  /* group id -> integer hashes                   */
    EMQ_ROLE_GROUPSET,/* the paused groups                            */
    EMQ_ROLE_OUTBOX,  /* flow outbox entries                          */
    EMQ_ROLE_REPEATS, /* the repeat registry                          */
    EMQ_ROLE_ROW,     /* a job row                                    */
    EMQ_ROLE_STREAM   /* an event stream                              */
};

typedef struct emq_keyinfo {
    int family;          /* enum emq_key_family                       */
    const char *q;       /* the queue name inside the key (not NUL-term) */
    size_t qlen;
    int type;            /* expected store type (enum emq_type of store.h);
                            0 when several are allowed or store.h has no
                            name for it (stream keys, reserved units)  */
    int role;            /* enum emq_key_role (EMQ_K_QUEUE keys)       */
    int kt;              /* enum emq_key_kind (EMQ_K_QUEUE keys)       */
    const char *part;    /* the id, group, did or name inside the key  */
    size_t partlen;
    int is_job_row;      /* the key is J(id)                           */
    const char *id;      /* the job id inside a job key (14 bytes)     */
    const emq_keydef *def; /* the key type's row (EMQ_K_QUEUE keys)     */
} emq_keyinfo;

/**
 * Classify `len` bytes as a key of the grammar. Returns 1 and fills `ki`
 * for a grammar key, 0 otherwise. Pure: no I/O, no allocation.
 */
int emq_key_parse(const void *key, size_t len, emq_keyinfo *ki);

/** The hash tag span of a key (Redis rule), for emq_slot(). */
void emq_key_hashtag(const void *key, size_t len, const void **tag,
                     size_t *taglen);

/** CRC16-XMODEM (poly 0x1021, init 0). */
unsigned emq_crc16(const void *p, size_t n);

#endif /* EMQ_KEYS_H */
