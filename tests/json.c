/*
 * json.c — the strict JSON reader and compact writer of json.h.
 *
 * Owns: the recursive-descent parser (bounded depth), the value tree and its
 * constructors, UTF-8 validation, base64 decoding and the writer used in
 * mismatch messages. Rules: every allocation goes through `A` and is checked;
 * on any failure the partial tree is freed before returning, so a failed
 * parse leaks nothing.
 */
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- allocator */

static emq_json_allocator A = { malloc, realloc, free };

void emq_json_set_allocator(const emq_json_allocator *a)
{
    if (a) {
        A = *a;
    } else {
        A.malloc_fn = malloc;
        A.realloc_fn = realloc;
        A.free_fn = free;
    }
}

void emq_json_release(void *p)
{
    if (p)
        A.free_fn(p);
}

static char *memdup0(const void *p, size_t n)
{
    char *s = A.malloc_fn(n + 1);
    if (!s)
        return NULL;
    if (n)
        memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

/* -------------------------------------------------------------------- tree */

static emq_json *node(emq_json_type t)
{
    emq_json *v = A.malloc_fn(sizeof *v);
    if (!v)
        return NULL;
    memset(v, 0, sizeof *v);
    v->type = t;
    return v;
}

/* Free what `v` holds, leaving the node itself. */
static void clear(emq_json *v)
{
    size_t k;
    switch (v->type) {
    case EMQ_JSON_ARRAY:
        for (k = 0; k < v->n; k++)
            emq_json_free(v->items[k]);
        A.free_fn(v->items);
        break;
    case EMQ_JSON_OBJECT:
        for (k = 0; k < v->n; k++) {
            A.free_fn(v->members[k].key);
            emq_json_free(v->members[k].val);
        }
        A.free_fn(v->members);
        break;
    default:
        break;
    }
    if (v->raw)
        A.free_fn(v->raw);
    if (v->s)
        A.free_fn(v->s);
    memset(v, 0, sizeof *v);
}

void emq_json_free(emq_json *v)
{
    if (!v)
        return;
    clear(v);
    A.free_fn(v);
}

void emq_json_move(emq_json *dst, emq_json *src)
{
    clear(dst);
    *dst = *src;
    A.free_fn(src);
}

emq_json *emq_json_new_null(void) { return node(EMQ_JSON_NULL); }
emq_json *emq_json_new_bool(int b) { return node(b ? EMQ_JSON_TRUE : EMQ_JSON_FALSE); }
emq_json *emq_json_new_array(void) { return node(EMQ_JSON_ARRAY); }
emq_json *emq_json_new_object(void) { return node(EMQ_JSON_OBJECT); }

emq_json *emq_json_new_int(int64_t i)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%" PRId64, i);
    emq_json *v = node(EMQ_JSON_INT);
    if (!v)
        return NULL;
    v->i = i;
    v->d = (double)i;
    v->raw = memdup0(tmp, (size_t)n);
    if (!v->raw) {
        A.free_fn(v);
        return NULL;
    }
    return v;
}

emq_json *emq_json_new_float(double d)
{
    char tmp[40];
    int n = snprintf(tmp, sizeof tmp, "%.17g", d);
    emq_json *v = node(EMQ_JSON_FLOAT);
    if (!v)
        return NULL;
    v->d = d;
    v->raw = memdup0(tmp, (size_t)n);
    if (!v->raw) {
        A.free_fn(v);
        return NULL;
    }
    return v;
}

emq_json *emq_json_new_str(const void *p, size_t len)
{
    emq_json *v = node(EMQ_JSON_STRING);
    if (!v)
        return NULL;
    v->s = memdup0(p, len);
    if (!v->s) {
        A.free_fn(v);
        return NULL;
    }
    v->len = len;
    return v;
}

