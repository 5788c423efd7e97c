/*
 * golden.c — the golden-trace model of golden.h: loading and checking trace
 * lines, decoding byte strings and symbolic times, comparing replies and
 * keyspaces, and the per-case replay driver.
 *
 * Rules: a trace is checked strictly (unknown fields, misnumbered steps, a
 * resumed case, a malformed keyspace entry are load errors, not mismatches),
 * so a replay failure always means the executor and the trace disagree.
 */
#include "golden.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct emq_golden_file {
    char *name;
    char *buf;
    size_t len, off;     /* off: the first byte not yet consumed          */
    size_t lineno;       /* lines consumed so far                         */
    emq_json *ahead;     /* a parsed line of the next case, or NULL       */
    size_t ahead_lineno, ahead_end;
    char **seen;         /* names of the cases already returned           */
    size_t nseen, capseen;
    int broken;          /* a load error happened: keep failing           */
};

static void errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static void bufpf(emq_json_buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof tmp)
        n = sizeof tmp - 1;
    emq_json_buf_puts(b, tmp, (size_t)n);
}

/* Values in messages are cut at this many bytes. */
#define SHOW 300

static void show(emq_json_buf *b, const emq_json *v)
{
    if (v)
        emq_json_write(b, v, SHOW);
    else
        bufpf(b, "(none)");
}

static void show_bytes(emq_json_buf *b, const char *p, size_t n)
{
    emq_json tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.type = EMQ_JSON_STRING;
    tmp.s = (char *)p;
    tmp.len = n;
    emq_json_write(b, &tmp, SHOW);
}

/* ------------------------------------------------------------------ files */

int emq_golden_open_mem(const char *name, const char *buf, size_t len,
                        emq_golden_file **out, char *err, size_t errlen)
{
    emq_golden_file *f = calloc(1, sizeof *f);
    *out = NULL;
    if (!f)
        goto oom;
    f->name = strdup(name);
    f->buf = malloc(len + 1);
    if (!f->name || !f->buf)
        goto oom;
    memcpy(f->buf, buf, len);
    f->buf[len] = '\0';
    f->len = len;
    *out = f;
    return 0;
oom:
    emq_golden_close(f);
    errf(err, errlen, "%s: out of memory", name);
    return -1;
}

int emq_golden_open(const char *path, emq_golden_file **out, char *err,
                    size_t errlen)
{
    FILE *fp = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int rc = -1;
    *out = NULL;
    if (!fp) {
        errf(err, errlen, "%s: cannot open", path);
        return -1;
    }
    for (;;) {
        size_t got;
        if (cap - len < 65536) {
            char *nb;
            cap = cap ? cap * 2 : 1 << 20;
            nb = realloc(buf, cap);
            if (!nb) {
                errf(err, errlen, "%s: out of memory", path);
                goto done;
            }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len, fp);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(fp)) {
        errf(err, errlen, "%s: read error", path);
        goto done;
    }
    rc = emq_golden_open_mem(path, buf ? buf : "", len, out, err, errlen);
done:
    free(buf);
    fclose(fp);
    return rc;
}

void emq_golden_close(emq_golden_file *f)
{
    size_t k;
    if (!f)
        return;
    for (k = 0; k < f->nseen; k++)
        free(f->seen[k]);
    free(f->seen);
    emq_json_free(f->ahead);
    free(f->buf);
    free(f->name);
    free(f);
}

void emq_golden_case_free(emq_golden_case *c)
{
    size_t k;
    if (!c)
        return;
    for (k = 0; k < c->n; k++)
        emq_json_free(c->steps[k].line);
    free(c->steps);
    free(c->name);
    free(c);
}

/* -------------------------------------------------------------- decoding */

int emq_golden_decode_bytes(emq_json *v, char *err, size_t errlen)
{
    static const char *const b64[] = { "b64", NULL };
    emq_json *s, *nv;
    unsigned char *raw;
    size_t n;
    int rc;
    if (v->type == EMQ_JSON_STRING)
        return 0;
    if (!emq_json_has_exactly(v, b64) ||
        (s = emq_json_get(v, "b64"))->type != EMQ_JSON_STRING) {
        errf(err, errlen, "a byte string expected, found %s",
             emq_json_type_name(v->type));
        return -1;
    }
    rc = emq_json_b64_decode(s->s, s->len, &raw, &n);
    if (rc != EMQ_JSON_OK) {
        if (rc == EMQ_JSON_ENOMEM)
            errf(err, errlen, "out of memory");
        else
            errf(err, errlen, "bad base64 \"%.40s\"", s->s);
        return -1;
    }
    nv = emq_json_new_str(raw, n);
    emq_json_release(raw);
    if (!nv) {
        errf(err, errlen, "out of memory");
        return -1;
    }
    emq_json_move(v, nv);
    return 0;
}

/* The context symbolic times are evaluated in. */
typedef struct evalctx {
    const emq_golden_case *c;
    char *err;
    size_t errlen;
} evalctx;

