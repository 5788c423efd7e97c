/*
 * web.c — the web dashboard's HTTP handler (api/emqlite_web.h,
 * doc/WEB.md): routing, the checks every input passes, the JSON API over
 * the library's reads and operator verbs, and the embedded single-page
 * app (web/assets/, compiled into web_assets.c by web/gen_assets.sh).
 *
 * Rules: the handler knows no sockets; it builds the whole response in
 * memory and every transaction it runs (through api/emqlite.h, or one
 * read transaction of its own for the keyset pages and stream figures)
 * ends before it returns. Queue names, ids, groups, states, cursors and
 * numbers are checked against their rules before they reach the library;
 * a refusal is 400 with {"error": "bad_request", "message": the rule}.
 * Everything the handler writes is JSON (escaped, '<' '>' '&' as \u00XX)
 * or a static asset; the page renders data with textContent only.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "emqlite.h"
#include "emqlite_web.h"
#include "db.h"
#include "keys.h"
#include "store.h"
#include "stream.h"
#include "groups.h"
#include "web_int.h"

#define SERIES_MINUTES 60
#define PAGE_DEFAULT 50
#define PAGE_MAX 500
#define SCAN_MAX 5000       /* rows a payload-prefix search reads per page */
#define EVENTS_MAX 500
#define LANES_MAX 1000
#define TOKEN_MAX 256
#define WEB_QUEUE_MAX 128  /* the queue-name rule's length */

/* Completions and failures per minute of one queue, from the event log,
 * and the retries (failures scheduled again) from the job history. */
typedef struct series {
    char name[WEB_QUEUE_MAX + 1];
    int64_t stamp[SERIES_MINUTES]; /* the minute a bucket holds          */
    int64_t done[SERIES_MINUTES], fail[SERIES_MINUTES];
    int64_t retry[SERIES_MINUTES];
} series;

struct emq_web {
    emq_db *db;
    int read_only;
    char *token;
    size_t max_body;
    char csrf[65];
    int64_t ev_cursor;           /* the event log read so far (series)  */
    int64_t hist_cursor;         /* the job history read so far (series) */
    int hist_started;            /* hist_cursor set from the newest      */
    series *ser;
    size_t nser, cap;
};

/* --------------------------------------------------------------- buffer */

void emq_wb_put(emq_wb *b, const void *p, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + n + 1) cap *= 2;
        char *np = realloc(b->p, cap);
        if (np == NULL) { b->oom = 1; return; }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void emq_wb_str(emq_wb *b, const char *s) { emq_wb_put(b, s, strlen(s)); }

void emq_wb_printf(emq_wb *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) { b->oom = 1; return; }
    if ((size_t)n < sizeof tmp) { emq_wb_put(b, tmp, (size_t)n); return; }
    char *big = malloc((size_t)n + 1);
    if (big == NULL) { b->oom = 1; return; }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    emq_wb_put(b, big, (size_t)n);
    free(big);
}

/* The length of the UTF-8 sequence at p (at most n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    size_t k;
    unsigned min;
    uint32_t cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) { k = 2; min = 0x80; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { k = 3; min = 0x800; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { k = 4; min = 0x10000; cp = c & 0x07; }
    else return 0;
    if (n < k) return 0;
    for (size_t i = 1; i < k; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return k;
}

int emq_web_utf8(const void *v, size_t n)
{
    const unsigned char *p = v;
    size_t i = 0;
    while (i < n) {
        size_t k = utf8_len(p + i, n - i);
        if (k == 0) return 0;
        i += k;
    }
    return 1;
}

/* A JSON string of valid UTF-8 bytes; control bytes and < > & ' as \u. */
static void json_text(emq_wb *b, const unsigned char *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t i, run = 0;
    emq_wb_put(b, "\"", 1);
    for (i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' &&
            c != '&' && c != '\'' && c != 0x7F)
            continue;
        emq_wb_put(b, p + run, i - run);
        run = i + 1;
        if (c == '"') emq_wb_put(b, "\\\"", 2);
        else if (c == '\\') emq_wb_put(b, "\\\\", 2);
        else if (c == '\n') emq_wb_put(b, "\\n", 2);
        else if (c == '\t') emq_wb_put(b, "\\t", 2);
        else if (c == '\r') emq_wb_put(b, "\\r", 2);
        else {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            emq_wb_put(b, e, 6);
        }
    }
    emq_wb_put(b, p + run, n - run);
    emq_wb_put(b, "\"", 1);
}

static void b64(emq_wb *b, const unsigned char *p, size_t n)
{
    static const char a[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i;
    for (i = 0; i + 2 < n; i += 3) {
        char o[4] = {a[p[i] >> 2], a[((p[i] & 3) << 4) | (p[i + 1] >> 4)],
                     a[((p[i + 1] & 15) << 2) | (p[i + 2] >> 6)],
                     a[p[i + 2] & 63]};
        emq_wb_put(b, o, 4);
    }
    if (n - i == 1) {
        char o[4] = {a[p[i] >> 2], a[(p[i] & 3) << 4], '=', '='};
        emq_wb_put(b, o, 4);
    } else if (n - i == 2) {
        char o[4] = {a[p[i] >> 2], a[((p[i] & 3) << 4) | (p[i + 1] >> 4)],
                     a[(p[i + 1] & 15) << 2], '='};
        emq_wb_put(b, o, 4);
    }
}

void emq_wb_json(emq_wb *b, const void *v, size_t n)
{
    if (v == NULL) { emq_wb_str(b, "null"); return; }
    if (emq_web_utf8(v, n)) { json_text(b, v, n); return; }
    emq_wb_str(b, "{\"b64\":\"");
    b64(b, v, n);
    emq_wb_str(b, "\"}");
}

static void jstr(emq_wb *b, const char *s)
{
    if (s == NULL) emq_wb_str(b, "null");
    else emq_wb_json(b, s, strlen(s));
}

static void json_preview(emq_wb *b, const void *v, size_t n, size_t max);

/* The end of a job's line in a page: its payload's and last error's
 * previews (null when it has none), and the closing brace. */
static void preview_tail(emq_wb *b, const void *payload, size_t plen,
                         const void *error, size_t elen)
{
    emq_wb_str(b, ",\"preview\":");
    if (payload) json_preview(b, payload, plen, 120);
    else emq_wb_str(b, "null");
    emq_wb_str(b, ",\"last_error\":");
    if (error) json_preview(b, error, elen, 120);
    else emq_wb_str(b, "null");
    emq_wb_str(b, "}");
}

/* A preview: at most `max` bytes, cut at a UTF-8 boundary. */
static void json_preview(emq_wb *b, const void *v, size_t n, size_t max)
{
    const unsigned char *p = v;
    size_t i = 0;
    if (n <= max || !emq_web_utf8(v, n)) {
        emq_wb_json(b, v, n > max ? max : n);
        return;
    }
    while (i < n) {
        size_t k = utf8_len(p + i, n - i);
        if (i + k > max) break;
        i += k;
    }
    json_text(b, p, i);
}

/* ------------------------------------------------------------- handler */

void emq_web_options_init_size(emq_web_options *o, size_t size)
{
    if (o == NULL) return;
    memset(o, 0, size < sizeof *o ? size : sizeof *o);
    if (size >= sizeof *o) {
        o->size = sizeof *o;
        o->max_body = EMQ_WEB_MAX_BODY;
    } else {
        o->size = size;
    }
}

static int random_bytes(unsigned char *p, size_t n)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    size_t got = 0;
    if (fd < 0) return -1;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) { close(fd); return -1; }
        got += (size_t)r;
    }
    close(fd);
    return 0;
}

int emq_web_new(emq_db *db, const emq_web_options *o, emq_web **out)
{
    emq_web_options d;
    unsigned char r[32];
    emq_web *w;
    if (out) *out = NULL;
    if (db == NULL || out == NULL) return EMQ_EINVAL;
    emq_web_options_init(&d);
    if (o) {
        size_t n = o->size < sizeof d ? o->size : sizeof d;
        memcpy(&d, o, n);
        if (d.max_body == 0) d.max_body = EMQ_WEB_MAX_BODY;
    }
    if (d.token) {
        size_t n = strlen(d.token);
        if (n == 0 || n > TOKEN_MAX) return EMQ_EINVAL;
        for (size_t i = 0; i < n; i++)
            if (d.token[i] <= 0x20 || d.token[i] >= 0x7F || d.token[i] == ';'
                || d.token[i] == ',')
                return EMQ_EINVAL;
    }
    if ((w = calloc(1, sizeof *w)) == NULL) return EMQ_ENOMEM;
    w->db = db;
    w->read_only = d.read_only != 0;
    w->max_body = d.max_body;
    if (d.token && (w->token = strdup(d.token)) == NULL) {
        free(w);
        return EMQ_ENOMEM;
    }
    if (random_bytes(r, sizeof r) != 0) {
        free(w->token);
        free(w);
        return EMQ_EIO;
    }
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(w->csrf + 2 * i, 3, "%02x", r[i]);
    *out = w;
    return EMQ_OK;
}

void emq_web_free(emq_web *w)
{
    if (w == NULL) return;
    free(w->token);
    free(w->ser);
    free(w);
}

