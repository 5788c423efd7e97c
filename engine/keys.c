/*
 * keys.c — the EchoMQ key grammar (PROTOCOL.md §2): builders, name gates,
 * the slot rule and the key parser.
 *
 * A key is either `emq:{q}:<suffix>` (per-queue, first byte 'e') or
 * `{emq}:<unit>` (reserve, first byte '{'). Rules a reader must not break:
 *  - builders never allocate and never truncate: a key that would not fit
 *    in EMQ_KEY_MAX bytes (with its NUL) is not written (length 0);
 *  - emq_key_parse is pure and reads only the `len` bytes it is given (it is
 *    fuzzed); it accepts exactly the registry of §2.4/§2.5 and nothing else.
 *
 * Types filled by emq_key_parse are enum emq_type of storage/store.h
 * (STRING 1, HASH 2, LIST 3, SET 4, ZSET 5). Chosen: a stream key
 * (`stream:<name>`) reports type 0, because the store has no stream type to
 * name; the reserved units `locks`, `bundle` and `migration:<q>` also report
 * 0 (no mechanics, no type defined).
 */
#include <string.h>
#include "keys.h"
#include "brandedid.h"

/* Mirrors enum emq_type of storage/store.h; the engine does not need the
 * rest of the store to classify keys. */
enum { T_ANY = 0, T_STRING = 1, T_HASH = 2, T_LIST = 3, T_SET = 4, T_ZSET = 5,
       T_STREAM = T_ANY };

/* --------------------------------------------------------------- builders */

/* Append the `n` bytes `p` at buf[*at] if they fit before the NUL slot. */
static int put(char *buf, size_t *at, const char *p, size_t n)
{
    if (n > EMQ_KEY_MAX - 1 - *at)
        return 0;
    memcpy(buf + *at, p, n);
    *at += n;
    return 1;
}

/* Build `emq:{q}:` followed by up to four NUL-terminated parts (NULL ends
 * the list early). Returns the length, or 0 with buf = "" when too long. */
static size_t build(char *buf, const char *q, const char *a, const char *b,
                    const char *c, const char *d)
{
    const char *parts[4] = { a, b, c, d };
    size_t at = 0;
    int ok = put(buf, &at, "emq:{", 5) && put(buf, &at, q, strlen(q)) &&
             put(buf, &at, "}:", 2);

    for (int i = 0; ok && i < 4 && parts[i] != NULL; i++)
        ok = put(buf, &at, parts[i], strlen(parts[i]));
    if (!ok)
        at = 0;
    buf[at] = '\0';
    return at;
}

size_t emq_key_q(char *buf, const char *q, const char *suffix)
{
    return build(buf, q, suffix, NULL, NULL, NULL);
}

size_t emq_key_job(char *buf, const char *q, const char *id)
{
    return build(buf, q, "job:", id, NULL, NULL);
}

size_t emq_key_jobsub(char *buf, const char *q, const char *id,
                      const char *sub)
{
    return build(buf, q, "job:", id, ":", sub);
}

/* ------------------------------------------------------------ name gates */

/* The shared alphabet of queue names and dedup ids: [A-Za-z0-9._-]. */
static int name_byte(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

static int name_ok(const unsigned char *p, size_t len, size_t max)
{
    if (len < 1 || len > max)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!name_byte(p[i]))
            return 0;
    return 1;
}

/* A queue name given as `len` bytes. */
static int queue_ok(const unsigned char *p, size_t len)
{
    return name_ok(p, len, 128) && !(len == 3 && memcmp(p, "emq", 3) == 0);
}

int emq_queue_valid(const char *q)
{
    size_t len = 0;

    if (q == NULL)
        return 0;
    while (len <= 128 && q[len] != '\0') /* bounded strlen */
        len++;
    return queue_ok((const unsigned char *)q, len);
}

int emq_dedup_valid(const char *did, size_t len)
{
    return did != NULL && name_ok((const unsigned char *)did, len, 255);
}

/* ------------------------------------------------------------- slot rule */