/* 1 when `v` is a symbolic time; evaluates it in place (0 / -1 as usual). */
static int eval_symbolic(emq_json *v, const evalctx *ec, int *was)
{
    static const char *const sym[] = { "now_plus", "at_step", NULL };
    emq_json *k, *s, *nv;
    int64_t base, sum;
    *was = 0;
    if (!emq_json_has_exactly(v, sym))
        return 0;
    *was = 1;
    k = emq_json_get(v, "now_plus");
    s = emq_json_get(v, "at_step");
    if (k->type != EMQ_JSON_INT || s->type != EMQ_JSON_INT) {
        errf(ec->err, ec->errlen, "symbolic time with non-integer members");
        return -1;
    }
    if (s->i < 1 || (uint64_t)s->i > ec->c->n) {
        errf(ec->err, ec->errlen, "symbolic time at_step %" PRId64
             " outside the case (1..%zu)", s->i, ec->c->n);
        return -1;
    }
    base = ec->c->steps[s->i - 1].now;
    if (__builtin_add_overflow(base, k->i, &sum)) {
        errf(ec->err, ec->errlen, "symbolic time overflows");
        return -1;
    }
    nv = emq_json_new_int(sum);
    if (!nv) {
        errf(ec->err, ec->errlen, "out of memory");
        return -1;
    }
    emq_json_move(v, nv);
    return 0;
}

/* Decode every byte string and symbolic time inside a reply-like value.
 * {"map": {...}} keeps its names and decodes only its values. */
static int norm_generic(emq_json *v, const evalctx *ec)
{
    static const char *const b64[] = { "b64", NULL };
    static const char *const map[] = { "map", NULL };
    size_t k;
    int was;
    if (v->type == EMQ_JSON_ARRAY) {
        for (k = 0; k < v->n; k++)
            if (norm_generic(v->items[k], ec) != 0)
                return -1;
        return 0;
    }
    if (v->type != EMQ_JSON_OBJECT)
        return 0;
    if (emq_json_has_exactly(v, b64) &&
        emq_json_get(v, "b64")->type == EMQ_JSON_STRING)
        return emq_golden_decode_bytes(v, ec->err, ec->errlen);
    if (eval_symbolic(v, ec, &was) != 0)
        return -1;
    if (was)
        return 0;
    if (emq_json_has_exactly(v, map) &&
        emq_json_get(v, "map")->type == EMQ_JSON_OBJECT)
        v = emq_json_get(v, "map");
    for (k = 0; k < v->n; k++)
        if (norm_generic(v->members[k].val, ec) != 0)
            return -1;
    return 0;
}

static int norm_number(emq_json *v, const evalctx *ec, const char *what)
{
    int was;
    if (v->type == EMQ_JSON_INT || v->type == EMQ_JSON_FLOAT)
        return 0;
    if (eval_symbolic(v, ec, &was) != 0)
        return -1;
    if (!was) {
        errf(ec->err, ec->errlen, "%s: a number expected, found %s", what,
             emq_json_type_name(v->type));
        return -1;
    }
    return 0;
}

static int memcmp_len(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    if (c)
        return c;
    return al < bl ? -1 : al > bl;
}

/* Check and decode one keyspace entry {"type", "value"[, "expire_at"]}. */
static int norm_entry(const char *key, emq_json *e, const evalctx *ec)
{
    emq_json *t, *v, *x;
    size_t k, allowed;
    char sub[160];
    if (e->type != EMQ_JSON_OBJECT) {
        errf(ec->err, ec->errlen, "key %s: an object expected", key);
        return -1;
    }
    t = emq_json_get(e, "type");
    v = emq_json_get(e, "value");
    x = emq_json_get(e, "expire_at");
    allowed = 2 + (x != NULL);
    if (!t || !v || e->n != allowed || t->type != EMQ_JSON_STRING) {
        errf(ec->err, ec->errlen, "key %s: type, value[, expire_at] expected",
             key);
        return -1;
    }
    snprintf(sub, sizeof sub, "key %.120s expire_at", key);
    if (x && norm_number(x, ec, sub) != 0)
        return -1;
    if (strcmp(t->s, "string") == 0) {
        if (emq_golden_decode_bytes(v, ec->err, ec->errlen) != 0)
            goto bad;
        return 0;
    }
    if (strcmp(t->s, "hash") == 0) {
        if (v->type != EMQ_JSON_OBJECT)
            goto shape;
        for (k = 0; k < v->n; k++)
            if (emq_golden_decode_bytes(v->members[k].val, ec->err,
                                        ec->errlen) != 0)
                goto bad;
        return 0;
    }
    if (strcmp(t->s, "list") == 0 || strcmp(t->s, "set") == 0) {
        if (v->type != EMQ_JSON_ARRAY)
            goto shape;
        for (k = 0; k < v->n; k++)
            if (emq_golden_decode_bytes(v->items[k], ec->err, ec->errlen) != 0)
                goto bad;
        return 0;
    }
    if (strcmp(t->s, "zset") == 0) {
        if (v->type != EMQ_JSON_ARRAY)
            goto shape;
        for (k = 0; k < v->n; k++) {
            emq_json *pair = v->items[k];
            if (pair->type != EMQ_JSON_ARRAY || pair->n != 2)
                goto shape;
            if (emq_golden_decode_bytes(pair->items[0], ec->err,
                                        ec->errlen) != 0)
                goto bad;
            snprintf(sub, sizeof sub, "key %.120s score", key);
            if (norm_number(pair->items[1], ec, sub) != 0)
                return -1;
        }
        return 0;
    }
    if (strcmp(t->s, "stream") == 0) {
        if (v->type != EMQ_JSON_OBJECT)
            goto shape;
        return norm_generic(v, ec);
    }
    errf(ec->err, ec->errlen, "key %s: unknown type \"%s\"", key, t->s);
    return -1;
shape:
    errf(ec->err, ec->errlen, "key %s: malformed %s value", key, t->s);
    return -1;
bad: {
        char inner[200];
        snprintf(inner, sizeof inner, "%s", ec->err ? ec->err : "");
        errf(ec->err, ec->errlen, "key %s: %s", key, inner);
        return -1;
    }
}

