/*
 * cli_transfer.c — the emqlite tool's transfer commands: export, import and
 * check work on the file alone; push, pull and verify talk to a live Valkey
 * or Redis server through hiredis (when the build found it).
 *
 * Owns: the RESP frame splitter and writer the tool needs (the library's
 * codec is internal to it), the records of the logical digest
 * (doc/EXPORT.md §3) built from an export stream and from a server's
 * replies, the server side (connection, capability probe, SCAN, pipelined
 * reads by TYPE, pipelined writes), and the progress line on stderr.
 *
 * Rules: the file is reached through api/emqlite.h only. What push sends and
 * what verify compares is one emq_export stream, so it is one consistent cut
 * of the file (one read transaction). Every failure goes through
 * emq_cli_fail or xfail; exit statuses are those of cli.h plus
 * EXIT_DIFFER (11), documented in emqlite(1).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#include "cli.h"
#include "cli_xstream.h"
#ifdef HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

/* check: violations found; verify: the keyspaces differ; push/pull: the
 * copy disagrees with its source after the transfer. */
#define EXIT_DIFFER 11

#define VKEY "{emq}:version"
#define VKEY_LEN (sizeof VKEY - 1)
#define CHUNK 64        /* elements per HSET/ZADD/RPUSH/SADD written      */
#define INFLIGHT 1000   /* push: batches of commands in flight (at most two) */
#define KEYBATCH 512    /* pull/verify: keys read per pipelined round      */

/* ================================================================ bytes */

typedef struct tbuf {
    unsigned char *p;
    size_t len, cap;
} tbuf;

static int tb_grow(tbuf *b, size_t more)
{
    if (b->cap - b->len >= more)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < more) {
        if (cap > SIZE_MAX / 2)
            return -1;
        cap *= 2;
    }
    unsigned char *p = realloc(b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

static int tb_put(tbuf *b, const void *p, size_t n)
{
    if (tb_grow(b, n))
        return -1;
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}

static void tb_free(tbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ============================================== failures with own exits */

static int nomem(emq_cli *c)
{
    return emq_cli_fail(c, EMQ_ENOMEM, "out of memory");
}

/* `path` could not be opened or found: "<path>: <errno's reason>". */
static int cantopen(emq_cli *c, const char *path)
{
    char msg[700];
    snprintf(msg, sizeof msg, "%s: %s", path, strerror(errno));
    return emq_cli_fail(c, EMQ_ECANTOPEN, msg);
}

/* ======================================================== queue options */

typedef struct qsel {
    const char **q; /* sorted, unique */
    size_t n;
} qsel;

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Take every "--queue Q" / "--queue=Q" before "--" out of argv, which is
 * compacted in place; each name must pass the queue gate. Returns -1 to
 * proceed or an exit status. qs->q is malloc'd (free it in every case).
 */
static int take_queues(emq_cli *c, int *argc, char **argv, qsel *qs)
{
    int out = 1, i;
    qs->n = 0;
    if (!(qs->q = calloc((size_t)*argc + 1, sizeof *qs->q)))
        return nomem(c);
    for (i = 1; i < *argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "--") == 0)
            break;
        if (strcmp(a, "--queue") == 0) {
            if (i + 1 >= *argc)
                return emq_cli_usage(c, "option '--queue' needs a value");
            v = argv[++i];
        } else if (strncmp(a, "--queue=", 8) == 0) {
            v = a + 8;
        } else {
            argv[out++] = argv[i];
            continue;
        }
        if (!emq_queue_valid(v))
            return emq_cli_usage(c, "invalid queue name '%s'", v);
        qs->q[qs->n++] = v;
    }
    for (; i < *argc; i++)
        argv[out++] = argv[i];
    argv[out] = NULL;
    *argc = out;
    if (qs->n > 1) {
        qsort(qs->q, qs->n, sizeof *qs->q, cmp_cstr);
        size_t k = 1;
        for (size_t j = 1; j < qs->n; j++)
            if (strcmp(qs->q[j], qs->q[k - 1]) != 0)
                qs->q[k++] = qs->q[j];
        qs->n = k;
    }
    return -1;
}

/*
 * The options of a command that takes a queue selection and no positional
 * argument: the --queue options, then `opts`. `need`, when not NULL, names
 * the server option of `opts` that must be given. Returns -1 to proceed or
 * an exit status.
 */
static int parse_sel(emq_cli *c, int argc, char **argv,
                     const emq_cli_opt *opts, qsel *qs, const char *need)
{
    const char *pos[1];
    int npos, ex;
    if ((ex = take_queues(c, &argc, argv, qs)) >= 0 ||
        (ex = emq_cli_parse(c, argc, argv, opts, pos, 0, 0, &npos)) >= 0)
        return ex;
    for (; need && opts->name; opts++)
        if (strcmp(opts->name, need) == 0 && !*opts->value)
            return emq_cli_usage(c, "%s HOST:PORT is required", need);
    return -1;
}

static void qsel_opts(const qsel *qs, emq_export_options *o)
{
    emq_export_options_init(o);
    if (qs->n) {
        o->queues = qs->q;
        o->n_queues = qs->n;
    }
}

/* The file must exist: export, check, push and verify never create one. */
static int open_existing(emq_cli *c)
{
    struct stat sb;
    const char *p = c->db_path;
    if (p[0] && strcmp(p, ":memory:") != 0 && stat(p, &sb) != 0)
        return cantopen(c, p);
    return emq_cli_open(c);
}

static void put_digest(FILE *f, uint64_t d)
{
    fprintf(f, "\"%016llx\"", (unsigned long long)d);
}

/* ============================================================= progress */

typedef struct progress {
    int on, shown;
    const char *what;
    uint64_t total;
    double t0, last;
} progress;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A progress line on stderr when it is a terminal ($EMQLITE_PROGRESS=1
 * forces it, =0 silences it). */
static void prog_start(progress *p, const char *what, uint64_t total)
{
    const char *f = getenv("EMQLITE_PROGRESS");
    memset(p, 0, sizeof *p);
    p->what = what;
    p->total = total;
    p->on = f && f[0] ? strcmp(f, "0") != 0 : isatty(STDERR_FILENO);
    p->t0 = mono();
    p->last = -1;
}

static void prog_tick(progress *p, uint64_t done, const char *unit)
{
    if (!p->on)
        return;
    double t = mono();
    if (p->last >= 0 && t - p->last < 0.2)
        return;
    p->last = t;
    p->shown = 1;
    double rate = t > p->t0 ? (double)done / (t - p->t0) : 0;
    if (p->total)
        fprintf(stderr, "\r%s: %llu/%llu %s (%d%%), %.0f/s   ", p->what,
                (unsigned long long)done, (unsigned long long)p->total, unit,
                (int)(done * 100 / p->total), rate);
    else
        fprintf(stderr, "\r%s: %llu %s, %.0f/s   ", p->what,
                (unsigned long long)done, unit, rate);
}

static void prog_end(progress *p)
{
    if (p->on && p->shown)
        fputs("\r\033[K", stderr);
    p->shown = 0;
}

/* ================================================================ export */

typedef struct fsink {
    FILE *f;
    uint64_t bytes;
    int err;
    progress pg;
} fsink;

static int fsink_write(void *ctx, const void *p, size_t n)
{
    fsink *s = ctx;
    if (fwrite(p, 1, n, s->f) != n) {
        s->err = errno ? errno : EIO;
        return 1;
    }
    s->bytes += n;
    prog_tick(&s->pg, s->bytes >> 20, "MiB written");
    return 0;
}

int emq_cli_export(emq_cli *c, int argc, char **argv)
{
    const char *out = NULL, *byslot = NULL;
    emq_cli_opt opts[] = { { "--out", 1, &out }, { "--by-slot", 0, &byslot },
                           { NULL, 0, NULL } };
    qsel qs = { NULL, 0 };
    int ex, rc;
    fsink s;
    emq_export_options o;
    emq_transfer_summary sum;

    memset(&s, 0, sizeof s);
    if ((ex = parse_sel(c, argc, argv, opts, &qs, NULL)) >= 0)
        goto done;
    if (c->json && !out) {
        ex = emq_cli_usage(c, "--json needs --out FILE (the stream itself "
                              "goes to stdout)");
        goto done;
    }
    if ((ex = open_existing(c)))
        goto done;
    s.f = stdout;
    if (out && !(s.f = fopen(out, "wb"))) {
        ex = cantopen(c, out);
        goto done;
    }
    qsel_opts(&qs, &o);
    o.by_slot = byslot != NULL;
    prog_start(&s.pg, "export", 0);
    errno = 0;
    rc = emq_export(c->db, &o, fsink_write, &s, &sum);
    prog_end(&s.pg);
    if (out) {
        if (fclose(s.f) != 0 && rc == EMQ_OK) {
            s.err = errno;
            rc = EMQ_EIO;
        }
        if (rc != EMQ_OK)
            remove(out);
    } else if (fflush(stdout) != 0 && rc == EMQ_OK) {
        s.err = errno;
        rc = EMQ_EIO;
    }
    if (rc != EMQ_OK) {
        char msg[700];
        if (s.err) {
            snprintf(msg, sizeof msg, "cannot write the stream to %s: %s",
                     out ? out : "stdout", strerror(s.err));
            ex = emq_cli_fail(c, EMQ_EIO, msg);
        } else {
            ex = emq_cli_fail(c, rc, NULL);
        }
        goto done;
    }
    fprintf(stderr, "exported %llu keys, %llu commands, %llu bytes, "
            "digest %016llx\n", (unsigned long long)sum.keys,
            (unsigned long long)sum.commands, (unsigned long long)sum.bytes,
            (unsigned long long)sum.digest);
    if (c->json) {
        fputs("{\"out\":", stdout);
        emq_cli_json_str(stdout, out);
        printf(",\"keys\":%llu,\"commands\":%llu,\"bytes\":%llu,\"digest\":",
               (unsigned long long)sum.keys, (unsigned long long)sum.commands,
               (unsigned long long)sum.bytes);
        put_digest(stdout, sum.digest);
        puts("}");
    }
    ex = EMQ_EXIT_OK;
done:
    free(qs.q);
    return ex;
}

/* ================================================================ import */

static int read_stream(FILE *f, tbuf *b)
{
    for (;;) {
        if (tb_grow(b, 1 << 16))
            return -1;
        size_t r = fread(b->p + b->len, 1, b->cap - b->len, f);
        b->len += r;
        if (r == 0)
            return ferror(f) ? -1 : 0;
    }
}

static void import_summary(emq_cli *c, const char *key, const char *src,
                           const emq_transfer_summary *s)
{
    if (c->json) {
        printf("{\"%s\":", key);
        emq_cli_json_str(stdout, src);
        printf(",\"commands\":%llu,\"bytes\":%llu,\"keys\":%llu,"
               "\"digest\":", (unsigned long long)s->commands,
               (unsigned long long)s->bytes, (unsigned long long)s->keys);
        put_digest(stdout, s->digest);
        puts("}");
    } else {
        printf("imported %llu commands (%llu bytes); the file holds %llu "
               "keys, digest %016llx\n", (unsigned long long)s->commands,
               (unsigned long long)s->bytes, (unsigned long long)s->keys,
               (unsigned long long)s->digest);
    }
}