unsigned emq_crc16(const void *p, size_t n)
{
    const unsigned char *s = p;
    unsigned crc = 0;

    for (size_t i = 0; i < n; i++) {
        crc ^= (unsigned)s[i] << 8;
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? ((crc << 1) ^ 0x1021) & 0xFFFF
                                 : (crc << 1) & 0xFFFF;
    }
    return crc;
}

void emq_key_hashtag(const void *key, size_t len, const void **tag,
                     size_t *taglen)
{
    const unsigned char *k = key;
    const unsigned char *open = len ? memchr(k, '{', len) : NULL;

    *tag = key;
    *taglen = len;
    if (open == NULL)
        return;
    size_t start = (size_t)(open - k) + 1;
    if (start >= len)
        return;
    const unsigned char *close = memchr(k + start, '}', len - start);
    if (close == NULL || close == k + start)
        return;
    *tag = k + start;
    *taglen = (size_t)(close - (k + start));
}

unsigned emq_slot(const void *key, size_t len)
{
    const void *tag;
    size_t taglen;

    if (key == NULL)
        len = 0;
    emq_key_hashtag(key, len, &tag, &taglen);
    return emq_crc16(tag, taglen) & 16383;
}

/* ---------------------------------------------------------------- parser */

/* A byte span being consumed left to right. */
typedef struct span {
    const unsigned char *p;
    size_t n;
} span;

/* Consume the literal `lit` at the head of `s`; 1 when it was there. */
static int eat(span *s, const char *lit)
{
    size_t n = strlen(lit);
    if (s->n < n || memcmp(s->p, lit, n) != 0)
        return 0;
    s->p += n;
    s->n -= n;
    return 1;
}

/* `s` is exactly `lit`. */
static int is(span s, const char *lit)
{
    return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}

/* Fixed per-queue suffixes of §2.4, their types and roles. */
static const struct {
    const char *suffix;
    int type, role;
} fixed_suffixes[] = {
    { "pending", T_ZSET, EMQ_ROLE_JOBSET },
    { "active", T_ZSET, EMQ_ROLE_JOBSET },
    { "schedule", T_ZSET, EMQ_ROLE_JOBSET },
    { "dead", T_ZSET, EMQ_ROLE_JOBSET },
    { "meta", T_HASH, EMQ_ROLE_OTHER },
    { "metrics:completed", T_HASH, EMQ_ROLE_METRICS },
    { "metrics:failed", T_HASH, EMQ_ROLE_METRICS },
    { "metrics:completed:data", T_LIST, EMQ_ROLE_OTHER },
    { "metrics:failed:data", T_LIST, EMQ_ROLE_OTHER },
    { "limiter", T_STRING, EMQ_ROLE_OTHER },
    { "wake", T_LIST, EMQ_ROLE_OTHER },
    { "ring", T_LIST, EMQ_ROLE_OTHER },
    { "gactive", T_HASH, EMQ_ROLE_OTHER },
    { "glimit", T_HASH, EMQ_ROLE_OTHER },
    { "gweight", T_HASH, EMQ_ROLE_OTHER },
    { "paused", T_SET, EMQ_ROLE_OTHER },
    { "flow:outbox", T_LIST, EMQ_ROLE_OTHER },
    { "repeat", T_ZSET, EMQ_ROLE_OTHER },
};

/* Job subkeys `job:<id>:<sub>` of §2.4. */
static const struct {
    const char *sub;
    int type;
} job_subs[] = {
    { "logs", T_LIST },
    { "lock", T_STRING },
    { "dependencies", T_STRING },
    { "processed", T_HASH },
    { "failed", T_HASH },
    { "unsuccessful", T_HASH },
};

static int branded(const unsigned char *p, size_t n)
{
    return emq_id_check((const char *)p, n, NULL, NULL) == EMQ_ID_OK;
}

/* Stream name: non-empty, no NUL, no ':' (D-17). */
static int stream_name_ok(const unsigned char *p, size_t n)
{
    return n > 0 && memchr(p, '\0', n) == NULL && memchr(p, ':', n) == NULL;
}