/* Make room for one more item/member. */
static int grow(emq_json *v, size_t elem)
{
    void *base = v->type == EMQ_JSON_ARRAY ? (void *)v->items
                                           : (void *)v->members;
    size_t cap;
    void *nb;
    if (v->n < v->cap)
        return EMQ_JSON_OK;
    cap = v->cap ? v->cap * 2 : 4;
    nb = A.realloc_fn(base, cap * elem);
    if (!nb)
        return EMQ_JSON_ENOMEM;
    if (v->type == EMQ_JSON_ARRAY)
        v->items = nb;
    else
        v->members = nb;
    v->cap = cap;
    return EMQ_JSON_OK;
}

int emq_json_push(emq_json *arr, emq_json *item)
{
    if (!item)
        return EMQ_JSON_ENOMEM;
    if (grow(arr, sizeof *arr->items) != EMQ_JSON_OK) {
        emq_json_free(item);
        return EMQ_JSON_ENOMEM;
    }
    arr->items[arr->n++] = item;
    return EMQ_JSON_OK;
}

int emq_json_set(emq_json *obj, const void *key, size_t klen, emq_json *val)
{
    char *k;
    if (!val)
        return EMQ_JSON_ENOMEM;
    k = memdup0(key, klen);
    if (!k || grow(obj, sizeof *obj->members) != EMQ_JSON_OK) {
        if (k)
            A.free_fn(k);
        emq_json_free(val);
        return EMQ_JSON_ENOMEM;
    }
    obj->members[obj->n].key = k;
    obj->members[obj->n].klen = klen;
    obj->members[obj->n].val = val;
    obj->n++;
    return EMQ_JSON_OK;
}

emq_json *emq_json_dup(const emq_json *v)
{
    emq_json *c;
    size_t k;
    switch (v->type) {
    case EMQ_JSON_NULL:
    case EMQ_JSON_FALSE:
    case EMQ_JSON_TRUE:
        return node(v->type);
    case EMQ_JSON_STRING:
        return emq_json_new_str(v->s, v->len);
    case EMQ_JSON_INT:
    case EMQ_JSON_FLOAT:
        c = node(v->type);
        if (!c)
            return NULL;
        c->i = v->i;
        c->d = v->d;
        if (v->raw && !(c->raw = memdup0(v->raw, strlen(v->raw)))) {
            A.free_fn(c);
            return NULL;
        }
        return c;
    case EMQ_JSON_ARRAY:
        c = node(v->type);
        for (k = 0; c && k < v->n; k++) {
            emq_json *it = emq_json_dup(v->items[k]);
            if (!it || emq_json_push(c, it) != EMQ_JSON_OK) {
                emq_json_free(c);
                return NULL;
            }
        }
        return c;
    case EMQ_JSON_OBJECT:
        c = node(v->type);
        for (k = 0; c && k < v->n; k++) {
            emq_json *it = emq_json_dup(v->members[k].val);
            if (!it || emq_json_set(c, v->members[k].key, v->members[k].klen,
                                    it) != EMQ_JSON_OK) {
                emq_json_free(c);
                return NULL;
            }
        }
        return c;
    }
    return NULL;
}

/* ----------------------------------------------------------------- reading */

emq_json *emq_json_get(const emq_json *obj, const char *key)
{
    size_t k, kl = strlen(key);
    if (!obj || obj->type != EMQ_JSON_OBJECT)
        return NULL;
    for (k = 0; k < obj->n; k++)
        if (obj->members[k].klen == kl &&
            memcmp(obj->members[k].key, key, kl) == 0)
            return obj->members[k].val;
    return NULL;
}

int emq_json_has_exactly(const emq_json *v, const char *const *names)
{
    size_t count = 0;
    if (!v || v->type != EMQ_JSON_OBJECT)
        return 0;
    for (; *names; names++, count++)
        if (!emq_json_get(v, *names))
            return 0;
    return v->n == count;
}

static int is_num(const emq_json *v)
{
    return v->type == EMQ_JSON_INT || v->type == EMQ_JSON_FLOAT;
}