int emq_cli_import(emq_cli *c, int argc, char **argv)
{
    const char *pos[1];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int npos, ex, rc;
    tbuf b = { NULL, 0, 0 };
    FILE *in = stdin;
    const char *src = "-";
    emq_transfer_summary sum;
    progress pg;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, 1, &npos)) >= 0)
        return ex;
    if (npos == 1 && strcmp(pos[0], "-") != 0) {
        src = pos[0];
        if (!(in = fopen(src, "rb")))
            return cantopen(c, src);
    }
    rc = read_stream(in, &b);
    if (in != stdin)
        fclose(in);
    if (rc) {
        tb_free(&b);
        return emq_cli_fail(c, EMQ_EIO, "cannot read the stream");
    }
    if ((ex = emq_cli_open(c)))
        goto done;
    prog_start(&pg, "import", 0);
    if (pg.on)
        fprintf(stderr, "import: applying %zu bytes in one transaction...",
                b.len);
    pg.shown = pg.on;
    rc = emq_import(c->db, b.p, b.len, &sum);
    prog_end(&pg);
    if (rc != EMQ_OK) {
        ex = emq_cli_fail(c, rc, NULL);
        goto done;
    }
    import_summary(c, "in", src, &sum);
    ex = EMQ_EXIT_OK;
done:
    tb_free(&b);
    return ex;
}

/* ================================================================= check */

typedef struct checklog {
    tbuf json;  /* the findings array's items */
    size_t violations, notes;
    int as_json, oom;
} checklog;

static void on_finding(void *ctx, const emq_finding *f)
{
    checklog *l = ctx;
    const char *sev = f->severity == EMQ_CHECK_VIOLATION ? "violation"
                                                         : "note";
    if (f->severity == EMQ_CHECK_VIOLATION)
        l->violations++;
    else
        l->notes++;
    if (!l->as_json) {
        printf("%-9s  %-9s  %s  %s\n", sev, f->code,
               f->key && f->key[0] ? f->key : "-", f->message);
        return;
    }
    /* JSON items are collected so that a failure midway still writes one
     * document only. */
    char *p = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&p, &n);
    if (!m) {
        l->oom = 1;
        return;
    }
    fprintf(m, "%s{\"severity\":\"%s\",\"code\":", l->json.len ? "," : "",
            sev);
    emq_cli_json_str(m, f->code);
    fputs(",\"key\":", m);
    emq_cli_json_str(m, f->key ? f->key : "");
    fputs(",\"message\":", m);
    emq_cli_json_str(m, f->message);
    fputc('}', m);
    if (fclose(m) != 0 || tb_put(&l->json, p, n))
        l->oom = 1;
    free(p);
}

int emq_cli_check(emq_cli *c, int argc, char **argv)
{
    const char *pos[1];
    emq_cli_opt opts[] = { { NULL, 0, NULL } };
    int npos, ex, rc;
    checklog l;
    size_t nv = 0;

    memset(&l, 0, sizeof l);
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, 0, &npos)) >= 0)
        return ex;
    if ((ex = open_existing(c)))
        return ex;
    l.as_json = c->json;
    rc = emq_check(c->db, on_finding, &l, &nv);
    if (rc != EMQ_OK && rc != EMQ_ECORRUPT) {
        ex = emq_cli_fail(c, rc, NULL);
        goto done;
    }
    if (l.oom) {
        ex = nomem(c);
        goto done;
    }
    if (c->json) {
        printf("{\"ok\":%s,\"violations\":%zu,\"notes\":%zu,\"findings\":[",
               l.violations ? "false" : "true", l.violations, l.notes);
        if (l.json.len)
            fwrite(l.json.p, 1, l.json.len, stdout);
        puts("]}");
    } else {
        printf("%zu violation%s, %zu note%s\n", l.violations,
               l.violations == 1 ? "" : "s", l.notes, l.notes == 1 ? "" : "s");
    }
    if (l.violations) {
        fprintf(stderr, "emqlite: check: %zu invariant violation%s in %s\n",
                l.violations, l.violations == 1 ? "" : "s", c->db_path);
        ex = EXIT_DIFFER;
    } else {
        ex = EMQ_EXIT_OK;
    }
done:
    tb_free(&l.json);
    return ex;
}

/* ======================================================= live transfers */

#ifndef HAVE_HIREDIS

static int not_built(emq_cli *c, int argc, char **argv)
{
    const char *a = NULL, *b = NULL, *d = NULL, *e = NULL;
    emq_cli_opt opts[] = { { "--to", 1, &a }, { "--from", 1, &b },
                           { "--against", 1, &d }, { "--replace", 0, &e },
                           { "--by-slot", 0, &e }, { NULL, 0, NULL } };
    qsel qs = { NULL, 0 };
    int ex;
    if ((ex = parse_sel(c, argc, argv, opts, &qs, NULL)) < 0) {
        char msg[400];
        snprintf(msg, sizeof msg, "built without hiredis: '%s' talks to a "
                 "live Valkey/Redis server; rebuild with libhiredis "
                 "(Debian: libhiredis-dev), or use 'emqlite export' with "
                 "'redis-cli --pipe'", c->cmd);
        ex = emq_cli_fail(c, EMQ_ENOTSUP, msg);
    }
    free(qs.q);
    return ex;
}

int emq_cli_push(emq_cli *c, int argc, char **argv)
{
    return not_built(c, argc, argv);
}

int emq_cli_pull(emq_cli *c, int argc, char **argv)
{
    return not_built(c, argc, argv);
}

int emq_cli_verify(emq_cli *c, int argc, char **argv)
{
    return not_built(c, argc, argv);
}

#else /* HAVE_HIREDIS */

/* The digest's integers: 8 bytes, little-endian. */
static int tb_u64(tbuf *b, uint64_t v)
{
    unsigned char x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (unsigned char)(v >> (8 * i));
    return tb_put(b, x, 8);
}

static int tb_str(tbuf *b, const void *p, size_t n)
{
    return tb_u64(b, n) || tb_put(b, p, n);
}

/* RESP: "*<n>\r\n" or "$<n>\r\n". */
static int tb_head(tbuf *b, char c, size_t n)
{
    char h[32];
    int k = snprintf(h, sizeof h, "%c%zu\r\n", c, n);
    return tb_put(b, h, (size_t)k);
}

static int tb_bulk(tbuf *b, const void *p, size_t n)
{
    return tb_head(b, '$', n) || tb_put(b, p, n) || tb_put(b, "\r\n", 2);
}

static int tb_bulk_s(tbuf *b, const char *s)
{
    return tb_bulk(b, s, strlen(s));
}

static int tb_bulk_i64(tbuf *b, int64_t v)
{
    char t[24];
    int k = snprintf(t, sizeof t, "%lld", (long long)v);
    return tb_bulk(b, t, (size_t)k);
}

static int bytes_cmp(const void *a, size_t an, const void *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int c = n ? memcmp(a, b, n) : 0;
    return c ? c : (an > bn) - (an < bn);
}

/* A view of bytes (a key name). */
typedef struct bkey {
    const unsigned char *p;
    size_t n;
} bkey;

static int cmp_bkey(const void *a, const void *b)
{
    const bkey *x = a, *y = b;
    return bytes_cmp(x->p, x->n, y->p, y->n);
}

/* One byte for a human: printable ASCII as is, other bytes as \xNN.
 * Writes at most 4 characters (no NUL) and returns their number. */
static size_t show_byte(char out[5], unsigned char b)
{
    if (b >= 0x20 && b < 0x7F && b != '\\') {
        out[0] = (char)b;
        return 1;
    }
    return (size_t)snprintf(out, 5, "\\x%02x", b);
}

/* Print bytes for a human on one line (a differing key), byte by byte as
 * show_byte. */
static void show_bytes(FILE *f, const void *p, size_t n)
{
    const unsigned char *s = p;
    char t[5];
    for (size_t i = 0; i < n; i++)
        fwrite(t, 1, show_byte(t, s[i]), f);
}

/* As show_bytes, into a buffer (NUL-terminated, cut at `cap`). */
static void show_into(char *out, size_t cap, const void *p, size_t n)
{
    const unsigned char *s = p;
    size_t k = 0;
    for (size_t i = 0; i < n && k + 5 < cap; i++)
        k += show_byte(out + k, s[i]);
    out[k < cap ? k : cap - 1] = '\0';
}

/* A failure with its own exit status and class (not a library code). */
static int xfail(emq_cli *c, int code, const char *cls, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int xfail(emq_cli *c, int code, const char *cls, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "emqlite: %s: %s\n", cls, msg);
    if (c->json) {
        fputs("{\"error\":{\"class\":", stdout);
        emq_cli_json_str(stdout, cls);
        fputs(",\"message\":", stdout);
        emq_cli_json_str(stdout, msg);
        printf("},\"exit\":%d}\n", code);
    }
    return code;
}

static const bkey vkey = { (const unsigned char *)VKEY, VKEY_LEN };

/* When `k` is "emq:{q}:<rest>", set q and rest and return 1. */
static int key_queue(const unsigned char *k, size_t n, bkey *q, bkey *rest)
{
    if (n < 8 || memcmp(k, "emq:{", 5) != 0)
        return 0;
    const unsigned char *e = memchr(k + 5, '}', n - 5);
    if (!e || e == k + 5 || (size_t)(e - k) + 2 > n || e[1] != ':')
        return 0;
    q->p = k + 5;
    q->n = (size_t)(e - (k + 5));
    rest->p = e + 2;
    rest->n = n - (size_t)(e + 2 - k);
    return 1;
}

/* Index of queue `q` in the sorted names, or -1. */
static long find_queue(const char *const *names, size_t n, const bkey *q)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = bytes_cmp(names[mid], strlen(names[mid]), q->p, q->n);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Is key `k` part of the selection: the version key and the keys of the
 * listed queues, or, with no list, every EchoMQ key (emq:… and {emq}:…)? */
static int key_selected(const qsel *qs, const unsigned char *k, size_t n)
{
    bkey q, rest;
    if (n == VKEY_LEN && memcmp(k, VKEY, VKEY_LEN) == 0)
        return 1;
    if (!qs->n)
        return (n >= 4 && memcmp(k, "emq:", 4) == 0) ||
               (n >= 6 && memcmp(k, "{emq}:", 6) == 0);
    return key_queue(k, n, &q, &rest) && find_queue(qs->q, qs->n, &q) >= 0;
}

/* ======================================================== RESP splitter */

/* One command of a stream: the frame's bytes and its arguments. */
typedef struct frame {
    const unsigned char *p;
    size_t len;
    uint64_t offset;
    size_t argc;
    const unsigned char **argv;
    size_t *lens;
} frame;

typedef int (*frame_fn)(void *ctx, const frame *f);

/* Cuts a byte stream fed in any split into frames (arrays of bulks). */
typedef struct splitter {
    tbuf buf;
    size_t pos;
    uint64_t base;  /* stream offset of buf.p[0] */
    const unsigned char **argv;
    size_t *lens, cap;
    frame_fn fn;
    void *ctx;
} splitter;

#define SPLIT_BAD (-1)
#define SPLIT_NOMEM (-2)

static void split_free(splitter *s)
{
    tb_free(&s->buf);
    free(s->argv);
    free(s->lens);
}

/* "<digits>\r\n" at p[*i..n): 1 (value in *v, *i past it), 0 incomplete,
 * SPLIT_BAD malformed. */
static int hdr_num(const unsigned char *p, size_t n, size_t *i, size_t *v)
{
    size_t k = *i, x = 0, d = 0;
    while (k < n && p[k] >= '0' && p[k] <= '9') {
        if (x > (SIZE_MAX - 9) / 10 || ++d > 18)
            return SPLIT_BAD;
        x = x * 10 + (size_t)(p[k] - '0');
        k++;
    }
    if (k >= n)
        return 0;
    if (d == 0 || p[k] != '\r')
        return SPLIT_BAD;
    if (k + 1 >= n)
        return 0;
    if (p[k + 1] != '\n')
        return SPLIT_BAD;
    *i = k + 2;
    *v = x;
    return 1;
}