const char *emq_web_csrf(const emq_web *w) { return w ? w->csrf : NULL; }

void emq_web_response_clear(emq_web_response *r)
{
    if (r == NULL) return;
    for (size_t i = 0; i < r->nheaders; i++) {
        free((char *)r->headers[i].name);
        free((char *)r->headers[i].value);
    }
    free(r->headers);
    free(r->body);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------ request parsing */

static const char *header(const emq_web_request *q, const char *name)
{
    for (size_t i = 0; i < q->nheaders; i++)
        if (q->headers[i].name && strcasecmp(q->headers[i].name, name) == 0)
            return q->headers[i].value ? q->headers[i].value : "";
    return NULL;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Query parameter `name` decoded (%XX, '+') into out (cap bytes, NUL
 * ended): 1 found, 0 absent, -1 malformed or too long (a NUL byte too). */
static int qparam(const char *query, const char *name, char *out, size_t cap,
                  size_t *len)
{
    size_t nl = strlen(name);
    const char *p = query;
    if (p == NULL) return 0;
    while (*p) {
        const char *e = strchr(p, '&');
        const char *end = e ? e : p + strlen(p);
        if ((size_t)(end - p) >= nl && strncmp(p, name, nl) == 0 &&
            (p[nl] == '=' || p + nl == end)) {
            const char *v = p[nl] == '=' ? p + nl + 1 : end;
            size_t o = 0;
            while (v < end) {
                int c = (unsigned char)*v;
                if (c == '+') { c = ' '; v++; }
                else if (c == '%') {
                    if (end - v < 3) return -1;
                    int h = hexval(v[1]), l = hexval(v[2]);
                    if (h < 0 || l < 0) return -1;
                    c = h * 16 + l;
                    v += 3;
                } else v++;
                if (c == 0 || o + 1 >= cap) return -1;
                out[o++] = (char)c;
            }
            out[o] = '\0';
            if (len) *len = o;
            return 1;
        }
        p = e ? e + 1 : end;
    }
    return 0;
}

/* Constant-time equality of two strings (length leaks, content not). */
static int same(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    unsigned d = (unsigned)(na != nb);
    for (size_t i = 0; i < na && i < nb; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

/* The value of cookie `name` into out, 1 found. */
static int cookie(const emq_web_request *q, const char *name, char *out,
                  size_t cap)
{
    const char *c = header(q, "Cookie");
    size_t nl = strlen(name);
    while (c && *c) {
        while (*c == ' ' || *c == ';') c++;
        const char *e = strchr(c, ';');
        size_t len = e ? (size_t)(e - c) : strlen(c);
        if (len > nl && strncmp(c, name, nl) == 0 && c[nl] == '=') {
            size_t vl = len - nl - 1;
            if (vl >= cap) return 0;
            memcpy(out, c + nl + 1, vl);
            out[vl] = '\0';
            return 1;
        }
        c = e;
    }
    return 0;
}

/* ------------------------------------------------------------ responses */

static int add_header(emq_web_response *r, const char *n, const char *v)
{
    emq_web_header *h = realloc(r->headers, (r->nheaders + 1) * sizeof *h);
    if (h == NULL) return -1;
    r->headers = h;
    h[r->nheaders].name = strdup(n);
    h[r->nheaders].value = strdup(v);
    if (!h[r->nheaders].name || !h[r->nheaders].value) {
        free((char *)h[r->nheaders].name);
        free((char *)h[r->nheaders].value);
        return -1;
    }
    r->nheaders++;
    return 0;
}

static const char CSP[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'";

/* Fill `r` with status, type and the body (moved out of b). */
static int respond(emq_web_response *r, int status, const char *type,
                   emq_wb *b)
{
    if (b->oom) { free(b->p); return EMQ_ENOMEM; }
    r->status = status;
    r->body = b->p ? b->p : strdup("");
    r->body_len = b->n;
    b->p = NULL;
    b->n = b->cap = 0;
    if (r->body == NULL ||
        add_header(r, "Content-Type", type) ||
        add_header(r, "Content-Security-Policy", CSP) ||
        add_header(r, "X-Content-Type-Options", "nosniff") ||
        add_header(r, "X-Frame-Options", "DENY") ||
        add_header(r, "Referrer-Policy", "no-referrer") ||
        add_header(r, "Cross-Origin-Opener-Policy", "same-origin") ||
        add_header(r, "Cache-Control", "no-store"))
        return EMQ_ENOMEM;
    return EMQ_OK;
}

static const char JSON[] = "application/json; charset=utf-8";

/* An error: {"error": code, "message": text}. */
static int fail(emq_web_response *r, int status, const char *code,
                const char *fmt, ...)
{
    emq_wb b = {0};
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    emq_wb_str(&b, "{\"error\":");
    jstr(&b, code);
    emq_wb_str(&b, ",\"message\":");
    jstr(&b, msg);
    emq_wb_str(&b, "}\n");
    return respond(r, status, JSON, &b);
}

/* A library failure: its status from the result code. */
static int lib_fail(emq_web *w, emq_web_response *r, int rc)
{
    const emq_result_row *row = emq_result_info(rc);
    const char *m = emq_errmsg(w->db);
    int status = 500;
    if (rc == EMQ_GONE || rc == EMQ_ABSENT) status = 404;
    else if (rc == EMQ_EBUSY) status = 503;
    else if (row && row->exit == 12) status = 409;
    else if (row && strcmp(row->kind, "value") == 0) status = 400;
    return fail(r, status, row ? row->cls : "error", "%s",
                m && m[0] ? m : emq_strerror(rc));
}

/* ---------------------------------------------------------------- rules */

#define QUEUE_RULE "a queue name is 1 to 128 characters of A-Z a-z 0-9 . _ -" \
    " (and not 'emq')"
#define ID_RULE "an id is 14 characters: a namespace of 3 capitals, then 11 " \
    "of 0-9 A-Z a-z"

static int check_queue(emq_web_response *r, const char *q)
{
    if (emq_queue_valid(q)) return 0;
    fail(r, 400, "bad_request", "queue '%.140s': %s", q, QUEUE_RULE);
    return -1;
}

static int check_id(emq_web_response *r, const char *what, const char *id)
{
    if (emq_id_valid(id)) return 0;
    fail(r, 400, "bad_request", "%s '%.40s': %s", what, id, ID_RULE);
    return -1;
}

/* An integer parameter in [lo, hi]; 1 set, 0 absent, -1 refused. */
static int int_param(emq_web_response *r, const char *query, const char *n,
                     int64_t lo, int64_t hi, int64_t *out)
{
    char v[32];
    char *end;
    int f = qparam(query, n, v, sizeof v, NULL);
    if (f == 0) return 0;
    errno = 0;
    long long x = f > 0 && v[0] ? strtoll(v, &end, 10) : 0;
    if (f < 0 || !v[0] || *end || errno || x < lo || x > hi) {
        fail(r, 400, "bad_request", "%s must be an integer from %lld to %lld",
             n, (long long)lo, (long long)hi);
        return -1;
    }
    *out = x;
    return 1;
}

/* -------------------------------------------------------------- series */

static series *series_of(emq_web *w, const char *q, size_t qn)
{
    for (size_t i = 0; i < w->nser; i++)
        if (strlen(w->ser[i].name) == qn && memcmp(w->ser[i].name, q, qn) == 0)
            return &w->ser[i];
    if (qn > WEB_QUEUE_MAX) return NULL;
    if (w->nser == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 8;
        series *n = realloc(w->ser, cap * sizeof *n);
        if (n == NULL) return NULL;
        w->ser = n;
        w->cap = cap;
    }
    series *s = &w->ser[w->nser++];
    memset(s, 0, sizeof *s);
    memcpy(s->name, q, qn);
    for (int i = 0; i < SERIES_MINUTES; i++) s->stamp[i] = -1;
    return s;
}

/* The bucket of minute `m` in the ring, emptied when it held an older
 * minute. */
static int series_slot(series *s, int64_t m)
{
    int i = (int)(m % SERIES_MINUTES);
    if (s->stamp[i] != m) {
        s->stamp[i] = m;
        s->done[i] = s->fail[i] = s->retry[i] = 0;
    }
    return i;
}

static void series_event(void *ctx, const emq_event *ev)
{
    emq_web *w = ctx;
    int done = ev->name_len == 9 && memcmp(ev->name, "completed", 9) == 0;
    int fail = ev->name_len == 6 && memcmp(ev->name, "failed", 6) == 0;
    if (!done && !fail) return;
    series *s = series_of(w, ev->queue, ev->queue_len);
    if (s == NULL) return;
    int i = series_slot(s, ev->at_ms / 60000);
    if (done) s->done[i]++;
    else s->fail[i]++;
}

/* A `retried` history entry into its queue's minute (a minute the ring
 * has moved past is not counted). */
static int series_retry(void *ctx, const emq_history_entry *e)
{
    emq_web *w = ctx;
    if (e->kind != EMQ_HIST_RETRIED) return 0;
    series *s = series_of(w, e->queue, strlen(e->queue));
    if (s == NULL) return 0;
    int64_t m = e->at_ms / 60000;
    if (s->stamp[m % SERIES_MINUTES] > m) return 0;
    s->retry[series_slot(s, m)]++;
    return 0;
}

/* Read the events committed since the last call into the series (at most
 * 20000 per request, so a long backlog is read over several). */
static void series_update(emq_web *w)
{
    emq_sub *sub = NULL;
    size_t got;
    if (emq_subscribe(w->db, NULL, w->ev_cursor, series_event, w, &sub) !=
        EMQ_OK)
        return;
    for (int k = 0; k < 20; k++)
        if (emq_sub_poll(sub, 1000, &got) != EMQ_OK || got == 0) break;
    w->ev_cursor = emq_sub_cursor(sub);
    emq_unsubscribe(sub);
    /* the retries, from the history (none when it is off): at the first
     * overview from the last 20000 entries, since an older backlog would
     * take many requests and holds no retry of the last hour's plots on a
     * busy file anyway */
    if (!w->hist_started) {
        int64_t last = 0;
        if (emq_history_last(w->db, &last) != EMQ_OK) return;
        w->hist_cursor = last > 20000 ? last - 20000 : 0;
        w->hist_started = 1;
    }
    for (int k = 0; k < 20; k++) {
        int64_t before = w->hist_cursor;
        if (emq_history_read(w->db, NULL, before, 1000, series_retry, w,
                             &w->hist_cursor) != EMQ_OK ||
            w->hist_cursor == before)
            break;
    }
}

static void series_json(emq_wb *b, const series *s, int64_t now)
{
    static const char *const names[] = {"\"completed\":[", ",\"failed\":[",
                                        ",\"retried\":["};
    int64_t m0 = now / 60000 - (SERIES_MINUTES - 1);
    for (int which = 0; which < 3; which++) {
        emq_wb_str(b, names[which]);
        for (int k = 0; k < SERIES_MINUTES; k++) {
            int64_t m = m0 + k;
            int i = (int)(m % SERIES_MINUTES);
            int64_t v = s && s->stamp[i] == m
                            ? (which == 2 ? s->retry[i]
                               : which ? s->fail[i] : s->done[i]) : 0;
            emq_wb_printf(b, "%s%lld", k ? "," : "", (long long)v);
        }
        emq_wb_str(b, "]");
    }
}

/* ------------------------------------------------------------- queues */

static int lanes_sum(emq_web *w, const char *q, int64_t *nlanes,
                     int64_t *depth)
{
    emq_lane_info *l = calloc(LANES_MAX, sizeof *l);
    size_t n = 0, total = 0;
    int rc;
    *nlanes = *depth = 0;
    if (l == NULL) return EMQ_ENOMEM;
    rc = emq_lanes(w->db, q, l, LANES_MAX, &n, &total);
    if (rc == EMQ_OK) {
        *nlanes = (int64_t)total;
        for (size_t i = 0; i < n; i++) *depth += l[i].depth;
    }
    free(l);
    return rc;
}

static int queue_json(emq_web *w, emq_wb *b, const char *q, int64_t now)
{
    emq_stats st;
    int64_t nl, ld;
    int rc = emq_stats_get(w->db, q, &st);
    if (rc != EMQ_OK) return rc;
    if ((rc = lanes_sum(w, q, &nl, &ld)) != EMQ_OK) return rc;
    emq_wb_str(b, "{\"name\":");
    jstr(b, q);
    emq_wb_printf(b, ",\"pending\":%lld,\"active\":%lld,\"scheduled\":%lld,"
                  "\"dead\":%lld,\"completed\":%lld,\"failed\":%lld,"
                  "\"paused\":%s,\"lanes\":%lld,\"lane_jobs\":%lld,",
                  (long long)st.pending, (long long)st.active,
                  (long long)st.scheduled, (long long)st.dead,
                  (long long)st.completed, (long long)st.failed,
                  st.paused ? "true" : "false", (long long)nl, (long long)ld);
    series *s = NULL;
    for (size_t i = 0; i < w->nser; i++)
        if (strcmp(w->ser[i].name, q) == 0) s = &w->ser[i];
    emq_wb_str(b, "\"per_minute\":{");
    series_json(b, s, now);
    emq_wb_str(b, "}}");
    return EMQ_OK;
}

/* The queues with keys, in byte order, as emq_queues answers them, but
 * with one seek per queue: after a queue's first key the scan starts
 * again past "emq:{name}" (emq_queues reads every key, and a queue of a
 * million jobs has a million and more). */
typedef struct qlist {
    char **v;
    size_t n, cap;
    char from[EMQ_KEY_MAX + 2];
    size_t flen;
    int found;
} qlist;

static int qlist_cb(void *ctx, const unsigned char *key, size_t klen,
                    int type)
{
    qlist *l = ctx;
    const unsigned char *s = key + 5, *e;
    (void)type;
    l->found = 1;
    e = klen > 5 ? memchr(s, '}', klen - 5) : NULL;
    if (e == NULL || (size_t)(e - key) + 2 > sizeof l->from) {
        /* not a queue key: on from just past it */
        if (klen + 1 > sizeof l->from) return EMQ_EINVAL;
        memcpy(l->from, key, klen);
        l->from[klen] = '\0';
        l->flen = klen + 1;
        return 1;
    }
    memcpy(l->from, key, (size_t)(e - key) + 1);
    l->from[e - key + 1] = (char)0xFF;
    l->flen = (size_t)(e - key) + 2;
    size_t nl = (size_t)(e - s);
    char name[WEB_QUEUE_MAX + 1];
    if (nl == 0 || nl > WEB_QUEUE_MAX) return 1;
    memcpy(name, s, nl);
    name[nl] = '\0';
    if (strlen(name) != nl || !emq_queue_valid(name)) return 1;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        char **nv = realloc(l->v, cap * sizeof *nv);
        if (nv == NULL) return EMQ_ENOMEM;
        l->v = nv;
        l->cap = cap;
    }
    if ((l->v[l->n] = strdup(name)) == NULL) return EMQ_ENOMEM;
    l->n++;
    return 1;
}

static int qlist_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    qlist *l = ctx;
    (void)db;
    (void)now;
    memcpy(l->from, "emq:{", 5);
    l->flen = 5;
    for (;;) {
        l->found = 0;
        int rc = emq_key_scan_from(st, "emq:{", 5, l->from, l->flen, qlist_cb,
                                   l);
        if (rc < 0) return rc;
        if (!l->found) return EMQ_OK;
    }
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

static int queue_names(emq_web *w, char ***names, size_t *n)
{
    qlist l;
    memset(&l, 0, sizeof l);
    int rc = emq_db_run(w->db, 0, qlist_body, &l);
    if (rc < 0) { names_free(l.v, l.n); return rc; }
    /* "a.b" sorts before "a" among keys ('.' < '}'): sort the names */
    if (l.n > 1) qsort(l.v, l.n, sizeof *l.v, cmp_name);
    *names = l.v;
    *n = l.n;
    return EMQ_OK;
}

static int api_overview(emq_web *w, emq_web_response *r)
{
    char **names = NULL;
    size_t n = 0;
    emq_wb b = {0};
    int64_t now = emq_now(w->db);
    int rc;
    series_update(w);
    if ((rc = queue_names(w, &names, &n)) != EMQ_OK)
        return lib_fail(w, r, rc);
    emq_wb_printf(&b, "{\"now\":%lld,\"minutes\":%d,\"queues\":[",
                  (long long)now, SERIES_MINUTES);
    for (size_t i = 0; i < n && rc == EMQ_OK; i++) {
        if (i) emq_wb_str(&b, ",");
        rc = queue_json(w, &b, names[i], now);
    }
    names_free(names, n);
    if (rc != EMQ_OK) { free(b.p); return lib_fail(w, r, rc); }
    emq_wb_str(&b, "]}\n");
    return respond(r, 200, JSON, &b);
}

static int api_queue(emq_web *w, emq_web_response *r, const char *q)
{
    emq_wb b = {0};
    int64_t now = emq_now(w->db);
    int rc;
    series_update(w);
    if ((rc = queue_json(w, &b, q, now)) != EMQ_OK) {
        free(b.p);
        return lib_fail(w, r, rc);
    }
    emq_wb_str(&b, "\n");
    return respond(r, 200, JSON, &b);
}

/* ------------------------------------------------------- the job pages */

typedef struct page_ctx {
    emq_web *w;
    const char *q;
    int kt;                       /* EMQ_KT_PENDING ... or EMQ_KT_LANE    */
    const char *g;
    int rev;
    int has_cur;
    double cur_score;
    char cur_id[EMQ_ID_SIZE];
    int64_t limit;
    const char *prefix;           /* payload prefix, or NULL              */
    size_t prefix_len;
    /* the walk */
    emq_store *st;
    emq_wb *b;
    int64_t found, scanned;
    double last_score;
    char last_id[EMQ_ID_SIZE];
    int more;
    int err;
} page_ctx;

typedef struct row_copy {
    char attempts[24];
    char state[24];
    unsigned char *payload;
    size_t plen;
    unsigned char *error;
    size_t elen;
    int has_row;
} row_copy;

static int row_field(void *ctx, const unsigned char *f, size_t flen,
                     const unsigned char *v, size_t vlen, int64_t exp)
{
    row_copy *c = ctx;
    (void)exp;
    c->has_row = 1;
    if (flen == 7 && memcmp(f, "payload", 7) == 0) {
        free(c->payload);
        if ((c->payload = malloc(vlen ? vlen : 1)) == NULL) return EMQ_ENOMEM;
        memcpy(c->payload, v, vlen);
        c->plen = vlen;
    } else if (flen == 10 && memcmp(f, "last_error", 10) == 0) {
        free(c->error);
        if ((c->error = malloc(vlen ? vlen : 1)) == NULL) return EMQ_ENOMEM;
        memcpy(c->error, v, vlen);
        c->elen = vlen;
    } else if (flen == 8 && memcmp(f, "attempts", 8) == 0 && vlen < 24) {
        memcpy(c->attempts, v, vlen);
        c->attempts[vlen] = '\0';
    } else if (flen == 5 && memcmp(f, "state", 5) == 0 && vlen < 24) {
        memcpy(c->state, v, vlen);
        c->state[vlen] = '\0';
    }
    return 0;
}

static int page_member(void *ctx, const unsigned char *m, size_t mlen,
                       double score)
{
    page_ctx *p = ctx;
    row_copy rc = {{0}, {0}, NULL, 0, NULL, 0, 0};
    char k[EMQ_KEY_MAX];
    size_t kl;
    int r;
    if (mlen != EMQ_ID_LEN) return 0;   /* not a job id: not shown       */
    if (p->found >= p->limit) {         /* one past the page: more follow */
        p->more = 1;
        return 1;
    }
    p->scanned++;
    p->last_score = score;
    memcpy(p->last_id, m, mlen);
    p->last_id[mlen] = '\0';
    kl = emq_key_of(k, p->q, EMQ_KT_JOB, m, mlen);
    if (kl == 0) return 0;
    r = emq_hash_getall(p->st, k, kl, row_field, &rc);
    if (r < 0) { free(rc.payload); free(rc.error); p->err = r; return r; }
    if (p->prefix && (!rc.payload || rc.plen < p->prefix_len ||
                      memcmp(rc.payload, p->prefix, p->prefix_len) != 0)) {
        free(rc.payload);
        free(rc.error);
        return 0;
    }
    if (p->found++) emq_wb_str(p->b, ",");
    emq_wb_str(p->b, "{\"id\":");
    emq_wb_json(p->b, m, mlen);
    emq_wb_printf(p->b, ",\"score\":%lld,\"row\":%s,\"attempts\":",
                  (long long)score, rc.has_row ? "true" : "false");
    jstr(p->b, rc.attempts[0] ? rc.attempts : NULL);
    preview_tail(p->b, rc.payload, rc.plen, rc.error, rc.elen);
    free(rc.payload);
    free(rc.error);
    return 0;
}

static int page_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    page_ctx *p = ctx;
    char k[EMQ_KEY_MAX];
    size_t kl;
    (void)db;
    (void)now;
    p->st = st;
    if (p->kt == EMQ_KT_LANE)
        kl = emq_key_of(k, p->q, EMQ_KT_LANE, p->g, strlen(p->g));
    else
        kl = emq_key(k, p->q, p->kt);
    if (kl == 0) return EMQ_EINVAL;
    /* Without a prefix: one page of limit + 1 (the extra member tells
     * that more follow; page_member stops there). With one: chunks until
     * `limit` matches or SCAN_MAX rows read. */
    double score = p->cur_score;
    int has = p->has_cur;
    char id[EMQ_ID_SIZE];
    memcpy(id, p->cur_id, sizeof id);
    for (;;) {
        int64_t before = p->scanned, want;
        if (p->prefix) {
            want = SCAN_MAX - p->scanned;
            if (want > 256) want = 256;
            if (want <= 0) { p->more = 1; break; }
        } else {
            want = p->limit + 1;
        }
        int rc = emq_zset_after(st, k, kl, p->rev, score, has ? id : NULL,
                                has ? EMQ_ID_LEN : 0, want, page_member, p);
        if (p->err) return p->err;
        if (rc < 0) return rc;
        if (p->more || !p->prefix || p->scanned - before < want) break;
        has = 1;
        score = p->last_score;
        memcpy(id, p->last_id, sizeof id);
    }
    return EMQ_OK;
}

static const struct {
    const char *name;
    int kt;
} STATES[] = {
    {"pending", EMQ_KT_PENDING}, {"active", EMQ_KT_ACTIVE},
    {"scheduled", EMQ_KT_SCHEDULE}, {"schedule", EMQ_KT_SCHEDULE},
    {"dead", EMQ_KT_DEAD}, {"lane", EMQ_KT_LANE},
};

/* A cursor "SCORE:ID" (what `next` answers). */
static int parse_cursor(const char *s, double *score, char *id)
{
    const char *c = strchr(s, ':');
    char *end;
    if (c == NULL || c == s || strlen(c + 1) != EMQ_ID_LEN) return -1;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end != c || errno) return -1;
    memcpy(id, c + 1, EMQ_ID_LEN);
    id[EMQ_ID_LEN] = '\0';
    if (!emq_id_valid(id)) return -1;
    *score = (double)v;
    return 0;
}

int emq_web_page(emq_web *w, const char *q, const char *state, const char *g,
                 const char *after, int rev, int64_t limit, const char *prefix,
                 size_t prefix_len, emq_wb *b, int64_t *found, int *more)
{
    page_ctx p;
    int rc;
    memset(&p, 0, sizeof p);
    p.w = w;
    p.q = q;
    p.kt = -1;
    for (size_t i = 0; i < sizeof STATES / sizeof STATES[0]; i++)
        if (strcmp(state, STATES[i].name) == 0) p.kt = STATES[i].kt;
    if (p.kt < 0 || (p.kt == EMQ_KT_LANE && g == NULL)) return EMQ_EINVAL;
    p.g = g;
    p.rev = rev;
    p.limit = limit;
    p.prefix = prefix;
    p.prefix_len = prefix_len;
    if (after && after[0]) {
        if (parse_cursor(after, &p.cur_score, p.cur_id) != 0)
            return EMQ_EINVAL;
        p.has_cur = 1;
    }
    p.b = b;
    emq_wb_str(b, "{\"jobs\":[");
    rc = emq_db_run(w->db, 0, page_body, &p);
    if (rc < 0) return rc;
    emq_wb_printf(b, "],\"scanned\":%lld,\"next\":", (long long)p.scanned);
    if (p.more) {
        emq_wb_printf(b, "\"%lld:%s\"", (long long)p.last_score, p.last_id);
    } else {
        emq_wb_str(b, "null");
    }
    emq_wb_str(b, "}\n");
    if (found) *found = p.found;
    if (more) *more = p.more;
    return EMQ_OK;
}

/* The kept completed jobs, newest first (emq_kept_list): a page of the
 * same shape as a set's, `score` the time each finished, the cursor
 * "AT:ID" of the last one. */
typedef struct kept_page {
    emq_wb *b;
    int64_t n, limit, last_at;
    char last_id[EMQ_ID_SIZE];
    int more;
} kept_page;

/* A kept job's attempts as the row's field reads: a decimal string, or
 * null when the record has none. */
static void kept_attempts(emq_wb *b, int64_t attempts)
{
    if (attempts >= 0) emq_wb_printf(b, "\"%lld\"", (long long)attempts);
    else emq_wb_str(b, "null");
}

static int kept_member(void *ctx, const emq_kept_job *j)
{
    kept_page *p = ctx;
    if (p->n == p->limit) {
        p->more = 1;
        return 1;
    }
    emq_wb_str(p->b, p->n++ ? ",{\"id\":" : "{\"id\":");
    jstr(p->b, j->id);
    emq_wb_printf(p->b, ",\"score\":%lld,\"row\":false,\"attempts\":",
                  (long long)j->at_ms);
    kept_attempts(p->b, j->attempts);
    preview_tail(p->b, j->payload, j->payload_len, j->error, j->error_len);
    p->last_at = j->at_ms;
    memcpy(p->last_id, j->id, sizeof p->last_id);
    return 0;
}

static int api_kept(emq_web *w, emq_web_response *r, const char *q,
                    const char *after, int64_t limit)
{
    char id[EMQ_ID_SIZE];
    double at;
    kept_page p;
    emq_wb b = {0};
    int rc;
    memset(&p, 0, sizeof p);
    p.b = &b;
    p.limit = limit;
    if (after[0] && parse_cursor(after, &at, id) != 0)
        return fail(r, 400, "bad_request", "after must be a cursor AT:ID "
                    "as 'next' answers it (%s)", ID_RULE);
    emq_wb_str(&b, "{\"jobs\":[");
    rc = emq_kept_list(w->db, q, EMQ_KEPT_COMPLETED, after[0] ? id : NULL,
                       (size_t)limit + 1, kept_member, &p);
    if (rc < 0) {
        free(b.p);
        return lib_fail(w, r, rc);
    }
    emq_wb_printf(&b, "],\"scanned\":%lld,\"next\":",
                  (long long)(p.n + p.more));
    if (p.more)
        emq_wb_printf(&b, "\"%lld:%s\"", (long long)p.last_at, p.last_id);
    else
        emq_wb_str(&b, "null");
    emq_wb_str(&b, "}\n");
    return respond(r, 200, JSON, &b);
}

static int api_jobs(emq_web *w, emq_web_response *r, const char *q,
                    const char *query)
{
    char state[16] = "pending", g[64], after[64], prefix[256];
    size_t plen = 0;
    int64_t limit = PAGE_DEFAULT, desc = 0;
    int f, has_g, has_p;
    emq_wb b = {0};
    if ((f = qparam(query, "state", state, sizeof state, NULL)) < 0 ||
        (f > 0 && strcmp(state, "lane") != 0 && strcmp(state, "pending") &&
         strcmp(state, "active") && strcmp(state, "scheduled") &&
         strcmp(state, "schedule") && strcmp(state, "dead") &&
         strcmp(state, "completed")))
        return fail(r, 400, "bad_request", "state must be pending, active, "
                    "scheduled, dead, completed or lane");
    if ((has_g = qparam(query, "group", g, sizeof g, NULL)) < 0 ||
        (has_g && check_id(r, "group", g)))
        return has_g < 0 ? fail(r, 400, "bad_request", "group: %s", ID_RULE)
                         : EMQ_OK;
    if (strcmp(state, "lane") == 0 && !has_g)
        return fail(r, 400, "bad_request", "state=lane needs group=GROUP");
    if ((f = qparam(query, "after", after, sizeof after, NULL)) < 0 ||
        (f > 0 && after[0])) {
        double s;
        char id[EMQ_ID_SIZE];
        if (f < 0 || parse_cursor(after, &s, id) != 0)
            return fail(r, 400, "bad_request", "after must be a cursor "
                        "SCORE:ID as 'next' answers it (%s)", ID_RULE);
    }
    if (f <= 0) after[0] = '\0';
    if (int_param(r, query, "limit", 1, PAGE_MAX, &limit) < 0) return EMQ_OK;
    if (int_param(r, query, "desc", 0, 1, &desc) < 0) return EMQ_OK;
    if ((has_p = qparam(query, "prefix", prefix, sizeof prefix, &plen)) < 0)
        return fail(r, 400, "bad_request", "prefix: at most 255 bytes, "
                    "percent-encoded, without NUL");
    if (has_p && plen == 0) has_p = 0;
    if (strcmp(state, "completed") == 0) {
        if (has_p || has_g)
            return fail(r, 400, "bad_request", "state=completed (the kept "
                        "jobs) takes no prefix or group");
        return api_kept(w, r, q, after, limit);
    }
    int rc = emq_web_page(w, q, state, has_g ? g : NULL, after, (int)desc,
                          limit, has_p ? prefix : NULL, plen, &b, NULL, NULL);
    if (rc != EMQ_OK) { free(b.p); return lib_fail(w, r, rc); }
    return respond(r, 200, JSON, &b);
}

static void fields_json(emq_wb *b, const emq_field *f, size_t n)
{
    emq_wb_str(b, "[");
    for (size_t i = 0; i < n; i++) {
        emq_wb_str(b, i ? ",[" : "[");
        emq_wb_json(b, f[i].name, f[i].name_len);
        emq_wb_str(b, ",");
        emq_wb_json(b, f[i].value, f[i].value_len);
        emq_wb_str(b, "]");
    }
    emq_wb_str(b, "]");
}

static const emq_field *field(const emq_job_info *in, const char *name)
{
    for (size_t i = 0; i < in->nfields; i++)
        if (strcmp(in->fields[i].name, name) == 0) return &in->fields[i];
    return NULL;
}

/* One job history entry as JSON (null where its kind carries none). */
static int hist_json(void *ctx, const emq_history_entry *e)
{
    emq_wb *b = ctx;
    const char *k = emq_history_kind_name(e->kind);
    emq_wb_printf(b, "%s{\"seq\":%lld,\"at\":%lld,\"kind\":",
                  b->n && b->p[b->n - 1] == '[' ? "" : ",",
                  (long long)e->seq, (long long)e->at_ms);
    jstr(b, k ? k : "?");
    if (e->attempts >= 0)
        emq_wb_printf(b, ",\"attempts\":%lld", (long long)e->attempts);
    else
        emq_wb_str(b, ",\"attempts\":null");
    if (e->delay_ms >= 0)
        emq_wb_printf(b, ",\"delay_ms\":%lld", (long long)e->delay_ms);
    if (e->run_at_ms >= 0)
        emq_wb_printf(b, ",\"run_at\":%lld", (long long)e->run_at_ms);
    emq_wb_str(b, ",\"error\":");
    emq_wb_json(b, e->error, e->error_len);
    if (e->host) {
        emq_wb_str(b, ",\"host\":");
        jstr(b, e->host);
        emq_wb_printf(b, ",\"pid\":%lld", (long long)e->pid);
    }
    if (e->worker) {
        emq_wb_str(b, ",\"worker\":");
        jstr(b, e->worker);
    }
    emq_wb_str(b, "}");
    return 0;
}

/* ,"history":[...]} and the end of the job's object. */
static void history_tail(emq_web *w, emq_wb *b, const char *q,
                         const char *id)
{
    size_t mark;
    emq_wb_str(b, ",\"history\":[");
    mark = b->n;
    if (emq_job_history(w->db, q, id, hist_json, b) != EMQ_OK)
        b->n = mark; /* an unreadable history shows as none */
    emq_wb_str(b, "]}\n");
}

/* A job gone from the keyspace that the retention kept (completed or
 * dead, then removed): its record and its history. 0 when none is kept. */
static int kept_job(emq_web *w, emq_web_response *r, const char *q,
                    const char *id, int *status)
{
    emq_kept_job k;
    emq_wb b = {0};
    if (emq_kept_get(w->db, q, id, &k) != EMQ_OK) return 0;
    emq_wb_str(&b, "{\"queue\":");
    jstr(&b, q);
    emq_wb_str(&b, ",\"id\":");
    jstr(&b, id);
    emq_wb_str(&b, ",\"state\":");
    jstr(&b, k.state == EMQ_KEPT_COMPLETED ? "completed" : "dead");
    emq_wb_printf(&b, ",\"row\":false,\"locked\":false,\"log_count\":0,"
                  "\"kept_at\":%lld,\"attempts\":", (long long)k.at_ms);
    kept_attempts(&b, k.attempts);
    emq_wb_str(&b, ",\"payload\":");
    emq_wb_json(&b, k.payload, k.payload_len);
    emq_wb_str(&b, ",\"last_error\":");
    emq_wb_json(&b, k.error, k.error_len);
    emq_wb_str(&b, ",\"result\":");
    emq_wb_json(&b, k.result, k.result_len);
    emq_wb_str(&b, ",\"group\":null,\"parent\":null,\"parent_queue\":null,"
               "\"parent_policy\":null,\"progress\":null,\"fields\":[],"
               "\"flow\":[]");
    emq_kept_clear(&k);
    history_tail(w, &b, q, id);
    *status = respond(r, 200, JSON, &b);
    return 1;
}

static int api_job(emq_web *w, emq_web_response *r, const char *q,
                   const char *id)
{
    emq_job_info in;
    emq_line *lines = NULL;
    size_t nl = 0;
    emq_wb b = {0};
    int rc = emq_job_inspect(w->db, q, id, &in);
    if (rc != EMQ_OK && rc != EMQ_GONE) return lib_fail(w, r, rc);
    if (rc == EMQ_GONE && in.state == EMQ_STATE_ABSENT) {
        int status;
        emq_job_info_clear(&in);
        if (kept_job(w, r, q, id, &status)) return status;
        return fail(r, 404, "gone", "no job %s in queue %s", id, q);
    }
    emq_wb_str(&b, "{\"queue\":");
    jstr(&b, q);
    emq_wb_str(&b, ",\"id\":");
    jstr(&b, id);
    emq_wb_str(&b, ",\"state\":");
    jstr(&b, emq_state_name(in.state));
    emq_wb_printf(&b, ",\"row\":%s,\"locked\":%s,\"log_count\":%lld",
                  rc == EMQ_OK ? "true" : "false",
                  in.locked ? "true" : "false", (long long)in.logs);
    if (in.has_deadline)
        emq_wb_printf(&b, ",\"deadline\":%lld", (long long)in.deadline_ms);
    if (in.has_run_at)
        emq_wb_printf(&b, ",\"run_at\":%lld", (long long)in.run_at_ms);
    const char *names[] = {"payload", "attempts", "last_error", "group",
                           "parent", "parent_queue", "parent_policy",
                           "progress"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const emq_field *f = field(&in, names[i]);
        emq_wb_printf(&b, ",\"%s\":", names[i]);
        if (f) emq_wb_json(&b, f->value, f->value_len);
        else emq_wb_str(&b, "null");
    }
    emq_wb_str(&b, ",\"fields\":");
    fields_json(&b, in.fields, in.nfields);
    /* the flow below this job, when it is (or was) a parent */
    int parent = in.state == EMQ_STATE_AWAITING;
    emq_job_info_clear(&in);
    if (rc == EMQ_OK && emq_job_logs(w->db, q, id, &lines, &nl) == EMQ_OK) {
        emq_wb_str(&b, ",\"logs\":[");
        for (size_t i = 0; i < nl; i++) {
            if (i) emq_wb_str(&b, ",");
            emq_wb_json(&b, lines[i].p, lines[i].len);
        }
        emq_wb_str(&b, "]");
        emq_lines_free(lines, nl);
    }
    int64_t deps = 0;
    if (!parent && emq_flow_dependencies(w->db, q, id, &deps) == EMQ_OK &&
        deps != 0)
        parent = 1;
    emq_wb_str(&b, ",\"flow\":[");
    if (parent) {
        emq_flow_info *nodes = NULL;
        size_t nn = 0;
        if (emq_flow_tree(w->db, q, id, &nodes, &nn) == EMQ_OK) {
            for (size_t i = 0; i < nn; i++) {
                emq_wb_printf(&b, "%s{\"level\":%d,\"id\":", i ? "," : "",
                              nodes[i].level);
                emq_wb_json(&b, nodes[i].id, nodes[i].id_len);
                emq_wb_str(&b, ",\"queue\":");
                jstr(&b, nodes[i].queue);
                emq_wb_str(&b, ",\"state\":");
                jstr(&b, nodes[i].state);
                emq_wb_str(&b, ",\"outcome\":");
                jstr(&b, nodes[i].outcome);
                emq_wb_str(&b, "}");
            }
            emq_flow_tree_free(nodes, nn);
        }
    }
    emq_wb_str(&b, "]");
    history_tail(w, &b, q, id);
    return respond(r, 200, JSON, &b);
}

/* ---------------------------------------------------------------- lanes */

typedef struct lanes_ctx {
    const char *q;
    emq_lane_info *l;
    size_t n;
    int64_t *limit, *weight, *inflight;
    int *has_limit;
} lanes_ctx;

static int lanes_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    lanes_ctx *c = ctx;
    (void)db;
    (void)now;
    for (size_t i = 0; i < c->n; i++) {
        const char *g = c->l[i].group;
        double lim = 0;
        int rc = emq_g_limit(st, c->q, g, strlen(g), &c->has_limit[i], &lim);
        if (rc < 0 && rc != EMQ_EPROTO) return rc;
        c->limit[i] = (int64_t)lim;
        if ((rc = emq_g_weight(st, c->q, g, strlen(g), &c->weight[i])) < 0)
            return rc;
        char k[EMQ_KEY_MAX];
        size_t kl = emq_key(k, c->q, EMQ_KT_GACTIVE);
        emq_buf v = {0};
        c->inflight[i] = 0;
        rc = emq_hash_get(st, k, kl, g, strlen(g), &v);
        if (rc == EMQ_OK) {
            int64_t x;
            if (emq_parse_i64(v.p, v.len, &x) == 0) c->inflight[i] = x;
        } else if (rc < 0 && rc != EMQ_NOTFOUND) {
            emq_buf_free(&v);
            return rc;
        }
        emq_buf_free(&v);
    }
    return EMQ_OK;
}

static int api_lanes(emq_web *w, emq_web_response *r, const char *q)
{
    lanes_ctx c = {q, NULL, 0, NULL, NULL, NULL, NULL};
    size_t total = 0;
    emq_wb b = {0};
    int rc = EMQ_ENOMEM;
    c.l = calloc(LANES_MAX, sizeof *c.l);
    c.limit = calloc(LANES_MAX, sizeof *c.limit);
    c.weight = calloc(LANES_MAX, sizeof *c.weight);
    c.inflight = calloc(LANES_MAX, sizeof *c.inflight);
    c.has_limit = calloc(LANES_MAX, sizeof *c.has_limit);
    if (c.l && c.limit && c.weight && c.inflight && c.has_limit)
        rc = emq_lanes(w->db, q, c.l, LANES_MAX, &c.n, &total);
    if (rc == EMQ_OK) rc = emq_db_run(w->db, 0, lanes_body, &c);
    if (rc == EMQ_OK) {
        emq_wb_printf(&b, "{\"total\":%zu,\"lanes\":[", total);
        for (size_t i = 0; i < c.n; i++) {
            emq_wb_printf(&b, "%s{\"group\":", i ? "," : "");
            jstr(&b, c.l[i].group);
            emq_wb_printf(&b, ",\"depth\":%lld,\"paused\":%s,\"in_flight\":"
                          "%lld,\"weight\":%lld,\"limit\":",
                          (long long)c.l[i].depth,
                          c.l[i].paused ? "true" : "false",
                          (long long)c.inflight[i], (long long)c.weight[i]);
            if (c.has_limit[i]) emq_wb_printf(&b, "%lld", (long long)c.limit[i]);
            else emq_wb_str(&b, "null");
            emq_wb_str(&b, "}");
        }
        emq_wb_str(&b, "]}\n");
    }
    free(c.l);
    free(c.limit);
    free(c.weight);
    free(c.inflight);
    free(c.has_limit);
    if (rc != EMQ_OK) { free(b.p); return lib_fail(w, r, rc); }
    return respond(r, 200, JSON, &b);
}

/* -------------------------------------------------------------- streams */

typedef struct streams_ctx {
    emq_wb *b;
    emq_store *st;
    const unsigned char *key;
    size_t klen;
    int nstreams, ngroups, nconsumers;
    int64_t now;
} streams_ctx;

static void xid_json(emq_wb *b, emq_xid id)
{
    char buf[EMQ_XID_BUF];
    emq_xid_fmt(buf, id);
    emq_wb_printf(b, "\"%s\"", buf);
}

static int consumer_cb(void *ctx, const unsigned char *c, size_t clen,
                       int64_t seen, int64_t active, int64_t pending)
{
    streams_ctx *s = ctx;
    emq_wb_str(s->b, s->nconsumers++ ? ",{\"name\":" : "{\"name\":");
    emq_wb_json(s->b, c, clen);
    emq_wb_printf(s->b, ",\"pending\":%lld,\"idle\":%lld,\"inactive\":%lld}",
                  (long long)pending, (long long)(s->now - seen),
                  (long long)(active < 0 ? -1 : s->now - active));
    return 0;
}

static int group_cb(void *ctx, const emq_xgroup_info *g)
{
    streams_ctx *s = ctx;
    emq_wb_str(s->b, s->ngroups++ ? ",{\"name\":" : "{\"name\":");
    emq_wb_json(s->b, g->name, g->nlen);
    emq_wb_str(s->b, ",\"last_delivered\":");
    xid_json(s->b, g->last);
    emq_wb_printf(s->b, ",\"pending\":%lld,\"lag\":", (long long)g->pending);
    if (g->lag_known) emq_wb_printf(s->b, "%lld", (long long)g->lag);
    else emq_wb_str(s->b, "null");
    emq_wb_str(s->b, ",\"consumers\":[");
    s->nconsumers = 0;
    int rc = emq_xs_consumers(s->st, s->key, s->klen, g->name, g->nlen,
                              consumer_cb, s);
    emq_wb_str(s->b, "]}");
    return rc < 0 ? rc : 0;
}

static int stream_cb(void *ctx, const unsigned char *key, size_t klen,
                     int type)
{
    streams_ctx *s = ctx;
    emq_keyinfo ki;
    emq_xmeta m;
    int rc;
    if (type != EMQ_T_STREAM) return 0;
    if (emq_key_parse(key, klen, &ki) != 1 || ki.kt != EMQ_KT_STREAM)
        return 0;
    if ((rc = emq_xs_meta(s->st, key, klen, &m)) < 0) return rc;
    if (s->nstreams++) emq_wb_str(s->b, ",");
    emq_wb_str(s->b, "{\"name\":");
    emq_wb_json(s->b, ki.part, ki.partlen);
    emq_wb_printf(s->b, ",\"length\":%llu,\"added\":%llu,\"first\":",
                  (unsigned long long)m.length,
                  (unsigned long long)m.entries_added);
    xid_json(s->b, m.first);
    emq_wb_str(s->b, ",\"last\":");
    xid_json(s->b, m.last);
    emq_wb_str(s->b, ",\"groups\":[");
    s->key = key;
    s->klen = klen;
    s->ngroups = 0;
    rc = emq_xs_groups(s->st, key, klen, group_cb, s);
    emq_wb_str(s->b, "]}");
    return rc < 0 ? rc : 0;
}

typedef struct streams_run {
    const char *q;
    streams_ctx s;
} streams_run;

static int streams_body(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    streams_run *x = ctx;
    char k[EMQ_KEY_MAX];
    int n = snprintf(k, sizeof k, "emq:{%s}:stream:", x->q);
    (void)db;
    x->s.st = st;
    x->s.now = now;
    x->s.nstreams = 0;
    if (n <= 0 || (size_t)n >= sizeof k) return EMQ_EINVAL;
    return emq_key_scan(st, k, (size_t)n, stream_cb, &x->s);
}

static int api_streams(emq_web *w, emq_web_response *r, const char *q)
{
    emq_wb b = {0};
    streams_run x;
    memset(&x, 0, sizeof x);
    x.q = q;
    x.s.b = &b;
    emq_wb_str(&b, "{\"streams\":[");
    int rc = emq_db_run(w->db, 0, streams_body, &x);
    if (rc < 0) { free(b.p); return lib_fail(w, r, rc); }
    emq_wb_str(&b, "]}\n");
    return respond(r, 200, JSON, &b);
}

/* --------------------------------------------------------------- events */

typedef struct ev_ctx {
    emq_wb *b;
    int n;
} ev_ctx;

static void event_json(void *ctx, const emq_event *ev)
{
    ev_ctx *c = ctx;
    emq_wb_printf(c->b, "%s{\"seq\":%lld,\"at\":%lld,\"queue\":",
                  c->n++ ? "," : "", (long long)ev->seq, (long long)ev->at_ms);
    emq_wb_json(c->b, ev->queue, ev->queue_len);
    emq_wb_str(c->b, ",\"event\":");
    emq_wb_json(c->b, ev->name, ev->name_len);
    emq_wb_str(c->b, ",\"job\":");
    emq_wb_json(c->b, ev->job, ev->job_len);
    emq_wb_str(c->b, ",\"message\":");
    emq_wb_json(c->b, ev->message, ev->message_len);
    emq_wb_str(c->b, "}");
}

static int api_events(emq_web *w, emq_web_response *r, const char *query)
{
    char q[WEB_QUEUE_MAX + 2];
    int64_t after = -1, limit = 100;
    int hq = qparam(query, "queue", q, sizeof q, NULL);
    emq_sub *sub = NULL;
    emq_wb b = {0};
    ev_ctx c = {&b, 0};
    size_t got = 0;
    int rc;
    if (hq < 0 || (hq > 0 && check_queue(r, q)))
        return hq < 0 ? fail(r, 400, "bad_request", "queue: %s", QUEUE_RULE)
                      : EMQ_OK;
    if (int_param(r, query, "after", 0, INT64_MAX, &after) < 0 ||
        int_param(r, query, "limit", 1, EVENTS_MAX, &limit) < 0)
        return EMQ_OK;
    if (after < 0) {   /* the newest `limit` events: from the log's top */
        rc = emq_subscribe(w->db, hq ? q : NULL, EMQ_SUB_NOW, event_json, &c,
                           &sub);
        if (rc != EMQ_OK) return lib_fail(w, r, rc);
        after = emq_sub_cursor(sub) - limit;
        if (after < 0) after = 0;
        emq_unsubscribe(sub);
    }
    rc = emq_subscribe(w->db, hq ? q : NULL, after, event_json, &c, &sub);
    if (rc != EMQ_OK) return lib_fail(w, r, rc);
    emq_wb_str(&b, "{\"events\":[");
    rc = emq_sub_poll(sub, (size_t)limit, &got);
    int64_t cur = emq_sub_cursor(sub), lost = emq_sub_lost(sub);
    emq_unsubscribe(sub);
    if (rc != EMQ_OK) { free(b.p); return lib_fail(w, r, rc); }
    emq_wb_printf(&b, "],\"cursor\":%lld,\"lost\":%lld}\n", (long long)cur,
                  (long long)lost);
    return respond(r, 200, JSON, &b);
}

/* -------------------------------------------------------------- actions */

static int done(emq_web_response *r, const char *action, const char *q,
                const char *id, const char *result, int64_t n1, int64_t n2)
{
    emq_wb b = {0};
    emq_wb_str(&b, "{\"ok\":true,\"action\":");
    jstr(&b, action);
    emq_wb_str(&b, ",\"queue\":");
    jstr(&b, q);
    emq_wb_str(&b, ",\"id\":");
    jstr(&b, id);
    emq_wb_str(&b, ",\"result\":");
    jstr(&b, result);
    if (n1 >= 0) emq_wb_printf(&b, ",\"count\":%lld", (long long)n1);
    if (n2 >= 0) emq_wb_printf(&b, ",\"skipped\":%lld", (long long)n2);
    emq_wb_str(&b, "}\n");
    return respond(r, 200, JSON, &b);
}

/* requeue-dead with `older_than` (ms) and/or `count`: one transaction of
 * up to `count` (default 1000) dead jobs minted before now - older_than
 * (ids carry their mint time; the keyspace keeps no time of death), or
 * minted up to now when only `count` is given. *given: 0 neither was
 * given (nothing done), 1 done (the result returned), -1 a bad parameter
 * (the 400 response set). */
static int requeue_dead_some(emq_web *w, emq_web_response *r, const char *q,
                             const char *query, int64_t *a, int64_t *s,
                             int *given)
{
    int64_t older = 0, count = 1000;
    int fo = int_param(r, query, "older_than", 0, INT64_C(3153600000000),
                       &older);
    int fc = fo < 0 ? 0 : int_param(r, query, "count", 1, 100000, &count);
    *given = fo < 0 || fc < 0 ? -1 : fo > 0 || fc > 0;
    if (*given <= 0) return EMQ_OK;
    int64_t before = emq_now(w->db) - (fo > 0 ? older : -1);
    return emq_dead_requeue_before(w->db, q, before < 0 ? 0 : before, count,
                                   a, s);
}

/* A POST: q, optional id (job) or g (lane), the verb, the query. */
static int action(emq_web *w, emq_web_response *r, const char *q,
                  const char *id, const char *g, const char *verb,
                  const char *query)
{
    int rc;
    int64_t a = -1, s = -1;
    if (id && strcmp(verb, "run-now") == 0) {
        const char *ids[1] = {id};
        int v = 0;
        int64_t moved = 0;
        rc = emq_job_run_now(w->db, q, 1, ids, &v, &moved);
        if (rc != EMQ_OK) return lib_fail(w, r, rc);
        if (v != 1)
            return fail(r, 409, "state", "job %s in queue %s is not "
                        "scheduled: run-now moves a scheduled job", id, q);
        return done(r, verb, q, id, "moved", -1, -1);
    }
    if (id) {
        if (strcmp(verb, "retry") == 0) {
            rc = emq_job_reprocess(w->db, q, id);
            if (rc == EMQ_OK) return done(r, verb, q, id, "requeued", -1, -1);
        } else if (strcmp(verb, "remove") == 0) {
            rc = emq_job_remove(w->db, q, id, NULL);
            if (rc == EMQ_OK) return done(r, verb, q, id, "removed", -1, -1);
        } else {
            return fail(r, 404, "not_found", "no action '%.40s' on a job "
                        "(retry, run-now, remove)", verb);
        }
        if (rc == EMQ_GONE)
            return fail(r, 404, "gone", "no job %s in queue %s", id, q);
        return lib_fail(w, r, rc);
    }
    if (g) {
        if (strcmp(verb, "pause") == 0) rc = emq_lane_pause(w->db, q, g);
        else if (strcmp(verb, "resume") == 0) rc = emq_lane_resume(w->db, q, g);
        else
            return fail(r, 404, "not_found", "no action '%.40s' on a lane "
                        "(pause, resume)", verb);
        if (rc == EMQ_OK)
            return done(r, verb, q, g, verb[0] == 'p' ? "paused" : "resumed",
                        -1, -1);
        return lib_fail(w, r, rc);
    }
    if (strcmp(verb, "pause") == 0) rc = emq_queue_pause(w->db, q);
    else if (strcmp(verb, "resume") == 0) rc = emq_queue_resume(w->db, q);
    else if (strcmp(verb, "requeue-dead") == 0) {
        int some = 0;
        rc = requeue_dead_some(w, r, q, query, &a, &s, &some);
        if (some < 0) return EMQ_OK; /* the 400 is set */
        if (some == 0) rc = emq_dead_requeue(w->db, q, 100, &a, &s);
    } else
        return fail(r, 404, "not_found", "no action '%.40s' on a queue "
                    "(pause, resume, requeue-dead)", verb);
    if (rc != EMQ_OK) return lib_fail(w, r, rc);
    return done(r, verb, q, NULL,
                verb[0] == 'p' ? "paused" : verb[2] == 's' ? "resumed"
                                                          : "requeued",
                a, s);
}

/* ------------------------------------------------------------ the router */

static int asset(emq_web_response *r, const char *name)
{
    for (size_t i = 0; i < emq_web_nassets; i++)
        if (strcmp(emq_web_assets[i].name, name) == 0) {
            emq_wb b = {0};
            emq_wb_put(&b, emq_web_assets[i].data, emq_web_assets[i].len);
            return respond(r, 200, emq_web_assets[i].type, &b);
        }
    return fail(r, 404, "not_found", "no asset '%.80s'", name);
}

/* Split path into at most 8 segments of [A-Za-z0-9._-]; -1 refused. */
static int split(const char *path, char seg[8][160], int *n)
{
    const char *p = path;
    *n = 0;
    if (*p != '/') return -1;
    while (*p == '/') {
        p++;
        if (*p == '\0') break;
        size_t l = strcspn(p, "/");
        if (*n == 8 || l >= 160) return -1;
        for (size_t i = 0; i < l; i++) {
            unsigned char c = (unsigned char)p[i];
            if (!isalnum(c) && c != '.' && c != '_' && c != '-') return -1;
        }
        if ((l == 1 && p[0] == '.') || (l == 2 && p[0] == '.' && p[1] == '.'))
            return -1;
        memcpy(seg[*n], p, l);
        seg[*n][l] = '\0';
        (*n)++;
        p += l;
    }
    return *p == '\0' ? 0 : -1;
}

static int authorized(emq_web *w, const emq_web_request *q)
{
    char v[TOKEN_MAX + 1];
    const char *a;
    if (w->token == NULL) return 1;
    a = header(q, "Authorization");
    if (a && strncmp(a, "Bearer ", 7) == 0 && same(a + 7, w->token))
        return 1;
    if (cookie(q, "emqlite_token", v, sizeof v) && same(v, w->token))
        return 1;
    return 0;
}

/* Origin, when sent, must name the Host the request came to. */
static int same_origin(const emq_web_request *q)
{
    const char *o = header(q, "Origin"), *h = header(q, "Host");
    if (o == NULL) return 1;
    if (h == NULL) return 0;
    const char *s = strstr(o, "://");
    return s && strcmp(s + 3, h) == 0;
}

/* Without a token, the Host a request names must be a loopback one
 * (127.x.x.x, localhost, [::1], with or without a port), or absent: a
 * page of another site whose name an attacker points at 127.0.0.1 (DNS
 * rebinding) would otherwise be same-origin with the dashboard. */
static int loopback_host(const char *h)
{
    size_t n;
    if (h == NULL) return 1;
    if (strncmp(h, "[::1]", 5) == 0) return h[5] == '\0' || h[5] == ':';
    n = strcspn(h, ":");
    if (h[n] == ':') {
        for (const char *p = h + n + 1; *p; p++)
            if (*p < '0' || *p > '9') return 0;
    }
    if (n == 9 && strncasecmp(h, "localhost", 9) == 0) return 1;
    if (n < 4 || strncmp(h, "127.", 4) != 0) return 0;
    for (size_t i = 4; i < n; i++)
        if (!(h[i] == '.' || (h[i] >= '0' && h[i] <= '9'))) return 0;
    return 1;
}

static int route(emq_web *w, const emq_web_request *q, emq_web_response *r)
{
    char seg[8][160];
    int n;
    int get = strcmp(q->method, "GET") == 0 || strcmp(q->method, "HEAD") == 0;
    int post = strcmp(q->method, "POST") == 0;
    if (q->body_len > w->max_body)
        return fail(r, 413, "too_large", "the body is %zu bytes; at most "
                    "%zu are accepted", q->body_len, w->max_body);
    if (strstr(q->path, "..") || strchr(q->path, '\\') ||
        strchr(q->path, '%'))
        return fail(r, 400, "bad_request", "the path may not hold '..', "
                    "'\\' or percent-escapes");
    if (strncmp(q->path, "/api/queues/", 12) == 0) {
        /* the queue's segment, checked first so its rule is the answer */
        char qn[160];
        size_t l = strcspn(q->path + 12, "/");
        if (l < sizeof qn) {
            memcpy(qn, q->path + 12, l);
            qn[l] = '\0';
            if (check_queue(r, qn)) return EMQ_OK;
        } else {
            return fail(r, 400, "bad_request", "%s", QUEUE_RULE);
        }
    }
    if (split(q->path, seg, &n) != 0)
        return fail(r, 400, "bad_request", "a path segment is 1 to 159 "
                    "characters of A-Z a-z 0-9 . _ -, at most 8 segments");
    if (!get && !post) {
        int rc = fail(r, 405, "method", "method %.16s: GET, HEAD or POST",
                      q->method);
        if (rc == EMQ_OK && add_header(r, "Allow", "GET, HEAD, POST"))
            return EMQ_ENOMEM;
        return rc;
    }
    /* the login: GET /?token=T sets the cookie and goes to ./ (relative,
     * so a handler mounted under a prefix keeps it) */
    if (w->token && get && n == 0) {
        char t[TOKEN_MAX + 1];
        if (qparam(q->query, "token", t, sizeof t, NULL) > 0 &&
            same(t, w->token)) {
            emq_wb b = {0};
            char c[TOKEN_MAX + 80];
            emq_wb_str(&b, "signed in\n");
            snprintf(c, sizeof c, "emqlite_token=%s; Path=/; HttpOnly; "
                     "SameSite=Strict", w->token);
            int rc = respond(r, 303, "text/plain; charset=utf-8", &b);
            if (rc == EMQ_OK &&
                (add_header(r, "Set-Cookie", c) ||
                 add_header(r, "Location", "./")))
                return EMQ_ENOMEM;
            return rc;
        }
    }
    if (w->token == NULL && !loopback_host(header(q, "Host")))
        return fail(r, 403, "host", "Host '%.100s' is not a loopback name: "
                    "without a token the dashboard answers only 127.0.0.1, "
                    "localhost and [::1] (start it with a token to serve "
                    "other names)", header(q, "Host"));
    if (!authorized(w, q))
        return fail(r, 401, "unauthorized", "this dashboard needs its token: "
                    "open /?token=TOKEN, or send Authorization: Bearer TOKEN");
    if (n == 0) {
        if (!get) return fail(r, 405, "method", "/ takes GET");
        return asset(r, "index.html");
    }
    if (strcmp(seg[0], "assets") == 0) {
        if (n != 2 || !get)
            return fail(r, 404, "not_found", "no such path");
        return asset(r, seg[1]);
    }
    if (strcmp(seg[0], "api") != 0 || n < 2)
        return fail(r, 404, "not_found", "no such path");
    if (post) {
        if (w->read_only)
            return fail(r, 403, "read_only", "this dashboard is read-only "
                        "(--read-only): actions are refused");
        const char *t = header(q, "X-CSRF-Token");
        if (t == NULL || !same(t, w->csrf) || !same_origin(q))
            return fail(r, 403, "csrf", "an action needs the X-CSRF-Token "
                        "header of GET /api/session, from the same origin");
    }
    if (n == 2 && strcmp(seg[1], "session") == 0 && get) {
        emq_wb b = {0};
        emq_wb_printf(&b, "{\"csrf\":\"%s\",\"read_only\":%s,\"version\":",
                      w->csrf, w->read_only ? "true" : "false");
        jstr(&b, emq_version());
        emq_history_config hc;
        emq_wb_str(&b, ",\"history\":");
        jstr(&b, emq_history_config_get(w->db, &hc) != EMQ_OK
                     ? "off" : emq_history_level_name(hc.enabled));
        emq_wb_str(&b, ",\"verbs\":[\"retry\",\"remove\","
                   "\"requeue-dead\",\"run-now\",\"pause\",\"resume\"]}\n");
        return respond(r, 200, JSON, &b);
    }
    if (n == 2 && strcmp(seg[1], "overview") == 0 && get)
        return api_overview(w, r);
    if (n == 2 && strcmp(seg[1], "events") == 0 && get)
        return api_events(w, r, q->query);
    if (strcmp(seg[1], "queues") != 0 || n < 3)
        return fail(r, 404, "not_found", "no such path");
    const char *qn = seg[2];
    if (check_queue(r, qn)) return EMQ_OK;
    if (n == 3 && get) return api_queue(w, r, qn);
    if (n == 4 && get && strcmp(seg[3], "jobs") == 0)
        return api_jobs(w, r, qn, q->query);
    if (n == 4 && get && strcmp(seg[3], "lanes") == 0)
        return api_lanes(w, r, qn);
    if (n == 4 && get && strcmp(seg[3], "streams") == 0)
        return api_streams(w, r, qn);
    if (n == 5 && get && strcmp(seg[3], "jobs") == 0) {
        if (check_id(r, "job id", seg[4])) return EMQ_OK;
        return api_job(w, r, qn, seg[4]);
    }
    if (n == 4 && post) return action(w, r, qn, NULL, NULL, seg[3], q->query);
    if (n == 6 && post && strcmp(seg[3], "jobs") == 0) {
        if (check_id(r, "job id", seg[4])) return EMQ_OK;
        return action(w, r, qn, seg[4], NULL, seg[5], q->query);
    }
    if (n == 6 && post && strcmp(seg[3], "lanes") == 0) {
        if (check_id(r, "group", seg[4])) return EMQ_OK;
        return action(w, r, qn, NULL, seg[4], seg[5], q->query);
    }
    if ((n >= 4 && post) || (n >= 4 && get && (n > 5 ||
                                              strcmp(seg[3], "jobs") == 0)))
        return fail(r, 404, "not_found", "no such path");
    return fail(r, n >= 4 ? 404 : 405, n >= 4 ? "not_found" : "method",
                "no such path for %.8s", q->method);
}

int emq_web_handle(emq_web *w, const emq_web_request *req,
                   emq_web_response *resp)
{
    int rc;
    if (resp) memset(resp, 0, sizeof *resp);
    if (w == NULL || req == NULL || resp == NULL || req->method == NULL ||
        req->path == NULL || (req->nheaders && req->headers == NULL))
        return EMQ_EINVAL;
    rc = route(w, req, resp);
    if (rc != EMQ_OK) {
        emq_web_response_clear(resp);
        return rc;
    }
    /* HEAD is answered as GET: the server sends the headers only */
    return EMQ_OK;
}