int emq_json_equal(const emq_json *a, const emq_json *b)
{
    size_t k;
    if (is_num(a) && is_num(b)) {
        if (a->type == EMQ_JSON_INT && b->type == EMQ_JSON_INT)
            return a->i == b->i;
        return a->d == b->d;
    }
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case EMQ_JSON_STRING:
        return a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
    case EMQ_JSON_ARRAY:
        if (a->n != b->n)
            return 0;
        for (k = 0; k < a->n; k++)
            if (!emq_json_equal(a->items[k], b->items[k]))
                return 0;
        return 1;
    case EMQ_JSON_OBJECT:
        /* Member order carries no meaning; keys are unique in parsed
         * objects, so equal sizes plus one-way inclusion suffice. */
        if (a->n != b->n)
            return 0;
        for (k = 0; k < a->n; k++) {
            size_t j;
            int found = 0;
            for (j = 0; j < b->n && !found; j++)
                if (a->members[k].klen == b->members[j].klen &&
                    memcmp(a->members[k].key, b->members[j].key,
                           a->members[k].klen) == 0) {
                    if (!emq_json_equal(a->members[k].val, b->members[j].val))
                        return 0;
                    found = 1;
                }
            if (!found)
                return 0;
        }
        return 1;
    default:
        return 1;
    }
}

const char *emq_json_type_name(emq_json_type t)
{
    switch (t) {
    case EMQ_JSON_NULL: return "null";
    case EMQ_JSON_FALSE: return "false";
    case EMQ_JSON_TRUE: return "true";
    case EMQ_JSON_INT: return "integer";
    case EMQ_JSON_FLOAT: return "number";
    case EMQ_JSON_STRING: return "string";
    case EMQ_JSON_ARRAY: return "array";
    case EMQ_JSON_OBJECT: return "object";
    }
    return "?";
}

/* ------------------------------------------------------------------ UTF-8 */

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when invalid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return n >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return n >= 3 && p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80
                   ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return n >= 4 && p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 &&
                       (p[3] & 0xC0) == 0x80
                   ? 4 : 0;
    }
    return 0;
}

int emq_json_utf8_valid(const void *p, size_t n)
{
    const unsigned char *s = p;
    size_t k = 0;
    while (k < n) {
        size_t l = utf8_seq(s + k, n - k);
        if (!l)
            return 0;
        k += l;
    }
    return 1;
}