static int frame_parse(splitter *s, const unsigned char *p, size_t n,
                       frame *f)
{
    size_t i = 1, argc, len;
    int r;
    if (n == 0)
        return 0;
    if (p[0] != '*')
        return SPLIT_BAD;
    if ((r = hdr_num(p, n, &i, &argc)) <= 0)
        return r;
    if (argc == 0 || argc > 1024 * 1024)
        return SPLIT_BAD;
    if (argc > s->cap) {
        const unsigned char **a = realloc(s->argv, argc * sizeof *a);
        if (!a)
            return SPLIT_NOMEM;
        s->argv = a;
        size_t *l = realloc(s->lens, argc * sizeof *l);
        if (!l)
            return SPLIT_NOMEM;
        s->lens = l;
        s->cap = argc;
    }
    for (size_t a = 0; a < argc; a++) {
        if (i >= n)
            return 0;
        if (p[i] != '$')
            return SPLIT_BAD;
        i++;
        if ((r = hdr_num(p, n, &i, &len)) <= 0)
            return r;
        if (len > n - i || n - i - len < 2)
            return 0;
        if (p[i + len] != '\r' || p[i + len + 1] != '\n')
            return SPLIT_BAD;
        s->argv[a] = p + i;
        s->lens[a] = len;
        i += len + 2;
    }
    f->p = p;
    f->len = i;
    f->argc = argc;
    f->argv = s->argv;
    f->lens = s->lens;
    return 1;
}

/* Feed bytes; calls s->fn for each complete frame. Returns 0, SPLIT_BAD,
 * SPLIT_NOMEM, or the callback's nonzero value. */
static int split_feed(splitter *s, const void *p, size_t n)
{
    int r = 0;
    if (tb_put(&s->buf, p, n))
        return SPLIT_NOMEM;
    for (;;) {
        frame f;
        r = frame_parse(s, s->buf.p + s->pos, s->buf.len - s->pos, &f);
        if (r <= 0)
            break;
        f.offset = s->base + s->pos;
        s->pos += f.len;
        if ((r = s->fn(s->ctx, &f)) != 0)
            return r;
    }
    if (r < 0)
        return r;
    if (s->pos) {
        memmove(s->buf.p, s->buf.p + s->pos, s->buf.len - s->pos);
        s->buf.len -= s->pos;
        s->base += s->pos;
        s->pos = 0;
    }
    return 0;
}

/* Case-insensitive: is argument i the word w? */
static int arg_is(const frame *f, size_t i, const char *w)
{
    size_t n = strlen(w);
    if (i >= f->argc || f->lens[i] != n)
        return 0;
    for (size_t k = 0; k < n; k++) {
        unsigned char a = f->argv[i][k];
        if (a >= 'a' && a <= 'z')
            a = (unsigned char)(a - 32);
        if (a != (unsigned char)w[k])
            return 0;
    }
    return 1;
}

/* Copy n bytes into b[cap] as a C string for strto*: -1 when empty or
 * too long. */
static int cstr_of(char *b, size_t cap, const void *p, size_t n)
{
    if (n == 0 || n >= cap)
        return -1;
    memcpy(b, p, n);
    b[n] = '\0';
    return 0;
}

/* Decimal integer from bytes. Returns 0 on success. */
static int parse_i64(const void *p, size_t n, int64_t *v)
{
    char b[32];
    char *end;
    if (cstr_of(b, sizeof b, p, n))
        return -1;
    errno = 0;
    long long x = strtoll(b, &end, 10);
    if (*end || errno || b[0] == ' ' || b[0] == '+')
        return -1;
    *v = (int64_t)x;
    return 0;
}

static int parse_score(const void *p, size_t n, double *v)
{
    char b[64];
    char *end;
    if (cstr_of(b, sizeof b, p, n))
        return -1;
    *v = strtod(b, &end);
    return *end ? -1 : 0;
}

/* ====================================================== digest records */

/* One element of a key: a (field, member, value) and b (hash value). */
typedef struct elem {
    size_t a, an, b, bn;
    double score;
    int64_t exp;
    const unsigned char *ap; /* set before sorting */
} elem;

/* A key being assembled from commands or replies. */
typedef struct krec {
    int open;
    char type; /* 's' 'h' 'l' 'S' 'z' as in the digest */
    int64_t expire;
    tbuf name, data;
    elem *e;
    size_t ne, cap;
} krec;

static void krec_free(krec *r)
{
    tb_free(&r->name);
    tb_free(&r->data);
    free(r->e);
}

static int krec_start(krec *r, const void *name, size_t n, char type)
{
    r->open = 1;
    r->type = type;
    r->expire = -1;
    r->name.len = 0;
    r->data.len = 0;
    r->ne = 0;
    return tb_put(&r->name, name, n);
}

static elem *krec_elem(krec *r, const void *a, size_t an, const void *b,
                       size_t bn)
{
    if (r->ne == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        elem *e = realloc(r->e, cap * sizeof *e);
        if (!e)
            return NULL;
        r->e = e;
        r->cap = cap;
    }
    elem *x = &r->e[r->ne];
    x->a = r->data.len;
    x->an = an;
    if (tb_put(&r->data, a, an))
        return NULL;
    x->b = r->data.len;
    x->bn = bn;
    if (bn && tb_put(&r->data, b, bn))
        return NULL;
    x->score = 0;
    x->exp = -1;
    r->ne++;
    return x;
}

static int cmp_elem_a(const void *x, const void *y)
{
    const elem *a = x, *b = y;
    return bytes_cmp(a->ap, a->an, b->ap, b->an);
}

static int cmp_elem_z(const void *x, const void *y)
{
    const elem *a = x, *b = y;
    if (a->score != b->score)
        return a->score < b->score ? -1 : 1;
    return cmp_elem_a(x, y);
}

/* The key's record in the digest's byte string S (doc/EXPORT.md §3). */
static int krec_serialise(krec *r, tbuf *S)
{
    const unsigned char *d = r->data.p;
    unsigned char t = (unsigned char)r->type;
    S->len = 0;
    if (tb_str(S, r->name.p, r->name.len) || tb_put(S, &t, 1) ||
        tb_u64(S, (uint64_t)r->expire))
        return -1;
    if (r->type == 'x') /* a stream: its body, built by cli_xstream.c */
        return tb_put(S, d, r->data.len);
    for (size_t i = 0; i < r->ne; i++)
        r->e[i].ap = d + r->e[i].a;
    if (r->type == 's')
        return r->ne ? tb_str(S, d + r->e[r->ne - 1].a, r->e[r->ne - 1].an)
                     : tb_str(S, "", 0);
    if (r->type == 'h' || r->type == 'S')
        qsort(r->e, r->ne, sizeof *r->e, cmp_elem_a);
    else if (r->type == 'z')
        qsort(r->e, r->ne, sizeof *r->e, cmp_elem_z);
    if (tb_u64(S, r->ne))
        return -1;
    for (size_t i = 0; i < r->ne; i++) {
        const elem *x = &r->e[i];
        if (tb_str(S, d + x->a, x->an))
            return -1;
        if (r->type == 'h' &&
            (tb_str(S, d + x->b, x->bn) || tb_u64(S, (uint64_t)x->exp)))
            return -1;
        if (r->type == 'z') {
            double s = x->score == 0 ? 0 : x->score;
            uint64_t bits;
            memcpy(&bits, &s, 8);
            if (tb_u64(S, bits))
                return -1;
        }
    }
    return 0;
}

/* A keyspace as a name-ordered list of per-key digests, and the whole
 * digest. */
typedef struct kent {
    size_t off, len;
    char type;
    int64_t expire;
    uint64_t n, hash;
} kent;

typedef struct kset {
    tbuf names;
    kent *k;
    size_t n, cap;
    XXH3_state_t *h;
    tbuf S;
    uint64_t digest;
    int held;       /* the version record waits for its place */
    tbuf heldS;
    kent heldk;
    int keep;       /* store the entries (else count and digest only)   */
    const struct kset *against; /* compare each key with this stored set */
    size_t ai;      /* its next entry                                  */
    int differ;     /* the first difference is found:                  */
    tbuf dkey;      /* its key                                         */
    char why[200];  /* and the reason                                  */
} kset;

static int kset_init(kset *ks, int keep)
{
    memset(ks, 0, sizeof *ks);
    ks->keep = keep;
    if (!(ks->h = XXH3_createState()))
        return -1;
    XXH3_64bits_reset(ks->h);
    return 0;
}

static void kset_free(kset *ks)
{
    tb_free(&ks->names);
    tb_free(&ks->S);
    tb_free(&ks->heldS);
    tb_free(&ks->dkey);
    free(ks->k);
    if (ks->h)
        XXH3_freeState(ks->h);
}

static const char *type_name(char t)
{
    switch (t) {
    case 's': return "string";
    case 'h': return "hash";
    case 'l': return "list";
    case 'S': return "set";
    case 'z': return "zset";
    case 'x': return "stream";
    default: return "?";
    }
}

/* Record the first difference (keys come in name order, so the first one
 * noted is the smallest differing key). */
static void diff_note(kset *ks, const void *name, size_t n, const char *fmt,
                      ...) __attribute__((format(printf, 4, 5)));

static void diff_note(kset *ks, const void *name, size_t n, const char *fmt,
                      ...)
{
    va_list ap;
    if (ks->differ)
        return;
    ks->differ = 1;
    tb_put(&ks->dkey, name, n);
    va_start(ap, fmt);
    vsnprintf(ks->why, sizeof ks->why, fmt, ap);
    va_end(ap);
}

/* Merge step against the stored (file) set: `y` is the next key here. */
static void kset_compare(kset *ks, const kent *y, const void *yname)
{
    const kset *a = ks->against;
    while (ks->ai < a->n) {
        const kent *x = &a->k[ks->ai];
        const unsigned char *xname = a->names.p + x->off;
        int c = bytes_cmp(xname, x->len, yname, y->len);
        if (c > 0)
            break;
        ks->ai++;
        if (c < 0) {
            diff_note(ks, xname, x->len, "only in the file");
            continue;
        }
        if (x->hash == y->hash)
            return;
        if (x->type != y->type)
            diff_note(ks, xname, x->len, "a %s in the file, a %s on the "
                      "server", type_name(x->type), type_name(y->type));
        else if (x->expire != y->expire)
            diff_note(ks, xname, x->len, "expiry %lld in the file, %lld on "
                      "the server", (long long)x->expire,
                      (long long)y->expire);
        else if (x->n != y->n)
            diff_note(ks, xname, x->len, "%llu elements in the file, %llu "
                      "on the server", (unsigned long long)x->n,
                      (unsigned long long)y->n);
        else
            diff_note(ks, xname, x->len, "the contents differ");
        return;
    }
    diff_note(ks, yname, y->len, "only on the server");
}

static int kset_push(kset *ks, const kent *e, const void *name,
                     const tbuf *S)
{
    XXH3_64bits_update(ks->h, S->p, S->len);
    if (ks->against)
        kset_compare(ks, e, name);
    if (!ks->keep) {
        ks->n++;
        return 0;
    }
    if (ks->n == ks->cap) {
        size_t cap = ks->cap ? 2 * ks->cap : 256;
        kent *k = realloc(ks->k, cap * sizeof *k);
        if (!k)
            return -1;
        ks->k = k;
        ks->cap = cap;
    }
    ks->k[ks->n] = *e;
    ks->k[ks->n].off = ks->names.len;
    if (tb_put(&ks->names, name, e->len))
        return -1;
    ks->n++;
    return 0;
}

static int kset_unhold(kset *ks)
{
    if (!ks->held)
        return 0;
    ks->held = 0;
    return kset_push(ks, &ks->heldk, VKEY, &ks->heldS);
}

/*
 * Add a finished key. Keys must come in name order, except that with
 * `hold_version` the version key may come first (as an export writes it):
 * it is then held back until the walk passes its place.
 */
