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
 * (STRING 1, HASH 2, LIST 3, SET 4, ZSET 5, STREAM 6). The reserved units
 * `locks`, `bundle` and `migration:<q>` report 0 (no mechanics, no type
 * defined).
 */
#include <string.h>
#include "keys.h"
#include "brandedid.h"
#include "store.h"

/* Mirrors enum emq_type of storage/store.h; the engine does not need the
 * rest of the store to classify keys. */
enum { T_ANY = 0, T_STRING = 1, T_HASH = 2, T_LIST = 3, T_SET = 4, T_ZSET = 5,
       T_STREAM = 6 };

/* ------------------------------------------------------------- registry */

static const emq_keydef keydefs[EMQ_KT_COUNT] = {
    { EMQ_KT_NONE, "", 0, T_ANY, EMQ_ROLE_OTHER, "" },
#define EMQ_KEYDEF(ID, TEXT, FORM, TYPE, ROLE, RULE) \
    { EMQ_KT_##ID, TEXT, EMQ_KF_##FORM, T_##TYPE, EMQ_ROLE_##ROLE, RULE },
#include "keys.def"
#undef EMQ_KEYDEF
};

const emq_keydef *emq_keydef_get(int kt)
{
    return kt > EMQ_KT_NONE && kt < EMQ_KT_COUNT ? &keydefs[kt] : NULL;
}

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

/* The pieces of a key of type `kt` around its part: head (after the
 * base, before the part) and tail (after it). 0 for an unknown kt. */
static int pieces(int kt, const char **head, const char **tail)
{
    const emq_keydef *d = emq_keydef_get(kt);
    if (d == NULL) return 0;
    *head = d->text;
    *tail = "";
    switch (d->form) {
    case EMQ_KF_JOBSUB: *head = "job:"; *tail = d->text; break;
    case EMQ_KF_LANE: *tail = ":pending"; break;
    case EMQ_KF_ARCHIVED: *tail = ":archived"; break;
    default: break;
    }
    return 1;
}

/* `emq:{q}:` head part [':' tail]. Returns the length, or 0 (buf = "")
 * when it does not fit. */
static size_t build(char *buf, const char *q, int kt, const void *part,
                    size_t n)
{
    const char *head, *tail;
    size_t at = 0;
    int ok = pieces(kt, &head, &tail) && put(buf, &at, "emq:{", 5) &&
             put(buf, &at, q, strlen(q)) && put(buf, &at, "}:", 2) &&
             put(buf, &at, head, strlen(head)) && put(buf, &at, part, n);
    if (ok && emq_keydef_get(kt)->form == EMQ_KF_JOBSUB)
        ok = put(buf, &at, ":", 1);
    ok = ok && put(buf, &at, tail, strlen(tail));
    if (!ok)
        at = 0;
    buf[at] = '\0';
    return at;
}

size_t emq_key(char *buf, const char *q, int kt)
{
    const emq_keydef *d = emq_keydef_get(kt);
    if (d == NULL || d->form != EMQ_KF_FIXED) {
        buf[0] = '\0';
        return 0;
    }
    return build(buf, q, kt, "", 0);
}

size_t emq_key_of(char *buf, const char *q, int kt, const void *part,
                  size_t n)
{
    const emq_keydef *d = emq_keydef_get(kt);
    if (d == NULL || d->form == EMQ_KF_FIXED) {
        buf[0] = '\0';
        return 0;
    }
    return build(buf, q, kt, part, n);
}

int emq_key_buf(emq_buf *b, const char *q, int kt, const void *part,
                size_t n)
{
    const char *head, *tail;
    int rc;
    b->len = 0;
    if (!pieces(kt, &head, &tail)) return EMQ_EINVAL;
    if ((rc = emq_buf_append(b, "emq:{", 5)) < 0 ||
        (rc = emq_buf_append(b, q, strlen(q))) < 0 ||
        (rc = emq_buf_append(b, "}:", 2)) < 0 ||
        (rc = emq_buf_append(b, head, strlen(head))) < 0 ||
        (rc = emq_buf_append(b, part, n)) < 0)
        return rc;
    if (emq_keydef_get(kt)->form == EMQ_KF_JOBSUB &&
        (rc = emq_buf_append(b, ":", 1)) < 0)
        return rc;
    return emq_buf_append(b, tail, strlen(tail));
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

static int branded(const unsigned char *p, size_t n)
{
    return emq_id_check((const char *)p, n, NULL, NULL) == EMQ_ID_OK;
}

/* Stream name: 1..255 bytes (the API's limit, EMQ_ARG_NAME), no NUL, no
 * ':' (D-17). */
static int stream_name_ok(const unsigned char *p, size_t n)
{
    return n > 0 && n <= 255 && memchr(p, '\0', n) == NULL &&
           memchr(p, ':', n) == NULL;
}

/* Fill ki from key type kt with its part. */
static int found(emq_keyinfo *ki, int kt, const unsigned char *part,
                 size_t n)
{
    const emq_keydef *d = &keydefs[kt];
    ki->kt = kt;
    ki->def = d;
    ki->type = d->type;
    ki->role = d->role;
    ki->part = (const char *)part;
    ki->partlen = n;
    return 1;
}

/* Classify the suffix of a per-queue key by the registry. */
static int parse_suffix(span s, emq_keyinfo *ki)
{
    int kt;
    for (kt = 1; kt < EMQ_KT_COUNT; kt++)
        if (keydefs[kt].form == EMQ_KF_FIXED && is(s, keydefs[kt].text))
            return found(ki, kt, NULL, 0);

    if (eat(&s, "job:")) {
        const unsigned char *id = s.p;
        if (s.n < EMQ_ID_LEN || !branded(s.p, EMQ_ID_LEN))
            return 0;
        ki->id = (const char *)s.p;
        s.p += EMQ_ID_LEN;
        s.n -= EMQ_ID_LEN;
        if (s.n == 0) {
            ki->is_job_row = 1;
            return found(ki, EMQ_KT_JOB, id, EMQ_ID_LEN);
        }
        if (!eat(&s, ":"))
            return 0;
        for (kt = 1; kt < EMQ_KT_COUNT; kt++)
            if (keydefs[kt].form == EMQ_KF_JOBSUB && is(s, keydefs[kt].text))
                return found(ki, kt, id, EMQ_ID_LEN);
        return 0;
    }
    if (eat(&s, "de:"))
        return name_ok(s.p, s.n, 255) && found(ki, EMQ_KT_DEDUP, s.p, s.n);
    if (eat(&s, "g:"))
        return s.n == EMQ_ID_LEN + 8 && branded(s.p, EMQ_ID_LEN) &&
               memcmp(s.p + EMQ_ID_LEN, ":pending", 8) == 0 &&
               found(ki, EMQ_KT_LANE, s.p, EMQ_ID_LEN);
    if (eat(&s, "repeat:"))
        return s.n > 0 && found(ki, EMQ_KT_REPEAT_RECORD, s.p, s.n);
    if (eat(&s, "stream:")) {
        const unsigned char *colon = s.n ? memchr(s.p, ':', s.n) : NULL;
        size_t name = colon ? (size_t)(colon - s.p) : s.n;
        span rest = { s.p + name, s.n - name };

        if (!stream_name_ok(s.p, name))
            return 0;
        if (rest.n == 0)
            return found(ki, EMQ_KT_STREAM, s.p, name);
        return is(rest, ":archived") &&
               found(ki, EMQ_KT_STREAM_ARCHIVED, s.p, name);
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
