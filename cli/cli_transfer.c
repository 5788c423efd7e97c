/*
 * cli_transfer.c — the emqlite tool's transfer commands: export, import and
 * check work on the file alone; push, pull and verify talk to a live Valkey
 * or Redis server through the library's transfer module
 * (api/emqlite_remote.h).
 *
 * Owns: argument handling and printing only — the options, the summaries
 * and JSON documents, the progress line on stderr, and the mapping of each
 * failure to its message and exit status. The stream, the digest, the key
 * grammar and the server protocol are the library's.
 *
 * Rules: the file and the server are reached through api/emqlite.h and
 * api/emqlite_remote.h only. Every failure goes through emq_cli_fail or
 * xfail; exit statuses are those of cli.h plus EXIT_DIFFER (11),
 * documented in emqlite(1).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "emqlite_remote.h"
#include "cli_time.h"

/* check: violations found; verify: the keyspaces differ; push/pull: the
 * copy disagrees with its source after the transfer. */
#define EXIT_DIFFER 11

#define VKEY "{emq}:version"

/* ---------------------------------------------- failures with own exits */

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

/* -------------------------------------------------------- queue options */

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

/* A --wire value must name an identity of the table: -1, or the exit. */
static int known_wire(emq_cli *c, const char *opt, const char *w)
{
    char list[200];
    size_t o = 0;
    if (emq_wire_known(w, strlen(w)))
        return -1;
    list[0] = 0;
    for (size_t i = 0; emq_wire_table(i) && o < sizeof list; i++)
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%s",
                              i ? ", " : "", emq_wire_table(i));
    return emq_cli_usage(c, "%s must be a wire identity this emqlite "
                         "implements (%s), not '%s'", opt, list, w);
}

static void put_digest(FILE *f, uint64_t d)
{
    fprintf(f, "\"%016llx\"", (unsigned long long)d);
}

/* ------------------------------------------------------------- progress */

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

static void show_bytes(FILE *f, const void *p, size_t n);

/* ----------------------------------------------------------------- notes */

/* What a transfer said beside its report (emq_transfer_note): the identity
 * spoken, the records the other side cannot hold, the other queues. */
typedef struct notes {
    const char *wire;
    FILE *txt, *unheld, *other;   /* memory streams                     */
    char *tb, *ub, *ob;
    size_t tn, un, on;
    size_t nunheld, nother;
    uint64_t unheld_total;
    int resumed;                  /* EMQ_NOTE_SKIPPED heard              */
    uint64_t skipped;
} notes;

static void notes_open(notes *n)
{
    memset(n, 0, sizeof *n);
    n->txt = open_memstream(&n->tb, &n->tn);
    n->unheld = open_memstream(&n->ub, &n->un);
    n->other = open_memstream(&n->ob, &n->on);
}

static void on_note(void *ctx, const emq_transfer_note *t)
{
    notes *n = ctx;
    if (!n->txt || !n->unheld || !n->other)
        return;
    if (t->kind == EMQ_NOTE_WIRE) {
        n->wire = t->text;
    } else if (t->kind == EMQ_NOTE_SKIPPED) {
        n->resumed = 1;
        n->skipped = t->count;
    } else if (t->kind == EMQ_NOTE_UNHELD) {
        fputs("unheld: ", n->txt);
        show_bytes(n->txt, t->key, t->klen);
        fputs(" group ", n->txt);
        show_bytes(n->txt, t->group, t->glen);
        fprintf(n->txt, ": %llu pending entr%s of trimmed stream entries "
                "(%s)\n", (unsigned long long)t->count,
                t->count == 1 ? "y" : "ies", t->text);
        fputs(n->nunheld++ ? ",{\"stream\":" : "{\"stream\":", n->unheld);
        emq_cli_json_bytes(n->unheld, t->key, t->klen);
        fputs(",\"group\":", n->unheld);
        emq_cli_json_bytes(n->unheld, t->group, t->glen);
        fprintf(n->unheld, ",\"count\":%llu,\"where\":",
                (unsigned long long)t->count);
        emq_cli_json_str(n->unheld, t->text);
        putc('}', n->unheld);
        n->unheld_total += t->count;
    } else if (t->kind == EMQ_NOTE_OTHER_QUEUE) {
        fprintf(n->txt, "other queue on the server (not compared): %s, "
                "%llu keys\n", t->text, (unsigned long long)t->count);
        fputs(n->nother++ ? ",{\"queue\":" : "{\"queue\":", n->other);
        emq_cli_json_str(n->other, t->text);
        fprintf(n->other, ",\"keys\":%llu}", (unsigned long long)t->count);
    }
}