static int kset_add(kset *ks, krec *r, int hold_version)
{
    kent e;
    if (krec_serialise(r, &ks->S))
        return -1;
    e.off = 0;
    e.len = r->name.len;
    e.type = r->type;
    e.expire = r->expire;
    e.n = r->ne;
    e.hash = XXH3_64bits(ks->S.p, ks->S.len);
    int version = r->name.len == VKEY_LEN &&
                  memcmp(r->name.p, VKEY, VKEY_LEN) == 0;
    if (version && hold_version && ks->n == 0) {
        ks->held = 1;
        ks->heldk = e;
        ks->heldS.len = 0;
        return tb_put(&ks->heldS, ks->S.p, ks->S.len);
    }
    if (ks->held && bytes_cmp(r->name.p, r->name.len, VKEY, VKEY_LEN) > 0 &&
        kset_unhold(ks))
        return -1;
    return kset_push(ks, &e, r->name.p, &ks->S);
}

static int kset_finish(kset *ks)
{
    if (kset_unhold(ks))
        return -1;
    if (ks->against && ks->ai < ks->against->n) {
        const kent *x = &ks->against->k[ks->ai];
        diff_note(ks, ks->against->names.p + x->off, x->len,
                  "only in the file");
    }
    ks->digest = XXH3_64bits_digest(ks->h);
    return 0;
}

/* ------------------------------------- the file's keyspace, from export */

typedef struct freader {
    krec cur;
    xs_img *img;      /* the stream being read (cur.type 'x')            */
    kset *ks;
    splitter sp;
    progress pg;
    uint64_t bytes;
    int err;          /* SPLIT_BAD / SPLIT_NOMEM */
} freader;

/* A stream's record: its body into cur.data (cli_xstream.c). */
static int fr_stream_body(freader *r)
{
    xs_buf b = { NULL, 0, 0 };
    int rc = xs_body(r->img, &b);
    r->cur.data.len = 0;
    r->cur.ne = 0;
    if (rc == 0)
        rc = tb_put(&r->cur.data, b.p, b.len) ? -2 : 0;
    r->cur.ne = 0;
    xs_buf_free(&b);
    xs_free(r->img);
    r->img = NULL;
    return rc;
}

static int fr_finish(freader *r)
{
    if (!r->cur.open)
        return 0;
    r->cur.open = 0;
    if (r->cur.type == 'x' && fr_stream_body(r))
        return SPLIT_NOMEM;
    return kset_add(r->ks, &r->cur, 1) ? SPLIT_NOMEM : 0;
}

/* A stream command of an export: the key is argv[2] for XGROUP. */
static int fr_stream(freader *r, const frame *f)
{
    size_t ki = arg_is(f, 0, "XGROUP") ? 2 : 1;
    if (f->argc <= ki)
        return SPLIT_BAD;
    if (!r->cur.open || r->cur.type != 'x' ||
        bytes_cmp(f->argv[ki], f->lens[ki], r->cur.name.p, r->cur.name.len)) {
        int rc = fr_finish(r);
        if (rc)
            return rc;
        if (krec_start(&r->cur, f->argv[ki], f->lens[ki], 'x') ||
            !(r->img = xs_new()))
            return SPLIT_NOMEM;
    }
    int rc = xs_feed(r->img, f->argc, f->argv, f->lens);
    return rc == -2 ? SPLIT_NOMEM : rc ? SPLIT_BAD : 0;
}

/* Interpret one command of an export: the commands of one key are
 * consecutive (SET / HSET / ZADD / RPUSH / SADD, then HPEXPIREAT and
 * PEXPIREAT). */
static int fr_frame(void *ctx, const frame *f)
{
    freader *r = ctx;
    char type = 0;
    if (arg_is(f, 0, "MULTI") || arg_is(f, 0, "EXEC") ||
        arg_is(f, 0, "SELECT"))
        return 0;
    if (f->argc < 3)
        return SPLIT_BAD;
    if (xs_is_cmd(f->argv[0], f->lens[0]))
        return fr_stream(r, f);
    if (arg_is(f, 0, "SET"))
        type = 's';
    else if (arg_is(f, 0, "HSET"))
        type = 'h';
    else if (arg_is(f, 0, "ZADD"))
        type = 'z';
    else if (arg_is(f, 0, "RPUSH"))
        type = 'l';
    else if (arg_is(f, 0, "SADD"))
        type = 'S';
    const unsigned char *k = f->argv[1];
    size_t kn = f->lens[1];
    if (!r->cur.open || bytes_cmp(k, kn, r->cur.name.p, r->cur.name.len)) {
        int rc = fr_finish(r);
        if (rc)
            return rc;
        if (!type)
            return SPLIT_BAD; /* an expiry for a key not written */
        if (krec_start(&r->cur, k, kn, type))
            return SPLIT_NOMEM;
    } else if (type && type != r->cur.type) {
        return SPLIT_BAD;
    }
    if (type == 's') {
        r->cur.ne = 0;
        r->cur.data.len = 0;
        if (f->argc != 3)
            return SPLIT_BAD;
        return krec_elem(&r->cur, f->argv[2], f->lens[2], NULL, 0)
                   ? 0 : SPLIT_NOMEM;
    }
    if (type == 'h' || type == 'z') {
        if (f->argc % 2)
            return SPLIT_BAD;
        for (size_t i = 2; i < f->argc; i += 2) {
            elem *x;
            if (type == 'h') {
                x = krec_elem(&r->cur, f->argv[i], f->lens[i],
                              f->argv[i + 1], f->lens[i + 1]);
                if (!x)
                    return SPLIT_NOMEM;
            } else {
                double s;
                if (parse_score(f->argv[i], f->lens[i], &s))
                    return SPLIT_BAD;
                if (!(x = krec_elem(&r->cur, f->argv[i + 1], f->lens[i + 1],
                                    NULL, 0)))
                    return SPLIT_NOMEM;
                x->score = s;
            }
        }
        return 0;
    }
    if (type) {
        for (size_t i = 2; i < f->argc; i++)
            if (!krec_elem(&r->cur, f->argv[i], f->lens[i], NULL, 0))
                return SPLIT_NOMEM;
        return 0;
    }
    if (arg_is(f, 0, "PEXPIREAT") && f->argc == 3)
        return parse_i64(f->argv[2], f->lens[2], &r->cur.expire) ? SPLIT_BAD
                                                                 : 0;
    if (arg_is(f, 0, "HPEXPIREAT") && f->argc >= 6 && arg_is(f, 3, "FIELDS")
        && r->cur.type == 'h') {
        int64_t at;
        if (parse_i64(f->argv[2], f->lens[2], &at))
            return SPLIT_BAD;
        for (size_t i = 5; i < f->argc; i++)
            for (size_t j = 0; j < r->cur.ne; j++) {
                elem *x = &r->cur.e[j];
                if (!bytes_cmp(r->cur.data.p + x->a, x->an, f->argv[i],
                               f->lens[i]))
                    x->exp = at;
            }
        return 0;
    }
    return SPLIT_BAD;
}

static int fr_write(void *ctx, const void *p, size_t n)
{
    freader *r = ctx;
    r->bytes += n;
    prog_tick(&r->pg, r->bytes >> 20, "MiB read from the file");
    int rc = split_feed(&r->sp, p, n);
    if (rc) {
        r->err = rc < 0 ? rc : SPLIT_BAD;
        return 1;
    }
    return 0;
}

/*
 * The file's keyspace (with the queue selection) as per-key digests, from
 * one export. The rebuilt digest must equal the export's own: the check
 * that this reading of the stream is the library's. Returns 0 or an exit
 * status (reported).
 */
static int file_keyspace(emq_cli *c, const qsel *qs, kset *ks,
                         emq_transfer_summary *sum)
{
    freader r;
    emq_export_options o;
    int rc, ex = 0;
    memset(&r, 0, sizeof r);
    r.ks = ks;
    r.sp.fn = fr_frame;
    r.sp.ctx = &r;
    prog_start(&r.pg, "reading the file", 0);
    qsel_opts(qs, &o);
    rc = emq_export(c->db, &o, fr_write, &r, sum);
    prog_end(&r.pg);
    if (rc == EMQ_OK && !r.err && (r.err = fr_finish(&r)) == 0 &&
        kset_finish(ks))
        r.err = SPLIT_NOMEM;
    if (r.err == SPLIT_NOMEM)
        ex = nomem(c);
    else if (r.err || (rc == EMQ_OK && r.sp.buf.len != r.sp.pos))
        ex = emq_cli_fail(c, EMQ_EINTERNAL, "the export stream could not "
                                            "be read back");
    else if (rc != EMQ_OK)
        ex = emq_cli_fail(c, rc, NULL);
    else if (ks->digest != sum->digest || ks->n != sum->keys)
        ex = emq_cli_fail(c, EMQ_EINTERNAL, "the export stream and its "
                                            "digest disagree");
    split_free(&r.sp);
    krec_free(&r.cur);
    xs_free(r.img);
    return ex;
}


/* ------------------------------------------------------------ the server */

typedef struct srv {
    redisContext *c;
    const char *spec;
    int pexpiretime;  /* PEXPIRETIME (Redis 7.0, Valkey 7.2)               */
    int hpexpiretime; /* HPEXPIRETIME / HPEXPIREAT (Redis 7.4, Valkey 9.0)  */
    int hpexpireat;
    int unlink_ok;
} srv;

static int srv_fail(emq_cli *c, srv *s, const char *what)
{
    char msg[800];
    snprintf(msg, sizeof msg, "%s: %s%s%s", s->spec, what,
             s->c && s->c->errstr[0] ? ": " : "",
             s->c ? s->c->errstr : "");
    return emq_cli_fail(c, EMQ_EIO, msg);
}

/* An error reply of the server, with the key it concerned. */
static int srv_refused(emq_cli *c, srv *s, const char *err, const void *key,
                       size_t kn)
{
    char k[200] = "";
    if (key)
        show_into(k, sizeof k, key, kn);
    return xfail(c, EMQ_EXIT_ERROR, "server", "%s refused: %s%s%s", s->spec,
                 err, key ? " (key " : "", key ? k : "");
}

/* Send a command of (at most 8) C-string arguments and read its reply;
 * NULL on an I/O failure. */
static redisReply *srv_cmdz(srv *s, int argc, const char **argv)
{
    size_t lens[8];
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    return redisCommandArgv(s->c, argc, argv, lens);
}

static redisReply *srv_get(srv *s)
{
    void *r = NULL;
    if (redisGetReply(s->c, &r) != REDIS_OK)
        return NULL;
    return r;
}

/* The first error inside a reply (EXEC answers an array), or NULL. */
static const redisReply *reply_error(const redisReply *r)
{
    if (r->type == REDIS_REPLY_ERROR)
        return r;
    if (r->type == REDIS_REPLY_ARRAY)
        for (size_t i = 0; i < r->elements; i++) {
            const redisReply *e = reply_error(r->element[i]);
            if (e)
                return e;
        }
    return NULL;
}

static void srv_close(srv *s)
{
    if (s->c)
        redisFree(s->c);
    s->c = NULL;
}

/* Connect to HOST:PORT, [V6]:PORT, HOST (port 6379) or a unix socket path;
 * AUTH with $REDISCLI_AUTH when set; probe the commands we may use. */