static size_t utf8_put(unsigned char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ----------------------------------------------------------------- base64 */

static int b64_val(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

int emq_json_b64_decode(const char *s, size_t n, unsigned char **out,
                        size_t *outlen)
{
    unsigned char *o;
    size_t k, w = 0, pad = 0;
    *out = NULL;
    *outlen = 0;
    if (n % 4)
        return EMQ_JSON_ESYNTAX;
    if (n && s[n - 1] == '=')
        pad = n >= 2 && s[n - 2] == '=' ? 2 : 1;
    o = A.malloc_fn(n / 4 * 3 + 1);
    if (!o)
        return EMQ_JSON_ENOMEM;
    for (k = 0; k < n; k += 4) {
        int v[4], j;
        int last = k + 4 == n;
        for (j = 0; j < 4; j++) {
            if (last && j >= 4 - (int)pad) {
                v[j] = 0;
                continue;
            }
            v[j] = b64_val((unsigned char)s[k + j]);
            if (v[j] < 0) {
                A.free_fn(o);
                return EMQ_JSON_ESYNTAX;
            }
        }
        o[w++] = (unsigned char)((v[0] << 2) | (v[1] >> 4));
        if (!(last && pad == 2))
            o[w++] = (unsigned char)(((v[1] & 15) << 4) | (v[2] >> 2));
        if (!(last && pad >= 1))
            o[w++] = (unsigned char)(((v[2] & 3) << 6) | v[3]);
        /* Canonical padding: the bits the padding hides must be zero. */
        if (last && ((pad == 2 && (v[1] & 15)) || (pad == 1 && (v[2] & 3)))) {
            A.free_fn(o);
            return EMQ_JSON_ESYNTAX;
        }
    }
    o[w] = '\0';
    *out = o;
    *outlen = w;
    return EMQ_JSON_OK;
}

/* ------------------------------------------------------------------ parser */

typedef struct parser {
    const unsigned char *start, *p, *end;
    emq_json_error *err;
    int depth;
} parser;

static int fail(parser *ps, int rc, const char *msg)
{
    if (ps->err) {
        ps->err->pos = (size_t)(ps->p - ps->start);
        snprintf(ps->err->msg, sizeof ps->err->msg, "%s", msg);
    }
    return rc;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
                               *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int hex4(const unsigned char *p, uint32_t *v)
{
    int k;
    *v = 0;
    for (k = 0; k < 4; k++) {
        int c = p[k], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return 0;
        *v = (*v << 4) | (uint32_t)d;
    }
    return 1;
}

/* Parse a string at ps->p (the opening quote) into a new buffer. */
static int parse_str(parser *ps, char **out, size_t *outlen)
{
    const unsigned char *q = ps->p + 1, *close;
    unsigned char *buf;
    size_t w = 0;
    /* Find the closing quote; the decoded text is never longer. */
    for (close = q; close < ps->end && *close != '"'; close++)
        if (*close == '\\' && close + 1 < ps->end)
            close++;
    if (close >= ps->end)
        return fail(ps, EMQ_JSON_ESYNTAX, "unterminated string");
    buf = A.malloc_fn((size_t)(close - q) + 1);
    if (!buf)
        return fail(ps, EMQ_JSON_ENOMEM, "out of memory");
    ps->p = q;
    while (ps->p < close) {
        unsigned c = *ps->p;
        if (c < 0x20) {
            A.free_fn(buf);
            return fail(ps, EMQ_JSON_ESYNTAX, "control character in string");
        }
        if (c == '\\') {
            uint32_t cp;
            ps->p++;
            switch (*ps->p) {
            case '"': buf[w++] = '"'; ps->p++; break;
            case '\\': buf[w++] = '\\'; ps->p++; break;
            case '/': buf[w++] = '/'; ps->p++; break;
            case 'b': buf[w++] = '\b'; ps->p++; break;
            case 'f': buf[w++] = '\f'; ps->p++; break;
            case 'n': buf[w++] = '\n'; ps->p++; break;
            case 'r': buf[w++] = '\r'; ps->p++; break;
            case 't': buf[w++] = '\t'; ps->p++; break;
            case 'u':
                if (close - ps->p < 5 || !hex4(ps->p + 1, &cp)) {
                    A.free_fn(buf);
                    return fail(ps, EMQ_JSON_ESYNTAX, "bad \\u escape");
                }
                if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    A.free_fn(buf);
                    return fail(ps, EMQ_JSON_ESYNTAX, "lone low surrogate");
                }
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    uint32_t lo;
                    if (close - ps->p < 11 || ps->p[5] != '\\' ||
                        ps->p[6] != 'u' || !hex4(ps->p + 7, &lo) ||
                        lo < 0xDC00 || lo > 0xDFFF) {
                        A.free_fn(buf);
                        return fail(ps, EMQ_JSON_ESYNTAX,
                                    "lone high surrogate");
                    }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    ps->p += 6;
                }
                w += utf8_put(buf + w, cp);
                ps->p += 5;
                break;
            default:
                A.free_fn(buf);
                return fail(ps, EMQ_JSON_ESYNTAX, "bad escape");
            }
        } else if (c < 0x80) {
            buf[w++] = (unsigned char)c;
            ps->p++;
        } else {
            size_t l = utf8_seq(ps->p, (size_t)(close - ps->p));
            if (!l) {
                A.free_fn(buf);
                return fail(ps, EMQ_JSON_ESYNTAX, "invalid UTF-8");
            }
            memcpy(buf + w, ps->p, l);
            w += l;
            ps->p += l;
        }
    }
    buf[w] = '\0';
    ps->p = close + 1;
    *out = (char *)buf;
    *outlen = w;
    return EMQ_JSON_OK;
}

static int parse_number(parser *ps, emq_json **out)
{
    const unsigned char *s = ps->p;
    int is_int = 1, neg = 0;
    emq_json *v;
    if (ps->p < ps->end && *ps->p == '-') {
        neg = 1;
        ps->p++;
    }
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
        return fail(ps, EMQ_JSON_ESYNTAX, "bad number");
    if (*ps->p == '0') {
        ps->p++;
        if (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            return fail(ps, EMQ_JSON_ESYNTAX, "leading zero");
    } else {
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    }
    if (ps->p < ps->end && *ps->p == '.') {
        is_int = 0;
        ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
            return fail(ps, EMQ_JSON_ESYNTAX, "digit expected after '.'");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        is_int = 0;
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
            return fail(ps, EMQ_JSON_ESYNTAX, "digit expected in exponent");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    }
    v = node(EMQ_JSON_INT);
    if (!v)
        return fail(ps, EMQ_JSON_ENOMEM, "out of memory");
    v->raw = memdup0(s, (size_t)(ps->p - s));
    if (!v->raw) {
        A.free_fn(v);
        return fail(ps, EMQ_JSON_ENOMEM, "out of memory");
    }
    if (is_int) {
        /* Accumulate as a negative number so INT64_MIN fits. */
        const unsigned char *d = s + neg;
        int64_t acc = 0;
        for (; d < ps->p; d++) {
            int dig = *d - '0';
            if (acc < (INT64_MIN + dig) / 10) {
                is_int = 0;
                break;
            }
            acc = acc * 10 - dig;
        }
        if (is_int && !neg && acc == INT64_MIN)
            is_int = 0;
        if (is_int)
            v->i = neg ? acc : -acc;
    }
    v->d = strtod(v->raw, NULL);
    if (!is_int)
        v->type = EMQ_JSON_FLOAT;
    else
        v->d = (double)v->i;
    *out = v;
    return EMQ_JSON_OK;
}

static int parse_value(parser *ps, emq_json **out);

static int parse_array(parser *ps, emq_json **out)
{
    emq_json *arr = node(EMQ_JSON_ARRAY);
    int rc;
    if (!arr)
        return fail(ps, EMQ_JSON_ENOMEM, "out of memory");
    ps->p++; /* '[' */
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ']') {
        ps->p++;
        *out = arr;
        return EMQ_JSON_OK;
    }
    for (;;) {
        emq_json *it = NULL;
        rc = parse_value(ps, &it);
        if (rc != EMQ_JSON_OK)
            goto fail;
        if (emq_json_push(arr, it) != EMQ_JSON_OK) {
            rc = fail(ps, EMQ_JSON_ENOMEM, "out of memory");
            goto fail;
        }
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == ']') {
            ps->p++;
            break;
        }
        rc = fail(ps, EMQ_JSON_ESYNTAX, "',' or ']' expected");
        goto fail;
    }
    *out = arr;
    return EMQ_JSON_OK;
fail:
    emq_json_free(arr);
    return rc;
}