/* The notes as JSON members (after a comma) or as lines. */
static void notes_put(emq_cli *c, notes *n)
{
    if (n->txt) fflush(n->txt);
    if (n->unheld) fflush(n->unheld);
    if (n->other) fflush(n->other);
    if (c->json) {
        if (n->wire) {
            fputs(",\"wire\":", stdout);
            emq_cli_json_str(stdout, n->wire);
        }
        printf(",\"unheld\":[%.*s],\"other_queues\":[%.*s]", (int)n->un,
               n->ub ? n->ub : "", (int)n->on, n->ob ? n->ob : "");
        return;
    }
    if (n->wire)
        printf("wire: %s\n", n->wire);
    if (n->tn)
        fwrite(n->tb, 1, n->tn, stdout);
}

static void notes_close(notes *n)
{
    if (n->txt) fclose(n->txt);
    if (n->unheld) fclose(n->unheld);
    if (n->other) fclose(n->other);
    free(n->tb);
    free(n->ub);
    free(n->ob);
    memset(n, 0, sizeof *n);
}

/* ---------------------------------------------------------------- export */

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
    const char *out = NULL, *byslot = NULL, *wire = NULL;
    emq_cli_opt opts[] = { { "--out", 1, &out }, { "--by-slot", 0, &byslot },
                           { "--wire", 1, &wire }, { NULL, 0, NULL } };
    qsel qs = { NULL, 0 };
    int ex, rc;
    fsink s;
    emq_export_options o;
    emq_transfer_summary sum;
    notes nt;

    memset(&s, 0, sizeof s);
    notes_open(&nt);
    if ((ex = parse_sel(c, argc, argv, opts, &qs, NULL)) >= 0)
        goto done;
    if (c->json && !out) {
        ex = emq_cli_usage(c, "--json needs --out FILE (the stream itself "
                              "goes to stdout)");
        goto done;
    }
    if (wire && (ex = known_wire(c, "--wire", wire)) >= 0)
        goto done;
    if ((ex = open_existing(c)))
        goto done;
    s.f = stdout;
    if (out && !(s.f = fopen(out, "wb"))) {
        ex = cantopen(c, out);
        goto done;
    }
    qsel_opts(&qs, &o);
    o.by_slot = byslot != NULL;
    o.wire = wire;
    o.note = on_note;
    o.note_ctx = &nt;
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
    if (nt.txt)
        fflush(nt.txt);
    if (nt.tn)
        fprintf(stderr, "%.*s", (int)nt.tn, nt.tb);
    if (c->json) {
        fputs("{\"out\":", stdout);
        emq_cli_json_str(stdout, out);
        printf(",\"keys\":%llu,\"commands\":%llu,\"bytes\":%llu,\"digest\":",
               (unsigned long long)sum.keys, (unsigned long long)sum.commands,
               (unsigned long long)sum.bytes);
        put_digest(stdout, sum.digest);
        notes_put(c, &nt);
        puts("}");
    }
    ex = EMQ_EXIT_OK;
done:
    notes_close(&nt);
    free(qs.q);
    return ex;
}

/* ---------------------------------------------------------------- import */

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

/* The parts of a multi-part AOF in the order Valkey loads them: the base,
 * then each incremental file, as the manifest lists them (history files
 * left out). `src` is the manifest or the directory holding it. */
typedef struct parts {
    char **path;
    size_t n;
} parts;

static void parts_free(parts *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->path[i]);
    free(p->path);
    memset(p, 0, sizeof *p);
}

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

static int aof_parts(emq_cli *c, const char *src, parts *out)
{
    char man[4096], dir[4096], line[4200];
    struct stat sb;
    FILE *f;
    size_t nb = 0, lineno = 0;
    memset(out, 0, sizeof *out);
    if (stat(src, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(src);
        struct dirent *e;
        man[0] = 0;
        if (!d)
            return cantopen(c, src);
        while ((e = readdir(d)))
            if (ends_with(e->d_name, ".manifest")) {
                if (man[0]) {
                    closedir(d);
                    return emq_cli_usage(c, "%s holds more than one "
                                         "*.manifest: name the one to read",
                                         src);
                }
                snprintf(man, sizeof man, "%s/%s", src, e->d_name);
            }
        closedir(d);
        if (!man[0])
            return emq_cli_usage(c, "%s is a directory without an AOF "
                                 "manifest (*.manifest)", src);
        snprintf(dir, sizeof dir, "%s", src);
    } else {
        const char *slash = strrchr(src, '/');
        snprintf(man, sizeof man, "%s", src);
        if (slash)
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - src), src);
        else
            snprintf(dir, sizeof dir, ".");
    }
    if (!(f = fopen(man, "r")))
        return cantopen(c, man);
    while (fgets(line, sizeof line, f)) {
        char name[4096], type = 0, *p;
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#')
            continue;
        /* "file NAME seq N type b|h|i" (the keys in any order) */
        name[0] = 0;
        for (char *tok = strtok_r(line, " ", &p); tok;
             tok = strtok_r(NULL, " ", &p)) {
            char *v = strtok_r(NULL, " ", &p);
            if (!v)
                break;
            if (strcmp(tok, "file") == 0)
                snprintf(name, sizeof name, "%s", v);
            else if (strcmp(tok, "type") == 0)
                type = v[0];
        }
        if (!name[0] || (type != 'b' && type != 'i' && type != 'h')) {
            fclose(f);
            parts_free(out);
            return emq_cli_usage(c, "%s line %zu: not a manifest line "
                                 "(file NAME seq N type b|h|i)", man, lineno);
        }
        if (type == 'h')
            continue; /* history: already rewritten into the base */
        char **np = realloc(out->path, (out->n + 1) * sizeof *np);
        size_t plen = strlen(dir) + strlen(name) + 2;
        if (!np || !(np[out->n] = malloc(plen))) {
            if (np)
                out->path = np;
            fclose(f);
            parts_free(out);
            return nomem(c);
        }
        out->path = np;
        snprintf(out->path[out->n], plen, "%s/%s", dir, name);
        if (type == 'b') { /* the base goes first */
            char *b = out->path[out->n];
            memmove(out->path + nb + 1, out->path + nb,
                    (out->n - nb) * sizeof *out->path);
            out->path[nb++] = b;
        }
        out->n++;
    }
    fclose(f);
    if (out->n == 0)
        return emq_cli_usage(c, "%s names no base or incremental file", man);
    return -1;
}