static int srv_open(emq_cli *c, const char *opt, const char *spec, srv *s)
{
    char host[256];
    long port = 6379;
    const char *colon = NULL;
    struct timeval tv = { 10, 0 };
    memset(s, 0, sizeof *s);
    s->spec = spec;
    if (!spec || !spec[0])
        return emq_cli_usage(c, "%s HOST:PORT is required", opt);
    if (spec[0] == '/') {
        s->c = redisConnectUnixWithTimeout(spec, tv);
    } else {
        const char *h = spec, *end;
        if (spec[0] == '[') {
            h = spec + 1;
            end = strchr(h, ']');
            if (!end || (end[1] && end[1] != ':'))
                return emq_cli_usage(c, "%s must be HOST:PORT, not '%s'",
                                     opt, spec);
            colon = end[1] ? end + 1 : NULL;
        } else {
            colon = strrchr(spec, ':');
            end = colon ? colon : spec + strlen(spec);
        }
        if ((size_t)(end - h) >= sizeof host || end == h)
            return emq_cli_usage(c, "%s must be HOST:PORT, not '%s'", opt,
                                 spec);
        memcpy(host, h, (size_t)(end - h));
        host[end - h] = '\0';
        if (colon) {
            char *e;
            errno = 0;
            port = strtol(colon + 1, &e, 10);
            if (!colon[1] || *e || errno || port < 1 || port > 65535)
                return emq_cli_usage(c, "%s must be HOST:PORT, not '%s'",
                                     opt, spec);
        }
        s->c = redisConnectWithTimeout(host, (int)port, tv);
    }
    if (!s->c || s->c->err)
        return srv_fail(c, s, "cannot connect");
    struct timeval op = { 600, 0 };
    redisSetTimeout(s->c, op);
    const char *pw = getenv("REDISCLI_AUTH");
    if (pw && pw[0]) {
        const char *av[2] = { "AUTH", pw };
        redisReply *r = srv_cmdz(s, 2, av);
        if (!r)
            return srv_fail(c, s, "AUTH");
        int bad = r->type == REDIS_REPLY_ERROR;
        if (bad)
            xfail(c, EMQ_EXIT_ERROR, "server", "%s: AUTH refused: %s",
                  spec, r->str);
        freeReplyObject(r);
        if (bad)
            return EMQ_EXIT_ERROR;
    }
    const char *av[6] = { "COMMAND", "INFO", "PEXPIRETIME", "HPEXPIRETIME",
                          "HPEXPIREAT", "UNLINK" };
    redisReply *r = srv_cmdz(s, 6, av);
    if (!r)
        return srv_fail(c, s, "COMMAND INFO");
    if (r->type == REDIS_REPLY_ERROR) {
        int ex = srv_refused(c, s, r->str, NULL, 0);
        freeReplyObject(r);
        return ex;
    }
    int *has[4] = { &s->pexpiretime, &s->hpexpiretime, &s->hpexpireat,
                    &s->unlink_ok };
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements &&
                       i < 4; i++)
        *has[i] = r->element[i]->type == REDIS_REPLY_ARRAY &&
                  r->element[i]->elements > 0;
    freeReplyObject(r);
    return 0;
}

/* --------------------------------------------------------------- names */

typedef struct nlist {
    tbuf data;
    size_t *off;  /* pairs: offset, length */
    size_t n, cap;
    bkey *v;      /* after nl_sort: sorted, unique */
    size_t nv;
} nlist;

static void nl_free(nlist *l)
{
    tb_free(&l->data);
    free(l->off);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int nl_add(nlist *l, const void *p, size_t n)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        size_t *o = realloc(l->off, 2 * cap * sizeof *o);
        if (!o)
            return -1;
        l->off = o;
        l->cap = cap;
    }
    l->off[2 * l->n] = l->data.len;
    l->off[2 * l->n + 1] = n;
    l->n++;
    return tb_put(&l->data, p, n);
}

static int nl_sort(nlist *l)
{
    free(l->v);
    l->nv = 0;
    if (!(l->v = malloc((l->n ? l->n : 1) * sizeof *l->v)))
        return -1;
    for (size_t i = 0; i < l->n; i++) {
        l->v[i].p = l->data.p + l->off[2 * i];
        l->v[i].n = l->off[2 * i + 1];
    }
    qsort(l->v, l->n, sizeof *l->v, cmp_bkey);
    for (size_t i = 0; i < l->n; i++)
        if (l->nv == 0 || cmp_bkey(&l->v[l->nv - 1], &l->v[i]) != 0)
            l->v[l->nv++] = l->v[i];
    return 0;
}

/* SCAN the server with `match`, adding the selected names (duplicates are
 * possible: nl_sort removes them). Returns 0 or an exit status. */
static int srv_scan(emq_cli *c, srv *s, const char *match, const qsel *qs,
                    nlist *out)
{
    char cursor[32] = "0";
    do {
        const char *av[6] = { "SCAN", cursor, "MATCH", match, "COUNT",
                              "1000" };
        redisReply *r = srv_cmdz(s, 6, av);
        if (!r)
            return srv_fail(c, s, "SCAN");
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[0]->type != REDIS_REPLY_STRING ||
            r->element[0]->len >= sizeof cursor ||
            r->element[1]->type != REDIS_REPLY_ARRAY) {
            int ex = srv_refused(c, s, r->type == REDIS_REPLY_ERROR ? r->str
                                       : "SCAN answered an unexpected reply",
                                 NULL, 0);
            freeReplyObject(r);
            return ex;
        }
        memcpy(cursor, r->element[0]->str, r->element[0]->len);
        cursor[r->element[0]->len] = '\0';
        for (size_t i = 0; i < r->element[1]->elements; i++) {
            const redisReply *k = r->element[1]->element[i];
            if (k->type != REDIS_REPLY_STRING)
                continue;
            if ((!qs || key_selected(qs, (const unsigned char *)k->str,
                                     k->len)) &&
                nl_add(out, k->str, k->len)) {
                freeReplyObject(r);
                return nomem(c);
            }
        }
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
    return 0;
}

/* Add the server's keys of the listed queues (unsorted). */
static int srv_queue_keys(emq_cli *c, srv *s, const qsel *qs, nlist *out)
{
    int ex = 0;
    for (size_t i = 0; i < qs->n && !ex; i++) {
        char m[300];
        snprintf(m, sizeof m, "emq:{%s}:*", qs->q[i]);
        ex = srv_scan(c, s, m, qs, out);
    }
    return ex;
}

/* The EchoMQ keys of the selection on the server, sorted: every emq:… and
 * {emq}:… key, or the version key and the keys of the listed queues. */
static int srv_names(emq_cli *c, srv *s, const qsel *qs, nlist *out)
{
    int ex;
    if (!qs->n) {
        if ((ex = srv_scan(c, s, "emq:*", qs, out)) ||
            (ex = srv_scan(c, s, "{emq}:*", qs, out)))
            return ex;
    } else if ((ex = srv_queue_keys(c, s, qs, out)) ||
               (ex = srv_scan(c, s, VKEY, qs, out))) {
        return ex;
    }
    return nl_sort(out) ? nomem(c) : 0;
}

/* --------------------------------------------------- reading the keys */

/* Receives each key read: type ('s' 'h' 'l' 'S' 'z'), absolute expiry or
 * -1, the value reply, and for hashes the field expiries (or NULL). */
typedef int (*visit_fn)(emq_cli *c, void *ctx, const bkey *k, char type,
                        int64_t expire, const redisReply *v,
                        const redisReply *fx);

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char type_of(const redisReply *t)
{
    if (t->type != REDIS_REPLY_STATUS)
        return '?';
    if (!strcmp(t->str, "string")) return 's';
    if (!strcmp(t->str, "hash")) return 'h';
    if (!strcmp(t->str, "list")) return 'l';
    if (!strcmp(t->str, "set")) return 'S';
    if (!strcmp(t->str, "zset")) return 'z';
    if (!strcmp(t->str, "stream")) return 'x';
    if (!strcmp(t->str, "none")) return 0;
    return '?';
}

/*
 * Read every named key, KEYBATCH at a time, in three pipelined rounds:
 * TYPE and PEXPIRETIME (PTTL on servers without it), then the value by
 * type, then the field expiries of hashes where the server has them.
 * Keys that vanished in between are skipped. Returns 0 or an exit status.
 */
static int srv_read(emq_cli *c, srv *s, const bkey *names, size_t n,
                    visit_fn fn, void *ctx, progress *pg)
{
    redisReply *t[KEYBATCH], *e[KEYBATCH], *v[KEYBATCH], *fx[KEYBATCH];
    char ty[KEYBATCH];
    int ex = 0;
    for (size_t b = 0; b < n && !ex; b += KEYBATCH) {
        size_t k = n - b < KEYBATCH ? n - b : KEYBATCH;
        memset(t, 0, sizeof t);
        memset(e, 0, sizeof e);
        memset(v, 0, sizeof v);
        memset(fx, 0, sizeof fx);
        int64_t now = wall_ms();
        for (size_t i = 0; i < k; i++) {
            const char *av[2] = { "TYPE", (const char *)names[b + i].p };
            size_t al[2] = { 4, names[b + i].n };
            redisAppendCommandArgv(s->c, 2, av, al);
            av[0] = s->pexpiretime ? "PEXPIRETIME" : "PTTL";
            al[0] = strlen(av[0]);
            redisAppendCommandArgv(s->c, 2, av, al);
        }
        for (size_t i = 0; i < k && !ex; i++)
            if (!(t[i] = srv_get(s)) || !(e[i] = srv_get(s)))
                ex = srv_fail(c, s, "reading the keys");
        for (size_t i = 0; i < k && !ex; i++) {
            ty[i] = type_of(t[i]);
            if (e[i]->type != REDIS_REPLY_INTEGER || ty[i] == '?') {
                char msg[120];
                snprintf(msg, sizeof msg, "%s",
                         t[i]->type == REDIS_REPLY_ERROR ? t[i]->str
                         : e[i]->type == REDIS_REPLY_ERROR ? e[i]->str
                         : "a key of a type EchoMQ files do not hold");
                if (ty[i] == '?' && t[i]->type == REDIS_REPLY_STATUS) {
                    char kk[200];
                    show_into(kk, sizeof kk, names[b + i].p, names[b + i].n);
                    ex = xfail(c, EMQ_EXIT_NOTBUILT, "not_supported",
                               "%s: key %s is a %s: emqlite files hold "
                               "strings, hashes, lists, sets, sorted sets "
                               "and streams",
                               s->spec, kk, t[i]->str);
                } else {
                    ex = srv_refused(c, s, msg, names[b + i].p,
                                     names[b + i].n);
                }
            }
        }
        for (size_t i = 0; i < k && !ex; i++) {
            const char *av[5] = { NULL, (const char *)names[b + i].p, "0",
                                  "-1", "WITHSCORES" };
            size_t al[5] = { 0, names[b + i].n, 1, 2, 10 };
            int ac = 2;
            switch (ty[i]) {
            case 's': av[0] = "GET"; break;
            case 'h': av[0] = "HGETALL"; break;
            case 'l': av[0] = "LRANGE"; ac = 4; break;
            case 'S': av[0] = "SMEMBERS"; break;
            case 'z': av[0] = "ZRANGE"; ac = 5; break;
            case 'x': {
                /* a stream: everything, groups and PEL (cli_xstream.c) */
                const char *xv[6] = { "XINFO", "STREAM",
                                      (const char *)names[b + i].p, "FULL",
                                      "COUNT", "0" };
                size_t xl[6] = { 5, 6, names[b + i].n, 4, 5, 1 };
                redisAppendCommandArgv(s->c, 6, xv, xl);
                continue;
            }
            default: continue;
            }
            al[0] = strlen(av[0]);
            redisAppendCommandArgv(s->c, ac, av, al);
        }
        for (size_t i = 0; i < k && !ex; i++)
            if (ty[i] && !(v[i] = srv_get(s)))
                ex = srv_fail(c, s, "reading the keys");
        if (s->hpexpiretime && !ex) {
            for (size_t i = 0; i < k && !ex; i++) {
                if (ty[i] != 'h' || v[i]->type != REDIS_REPLY_ARRAY ||
                    v[i]->elements < 2)
                    continue;
                size_t nf = v[i]->elements / 2, ac = 4 + nf;
                const char **av = malloc(ac * sizeof *av);
                size_t *al = malloc(ac * sizeof *al);
                char num[24];
                if (!av || !al) {
                    free(av);
                    free(al);
                    ex = nomem(c);
                    break;
                }
                snprintf(num, sizeof num, "%zu", nf);
                av[0] = "HPEXPIRETIME";
                av[1] = (const char *)names[b + i].p;
                av[2] = "FIELDS";
                av[3] = num;
                al[0] = 12;
                al[1] = names[b + i].n;
                al[2] = 6;
                al[3] = strlen(num);
                for (size_t j = 0; j < nf; j++) {
                    av[4 + j] = v[i]->element[2 * j]->str;
                    al[4 + j] = v[i]->element[2 * j]->len;
                }
                redisAppendCommandArgv(s->c, (int)ac, av, al);
                free(av);
                free(al);
                fx[i] = (redisReply *)1; /* marks a reply to read */
            }
            for (size_t i = 0; i < k && !ex; i++)
                if (fx[i] && !(fx[i] = srv_get(s)))
                    ex = srv_fail(c, s, "reading field expiries");
        }
        for (size_t i = 0; i < k && !ex; i++) {
            if (!ty[i])
                continue;
            int64_t exp = e[i]->integer;
            if (exp == -2)
                continue; /* gone since TYPE */
            if (exp >= 0 && !s->pexpiretime)
                exp += now;
            if (exp < 0)
                exp = -1;
            const redisReply *err = reply_error(v[i]);
            if (err) {
                ex = srv_refused(c, s, err->str, names[b + i].p,
                                 names[b + i].n);
                break;
            }
            if (ty[i] == 's' ? v[i]->type != REDIS_REPLY_STRING
                             : v[i]->type != REDIS_REPLY_ARRAY ||
                                   v[i]->elements == 0)
                continue; /* emptied or replaced since TYPE */
            ex = fn(c, ctx, &names[b + i], ty[i], exp, v[i],
                    fx[i] && fx[i]->type == REDIS_REPLY_ARRAY ? fx[i] : NULL);
        }
        for (size_t i = 0; i < k; i++) {
            if (t[i])
                freeReplyObject(t[i]);
            if (e[i])
                freeReplyObject(e[i]);
            if (v[i])
                freeReplyObject(v[i]);
            if (fx[i] && fx[i] != (redisReply *)1)
                freeReplyObject(fx[i]);
        }
        prog_tick(pg, b + k, "keys");
    }
    return ex;
}

