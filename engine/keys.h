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

/** `emq:{q}:` + suffix (suffix NUL-terminated). Returns the length. */
size_t emq_key_q(char *buf, const char *q, const char *suffix);
/** `emq:{q}:job:<id>`. */
size_t emq_key_job(char *buf, const char *q, const char *id);
/** `emq:{q}:job:<id>:<sub>`. */
size_t emq_key_jobsub(char *buf, const char *q, const char *id,
                      const char *sub);

/** 1 when `did` matches [A-Za-z0-9._-]{1,255}. */
int emq_dedup_valid(const char *did, size_t len);

/** What a parsed key is. */
enum emq_key_family {
    EMQ_K_INVALID = 0,
    EMQ_K_VERSION,   /* {emq}:version                                  */
    EMQ_K_RESERVE,   /* another {emq}: unit (locks, bundle, migration:*) */
    EMQ_K_QUEUE      /* emq:{q}:<suffix> with a registered suffix       */
};

/** What the transitions hold in a per-queue key. */
enum emq_key_role {
    EMQ_ROLE_OTHER = 0,
    EMQ_ROLE_JOBSET,  /* pending, active, schedule, dead: job ids     */
    EMQ_ROLE_LANE,    /* g:<gid>:pending: job ids of one group        */
    EMQ_ROLE_METRICS  /* metrics:completed / metrics:failed: `count`  */
};

typedef struct emq_keyinfo {
    int family;          /* enum emq_key_family                       */
    const char *q;       /* the queue name inside the key (not NUL-term) */
    size_t qlen;
    int type;            /* expected store type (enum emq_type of store.h);
                            0 when several are allowed or store.h has no
                            name for it (stream keys, reserved units)  */
    int role;            /* enum emq_key_role (EMQ_K_QUEUE keys)       */
    int is_job_row;      /* the key is J(id)                           */
    const char *id;      /* the job id inside a job key (14 bytes)     */
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