static int parse_object(parser *ps, emq_json **out)
{
    emq_json *obj = node(EMQ_JSON_OBJECT);
    int rc;
    if (!obj)
        return fail(ps, EMQ_JSON_ENOMEM, "out of memory");
    ps->p++; /* '{' */
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') {
        ps->p++;
        *out = obj;
        return EMQ_JSON_OK;
    }
    for (;;) {
        char *key = NULL;
        size_t klen = 0, k;
        emq_json *val = NULL;
        const unsigned char *kpos;
        skip_ws(ps);
        kpos = ps->p;
        if (ps->p >= ps->end || *ps->p != '"') {
            rc = fail(ps, EMQ_JSON_ESYNTAX, "string key expected");
            goto fail;
        }
        rc = parse_str(ps, &key, &klen);
        if (rc != EMQ_JSON_OK)
            goto fail;
        for (k = 0; k < obj->n; k++)
            if (obj->members[k].klen == klen &&
                memcmp(obj->members[k].key, key, klen) == 0) {
                A.free_fn(key);
                ps->p = kpos;
                rc = fail(ps, EMQ_JSON_ESYNTAX, "duplicate key");
                goto fail;
            }
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p != ':') {
            A.free_fn(key);
            rc = fail(ps, EMQ_JSON_ESYNTAX, "':' expected");
            goto fail;
        }
        ps->p++;
        rc = parse_value(ps, &val);
        if (rc != EMQ_JSON_OK) {
            A.free_fn(key);
            goto fail;
        }
        if (grow(obj, sizeof *obj->members) != EMQ_JSON_OK) {
            A.free_fn(key);
            emq_json_free(val);
            rc = fail(ps, EMQ_JSON_ENOMEM, "out of memory");
            goto fail;
        }
        obj->members[obj->n].key = key;
        obj->members[obj->n].klen = klen;
        obj->members[obj->n].val = val;
        obj->n++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == '}') {
            ps->p++;
            break;
        }
        rc = fail(ps, EMQ_JSON_ESYNTAX, "',' or '}' expected");
        goto fail;
    }
    *out = obj;
    return EMQ_JSON_OK;