/* The field expiry of field j from an HPEXPIRETIME reply, or -1. */
static int64_t field_exp(const redisReply *fx, size_t j)
{
    if (!fx || j >= fx->elements || fx->element[j]->type !=
                                        REDIS_REPLY_INTEGER)
        return -1;
    return fx->element[j]->integer >= 0 ? fx->element[j]->integer : -1;
}

/* hiredis replies as cli_xstream.c's nodes. */
static void rr_node(const redisReply *r, xs_node *o)
{
    memset(o, 0, sizeof *o);
    o->self = r;
    switch (r->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS: o->kind = 's'; break;
    case REDIS_REPLY_INTEGER: o->kind = 'i'; break;
    case REDIS_REPLY_ARRAY: o->kind = 'a'; break;
    case REDIS_REPLY_NIL: o->kind = 'n'; break;
    default: o->kind = '?'; break;
    }
    o->str = r->str;
    o->len = r->len;
    o->integer = r->integer;
    o->n = r->elements;
}

static void rr_child(const void *node, size_t i, xs_node *out)
{
    rr_node(((const redisReply *)node)->element[i], out);
}

/* A stream read from the server (its XINFO STREAM FULL reply): its digest
 * body into `body`, and (cmds not NULL) the commands an export writes
 * for key k into `cmds` with their count. 0, -1 (shape) or -2 (memory). */
static int stream_image(const redisReply *v, xs_buf *body, xs_buf *cmds,
                        const void *k, size_t kn, uint64_t *ncmd)
{
    xs_img *x = xs_new();
    xs_node root;
    int rc;
    if (!x)
        return -2;
    rr_node(v, &root);
    rc = xs_from_xinfo(x, &root, rr_child);
    if (rc == 0 && body)
        rc = xs_body(x, body);
    if (rc == 0 && cmds)
        rc = xs_commands(x, k, kn, cmds, ncmd);
    xs_free(x);
    return rc;
}

/* A key set being filled from the server's replies. */
typedef struct recctx {
    krec cur;
    kset *ks;
} recctx;

/* Build a key's digest record from the server's replies. */
static int vis_record(emq_cli *c, void *ctx, const bkey *k, char type,
                      int64_t expire, const redisReply *v,
                      const redisReply *fx)
{
    recctx *r = ctx;
    krec *cur = &r->cur;
    if (krec_start(cur, k->p, k->n, type))
        return nomem(c);
    cur->expire = expire;
    if (type == 'x') {
        xs_buf b = { NULL, 0, 0 };
        int rc = stream_image(v, &b, NULL, NULL, 0, NULL);
        if (rc == 0)
            rc = tb_put(&cur->data, b.p, b.len) ? -2 : 0;
        xs_buf_free(&b);
        if (rc == -1)
            return xfail(c, EMQ_EXIT_ERROR, "server", "an XINFO STREAM FULL "
                         "reply of an unexpected shape");
        return rc || kset_add(r->ks, cur, 0) ? nomem(c) : 0;
    }
    if (type == 's')
        return krec_elem(cur, v->str, v->len, NULL, 0) &&
                       !kset_add(r->ks, cur, 0) ? 0 : nomem(c);
    size_t step = type == 'h' || type == 'z' ? 2 : 1;
    for (size_t j = 0; j + step - 1 < v->elements; j += step) {
        const redisReply *a = v->element[j];
        elem *x;
        if (type == 'h') {
            const redisReply *b = v->element[j + 1];
            if (!(x = krec_elem(cur, a->str, a->len, b->str, b->len)))
                return nomem(c);
            x->exp = field_exp(fx, j / 2);
        } else {
            if (!(x = krec_elem(cur, a->str, a->len, NULL, 0)))
                return nomem(c);
            if (type == 'z' &&
                parse_score(v->element[j + 1]->str, v->element[j + 1]->len,
                            &x->score))
                return xfail(c, EMQ_EXIT_ERROR, "server", "a score that is "
                             "not a number in a sorted set");
        }
    }
    return kset_add(r->ks, cur, 0) ? nomem(c) : 0;
}

/* The server's keyspace (the selection) as per-key digests. */
static int server_keyspace(emq_cli *c, srv *s, const qsel *qs, kset *ks)
{
    nlist nl;
    progress pg;
    recctx r;
    int ex;
    memset(&nl, 0, sizeof nl);
    memset(&r, 0, sizeof r);
    r.ks = ks;
    if ((ex = srv_names(c, s, qs, &nl)))
        goto done;
    prog_start(&pg, "reading the server", nl.nv);
    ex = srv_read(c, s, nl.v, nl.nv, vis_record, &r, &pg);
    prog_end(&pg);
    if (!ex && kset_finish(ks))
        ex = nomem(c);
done:
    krec_free(&r.cur);
    nl_free(&nl);
    return ex;
}

/* ---------------------------------------------------------------- verify */

int emq_cli_verify(emq_cli *c, int argc, char **argv)
{
    const char *to = NULL;
    emq_cli_opt opts[] = { { "--against", 1, &to }, { NULL, 0, NULL } };
    qsel qs = { NULL, 0 };
    int ex;
    srv s;
    kset fk, sk;
    emq_transfer_summary sum;

    memset(&s, 0, sizeof s);
    memset(&fk, 0, sizeof fk);
    memset(&sk, 0, sizeof sk);
    if ((ex = parse_sel(c, argc, argv, opts, &qs, "--against")) >= 0)
        goto done;
    if (kset_init(&fk, 1) || kset_init(&sk, 0)) {
        ex = nomem(c);
        goto done;
    }
    if ((ex = open_existing(c)) || (ex = srv_open(c, "--against", to, &s)) ||
        (ex = file_keyspace(c, &qs, &fk, &sum)))
        goto done;
    sk.against = &fk; /* the server's keys are compared as they are read */
    if ((ex = server_keyspace(c, &s, &qs, &sk)))
        goto done;
    int differ = sk.differ;
    if (!differ && fk.digest != sk.digest) {
        /* Same keys and records but another digest cannot happen; say so
         * rather than claim equality. */
        snprintf(sk.why, sizeof sk.why, "the digests differ");
        differ = 1;
    }
    const tbuf *key = &sk.dkey;
    const char *why = sk.why;
    if (c->json) {
        printf("{\"against\":");
        emq_cli_json_str(stdout, to);
        printf(",\"equal\":%s,\"file\":{\"keys\":%zu,\"digest\":",
               differ ? "false" : "true", fk.n);
        put_digest(stdout, fk.digest);
        printf("},\"server\":{\"keys\":%zu,\"digest\":", sk.n);
        put_digest(stdout, sk.digest);
        putchar('}');
        if (differ) {
            fputs(",\"first\":{\"key\":", stdout);
            emq_cli_json_bytes(stdout, key->p ? (void *)key->p : "",
                               key->len);
            fputs(",\"reason\":", stdout);
            emq_cli_json_str(stdout, why);
            putchar('}');
        }
        puts("}");
    } else if (!differ) {
        printf("equal: %zu keys, digest %016llx\n", fk.n,
               (unsigned long long)fk.digest);
    } else {
        printf("differ: first differing key ");
        show_bytes(stdout, key->p, key->len);
        printf(": %s\nfile:   %zu keys, digest %016llx\nserver: %zu keys, "
               "digest %016llx\n", why, fk.n, (unsigned long long)fk.digest,
               sk.n, (unsigned long long)sk.digest);
    }
    if (differ) {
        fputs("emqlite: differ: the file and ", stderr);
        fputs(to, stderr);
        fputs(" hold different keyspaces\n", stderr);
        ex = EXIT_DIFFER;
    } else {
        ex = EMQ_EXIT_OK;
    }
done:
    kset_free(&fk);
    kset_free(&sk);
    srv_close(&s);
    free(qs.q);
    return ex;
}

/* ------------------------------------------------------------------ pull */

typedef struct puller {
    tbuf out;
    uint64_t commands;
    recctx rec;   /* the digest of what was read */
} puller;

/* Start a command of the pulled stream: the header of `argc` arguments,
 * then `cmd` and the key. */
static int pw_cmd(puller *p, size_t argc, const char *cmd, const bkey *k)
{
    p->commands++;
    return tb_head(&p->out, '*', argc) || tb_bulk_s(&p->out, cmd) ||
           tb_bulk(&p->out, k->p, k->n);
}

/* Write `cmd key` followed by the elements of array reply v (from `first`,
 * `step` apart, `per` at a time each taking `step` replies), in commands
 * of at most CHUNK elements. For ZADD the pairs are swapped (member, score
 * from ZRANGE; score, member in ZADD). */
static int pw_chunks(puller *p, const char *cmd, const bkey *k,
                     const redisReply *v, size_t step, int swap)
{
    size_t n = v->elements / step;
    for (size_t i = 0; i < n; i += CHUNK) {
        size_t m = n - i < CHUNK ? n - i : CHUNK;
        if (pw_cmd(p, 2 + m * step, cmd, k))
            return -1;
        for (size_t j = i; j < i + m; j++)
            for (size_t u = 0; u < step; u++) {
                const redisReply *e =
                    v->element[step * j + (swap ? step - 1 - u : u)];
                if (tb_bulk(&p->out, e->str, e->len))
                    return -1;
            }
    }
    return 0;
}

static int cmp_reply_str(const void *a, const void *b)
{
    const redisReply *x = *(redisReply *const *)a, *y = *(redisReply *const *)b;
    return bytes_cmp(x->str, x->len, y->str, y->len);
}