/* Classify the suffix of a per-queue key; fills type/id fields of ki. */
static int parse_suffix(span s, emq_keyinfo *ki)
{
    for (size_t i = 0; i < sizeof fixed_suffixes / sizeof *fixed_suffixes;
         i++)
        if (is(s, fixed_suffixes[i].suffix)) {
            ki->type = fixed_suffixes[i].type;
            ki->role = fixed_suffixes[i].role;
            return 1;
        }

    if (eat(&s, "job:")) {
        if (s.n < EMQ_ID_LEN || !branded(s.p, EMQ_ID_LEN))
            return 0;
        ki->id = (const char *)s.p;
        s.p += EMQ_ID_LEN;
        s.n -= EMQ_ID_LEN;
        if (s.n == 0) {
            ki->type = T_HASH;
            ki->is_job_row = 1;
            return 1;
        }
        if (!eat(&s, ":"))
            return 0;
        for (size_t i = 0; i < sizeof job_subs / sizeof *job_subs; i++)
            if (is(s, job_subs[i].sub)) {
                ki->type = job_subs[i].type;
                return 1;
            }
        return 0;
    }
    if (eat(&s, "de:")) {
        ki->type = T_STRING;
        return name_ok(s.p, s.n, 255);
    }
    if (eat(&s, "g:")) {
        ki->type = T_ZSET;
        ki->role = EMQ_ROLE_LANE;
        return s.n == EMQ_ID_LEN + 8 && branded(s.p, EMQ_ID_LEN) &&
               memcmp(s.p + EMQ_ID_LEN, ":pending", 8) == 0;
    }
    if (eat(&s, "repeat:")) {
        ki->type = T_HASH;
        return s.n > 0;
    }
    if (eat(&s, "stream:")) {
        const unsigned char *colon = s.n ? memchr(s.p, ':', s.n) : NULL;
        size_t name = colon ? (size_t)(colon - s.p) : s.n;
        span rest = { s.p + name, s.n - name };

        if (!stream_name_ok(s.p, name))
            return 0;
        if (rest.n == 0) {
            ki->type = T_STREAM;
            return 1;
        }
        ki->type = T_STRING;
        return is(rest, ":archived");
    }
    return 0;
}

/* Classify a reserve unit (after `{emq}:`). */
static int parse_reserve(span s, emq_keyinfo *ki)
{
    if (is(s, "version")) {
        ki->family = EMQ_K_VERSION;
        ki->type = T_STRING;
        return 1;
    }
    ki->family = EMQ_K_RESERVE;
    ki->type = T_ANY;
    if (is(s, "locks") || is(s, "bundle"))
        return 1;
    if (eat(&s, "migration:") && queue_ok(s.p, s.n)) {
        ki->q = (const char *)s.p;
        ki->qlen = s.n;
        return 1;
    }
    return 0;
}

/* Classify a per-queue key (after `emq:{`). */
static int parse_queue(span s, emq_keyinfo *ki)
{
    const unsigned char *close = s.n ? memchr(s.p, '}', s.n) : NULL;

    if (close == NULL)
        return 0;
    size_t qlen = (size_t)(close - s.p);
    if (!queue_ok(s.p, qlen))
        return 0;
    ki->family = EMQ_K_QUEUE;
    ki->q = (const char *)s.p;
    ki->qlen = qlen;
    s.p += qlen;
    s.n -= qlen;
    return eat(&s, "}:") && parse_suffix(s, ki);
}

int emq_key_parse(const void *key, size_t len, emq_keyinfo *ki)
{
    emq_keyinfo scratch;
    span s = { key, len };
    int ok = 0;

    if (ki == NULL)
        ki = &scratch;
    memset(ki, 0, sizeof *ki);
    if (key == NULL)
        return 0;
    if (eat(&s, "{emq}:"))
        ok = parse_reserve(s, ki);
    else if (eat(&s, "emq:{"))
        ok = parse_queue(s, ki);
    if (!ok)
        memset(ki, 0, sizeof *ki);
    return ok;
}