static int norm_keyspace(emq_json *ks, const evalctx *ec)
{
    size_t k;
    if (ks->type != EMQ_JSON_OBJECT) {
        errf(ec->err, ec->errlen, "keyspace: an object expected");
        return -1;
    }
    for (k = 0; k < ks->n; k++) {
        if (k && memcmp_len(ks->members[k - 1].key, ks->members[k - 1].klen,
                            ks->members[k].key, ks->members[k].klen) >= 0) {
            errf(ec->err, ec->errlen, "keyspace: keys not in bytewise order "
                 "at %.120s", ks->members[k].key);
            return -1;
        }
        if (norm_entry(ks->members[k].key, ks->members[k].val, ec) != 0)
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- loading */

/* Parse the line at f->off into *out, advancing past it. 0 = a line,
 * 1 = end of file, -1 = error. */
static int read_line(emq_golden_file *f, emq_json **out, size_t *lineno,
                     char *err, size_t errlen)
{
    const char *p = f->buf + f->off, *nl;
    size_t n;
    emq_json_error je;
    int rc;
    *out = NULL;
    if (f->off >= f->len)
        return 1;
    nl = memchr(p, '\n', f->len - f->off);
    n = nl ? (size_t)(nl - p) : f->len - f->off;
    *lineno = f->lineno + 1;
    if (n == 0) {
        errf(err, errlen, "%s:%zu: empty line", f->name, *lineno);
        return -1;
    }
    rc = emq_json_parse(p, n, out, &je);
    if (rc != EMQ_JSON_OK) {
        errf(err, errlen, "%s:%zu: column %zu: %s", f->name, *lineno,
             je.pos + 1, je.msg);
        return -1;
    }
    f->off += n + (nl != NULL);
    f->lineno++;
    return 0;
}

/* Check the fields of one line and fill `s` (pointers into `line`). */
static int check_line(emq_golden_file *f, emq_json *line, size_t lineno,
                      emq_golden_step *s, char *err, size_t errlen)
{
    static const char *const known[] = { "case", "step", "verb", "args",
        "now", "reply", "keyspace", "published", "host", "seq", NULL };
    emq_json *v;
    size_t k;
    memset(s, 0, sizeof *s);
    s->line = line;
    s->lineno = lineno;
    if (line->type != EMQ_JSON_OBJECT) {
        errf(err, errlen, "%s:%zu: a step object expected", f->name, lineno);
        return -1;
    }
    for (k = 0; k < line->n; k++) {
        const char *const *kn;
        for (kn = known; *kn; kn++)
            if (strcmp(*kn, line->members[k].key) == 0)
                break;
        if (!*kn) {
            errf(err, errlen, "%s:%zu: unknown field \"%.60s\"", f->name,
                 lineno, line->members[k].key);
            return -1;
        }
    }
#define NEED(field, cond)                                                    \
    do {                                                                     \
        v = emq_json_get(line, field);                                       \
        if (!v || !(cond)) {                                                 \
            errf(err, errlen, "%s:%zu: field \"%s\" missing or mistyped",    \
                 f->name, lineno, field);                                    \
            return -1;                                                       \
        }                                                                    \
    } while (0)
    NEED("case", v->type == EMQ_JSON_STRING && v->len > 0);
    NEED("step", v->type == EMQ_JSON_INT);
    s->step = v->i;
    NEED("verb", v->type == EMQ_JSON_STRING && v->len > 0 &&
                     strlen(v->s) == v->len);
    s->verb = v->s;
    NEED("args", v->type == EMQ_JSON_OBJECT);
    s->args = v;
    NEED("now", v->type == EMQ_JSON_INT);
    s->now = v->i;
    NEED("reply", 1);
    s->reply = v;
    NEED("keyspace", v->type == EMQ_JSON_OBJECT);
    s->keyspace = v;
#undef NEED
    s->published = emq_json_get(line, "published");
    s->seq = emq_json_get(line, "seq");
    v = emq_json_get(line, "host");
    if (v && v->type != EMQ_JSON_TRUE) {
        errf(err, errlen, "%s:%zu: \"host\" must be true", f->name, lineno);
        return -1;
    }
    s->host = v != NULL;
    if (s->seq && s->seq->type != EMQ_JSON_OBJECT) {
        errf(err, errlen, "%s:%zu: \"seq\" must be an object", f->name,
             lineno);
        return -1;
    }
    return 0;
}

static int add_step(emq_golden_case *c, emq_json *line, size_t lineno,
                    emq_golden_file *f, char *err, size_t errlen)
{
    emq_golden_step s;
    if (check_line(f, line, lineno, &s, err, errlen) != 0)
        return -1;
    if (s.step != (int64_t)c->n + 1) {
        errf(err, errlen, "%s:%zu: case %s: step %" PRId64 " where %zu was "
             "expected", f->name, lineno, c->name, s.step, c->n + 1);
        return -1;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        emq_golden_step *ns = realloc(c->steps, cap * sizeof *ns);
        if (!ns) {
            errf(err, errlen, "out of memory");
            return -1;
        }
        c->steps = ns;
        c->cap = cap;
    }
    c->steps[c->n++] = s;
    return 0;
}

static int decode_case(emq_golden_file *f, emq_golden_case *c, char *err,
                       size_t errlen)
{
    char inner[400];
    evalctx ec = { c, inner, sizeof inner };
    size_t k;
    for (k = 0; k < c->n; k++) {
        emq_golden_step *s = &c->steps[k];
        const char *part = "args";
        inner[0] = '\0';
        if (norm_generic(s->args, &ec) != 0)
            goto bad;
        part = "reply";
        if (norm_generic(s->reply, &ec) != 0)
            goto bad;
        part = "published";
        if (s->published && norm_generic(s->published, &ec) != 0)
            goto bad;
        part = "seq";
        if (s->seq && norm_generic(s->seq, &ec) != 0)
            goto bad;
        part = "keyspace";
        if (norm_keyspace(s->keyspace, &ec) != 0)
            goto bad;
        continue;
bad:
        errf(err, errlen, "%s:%zu: case %s step %" PRId64 ": %s: %s",
             f->name, s->lineno, c->name, s->step, part, inner);
        return -1;
    }
    return 0;
}

int emq_golden_next_case(emq_golden_file *f, emq_golden_case **out,
                         char *err, size_t errlen)
{
    emq_golden_case *c = NULL;
    emq_json *line = NULL;
    size_t lineno = 0, k;
    int rc;
    *out = NULL;
    if (f->broken) {
        errf(err, errlen, "%s: an earlier load error stops the file",
             f->name);
        return -1;
    }
    for (;;) {
        emq_json *cn;
        if (f->ahead) {
            line = f->ahead;
            lineno = f->ahead_lineno;
            f->ahead = NULL;
        } else {
            rc = read_line(f, &line, &lineno, err, errlen);
            if (rc < 0)
                goto fail;
            if (rc == 1)
                break;
        }
        cn = emq_json_get(line, "case");
        if (!cn || cn->type != EMQ_JSON_STRING || cn->len == 0) {
            errf(err, errlen, "%s:%zu: field \"case\" missing or mistyped",
                 f->name, lineno);
            goto fail;
        }
        if (c && strcmp(c->name, cn->s) != 0) {
            f->ahead = line;
            f->ahead_lineno = lineno;
            line = NULL;
            break;
        }
        if (!c) {
            for (k = 0; k < f->nseen; k++)
                if (strcmp(f->seen[k], cn->s) == 0) {
                    errf(err, errlen, "%s:%zu: case %s resumes after other "
                         "cases", f->name, lineno, cn->s);
                    goto fail;
                }
            c = calloc(1, sizeof *c);
            if (!c || !(c->name = strdup(cn->s))) {
                errf(err, errlen, "out of memory");
                goto fail;
            }
        }
        if (add_step(c, line, lineno, f, err, errlen) != 0)
            goto fail;
        line = NULL;
    }
    if (!c)
        return 0;
    if (decode_case(f, c, err, errlen) != 0)
        goto fail;
    if (f->nseen == f->capseen) {
        size_t cap = f->capseen ? f->capseen * 2 : 64;
        char **ns = realloc(f->seen, cap * sizeof *ns);
        if (!ns) {
            errf(err, errlen, "out of memory");
            goto fail;
        }
        f->seen = ns;
        f->capseen = cap;
    }
    if (!(f->seen[f->nseen] = strdup(c->name))) {
        errf(err, errlen, "out of memory");
        goto fail;
    }
    f->nseen++;
    *out = c;
    return 1;
fail:
    emq_json_free(line);
    emq_golden_case_free(c);
    f->broken = 1;
    return -1;
}

/* ------------------------------------------------------------------ args */

emq_json *emq_golden_arg(const emq_golden_step *s, const char *name)
{
    return emq_json_get(s->args, name);
}

int emq_golden_arg_str(const emq_golden_step *s, const char *name,
                       const char **p, size_t *len)
{
    emq_json *v = emq_json_get(s->args, name);
    if (!v || v->type != EMQ_JSON_STRING)
        return -1;
    *p = v->s;
    if (len)
        *len = v->len;
    return 0;
}

int emq_golden_arg_int(const emq_golden_step *s, const char *name,
                       int64_t *out)
{
    emq_json *v = emq_json_get(s->args, name);
    if (!v || v->type != EMQ_JSON_INT)
        return -1;
    *out = v->i;
    return 0;
}

/* -------------------------------------------------------------- builders */

emq_json *emq_golden_score(double score)
{
    if (score >= -9223372036854775808.0 && score < 9223372036854775808.0 &&
        (double)(int64_t)score == score)
        return emq_json_new_int((int64_t)score);
    return emq_json_new_float(score);
}

int emq_golden_ks_add(emq_json *ks, const void *key, size_t klen,
                      const char *type, emq_json *value, int64_t expire_at)
{
    emq_json *e = emq_json_new_object();
    if (!e) {
        emq_json_free(value);
        return -1;
    }
    if (emq_json_set(e, "type", 4, emq_json_new_str(type, strlen(type))) ||
        emq_json_set(e, "value", 5, value)) {
        emq_json_free(e);
        return -1;
    }
    value = NULL;
    if (expire_at >= 0 &&
        emq_json_set(e, "expire_at", 9, emq_json_new_int(expire_at))) {
        emq_json_free(e);
        return -1;
    }
    return emq_json_set(ks, key, klen, e) ? -1 : 0;
}

emq_json *emq_golden_error_reply(const void *msg, size_t len)
{
    emq_json *o = emq_json_new_object();
    if (!o)
        return NULL;
    if (emq_json_set(o, "error", 5, emq_json_new_str(msg, len))) {
        emq_json_free(o);
        return NULL;
    }
    return o;
}

/* ------------------------------------------------------------ comparison */

int emq_golden_reply_diff(const emq_json *expected, const emq_json *actual,
                          emq_json_buf *msg)
{
    if (emq_json_equal(expected, actual))
        return 0;
    bufpf(msg, "reply: expected ");
    show(msg, expected);
    bufpf(msg, ", got ");
    show(msg, actual);
    return 1;
}

static int cmp_members(const void *a, const void *b)
{
    const emq_json_member *x = *(const emq_json_member *const *)a;
    const emq_json_member *y = *(const emq_json_member *const *)b;
    return memcmp_len(x->key, x->klen, y->key, y->klen);
}

static int cmp_strings(const void *a, const void *b)
{
    const emq_json *x = *(const emq_json *const *)a;
    const emq_json *y = *(const emq_json *const *)b;
    if (x->type != EMQ_JSON_STRING || y->type != EMQ_JSON_STRING)
        return (int)x->type - (int)y->type;
    return memcmp_len(x->s, x->len, y->s, y->len);
}

/* Pointers to the members of `obj`, sorted by key. Caller frees. */
static emq_json_member **sorted_members(const emq_json *obj)
{
    emq_json_member **v = malloc((obj->n ? obj->n : 1) * sizeof *v);
    size_t k;
    if (!v)
        return NULL;
    for (k = 0; k < obj->n; k++)
        v[k] = &obj->members[k];
    qsort(v, obj->n, sizeof *v, cmp_members);
    return v;
}

static emq_json **sorted_items(const emq_json *arr)
{
    emq_json **v = malloc((arr->n ? arr->n : 1) * sizeof *v);
    if (!v)
        return NULL;
    if (arr->n)
        memcpy(v, arr->items, arr->n * sizeof *v);
    qsort(v, arr->n, sizeof *v, cmp_strings);
    return v;
}

static void key_prefix(emq_json_buf *msg, const emq_json_member *m)
{
    bufpf(msg, "keyspace: key ");
    show_bytes(msg, m->key, m->klen);
}

/* Hash fields as a set. */
static int diff_hash(const emq_json_member *km, const emq_json *e,
                     const emq_json *a, emq_json_buf *msg)
{
    emq_json_member **ev = sorted_members(e), **av = sorted_members(a);
    size_t i = 0, j = 0;
    int rc = 0;
    if (!ev || !av) {
        key_prefix(msg, km);
        bufpf(msg, ": out of memory comparing");
        rc = 1;
        goto done;
    }
    while (i < e->n || j < a->n) {
        int c = i == e->n ? 1 : j == a->n ? -1
              : memcmp_len(ev[i]->key, ev[i]->klen, av[j]->key, av[j]->klen);
        if (c != 0 || !emq_json_equal(ev[i]->val, av[j]->val))
            key_prefix(msg, km);
        if (c < 0) {
            bufpf(msg, " field ");
            show_bytes(msg, ev[i]->key, ev[i]->klen);
            bufpf(msg, ": missing (expected ");
            show(msg, ev[i]->val);
            bufpf(msg, ")");
            rc = 1;
            goto done;
        }
        if (c > 0) {
            bufpf(msg, " field ");
            show_bytes(msg, av[j]->key, av[j]->klen);
            bufpf(msg, ": unexpected (");
            show(msg, av[j]->val);
            bufpf(msg, ")");
            rc = 1;
            goto done;
        }
        if (!emq_json_equal(ev[i]->val, av[j]->val)) {
            bufpf(msg, " field ");
            show_bytes(msg, ev[i]->key, ev[i]->klen);
            bufpf(msg, ": expected ");
            show(msg, ev[i]->val);
            bufpf(msg, ", got ");
            show(msg, av[j]->val);
            rc = 1;
            goto done;
        }
        i++;
        j++;
    }
done:
    free(ev);
    free(av);
    return rc;
}

/* Ordered elements (zset pairs, list values, sorted set members). */
static int diff_seq(const emq_json_member *km, const char *what,
                    emq_json *const *e, size_t en, emq_json *const *a,
                    size_t an, emq_json_buf *msg)
{
    size_t k;
    for (k = 0; k < en || k < an; k++) {
        if (k < en && k < an && emq_json_equal(e[k], a[k]))
            continue;
        key_prefix(msg, km);
        bufpf(msg, " %s[%zu]: ", what, k);
        if (k >= an) {
            bufpf(msg, "missing (expected ");
            show(msg, e[k]);
            bufpf(msg, ")");
        } else if (k >= en) {
            bufpf(msg, "unexpected ");
            show(msg, a[k]);
        } else {
            bufpf(msg, "expected ");
            show(msg, e[k]);
            bufpf(msg, ", got ");
            show(msg, a[k]);
        }
        bufpf(msg, " (%zu expected, %zu present)", en, an);
        return 1;
    }
    return 0;
}

static int diff_entry(const emq_json_member *km, const emq_json *e,
                      const emq_json *a, emq_json_buf *msg)
{
    emq_json *et = emq_json_get(e, "type"), *at = emq_json_get(a, "type");
    emq_json *ev = emq_json_get(e, "value"), *av = emq_json_get(a, "value");
    emq_json *ex = emq_json_get(e, "expire_at"), *ax = emq_json_get(a, "expire_at");
    if (!at || !av || at->type != EMQ_JSON_STRING) {
        key_prefix(msg, km);
        bufpf(msg, ": the executor's entry is malformed");
        return 1;
    }
    if (!emq_json_equal(et, at)) {
        key_prefix(msg, km);
        bufpf(msg, ": type: expected %s, got %s", et->s, at->s);
        return 1;
    }
    if ((ex == NULL) != (ax == NULL) || (ex && !emq_json_equal(ex, ax))) {
        key_prefix(msg, km);
        bufpf(msg, ": expire_at: expected ");
        show(msg, ex);
        bufpf(msg, ", got ");
        show(msg, ax);
        return 1;
    }
    if (strcmp(et->s, "hash") == 0 && ev->type == EMQ_JSON_OBJECT &&
        av->type == EMQ_JSON_OBJECT)
        return diff_hash(km, ev, av, msg);
    if ((strcmp(et->s, "zset") == 0 || strcmp(et->s, "list") == 0) &&
        ev->type == EMQ_JSON_ARRAY && av->type == EMQ_JSON_ARRAY)
        return diff_seq(km, et->s, ev->items, ev->n, av->items, av->n, msg);
    if (strcmp(et->s, "set") == 0 && ev->type == EMQ_JSON_ARRAY &&
        av->type == EMQ_JSON_ARRAY) {
        emq_json **es = sorted_items(ev), **as = sorted_items(av);
        int rc = es && as ? diff_seq(km, "set", es, ev->n, as, av->n, msg) : 1;
        if (!es || !as) {
            key_prefix(msg, km);
            bufpf(msg, ": out of memory comparing");
        }
        free(es);
        free(as);
        return rc;
    }
    if (emq_json_equal(ev, av))
        return 0;
    key_prefix(msg, km);
    bufpf(msg, " (%s): expected ", et->s);
    show(msg, ev);
    bufpf(msg, ", got ");
    show(msg, av);
    return 1;
}

int emq_golden_keyspace_diff(const emq_json *expected, const emq_json *actual,
                             emq_json_buf *msg)
{
    emq_json_member **ev, **av;
    size_t i = 0, j = 0;
    int rc = 0;
    if (actual->type != EMQ_JSON_OBJECT) {
        bufpf(msg, "keyspace: the executor's dump is not an object");
        return 1;
    }
    ev = sorted_members(expected);
    av = sorted_members(actual);
    if (!ev || !av) {
        bufpf(msg, "keyspace: out of memory comparing");
        rc = 1;
        goto done;
    }
    while (i < expected->n || j < actual->n) {
        int c = i == expected->n ? 1 : j == actual->n ? -1
              : memcmp_len(ev[i]->key, ev[i]->klen, av[j]->key, av[j]->klen);
        if (c < 0) {
            key_prefix(msg, ev[i]);
            bufpf(msg, ": missing (expected ");
            show(msg, ev[i]->val);
            bufpf(msg, ")");
            rc = 1;
            goto done;
        }
        if (c > 0) {
            key_prefix(msg, av[j]);
            bufpf(msg, ": unexpected (");
            show(msg, av[j]->val);
            bufpf(msg, ")");
            rc = 1;
            goto done;
        }
        if (diff_entry(ev[i], ev[i]->val, av[j]->val, msg)) {
            rc = 1;
            goto done;
        }
        i++;
        j++;
    }
done:
    free(ev);
    free(av);
    return rc;
}

/* ------------------------------------------------------------ published */

/* A member of a flat JSON object: the raw bytes `"name":"value"`. */
typedef struct span {
    const char *p;
    size_t n;
} span;

/* The end of the JSON string starting at p[i] (a quote), past its closing
 * quote, or 0. Escapes are skipped, never decoded. */
static size_t string_end(const char *p, size_t len, size_t i)
{
    if (i >= len || p[i] != '"') return 0;
    for (i++; i < len; i++) {
        if (p[i] == '\\') i++;
        else if (p[i] == '"') return i + 1;
    }
    return 0;
}

/* Split a flat object of string members into spans (at most max). Returns
 * the number, or -1 when the bytes are not such an object. */
static int split_members(const char *p, size_t len, span *out, int max)
{
    size_t i = 1, e;
    int n = 0;
    if (len < 2 || p[0] != '{' || p[len - 1] != '}') return -1;
    if (len == 2) return 0;
    for (;;) {
        size_t start = i;
        if (!(e = string_end(p, len, i)) || e >= len || p[e] != ':')
            return -1;
        if (!(i = string_end(p, len, e + 1))) return -1;
        if (n == max) return -1;
        out[n].p = p + start;
        out[n].n = i - start;
        n++;
        if (i == len - 1) return n;
        if (p[i] != ',') return -1;
        i++;
    }
}

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* README "Reproducing a case": a published [channel, message] matches when
 * the channel is the same and the messages hold the same members, each
 * compared as its exact bytes (member order is not part of the contract,
 * PROTOCOL.md D-4). Anything else compares as JSON. */
int emq_golden_published_equal(const emq_json *want, const emq_json *got)
{
    span a[32], b[32];
    int na, nb, i;
    if (want->type != EMQ_JSON_ARRAY || got->type != EMQ_JSON_ARRAY ||
        want->n != 2 || got->n != 2 ||
        want->items[1]->type != EMQ_JSON_STRING ||
        got->items[1]->type != EMQ_JSON_STRING)
        return emq_json_equal(want, got);
    if (!emq_json_equal(want->items[0], got->items[0])) return 0;
    na = split_members(want->items[1]->s, want->items[1]->len, a, 32);
    nb = split_members(got->items[1]->s, got->items[1]->len, b, 32);
    if (na < 0 || nb < 0)
        return emq_json_equal(want->items[1], got->items[1]);
    if (na != nb) return 0;
    qsort(a, (size_t)na, sizeof *a, cmp_span);
    qsort(b, (size_t)nb, sizeof *b, cmp_span);
    for (i = 0; i < na; i++)
        if (cmp_span(&a[i], &b[i]) != 0) return 0;
    return 1;
}

/* ---------------------------------------------------------------- driver */

/* A multi-part verb the executor runs whole: when step *k is part 1 of
 * one, `w` becomes the step to run (seq.verb with seq.args, the last part's
 * seq.reply and keyspace) and *k the last part; else w->verb stays NULL.
 * -1 with a message when the parts are malformed. */
static int whole_step(const emq_golden_exec *ex, const emq_golden_opts *o,
                      const emq_golden_case *c, size_t *k,
                      emq_golden_step *w, emq_json_buf *msg)
{
    const emq_golden_step *s = &c->steps[*k], *last;
    emq_json *v, *part, *parts, *lv, *reply;
    memset(w, 0, sizeof *w);
    if (!o || !o->whole || !s->seq)
        return 0;
    v = emq_json_get(s->seq, "verb");
    part = emq_json_get(s->seq, "part");
    parts = emq_json_get(s->seq, "parts");
    if (!v || v->type != EMQ_JSON_STRING || !part ||
        part->type != EMQ_JSON_INT || !parts || parts->type != EMQ_JSON_INT) {
        bufpf(msg, "seq without verb, part and parts");
        return -1;
    }
    if (part->i != 1 || !o->whole(ex->ctx, v->s))
        return 0;
    if (parts->i < 1 || *k + (size_t)parts->i > c->n) {
        bufpf(msg, "seq %s: %" PRId64 " parts run past the case", v->s,
              parts->i);
        return -1;
    }
    last = &c->steps[*k + (size_t)parts->i - 1];
    lv = last->seq ? emq_json_get(last->seq, "verb") : NULL;
    reply = last->seq ? emq_json_get(last->seq, "reply") : NULL;
    if (!lv || !emq_json_equal(lv, v) || !reply ||
        !emq_json_get(s->seq, "args")) {
        bufpf(msg, "seq %s: part 1 without args or the last part without "
              "its reply", v->s);
        return -1;
    }
    *w = *s;
    w->verb = v->s;
    w->args = emq_json_get(s->seq, "args");
    w->reply = reply;
    w->keyspace = last->keyspace;
    w->published = NULL;
    w->seq = NULL;
    *k += (size_t)parts->i - 1;
    return 0;
}

int emq_golden_run_case(const emq_golden_exec *ex, const emq_golden_case *c,
                        emq_golden_outcome *out)
{
    return emq_golden_run_case_opts(ex, NULL, c, out);
}

int emq_golden_run_case_opts(const emq_golden_exec *ex,
                             const emq_golden_opts *opts,
                             const emq_golden_case *c,
                             emq_golden_outcome *out)
{
    size_t k;
    int rc = 0;
    memset(out, 0, sizeof *out);
    if (ex->case_begin(ex->ctx, c, &out->msg) != 0) {
        emq_json_buf tmp = out->msg;
        memset(&out->msg, 0, sizeof out->msg);
        bufpf(&out->msg, "executor %s: case setup: %s", ex->name,
              tmp.p ? tmp.p : "");
        emq_json_buf_free(&tmp);
        return -1;
    }
    for (k = 0; k < c->n && rc == 0; k++) {
        const emq_golden_step *s = &c->steps[k];
        emq_golden_step whole;
        emq_golden_result res;
        emq_json *ks = NULL;
        emq_json_buf err;
        memset(&res, 0, sizeof res);
        memset(&err, 0, sizeof err);
        out->step = s->step;
        out->verb = s->verb;
        if (whole_step(ex, opts, c, &k, &whole, &out->msg) != 0) {
            rc = -1;
            break;
        }
        if (whole.verb)
            s = &whole;
        out->verb = s->verb;
        ex->set_clock(ex->ctx, s->now);
        if (ex->run_step(ex->ctx, s, &res, &err) != 0 || !res.reply) {
            bufpf(&out->msg, "executor %s: %s", ex->name,
                  err.p ? err.p : "no reply");
            rc = -1;
        } else if (emq_golden_reply_diff(s->reply, res.reply, &out->msg)) {
            rc = 1;
        } else if (res.has_published) {
            emq_json null_v;
            const emq_json *want = s->published;
            memset(&null_v, 0, sizeof null_v);
            if (!want)
                want = &null_v;
            if (!res.published || !emq_golden_published_equal(want, res.published)) {
                bufpf(&out->msg, "published: expected ");
                show(&out->msg, want);
                bufpf(&out->msg, ", got ");
                show(&out->msg, res.published);
                rc = 1;
            }
        }
        if (rc == 0) {
            if (ex->dump_keyspace(ex->ctx, &ks, &err) != 0 || !ks) {
                bufpf(&out->msg, "executor %s: keyspace dump: %s", ex->name,
                      err.p ? err.p : "nothing returned");
                rc = -1;
            } else if (emq_golden_keyspace_diff(s->keyspace, ks, &out->msg)) {
                rc = 1;
            }
        }
        emq_json_free(ks);
        emq_json_free(res.reply);
        emq_json_free(res.published);
        emq_json_buf_free(&err);
    }
    ex->case_end(ex->ctx);
    if (rc == 0) {
        out->passed = 1;
        out->step = 0;
        out->verb = NULL;
    }
    return rc;
}

/* ----------------------------------------------------------------- main */

static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s [--quiet] [--parse-only] [--case NAME] "
            "[--stop] [--whole] FILE...\n", prog);
}