/* Turn a key read from the server into the commands an export writes. */
static int vis_pull(emq_cli *c, void *ctx, const bkey *k, char type,
                    int64_t expire, const redisReply *v,
                    const redisReply *fx)
{
    puller *p = ctx;
    int ex;
    bkey q, rest;
    if (k->n == VKEY_LEN && memcmp(k->p, VKEY, VKEY_LEN) == 0)
        return 0; /* checked and written first */
    /* The digest of the pulled selection (reserve keys aside). */
    if (key_queue(k->p, k->n, &q, &rest) &&
        (ex = vis_record(c, &p->rec, k, type, expire, v, fx)))
        return ex;
    int bad = 0;
    switch (type) {
    case 's':
        bad = pw_cmd(p, 3, "SET", k) || tb_bulk(&p->out, v->str, v->len);
        break;
    case 'h':
        bad = pw_chunks(p, "HSET", k, v, 2, 0);
        for (size_t j = 0; !bad && j < v->elements / 2; j++) {
            int64_t at = field_exp(fx, j);
            if (at < 0)
                continue;
            const redisReply *f = v->element[2 * j];
            bad = pw_cmd(p, 6, "HPEXPIREAT", k) ||
                  tb_bulk_i64(&p->out, at) || tb_bulk_s(&p->out, "FIELDS") ||
                  tb_bulk_s(&p->out, "1") || tb_bulk(&p->out, f->str, f->len);
        }
        break;
    case 'l':
        bad = pw_chunks(p, "RPUSH", k, v, 1, 0);
        break;
    case 'S':
        /* bytewise, as an export writes sets */
        qsort(v->element, v->elements, sizeof *v->element, cmp_reply_str);
        bad = pw_chunks(p, "SADD", k, v, 1, 0);
        break;
    case 'z':
        bad = pw_chunks(p, "ZADD", k, v, 2, 1);
        break;
    case 'x': {
        xs_buf b = { NULL, 0, 0 };
        uint64_t n = 0;
        int rc = stream_image(v, NULL, &b, k->p, k->n, &n);
        bad = rc != 0 || tb_put(&p->out, b.p, b.len);
        p->commands += n;
        xs_buf_free(&b);
        break;
    }
    }
    if (!bad && expire >= 0) {
        bad = pw_cmd(p, 3, "PEXPIREAT", k) || tb_bulk_i64(&p->out, expire);
    }
    return bad ? nomem(c) : 0;
}

/* The server's version key: 0 absent, 1 equal to ours, or an exit status
 * (reported) for another value. */
static int srv_version(emq_cli *c, srv *s, int *present)
{
    const char *av[2] = { "GET", VKEY };
    redisReply *r = srv_cmdz(s, 2, av);
    int ex = 0;
    *present = 0;
    if (!r)
        return srv_fail(c, s, "GET " VKEY);
    if (r->type == REDIS_REPLY_STRING) {
        *present = 1;
        if (r->len != sizeof EMQ_WIRE - 1 ||
            memcmp(r->str, EMQ_WIRE, r->len) != 0) {
            char found[100];
            show_into(found, sizeof found, r->str, r->len);
            char msg[400];
            snprintf(msg, sizeof msg, "%s holds " VKEY " '%s'; this emqlite "
                     "speaks " EMQ_WIRE ": nothing was transferred", s->spec,
                     found);
            ex = emq_cli_fail(c, EMQ_EWIRE, msg);
        }
    } else if (r->type != REDIS_REPLY_NIL) {
        ex = srv_refused(c, s, r->type == REDIS_REPLY_ERROR ? r->str
                               : VKEY " is not a string", VKEY, VKEY_LEN);
    }
    freeReplyObject(r);
    return ex;
}

int emq_cli_pull(emq_cli *c, int argc, char **argv)
{
    const char *from = NULL;
    emq_cli_opt opts[] = { { "--from", 1, &from }, { NULL, 0, NULL } };
    qsel qs = { NULL, 0 }, pulled = { NULL, 0 };
    int ex, rc, present;
    srv s;
    nlist nl;
    puller p;
    kset ks;
    char **fq = NULL;
    size_t nfq = 0;
    progress pg;
    emq_transfer_summary sum, fsum;

    memset(&s, 0, sizeof s);
    memset(&nl, 0, sizeof nl);
    memset(&p, 0, sizeof p);
    memset(&ks, 0, sizeof ks);
    if ((ex = parse_sel(c, argc, argv, opts, &qs, "--from")) >= 0)
        goto done;
    if (kset_init(&ks, 0)) {
        ex = nomem(c);
        goto done;
    }
    p.rec.ks = &ks;
    if ((ex = emq_cli_open(c)) || (ex = srv_open(c, "--from", from, &s)) ||
        (ex = srv_version(c, &s, &present)) ||
        (ex = srv_names(c, &s, &qs, &nl)))
        goto done;
    if (!present)
        fprintf(stderr, "emqlite: note: %s holds no " VKEY "; its keys are "
                "taken as " EMQ_WIRE "\n", from);
    /* The queues found, which the file must not hold yet. */
    if (!(pulled.q = calloc(nl.nv + 1, sizeof *pulled.q)) ||
        (rc = emq_queues(c->db, &fq, &nfq)) == EMQ_ENOMEM) {
        ex = nomem(c);
        goto done;
    }
    if (rc != EMQ_OK) {
        ex = emq_cli_fail(c, rc, NULL);
        goto done;
    }
    for (size_t i = 0; i < nl.nv; i++) {
        bkey q, rest;
        if (!key_queue(nl.v[i].p, nl.v[i].n, &q, &rest))
            continue;
        if (pulled.n && !bytes_cmp(pulled.q[pulled.n - 1],
                                   strlen(pulled.q[pulled.n - 1]), q.p, q.n))
            continue;
        char *name = strndup((const char *)q.p, q.n);
        if (!name) {
            ex = nomem(c);
            goto done;
        }
        pulled.q[pulled.n++] = name;
        if (find_queue((const char *const *)fq, nfq, &q) >= 0) {
            ex = xfail(c, EMQ_EXIT_DUPLICATE, "file_not_empty",
                       "%s already holds keys of queue '%s': pull into a new "
                       "file, or one without the pulled queues; nothing "
                       "changed", c->db_path, name);
            goto done;
        }
    }
    /* Names are sorted, so each queue's keys are consecutive: pulled.q is
     * sorted and unique. */
    if (pw_cmd(&p, 3, "SET", &vkey) || tb_bulk_s(&p.out, EMQ_WIRE)) {
        ex = nomem(c);
        goto done;
    }
    /* The version record takes its place in name order: after every emq:…
     * key, so it is added last. */
    prog_start(&pg, "pull", nl.nv);
    ex = srv_read(c, &s, nl.v, nl.nv, vis_pull, &p, &pg);
    prog_end(&pg);
    if (ex)
        goto done;
    {
        krec *cur = &p.rec.cur;
        if (krec_start(cur, VKEY, VKEY_LEN, 's') ||
            !krec_elem(cur, EMQ_WIRE, sizeof EMQ_WIRE - 1, NULL, 0) ||
            kset_add(&ks, cur, 0) || kset_finish(&ks)) {
            ex = nomem(c);
            goto done;
        }
    }
    if ((rc = emq_import(c->db, p.out.p, p.out.len, &sum)) != EMQ_OK) {
        ex = emq_cli_fail(c, rc, NULL);
        goto done;
    }
    /* The file's digest of the pulled queues must be the server's. */
    if (pulled.n) {
        emq_export_options o;
        qsel_opts(&pulled, &o);
        if ((rc = emq_digest(c->db, &o, &fsum)) != EMQ_OK) {
            ex = emq_cli_fail(c, rc, NULL);
            goto done;
        }
        if (fsum.digest != ks.digest) {
            ex = xfail(c, EXIT_DIFFER, "differ", "after the pull the file's "
                       "digest of the pulled queues is %016llx, the "
                       "server's %016llx", (unsigned long long)fsum.digest,
                       (unsigned long long)ks.digest);
            goto done;
        }
    }
    if (c->json) {
        fputs("{\"from\":", stdout);
        emq_cli_json_str(stdout, from);
        printf(",\"keys\":%zu,\"commands\":%llu,\"bytes\":%zu,\"digest\":",
               ks.n, (unsigned long long)p.commands, p.out.len);
        put_digest(stdout, ks.digest);
        fputs(",\"queues\":[", stdout);
        for (size_t i = 0; i < pulled.n; i++) {
            if (i)
                putchar(',');
            emq_cli_json_str(stdout, pulled.q[i]);
        }
        printf("],\"file\":{\"keys\":%llu,\"digest\":",
               (unsigned long long)sum.keys);
        put_digest(stdout, sum.digest);
        puts("}}");
    } else {
        printf("pulled %zu keys of %zu queue%s (%llu commands, %zu bytes) "
               "from %s, digest %016llx\nthe file holds %llu keys, digest "
               "%016llx\n", ks.n, pulled.n, pulled.n == 1 ? "" : "s",
               (unsigned long long)p.commands, p.out.len, from,
               (unsigned long long)ks.digest, (unsigned long long)sum.keys,
               (unsigned long long)sum.digest);
    }
    ex = EMQ_EXIT_OK;
done:
    if (pulled.q)
        for (size_t i = 0; i < pulled.n; i++)
            free((void *)pulled.q[i]);
    free(pulled.q);
    if (fq)
        emq_queues_free(fq, nfq);
    tb_free(&p.out);
    krec_free(&p.rec.cur);
    kset_free(&ks);
    nl_free(&nl);
    srv_close(&s);
    free(qs.q);
    return ex;
}

/* ------------------------------------------------------------------ push */

/* The figures push checks per queue: the four sets and the job rows. */
typedef struct qfig {
    int64_t set[4]; /* pending, active, schedule, dead */
    int64_t rows;
} qfig;

static const char *const set_suffix[4] = { "pending", "active", "schedule",
                                           "dead" };

typedef struct pusher {
    emq_cli *c;
    srv *s;
    splitter sp;
    progress pg;
    const char *const *q; /* the exported queues, sorted */
    size_t nq;
    qfig *fig;            /* per queue, from the stream */
    tbuf lastrow;
    long inflight;
    uint64_t sent, bytes, dropped;
    int ex;               /* an exit status once failed */
} pusher;

/* Read replies until at most `keep` commands are unanswered. The first
 * read flushes every command appended so far, so the server works on the
 * newest batch while the replies of the older one are read. */
static int push_drain(pusher *p, long keep)
{
    while (p->inflight > keep) {
        redisReply *r = srv_get(p->s);
        if (!r) {
            p->ex = srv_fail(p->c, p->s, "writing the stream");
            return 1;
        }
        p->inflight--;
        const redisReply *e = reply_error(r);
        if (e && !p->ex)
            p->ex = xfail(p->c, EMQ_EXIT_ERROR, "server", "%s refused a "
                          "command of the stream: %s; the target now holds "
                          "a partial copy", p->s->spec, e->str);
        freeReplyObject(r);
    }
    return p->ex != 0;
}

/* Count what a frame adds to the per-queue figures. */
static void push_count(pusher *p, const frame *f)
{
    bkey q, rest;
    long i;
    if (f->argc < 3 || !key_queue(f->argv[1], f->lens[1], &q, &rest) ||
        (i = find_queue(p->q, p->nq, &q)) < 0)
        return;
    if (arg_is(f, 0, "ZADD")) {
        for (int k = 0; k < 4; k++)
            if (rest.n == strlen(set_suffix[k]) &&
                memcmp(rest.p, set_suffix[k], rest.n) == 0)
                p->fig[i].set[k] += (int64_t)(f->argc - 2) / 2;
    } else if (arg_is(f, 0, "HSET") && rest.n == 4 + EMQ_ID_LEN &&
               memcmp(rest.p, "job:", 4) == 0 &&
               bytes_cmp(f->argv[1], f->lens[1], p->lastrow.p,
                         p->lastrow.len) != 0) {
        p->fig[i].rows++;
        p->lastrow.len = 0;
        tb_put(&p->lastrow, f->argv[1], f->lens[1]);
    }
}