int emq_cli_import(emq_cli *c, int argc, char **argv)
{
    const char *pos[1], *unchecked = NULL, *aof = NULL, *raw = NULL;
    emq_cli_opt opts[] = { { "--unchecked", 0, &unchecked },
                           { "--aof", 0, &aof }, { "--raw", 0, &raw },
                           { NULL, 0, NULL } };
    int npos, ex, rc = EMQ_OK;
    FILE *in = stdin;
    const char *src = "-";
    emq_transfer_summary sum;
    emq_import_options o;
    emq_importer *im = NULL;
    progress pg;
    static unsigned char chunk[1 << 16];
    uint64_t read = 0;
    parts pt = { NULL, 0 };
    struct stat sb;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, 1, &npos)) >= 0)
        return ex;
    if (npos == 1 && strcmp(pos[0], "-") != 0) {
        src = pos[0];
        /* A multi-part AOF: its directory or its manifest. */
        if ((stat(src, &sb) == 0 && S_ISDIR(sb.st_mode)) ||
            ends_with(src, ".manifest")) {
            if ((ex = aof_parts(c, src, &pt)) >= 0)
                return ex;
            aof = "manifest";
        } else if (!(in = fopen(src, "rb"))) {
            return cantopen(c, src);
        }
    }
    if ((ex = emq_cli_open(c)))
        goto done;
    emq_import_options_init(&o);
    o.unchecked = unchecked != NULL;
    o.aof = aof != NULL;
    o.format = raw ? EMQ_IMPORT_RAW : EMQ_IMPORT_EXPORT;
    if ((rc = emq_import_begin(c->db, &o, &im)) != EMQ_OK) {
        ex = emq_cli_fail(c, rc, NULL);
        goto done;
    }
    /* The stream is applied as it is read, in the one transaction; the
     * parts of a manifest one after the other, as one stream. */
    prog_start(&pg, "import", 0);
    for (size_t part = 0; rc == EMQ_OK && (part < pt.n || !pt.n); part++) {
        if (pt.n) {
            if (!(in = fopen(pt.path[part], "rb"))) {
                prog_end(&pg);
                ex = cantopen(c, pt.path[part]);
                goto done;
            }
            fprintf(stderr, "emqlite: import: %s from byte %llu\n",
                    pt.path[part], (unsigned long long)read);
        }
        for (;;) {
            size_t n = fread(chunk, 1, sizeof chunk, in);
            if (n == 0)
                break;
            read += n;
            prog_tick(&pg, read >> 20, "MiB applied");
            if ((rc = emq_import_feed(im, chunk, n)) != EMQ_OK)
                break;
        }
        if (rc == EMQ_OK && ferror(in)) {
            prog_end(&pg);
            emq_import_abort(im);
            im = NULL;
            ex = emq_cli_fail(c, EMQ_EIO, "cannot read the stream");
            goto done;
        }
        if (!pt.n)
            break;
        fclose(in);
        in = stdin;
    }
    prog_end(&pg);
    rc = rc == EMQ_OK ? emq_import_finish(im, &sum)
                      : (emq_import_abort(im), rc);
    im = NULL;
    if (rc != EMQ_OK) {
        ex = emq_cli_fail(c, rc, NULL);
        goto done;
    }
    import_summary(c, "in", src, &sum);
    ex = EMQ_EXIT_OK;
done:
    if (im)
        emq_import_abort(im);
    if (in != stdin)
        fclose(in);
    parts_free(&pt);
    return ex;
}

