/*
 * fuzz_keys.c — the key-grammar parser and builders (engine/core/keys.c) on
 * arbitrary bytes. Properties: a parsed key's queue and id lie inside the
 * input, the queue passes the queue gate and the id the id check; a job
 * row rebuilds byte-for-byte with emq_key_job; reserve keys start with
 * "{emq}:" and queue keys with "emq:{"; the slot is below 16384 and the
 * hash tag lies inside the key; a queue name taken from the input, when
 * valid, builds keys that parse back to it.
 */
#include <string.h>
#include "fuzz.h"
#include "emqlite.h"
#include "keys.h"
#include "brandedid.h"

static int keys_inside(const void *p, size_t n, const uint8_t *d, size_t size)
{
    const uint8_t *b = p;
    return b >= d && b + n <= d + size;
}

FUZZ_ENTRY(keys)
{
    emq_keyinfo ki;
    const void *tag = NULL;
    size_t taglen = 0;
    char q[200], buf[EMQ_KEY_MAX];
    int ok = emq_key_parse(data, size, &ki);
    if (ok) {
        FUZZ_CHECK(ki.family >= EMQ_K_VERSION && ki.family <= EMQ_K_QUEUE,
                   "family %d", ki.family);
        FUZZ_CHECK(ki.type >= 0 && ki.type <= 6 /* EMQ_T_STREAM */, "type %d",
                   ki.type);
        if (ki.family == EMQ_K_QUEUE) {
            FUZZ_CHECK(size > 5 && memcmp(data, "emq:{", 5) == 0, "prefix");
            FUZZ_CHECK(keys_inside(ki.q, ki.qlen, data, size) &&
                           ki.qlen >= 1 && ki.qlen <= 128, "queue span");
            memcpy(q, ki.q, ki.qlen);
            q[ki.qlen] = 0;
            FUZZ_CHECK(emq_queue_valid(q), "parsed queue fails the gate");
        } else {
            FUZZ_CHECK(size > 6 && memcmp(data, "{emq}:", 6) == 0, "reserve");
        }
        if (ki.is_job_row) {
            FUZZ_CHECK(ki.family == EMQ_K_QUEUE, "job row family");
            FUZZ_CHECK(keys_inside(ki.id, EMQ_ID_LEN, data, size), "id span");
            FUZZ_CHECK(emq_id_check(ki.id, EMQ_ID_LEN, NULL, NULL) ==
                           EMQ_ID_OK, "parsed id invalid");
            char id[EMQ_ID_SIZE];
            memcpy(id, ki.id, EMQ_ID_LEN);
            id[EMQ_ID_LEN] = 0;
            size_t n = emq_key_of(buf, q, EMQ_KT_JOB, id, EMQ_ID_LEN);
            FUZZ_CHECK(n == size && memcmp(buf, data, size) == 0,
                       "job key does not rebuild");
        }
    }
    FUZZ_CHECK(emq_slot(data, size) < 16384, "slot");
    emq_key_hashtag(data, size, &tag, &taglen);
    FUZZ_CHECK(tag != NULL && keys_inside(tag, taglen, data, size),
               "hash tag outside the key");
    /* builders from a queue name taken from the input */
    size_t qn = size < 140 ? size : 140;
    const uint8_t *nul = memchr(data, 0, qn);
    if (nul) qn = (size_t)(nul - data);
    memcpy(q, data, qn);
    q[qn] = 0;
    if (emq_queue_valid(q)) {
        size_t n = emq_key(buf, q, EMQ_KT_PENDING);
        FUZZ_CHECK(n > 0 && emq_key_parse(buf, n, &ki) &&
                       ki.family == EMQ_K_QUEUE && ki.qlen == qn &&
                       memcmp(ki.q, q, qn) == 0 && ki.type == 5,
                   "built pending key does not parse back");
        n = emq_key_of(buf, q, EMQ_KT_JOB, "JOB0KHTOWnGLuC", EMQ_ID_LEN);
        FUZZ_CHECK(n > 0 && emq_key_parse(buf, n, &ki) && ki.is_job_row,
                   "built job key does not parse back");
        n = emq_key_of(buf, q, EMQ_KT_JOB_LOGS, "JOB0KHTOWnGLuC", EMQ_ID_LEN);
        FUZZ_CHECK(n > 0 && emq_key_parse(buf, n, &ki) && !ki.is_job_row &&
                       ki.type == 3, "built logs key does not parse back");
        FUZZ_CHECK(emq_slot(buf, n) == emq_slot(q, qn), "slot of the tag");
    } else if (qn > 0 && qn <= 128) {
        /* an invalid name never becomes a parsable queue key */
        char k[EMQ_KEY_MAX];
        int m = snprintf(k, sizeof k, "emq:{%s}:pending", q);
        if (m > 0 && (size_t)m < sizeof k && !memchr(q, '}', qn) &&
            emq_key_parse(k, (size_t)m, &ki))
            FUZZ_CHECK(0, "invalid queue name parsed");
    }
    return 0;
}