fail:
    emq_json_free(obj);
    return rc;
}

static int literal(parser *ps, const char *word, emq_json_type t,
                   emq_json **out)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return fail(ps, EMQ_JSON_ESYNTAX, "unexpected character");
    ps->p += n;
    *out = node(t);
    return *out ? EMQ_JSON_OK : fail(ps, EMQ_JSON_ENOMEM, "out of memory");
}

static int parse_value(parser *ps, emq_json **out)
{
    int rc;
    skip_ws(ps);
    if (ps->p >= ps->end)
        return fail(ps, EMQ_JSON_ESYNTAX, "value expected");
    switch (*ps->p) {
    case '{':
    case '[':
        if (ps->depth >= EMQ_JSON_MAX_DEPTH)
            return fail(ps, EMQ_JSON_EDEPTH, "nested too deeply");
        ps->depth++;
        rc = *ps->p == '{' ? parse_object(ps, out) : parse_array(ps, out);
        ps->depth--;
        return rc;
    case '"': {
        char *s = NULL;
        size_t n = 0;
        emq_json *v;
        rc = parse_str(ps, &s, &n);
        if (rc != EMQ_JSON_OK)
            return rc;
        v = node(EMQ_JSON_STRING);
        if (!v) {
            A.free_fn(s);
            return fail(ps, EMQ_JSON_ENOMEM, "out of memory");
        }
        v->s = s;
        v->len = n;
        *out = v;
        return EMQ_JSON_OK;
    }
    case 't':
        return literal(ps, "true", EMQ_JSON_TRUE, out);
    case 'f':
        return literal(ps, "false", EMQ_JSON_FALSE, out);
    case 'n':
        return literal(ps, "null", EMQ_JSON_NULL, out);
    default:
        if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
            return parse_number(ps, out);
        return fail(ps, EMQ_JSON_ESYNTAX, "unexpected character");
    }
}

int emq_json_parse(const char *buf, size_t len, emq_json **out,
                   emq_json_error *err)
{
    parser ps;
    emq_json *v = NULL;
    int rc;
    ps.start = ps.p = (const unsigned char *)buf;
    ps.end = ps.start + len;
    ps.err = err;
    ps.depth = 0;
    *out = NULL;
    if (err) {
        err->pos = 0;
        err->msg[0] = '\0';
    }
    rc = parse_value(&ps, &v);
    if (rc != EMQ_JSON_OK)
        return rc;
    skip_ws(&ps);
    if (ps.p != ps.end) {
        emq_json_free(v);
        return fail(&ps, EMQ_JSON_ESYNTAX, "trailing characters");
    }
    *out = v;
    return EMQ_JSON_OK;
}

/* ------------------------------------------------------------------ writer */