/* ----------------------------------------------------------------- check */

typedef struct checklog {
    FILE *json;      /* the findings array's items (a memory stream) */
    char *items;
    size_t nitems;
    size_t violations, notes;
    int as_json;
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
    if (!l->json)
        return;
    fprintf(l->json, "%s{\"severity\":\"%s\",\"code\":",
            l->violations + l->notes > 1 ? "," : "", sev);
    emq_cli_json_str(l->json, f->code);
    fputs(",\"key\":", l->json);
    emq_cli_json_str(l->json, f->key ? f->key : "");
    fputs(",\"message\":", l->json);
    emq_cli_json_str(l->json, f->message);
    fputc('}', l->json);
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
    if (c->json && !(l.json = open_memstream(&l.items, &l.nitems)))
        return nomem(c);
    rc = emq_check(c->db, on_finding, &l, &nv);
    if (l.json && fclose(l.json) != 0) {
        l.json = NULL;
        ex = nomem(c);
        goto done;
    }
    l.json = NULL;
    if (rc != EMQ_OK && rc != EMQ_ECORRUPT) {
        ex = emq_cli_fail(c, rc, NULL);
        goto done;
    }
    if (c->json) {
        printf("{\"ok\":%s,\"violations\":%zu,\"notes\":%zu,\"findings\":[",
               l.violations ? "false" : "true", l.violations, l.notes);
        if (l.nitems)
            fwrite(l.items, 1, l.nitems, stdout);
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
    if (l.json)
        fclose(l.json);
    free(l.items);
    return ex;
}

/* ------------------------------------------------------- live transfers */

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

/* Print bytes for a human on one line (a differing key). */
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

/* A transfer's failure: the server's refusals and a key of an unsupported
 * type have their own classes; the rest are the library's codes. */
static int remote_fail(emq_cli *c, int rc)
{
    const char *m = emq_errmsg(c->db);
    if (rc == EMQ_EREMOTE)
        return xfail(c, EMQ_EXIT_ERROR, "server", "%s", m);
    if (rc == EMQ_ENOTSUP)
        return xfail(c, EMQ_EXIT_NOTBUILT, "not_supported", "%s", m);
    return emq_cli_fail(c, rc, NULL);
}

/* Without a network transport push, pull and verify say so (exit 10). */
static int not_built(emq_cli *c)
{
    char msg[400];
    snprintf(msg, sizeof msg, "built without hiredis: '%s' talks to a live "
             "Valkey/Redis server; rebuild with libhiredis (Debian: "
             "libhiredis-dev), or use 'emqlite export' with 'redis-cli "
             "--pipe'", c->cmd);
    return emq_cli_fail(c, EMQ_ENOTSUP, msg);
}

/* Connect to the server of option `opt` (AUTH with $REDISCLI_AUTH): a
 * cluster when it is one, or must be one (`cluster`). */
static int connect_to(emq_cli *c, const char *opt, const char *spec,
                      int cluster, int64_t timeout_ms, emq_remote **r)
{
    emq_remote_options o;
    char err[700] = "";
    emq_remote_options_init(&o);
    if (timeout_ms > 0) {
        o.io_timeout_ms = (int)timeout_ms;
        if (o.connect_timeout_ms > (int)timeout_ms)
            o.connect_timeout_ms = (int)timeout_ms;
    }
    o.password = getenv("REDISCLI_AUTH");
    o.cluster = cluster ? EMQ_CLUSTER_ON : EMQ_CLUSTER_AUTO;
    int rc = emq_remote_connect(spec, &o, r, err, sizeof err);
    if (rc == EMQ_OK)
        return 0;
    if (rc == EMQ_EINVAL && cluster && strstr(err, "not a cluster node"))
        return xfail(c, EMQ_EXIT_USAGE, "not_a_cluster", "%s (--cluster "
                     "was given)", err);
    if (rc == EMQ_EINVAL)
        return emq_cli_usage(c, "%s must be HOST:PORT, not '%s'", opt, spec);
    if (rc == EMQ_EREMOTE)
        return xfail(c, EMQ_EXIT_ERROR, "server", "%s", err);
    return emq_cli_fail(c, rc, err);
}

/*
 * The start every live transfer shares: its options (`need` names the
 * server option, whose value ends up in *spec; `--cluster`, which every
 * live transfer takes, in *cluster), the build's transport, the file
 * (`create`: pull may create it; push and verify need it), then the server.
 * Returns -1 to proceed or an exit status.
 */
static int begin(emq_cli *c, int argc, char **argv, const emq_cli_opt *opts,
                 qsel *qs, const char *need, const char *const *spec,
                 const char *const *cluster, const char *const *timeout,
                 int create, emq_remote **r)
{
    int ex;
    int64_t tmo = 0;
    if ((ex = parse_sel(c, argc, argv, opts, qs, need)) >= 0)
        return ex;
    if (*timeout && (emq_cli_parse_duration(*timeout, &tmo) != 0 ||
                     tmo < 1 || tmo > INT_MAX))
        return emq_cli_usage(c, "--timeout must be a duration from 1ms to "
                             "%dms (e.g. 300ms, 5s, 10m), not '%s'", INT_MAX,
                             *timeout);
    if (!emq_remote_available())
        return not_built(c);
    if ((ex = create ? emq_cli_open(c) : open_existing(c)) ||
        (ex = connect_to(c, need, *spec, *cluster != NULL, tmo, r)))
        return ex;
    return -1;
}

/* What each node of a cluster did: one line each, or the "cluster" member
 * of a JSON document (after a comma). One server prints nothing. */
static void put_nodes(emq_cli *c, int cluster, const emq_node_report *n,
                      size_t k)
{
    if (!cluster)
        return;
    if (c->json) {
        fputs(",\"cluster\":{\"nodes\":[", stdout);
        for (size_t i = 0; i < k; i++) {
            fputs(i ? ",{\"node\":" : "{\"node\":", stdout);
            emq_cli_json_str(stdout, n[i].node);
            printf(",\"keys\":%llu,\"commands\":%llu,\"bytes_out\":%llu,"
                   "\"bytes_in\":%llu,\"seconds\":%.3f,\"moved\":%llu,"
                   "\"ask\":%llu,\"tryagain\":%llu}",
                   (unsigned long long)n[i].keys,
                   (unsigned long long)n[i].commands,
                   (unsigned long long)n[i].bytes_out,
                   (unsigned long long)n[i].bytes_in, n[i].seconds,
                   (unsigned long long)n[i].moved,
                   (unsigned long long)n[i].asked,
                   (unsigned long long)n[i].tryagain);
        }
        fputs("]}", stdout);
        return;
    }
    for (size_t i = 0; i < k; i++) {
        printf("node %s: %llu keys, %llu commands, %llu bytes sent, %llu "
               "bytes read, %.2f s", n[i].node,
               (unsigned long long)n[i].keys,
               (unsigned long long)n[i].commands,
               (unsigned long long)n[i].bytes_out,
               (unsigned long long)n[i].bytes_in, n[i].seconds);
        if (n[i].moved || n[i].asked || n[i].tryagain)
            printf("; answered MOVED %llu, ASK %llu, TRYAGAIN %llu",
                   (unsigned long long)n[i].moved,
                   (unsigned long long)n[i].asked,
                   (unsigned long long)n[i].tryagain);
        putchar('\n');
    }
}

/* The progress line of a transfer: the library says what and how far. */
static void on_progress(void *ctx, const char *what, uint64_t done,
                        uint64_t total, const char *unit)
{
    progress *p = ctx;
    if (strcmp(p->what, what) != 0) {
        prog_end(p);
        prog_start(p, what, total);
    }
    p->total = total;
    prog_tick(p, done, unit);
}

/* ---------------------------------------------------------------- verify */

int emq_cli_verify(emq_cli *c, int argc, char **argv)
{
    const char *to = NULL, *cluster = NULL, *timeout = NULL;
    emq_cli_opt opts[] = { { "--against", 1, &to },
                           { "--cluster", 0, &cluster },
                           { "--timeout", 1, &timeout }, { NULL, 0, NULL } };
    qsel qs = { NULL, 0 };
    int ex, rc;
    emq_remote *r = NULL;
    emq_verify_options o;
    emq_verify_report rep;
    progress pg;
    notes nt;

    memset(&rep, 0, sizeof rep);
    notes_open(&nt);
    if ((ex = begin(c, argc, argv, opts, &qs, "--against", &to, &cluster, &timeout, 0,
                    &r)) >= 0)
        goto done;
    emq_verify_options_init(&o);
    o.note = on_note;
    o.note_ctx = &nt;
    o.queues = qs.n ? qs.q : NULL;
    o.n_queues = qs.n;
    o.progress = on_progress;
    o.progress_ctx = &pg;
    prog_start(&pg, "reading the file", 0);
    rc = emq_verify(c->db, r, &o, &rep);
    prog_end(&pg);
    if (rc != EMQ_OK) {
        ex = remote_fail(c, rc);
        goto done;
    }
    int differ = !rep.equal;
    if (c->json) {
        printf("{\"against\":");
        emq_cli_json_str(stdout, to);
        printf(",\"equal\":%s,\"file\":{\"keys\":%llu,\"digest\":",
               differ ? "false" : "true", (unsigned long long)rep.file_keys);
        put_digest(stdout, rep.file_digest);
        printf("},\"server\":{\"keys\":%llu,\"digest\":",
               (unsigned long long)rep.server_keys);
        put_digest(stdout, rep.server_digest);
        putchar('}');
        if (differ) {
            fputs(",\"first\":{\"key\":", stdout);
            emq_cli_json_bytes(stdout, rep.first ? rep.first : "",
                               rep.first_len);
            fputs(",\"reason\":", stdout);
            emq_cli_json_str(stdout, rep.reason);
            putchar('}');
        }
        notes_put(c, &nt);
        put_nodes(c, rep.cluster, rep.nodes, rep.n_nodes);
        puts("}");
    } else if (!differ) {
        printf("equal: %llu keys, digest %016llx\n",
               (unsigned long long)rep.file_keys,
               (unsigned long long)rep.file_digest);
        notes_put(c, &nt);
        put_nodes(c, rep.cluster, rep.nodes, rep.n_nodes);
    } else {
        printf("differ: first differing key ");
        show_bytes(stdout, rep.first ? rep.first : "", rep.first_len);
        printf(": %s\nfile:   %llu keys, digest %016llx\nserver: %llu keys, "
               "digest %016llx\n", rep.reason,
               (unsigned long long)rep.file_keys,
               (unsigned long long)rep.file_digest,
               (unsigned long long)rep.server_keys,
               (unsigned long long)rep.server_digest);
        notes_put(c, &nt);
        put_nodes(c, rep.cluster, rep.nodes, rep.n_nodes);
    }
    if (differ) {
        fprintf(stderr, "emqlite: differ: the file and %s hold different "
                "keyspaces\n", to);
        ex = EXIT_DIFFER;
    } else {
        ex = EMQ_EXIT_OK;
    }
done:
    notes_close(&nt);
    emq_verify_report_free(&rep);
    emq_remote_close(r);
    free(qs.q);
    return ex;
}

/* ------------------------------------------------------------------ pull */

int emq_cli_pull(emq_cli *c, int argc, char **argv)
{
    const char *from = NULL, *cluster = NULL, *timeout = NULL;
    emq_cli_opt opts[] = { { "--from", 1, &from },
                           { "--cluster", 0, &cluster },
                           { "--timeout", 1, &timeout }, { NULL, 0, NULL } };
    qsel qs = { NULL, 0 };
    int ex, rc;
    emq_remote *r = NULL;
    emq_pull_options o;
    emq_pull_report rep;
    progress pg;
    notes nt;
    struct stat sb;
    /* A pull that creates the file and is refused leaves no file behind. */
    int existed = c->db_path[0] && stat(c->db_path, &sb) == 0;

    memset(&rep, 0, sizeof rep);
    notes_open(&nt);
    if ((ex = begin(c, argc, argv, opts, &qs, "--from", &from, &cluster, &timeout, 1,
                    &r)) >= 0)
        goto done;
    emq_pull_options_init(&o);
    o.note = on_note;
    o.note_ctx = &nt;
    o.queues = qs.n ? qs.q : NULL;
    o.n_queues = qs.n;
    o.progress = on_progress;
    o.progress_ctx = &pg;
    prog_start(&pg, "pull", 0);
    rc = emq_pull(c->db, r, &o, &rep);
    prog_end(&pg);
    if (!rep.version_present && rc != EMQ_EIO && rc != EMQ_EREMOTE &&
        rc != EMQ_EWIRE)
        fprintf(stderr, "emqlite: note: %s holds no " VKEY "; its keys are "
                "taken as the file's identity\n", from);
    if (rc == EMQ_EEXIST) {
        ex = xfail(c, EMQ_EXIT_DUPLICATE, "file_not_empty", "%s already "
                   "holds keys of queue '%s': pull into a new file, or one "
                   "without the pulled queues; nothing changed", c->db_path,
                   rep.conflict ? rep.conflict : "?");
        goto done;
    }
    if (rc != EMQ_OK) {
        ex = remote_fail(c, rc);
        goto done;
    }
    if (!rep.match) {
        ex = xfail(c, EXIT_DIFFER, "differ", "after the pull the file's "
                   "digest of the pulled queues is %016llx, the server's "
                   "%016llx", (unsigned long long)rep.file_digest,
                   (unsigned long long)rep.digest);
        goto done;
    }
    if (c->json) {
        fputs("{\"from\":", stdout);
        emq_cli_json_str(stdout, from);
        printf(",\"keys\":%llu,\"commands\":%llu,\"bytes\":%llu,\"digest\":",
               (unsigned long long)rep.keys, (unsigned long long)rep.commands,
               (unsigned long long)rep.bytes);
        put_digest(stdout, rep.digest);
        fputs(",\"queues\":[", stdout);
        for (size_t i = 0; i < rep.n_queues; i++) {
            if (i)
                putchar(',');
            emq_cli_json_str(stdout, rep.queues[i]);
        }
        printf("],\"file\":{\"keys\":%llu,\"digest\":",
               (unsigned long long)rep.file.keys);
        put_digest(stdout, rep.file.digest);
        putchar('}');
        notes_put(c, &nt);
        put_nodes(c, rep.cluster, rep.nodes, rep.n_nodes);
        puts("}");
    } else {
        printf("pulled %llu keys of %zu queue%s (%llu commands, %llu bytes) "
               "from %s, digest %016llx\nthe file holds %llu keys, digest "
               "%016llx\n", (unsigned long long)rep.keys, rep.n_queues,
               rep.n_queues == 1 ? "" : "s", (unsigned long long)rep.commands,
               (unsigned long long)rep.bytes, from,
               (unsigned long long)rep.digest,
               (unsigned long long)rep.file.keys,
               (unsigned long long)rep.file.digest);
        notes_put(c, &nt);
        put_nodes(c, rep.cluster, rep.nodes, rep.n_nodes);
    }
    ex = EMQ_EXIT_OK;
done:
    notes_close(&nt);
    if (ex != EMQ_EXIT_OK && !existed && c->db_path[0] && c->db) {
        /* Nothing was pulled into the file this pull created: remove it
         * and every side file its open made (an open makes the wake file
         * too, for the writers' turn). A pull that succeeds leaves what
         * any open of a new file leaves (doc/EXPORT.md). */
        emq_close(c->db);
        c->db = NULL;
        emq_remove_files(c->db_path);
    }
    emq_pull_report_free(&rep);
    emq_remote_close(r);
    free(qs.q);
    return ex;
}

/* ------------------------------------------------------------------ push */

static void figures(const char *lead, const emq_queue_figures *f)
{
    printf("%spending %lld active %lld scheduled %lld dead %lld rows %lld",
           lead, (long long)f->pending, (long long)f->active,
           (long long)f->scheduled, (long long)f->dead, (long long)f->rows);
}

int emq_cli_push(emq_cli *c, int argc, char **argv)
{
    const char *to = NULL, *replace = NULL, *byslot = NULL, *cluster = NULL,
               *wire = NULL, *timeout = NULL, *resume = NULL;
    emq_cli_opt opts[] = { { "--to", 1, &to }, { "--replace", 0, &replace },
                           { "--resume", 0, &resume },
                           { "--by-slot", 0, &byslot },
                           { "--cluster", 0, &cluster }, { "--wire", 1, &wire },
                           { "--timeout", 1, &timeout }, { NULL, 0, NULL } };
    qsel qs = { NULL, 0 };
    int ex, rc;
    emq_remote *r = NULL;
    emq_push_options o;
    emq_push_report rep;
    progress pg;
    notes nt;

    memset(&rep, 0, sizeof rep);
    notes_open(&nt);
    if ((ex = begin(c, argc, argv, opts, &qs, "--to", &to, &cluster, &timeout, 0,
                    &r)) >= 0)
        goto done;
    if (wire && (ex = known_wire(c, "--wire", wire)) >= 0)
        goto done;
    if (resume && replace) {
        ex = emq_cli_usage(c, "push: --resume and --replace exclude each "
                           "other (--resume deletes only the keys that "
                           "differ from the file's)");
        goto done;
    }
    emq_push_options_init(&o);
    o.resume = resume != NULL;
    o.wire = wire;
    o.note = on_note;
    o.note_ctx = &nt;
    o.queues = qs.n ? qs.q : NULL;
    o.n_queues = qs.n;
    o.replace = replace != NULL;
    o.by_slot = byslot != NULL;
    o.progress = on_progress;
    o.progress_ctx = &pg;
    prog_start(&pg, "push", 0);
    rc = emq_push(c->db, r, &o, &rep);
    prog_end(&pg);
    if (rc == EMQ_EEXIST) {
        char shown[200];
        show_into(shown, sizeof shown, rep.first_existing, rep.first_len);
        ex = xfail(c, EMQ_EXIT_DUPLICATE, "target_not_empty",
                   "%s already holds %llu key%s of the exported queues (the "
                   "first: %s); nothing was written (--replace deletes them "
                   "first)", to, (unsigned long long)rep.existing,
                   rep.existing == 1 ? "" : "s", shown);
        goto done;
    }
    if (rc != EMQ_OK) {
        ex = remote_fail(c, rc);
        goto done;
    }
    if (c->json) {
        fputs("{\"to\":", stdout);
        emq_cli_json_str(stdout, to);
        printf(",\"keys\":%llu,\"commands\":%llu,\"bytes\":%llu,\"digest\":",
               (unsigned long long)rep.keys, (unsigned long long)rep.commands,
               (unsigned long long)rep.bytes);
        put_digest(stdout, rep.digest);
        if (nt.resumed)
            printf(",\"sent_keys\":%llu,\"skipped\":%llu",
                   (unsigned long long)(rep.keys - nt.skipped),
                   (unsigned long long)nt.skipped);
        printf(",\"replaced\":%llu,\"dropped_field_expiries\":%llu,"
               "\"seconds\":%.3f,\"match\":%s,\"queues\":[",
               (unsigned long long)rep.replaced,
               (unsigned long long)rep.dropped, rep.seconds,
               rep.match ? "true" : "false");
        for (size_t i = 0; i < rep.n_queues; i++) {
            const emq_push_queue *q = &rep.queues[i];
            fputs(i ? ",{\"queue\":" : "{\"queue\":", stdout);
            emq_cli_json_str(stdout, q->queue);
            printf(",\"pending\":%lld,\"active\":%lld,\"scheduled\":%lld,"
                   "\"dead\":%lld,\"rows\":%lld,\"match\":%s}",
                   (long long)q->sent.pending, (long long)q->sent.active,
                   (long long)q->sent.scheduled, (long long)q->sent.dead,
                   (long long)q->sent.rows,
                   memcmp(&q->sent, &q->found, sizeof q->sent) ? "false"
                                                               : "true");
        }
        putchar(']');
        notes_put(c, &nt);
        put_nodes(c, rep.cluster, rep.nodes, rep.n_nodes);
        puts("}");
    } else {
        printf("pushed %llu keys (%llu commands, %llu bytes) to %s in %.2f s,"
               " digest %016llx\n", (unsigned long long)rep.keys,
               (unsigned long long)rep.commands,
               (unsigned long long)rep.bytes, to, rep.seconds,
               (unsigned long long)rep.digest);
        if (nt.resumed)
            printf("resumed: %llu keys sent, %llu already equal (skipped), "
                   "%llu deleted first (differing or not in the file)\n",
                   (unsigned long long)(rep.keys - nt.skipped),
                   (unsigned long long)nt.skipped,
                   (unsigned long long)rep.replaced);
        else if (rep.replaced)
            printf("replaced: %llu keys deleted first\n",
                   (unsigned long long)rep.replaced);
        for (size_t i = 0; i < rep.n_queues; i++) {
            const emq_push_queue *q = &rep.queues[i];
            printf("%s: ", q->queue);
            figures("", &q->sent);
            if (memcmp(&q->sent, &q->found, sizeof q->sent) == 0) {
                puts(": match");
            } else {
                figures(": MISMATCH, the server holds ", &q->found);
                putchar('\n');
            }
        }
        notes_put(c, &nt);
        put_nodes(c, rep.cluster, rep.nodes, rep.n_nodes);
    }
    if (rep.dropped)
        fprintf(stderr, "emqlite: warning: %s has no HPEXPIREAT (Valkey >= "
                "9.0, Redis >= 7.4): %llu hash-field expir%s dropped; the "
                "fields were written without it\n", to,
                (unsigned long long)rep.dropped,
                rep.dropped == 1 ? "y" : "ies");
    if (!rep.match) {
        fprintf(stderr, "emqlite: differ: the counts on %s disagree with the "
                "file (another writer?)\n", to);
        ex = EXIT_DIFFER;
    } else {
        ex = EMQ_EXIT_OK;
    }
done:
    notes_close(&nt);
    emq_push_report_free(&rep);
    emq_remote_close(r);
    free(qs.q);
    return ex;
}

/* ------------------------------------------------------------------ wire */

int emq_cli_wire(emq_cli *c, int argc, char **argv)
{
    const char *pos[1], *set = NULL, *fw = NULL, *was = NULL;
    emq_cli_opt opts[] = { { "--set", 1, &set }, { NULL, 0, NULL } };
    int npos, ex, rc;

    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, 0, &npos)) >= 0)
        return ex;
    if (set && (ex = known_wire(c, "--set", set)) >= 0)
        return ex;
    if ((ex = open_existing(c)))
        return ex;
    if (set && (rc = emq_set_wire(c->db, set, &was)) != EMQ_OK)
        return emq_cli_fail(c, rc, NULL);
    if ((rc = emq_wire(c->db, &fw)) != EMQ_OK)
        return emq_cli_fail(c, rc, NULL);
    if (c->json) {
        fputs("{\"file\":", stdout);
        emq_cli_json_str(stdout, c->db_path);
        fputs(",\"wire\":", stdout);
        emq_cli_json_str(stdout, fw);
        if (set) {
            fputs(",\"was\":", stdout);
            emq_cli_json_str(stdout, was);
        }
        fputs(",\"table\":[", stdout);
        for (size_t i = 0; emq_wire_table(i); i++) {
            if (i)
                putchar(',');
            emq_cli_json_str(stdout, emq_wire_table(i));
        }
        puts("]}");
        return EMQ_EXIT_OK;
    }
    if (set)
        printf("%s: %s (was %s)\n", c->db_path, fw, was);
    else
        printf("%s: %s\n", c->db_path, fw);
    printf("implemented:");
    for (size_t i = 0; emq_wire_table(i); i++)
        printf(" %s", emq_wire_table(i));
    putchar('\n');
    return EMQ_EXIT_OK;
}