static int push_frame(void *ctx, const frame *f)
{
    pusher *p = ctx;
    if (arg_is(f, 0, "HPEXPIREAT") && !p->s->hpexpireat) {
        p->dropped++; /* PROTOCOL.md §8.3.6: the engine floor */
        return 0;
    }
    push_count(p, f);
    if (redisAppendFormattedCommand(p->s->c, (const char *)f->p, f->len) !=
        REDIS_OK) {
        p->ex = srv_fail(p->c, p->s, "writing the stream");
        return 1;
    }
    p->inflight++;
    p->sent++;
    p->bytes += f->len;
    if (p->inflight >= 2 * INFLIGHT) {
        if (push_drain(p, INFLIGHT))
            return 1;
        prog_tick(&p->pg, p->sent, "commands");
    }
    return 0;
}

static int push_write(void *ctx, const void *b, size_t n)
{
    pusher *p = ctx;
    int rc = split_feed(&p->sp, b, n);
    if (rc && !p->ex)
        p->ex = rc == SPLIT_NOMEM ? nomem(p->c)
              : emq_cli_fail(p->c, EMQ_EINTERNAL, "the export stream could "
                                                  "not be cut into commands");
    return rc != 0;
}

/* Delete keys in pipelined batches (UNLINK where the server has it). */
static int srv_delete(emq_cli *c, srv *s, const bkey *k, size_t n)
{
    const char *cmd = s->unlink_ok ? "UNLINK" : "DEL";
    for (size_t b = 0; b < n; b += KEYBATCH) {
        size_t m = n - b < KEYBATCH ? n - b : KEYBATCH;
        for (size_t i = 0; i < m; i++) {
            const char *av[2] = { cmd, (const char *)k[b + i].p };
            size_t al[2] = { strlen(cmd), k[b + i].n };
            redisAppendCommandArgv(s->c, 2, av, al);
        }
        for (size_t i = 0; i < m; i++) {
            redisReply *r = srv_get(s);
            if (!r)
                return srv_fail(c, s, cmd);
            int bad = r->type == REDIS_REPLY_ERROR;
            int ex = bad ? srv_refused(c, s, r->str, k[b + i].p, k[b + i].n)
                         : 0;
            freeReplyObject(r);
            if (bad)
                return ex;
        }
    }
    return 0;
}

/* The server's figures for each queue: ZCARD of the four sets and the
 * number of job rows (emq:{q}:job:<id>, exactly). */
static int srv_figures(emq_cli *c, srv *s, const char *const *q, size_t nq,
                       qfig *fig)
{
    int ex;
    for (size_t i = 0; i < nq; i++) {
        char key[4][300];
        for (int k = 0; k < 4; k++) {
            snprintf(key[k], sizeof key[k], "emq:{%s}:%s", q[i],
                     set_suffix[k]);
            const char *av[2] = { "ZCARD", key[k] };
            size_t al[2] = { 5, strlen(key[k]) };
            redisAppendCommandArgv(s->c, 2, av, al);
        }
        for (int k = 0; k < 4; k++) {
            redisReply *r = srv_get(s);
            if (!r)
                return srv_fail(c, s, "ZCARD");
            int bad = r->type != REDIS_REPLY_INTEGER;
            ex = bad ? srv_refused(c, s, r->type == REDIS_REPLY_ERROR ? r->str
                                   : "ZCARD answered an unexpected reply",
                                   key[k], strlen(key[k])) : 0;
            fig[i].set[k] = bad ? 0 : r->integer;
            freeReplyObject(r);
            if (bad)
                return ex;
        }
        nlist nl;
        char m[300];
        memset(&nl, 0, sizeof nl);
        snprintf(m, sizeof m, "emq:{%s}:job:*", q[i]);
        if ((ex = srv_scan(c, s, m, NULL, &nl)) == 0 && nl_sort(&nl))
            ex = nomem(c);
        size_t plen = strlen(m) - 1;
        fig[i].rows = 0;
        for (size_t j = 0; !ex && j < nl.nv; j++)
            fig[i].rows += nl.v[j].n == plen + EMQ_ID_LEN;
        nl_free(&nl);
        if (ex)
            return ex;
    }
    return 0;
}

int emq_cli_push(emq_cli *c, int argc, char **argv)
{
    const char *to = NULL, *replace = NULL, *byslot = NULL;
    emq_cli_opt opts[] = { { "--to", 1, &to }, { "--replace", 0, &replace },
                           { "--by-slot", 0, &byslot }, { NULL, 0, NULL } };
    qsel qs = { NULL, 0 };
    int ex, rc, present;
    srv s;
    pusher p;
    nlist nl;
    char **fq = NULL;
    size_t nfq = 0;
    const char *const *q;
    size_t nq;
    qfig *there = NULL;
    emq_export_options o;
    emq_transfer_summary sum;
    double t0;

    memset(&s, 0, sizeof s);
    memset(&p, 0, sizeof p);
    memset(&nl, 0, sizeof nl);
    if ((ex = parse_sel(c, argc, argv, opts, &qs, "--to")) >= 0)
        goto done;
    if ((ex = open_existing(c)))
        goto done;
    if (qs.n) {
        q = qs.q;
        nq = qs.n;
    } else {
        if ((rc = emq_queues(c->db, &fq, &nfq)) != EMQ_OK) {
            ex = emq_cli_fail(c, rc, NULL);
            goto done;
        }
        q = (const char *const *)fq;
        nq = nfq;
    }
    if (!(p.fig = calloc(nq + 1, sizeof *p.fig)) ||
        !(there = calloc(nq + 1, sizeof *there))) {
        ex = nomem(c);
        goto done;
    }
    if ((ex = srv_open(c, "--to", to, &s)) ||
        (ex = srv_version(c, &s, &present)))
        goto done;
    /* The target must not hold keys of the exported queues, unless they
     * are to be replaced. */
    {
        qsel sel = { (const char **)q, nq };
        if ((ex = srv_queue_keys(c, &s, &sel, &nl)))
            goto done;
        if (nl_sort(&nl)) {
            ex = nomem(c);
            goto done;
        }
    }
    if (nl.nv && !replace) {
        bkey qq, rest;
        char shown[200];
        key_queue(nl.v[0].p, nl.v[0].n, &qq, &rest);
        show_into(shown, sizeof shown, nl.v[0].p, nl.v[0].n);
        ex = xfail(c, EMQ_EXIT_DUPLICATE, "target_not_empty",
                   "%s already holds %zu key%s of the exported queues (the "
                   "first: %s); nothing was written (--replace deletes them "
                   "first)", to, nl.nv, nl.nv == 1 ? "" : "s", shown);
        goto done;
    }
    if (nl.nv && (ex = srv_delete(c, &s, nl.v, nl.nv)))
        goto done;
    if (!present) {
        /* Claim the fence (PROTOCOL.md §5): SET NX, then read it back. */
        const char *av[4] = { "SET", VKEY, EMQ_WIRE, "NX" };
        redisReply *r = srv_cmdz(&s, 4, av);
        if (!r) {
            ex = srv_fail(c, &s, "SET " VKEY " NX");
            goto done;
        }
        freeReplyObject(r);
        if ((ex = srv_version(c, &s, &present)))
            goto done;
    }
    /* Stream the export, INFLIGHT commands at a time. */
    p.c = c;
    p.s = &s;
    p.q = q;
    p.nq = nq;
    p.sp.fn = push_frame;
    p.sp.ctx = &p;
    qsel_opts(&qs, &o);
    o.by_slot = byslot != NULL;
    prog_start(&p.pg, "push", 0);
    t0 = mono();
    rc = emq_export(c->db, &o, push_write, &p, &sum);
    if (!p.ex && rc == EMQ_OK && !push_drain(&p, 0))
        prog_tick(&p.pg, p.sent, "commands");
    prog_end(&p.pg);
    if (p.ex) {
        ex = p.ex;
        goto done;
    }
    if (rc != EMQ_OK) {
        ex = emq_cli_fail(c, rc, NULL);
        goto done;
    }
    double secs = mono() - t0;
    if ((ex = srv_figures(c, &s, q, nq, there)))
        goto done;
    int mismatch = 0;
    for (size_t i = 0; i < nq; i++)
        mismatch |= memcmp(&p.fig[i], &there[i], sizeof there[i]) != 0;
    if (c->json) {
        fputs("{\"to\":", stdout);
        emq_cli_json_str(stdout, to);
        printf(",\"keys\":%llu,\"commands\":%llu,\"bytes\":%llu,\"digest\":",
               (unsigned long long)sum.keys, (unsigned long long)p.sent,
               (unsigned long long)p.bytes);
        put_digest(stdout, sum.digest);
        printf(",\"replaced\":%zu,\"dropped_field_expiries\":%llu,"
               "\"seconds\":%.3f,\"match\":%s,\"queues\":[", nl.nv,
               (unsigned long long)p.dropped, secs,
               mismatch ? "false" : "true");
        for (size_t i = 0; i < nq; i++) {
            fputs(i ? ",{\"queue\":" : "{\"queue\":", stdout);
            emq_cli_json_str(stdout, q[i]);
            printf(",\"pending\":%lld,\"active\":%lld,\"scheduled\":%lld,"
                   "\"dead\":%lld,\"rows\":%lld,\"match\":%s}",
                   (long long)p.fig[i].set[0], (long long)p.fig[i].set[1],
                   (long long)p.fig[i].set[2], (long long)p.fig[i].set[3],
                   (long long)p.fig[i].rows,
                   memcmp(&p.fig[i], &there[i], sizeof there[i]) ? "false"
                                                                 : "true");
        }
        puts("]}");
    } else {
        printf("pushed %llu keys (%llu commands, %llu bytes) to %s in %.2f s,"
               " digest %016llx\n", (unsigned long long)sum.keys,
               (unsigned long long)p.sent, (unsigned long long)p.bytes, to,
               secs, (unsigned long long)sum.digest);
        if (nl.nv)
            printf("replaced: %zu keys deleted first\n", nl.nv);
        for (size_t i = 0; i < nq; i++) {
            const qfig *f = &p.fig[i], *t = &there[i];
            printf("%s: pending %lld active %lld scheduled %lld dead %lld "
                   "rows %lld", q[i], (long long)f->set[0],
                   (long long)f->set[1], (long long)f->set[2],
                   (long long)f->set[3], (long long)f->rows);
            if (memcmp(f, t, sizeof *t) == 0)
                puts(": match");
            else
                printf(": MISMATCH, the server holds pending %lld active %lld "
                       "scheduled %lld dead %lld rows %lld\n",
                       (long long)t->set[0], (long long)t->set[1],
                       (long long)t->set[2], (long long)t->set[3],
                       (long long)t->rows);
        }
    }
    if (p.dropped)
        fprintf(stderr, "emqlite: warning: %s has no HPEXPIREAT (Valkey >= "
                "9.0, Redis >= 7.4): %llu hash-field expir%s dropped; the "
                "fields were written without it\n", to,
                (unsigned long long)p.dropped, p.dropped == 1 ? "y" : "ies");
    if (mismatch) {
        fprintf(stderr, "emqlite: differ: the counts on %s disagree with the "
                "file (another writer?)\n", to);
        ex = EXIT_DIFFER;
    } else {
        ex = EMQ_EXIT_OK;
    }
done:
    split_free(&p.sp);
    tb_free(&p.lastrow);
    free(p.fig);
    free(there);
    if (fq)
        emq_queues_free(fq, nfq);
    nl_free(&nl);
    srv_close(&s);
    free(qs.q);
    return ex;
}

#endif /* HAVE_HIREDIS */