int emq_json_buf_puts(emq_json_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return EMQ_JSON_ENOMEM;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        char *np;
        while (cap < b->len + n + 1)
            cap *= 2;
        np = A.realloc_fn(b->p, cap);
        if (!np) {
            b->oom = 1;
            return EMQ_JSON_ENOMEM;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return EMQ_JSON_OK;
}

void emq_json_buf_free(emq_json_buf *b)
{
    if (b->p)
        A.free_fn(b->p);
    memset(b, 0, sizeof *b);
}

static void put(emq_json_buf *b, const char *s)
{
    emq_json_buf_puts(b, s, strlen(s));
}

static void put_b64(emq_json_buf *b, const unsigned char *p, size_t n)
{
    static const char al[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t k;
    for (k = 0; k < n; k += 3) {
        unsigned v = (unsigned)p[k] << 16;
        char o[4];
        if (k + 1 < n) v |= (unsigned)p[k + 1] << 8;
        if (k + 2 < n) v |= p[k + 2];
        o[0] = al[(v >> 18) & 63];
        o[1] = al[(v >> 12) & 63];
        o[2] = k + 1 < n ? al[(v >> 6) & 63] : '=';
        o[3] = k + 2 < n ? al[v & 63] : '=';
        emq_json_buf_puts(b, o, 4);
    }
}

static void put_str(emq_json_buf *b, const char *s, size_t n)
{
    size_t k;
    if (memchr(s, '\0', n) || !emq_json_utf8_valid(s, n)) {
        put(b, "{\"b64\":\"");
        put_b64(b, (const unsigned char *)s, n);
        put(b, "\"}");
        return;
    }
    put(b, "\"");
    for (k = 0; k < n; k++) {
        unsigned char c = (unsigned char)s[k];
        char esc[8];
        if (c == '"')
            put(b, "\\\"");
        else if (c == '\\')
            put(b, "\\\\");
        else if (c == '\n')
            put(b, "\\n");
        else if (c == '\t')
            put(b, "\\t");
        else if (c == '\r')
            put(b, "\\r");
        else if (c < 0x20 || c == 0x7F) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            put(b, esc);
        } else
            emq_json_buf_puts(b, (const char *)&c, 1);
    }
    put(b, "\"");
}

static void write_val(emq_json_buf *b, const emq_json *v, size_t limit)
{
    size_t k;
    if (limit && b->len > limit)
        return;
    switch (v->type) {
    case EMQ_JSON_NULL: put(b, "null"); break;
    case EMQ_JSON_FALSE: put(b, "false"); break;
    case EMQ_JSON_TRUE: put(b, "true"); break;
    case EMQ_JSON_INT:
    case EMQ_JSON_FLOAT:
        if (v->raw) {
            put(b, v->raw);
        } else {
            char tmp[40];
            snprintf(tmp, sizeof tmp, "%.17g", v->d);
            put(b, tmp);
        }
        break;
    case EMQ_JSON_STRING:
        put_str(b, v->s, v->len);
        break;
    case EMQ_JSON_ARRAY:
        put(b, "[");
        for (k = 0; k < v->n; k++) {
            if (k)
                put(b, ",");
            write_val(b, v->items[k], limit);
        }
        put(b, "]");
        break;
    case EMQ_JSON_OBJECT:
        put(b, "{");
        for (k = 0; k < v->n; k++) {
            if (k)
                put(b, ",");
            put_str(b, v->members[k].key, v->members[k].klen);
            put(b, ":");
            write_val(b, v->members[k].val, limit);
        }
        put(b, "}");
        break;
    }
}

int emq_json_write(emq_json_buf *b, const emq_json *v, size_t limit)
{
    size_t base = b->len;
    write_val(b, v, limit ? base + limit : 0);
    if (limit && b->len > base + limit) {
        b->len = base + limit;
        if (b->p)
            b->p[b->len] = '\0';
        put(b, "...");
    }
    if (!b->p)
        put(b, "");
    return b->oom ? EMQ_JSON_ENOMEM : EMQ_JSON_OK;
}