int emq_golden_main(int argc, char **argv, const emq_golden_exec *ex)
{
    return emq_golden_main_opts(argc, argv, ex, NULL);
}

/* --whole without an executor's own choice: every multi-part verb. */
static int whole_every(void *ctx, const char *seq_verb)
{
    (void)ctx;
    (void)seq_verb;
    return 1;
}

int emq_golden_main_opts(int argc, char **argv, const emq_golden_exec *ex,
                         const emq_golden_opts *opts)
{
    int quiet = 0, parse_only = 0, stop = 0, load_error = 0, i, nfiles = 0;
    int whole = 0;
    const char *only = NULL;
    long passed = 0, failed = 0, skipped = 0, steps = 0;
    emq_golden_opts all = {whole_every, NULL};
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quiet") == 0)
            quiet = 1;
        else if (strcmp(argv[i], "--parse-only") == 0)
            parse_only = 1;
        else if (strcmp(argv[i], "--stop") == 0)
            stop = 1;
        else if (strcmp(argv[i], "--whole") == 0)
            whole = 1;
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (argv[i][0] == '-') {
            usage(argv[0]);
            return 2;
        } else
            break;
    }
    if (i >= argc || (!parse_only && !ex)) {
        usage(argv[0]);
        return 2;
    }
    for (; i < argc && !(stop && failed); i++) {
        emq_golden_file *f;
        emq_golden_case *c;
        char err[600];
        int rc;
        nfiles++;
        if (emq_golden_open(argv[i], &f, err, sizeof err) != 0) {
            fprintf(stderr, "ERROR %s\n", err);
            load_error = 1;
            continue;
        }
        while ((rc = emq_golden_next_case(f, &c, err, sizeof err)) == 1) {
            emq_golden_outcome out;
            if (only && strcmp(only, c->name) != 0) {
                emq_golden_case_free(c);
                continue;
            }
            steps += (long)c->n;
            if (parse_only) {
                passed++;
                if (!quiet)
                    printf("PARSED %s (%zu steps)\n", c->name, c->n);
                emq_golden_case_free(c);
                continue;
            }
            if (opts && opts->case_skip) {
                const char *why = opts->case_skip(ex->ctx, c);
                if (why) {
                    skipped++;
                    if (!quiet)
                        printf("SKIP %s: %s\n", c->name, why);
                    emq_golden_case_free(c);
                    continue;
                }
            }
            if (whole && !(opts && opts->whole)) {
                /* --whole: every multi-part verb whole (an executor with
                 * its own choice makes it verb by verb). */
                all.case_skip = opts ? opts->case_skip : NULL;
                emq_golden_run_case_opts(ex, &all, c, &out);
            } else {
                emq_golden_run_case_opts(ex, opts, c, &out);
            }
            if (out.passed) {
                passed++;
                if (!quiet)
                    printf("PASS %s\n", c->name);
            } else {
                failed++;
                if (out.step)
                    printf("FAIL %s: step %" PRId64 " (%s): %s\n", c->name,
                           out.step, out.verb, out.msg.p ? out.msg.p : "");
                else
                    printf("FAIL %s: %s\n", c->name,
                           out.msg.p ? out.msg.p : "");
            }
            fflush(stdout);
            emq_json_buf_free(&out.msg);
            emq_golden_case_free(c);
            if (stop && failed)
                break;
        }
        if (rc < 0) {
            fprintf(stderr, "ERROR %s\n", err);
            load_error = 1;
        }
        emq_golden_close(f);
    }
    if (parse_only && !quiet)
        printf("%ld steps decoded in %d file(s)\n", steps, nfiles);
    if (skipped)
        printf("%ld passed, %ld failed, %ld skipped\n", passed, failed,
               skipped);
    else
        printf("%ld passed, %ld failed\n", passed, failed);
    return load_error ? 2 : failed ? 1 : 0;
}
