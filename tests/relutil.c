/*
 * relutil.c — the reliability tests' shared helpers (see relutil.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>
#include "relutil.h"

int64_t rel_clock_fn(void *ctx)
{
    return ((rel_clock *)ctx)->now;
}

int rel_quick(void)
{
    const char *q = getenv("EMQ_TEST_QUICK");
    return q && q[0] && strcmp(q, "0") != 0;
}

long rel_size(long full, long quick)
{
    return rel_quick() ? quick : full;
}

long rel_env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    char *end;
    long n;
    if (v == NULL || v[0] == 0) return dflt;
    errno = 0;
    n = strtol(v, &end, 10);
    return (errno || *end) ? dflt : n;
}

int rel_mkdtemp(char *dir, size_t cap, const char *tag)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, cap, "%s/emq-%s-XXXXXX", t && t[0] ? t : "/tmp", tag);
    return mkdtemp(dir) ? 0 : -1;
}

int rel_mkdtemp_mem(char *dir, size_t cap, const char *tag)
{
    const char *m = getenv("EMQ_TEST_MEMDIR");
    if (m == NULL) m = "/dev/shm";
    if (m[0] && access(m, W_OK | X_OK) == 0) {
        snprintf(dir, cap, "%s/emq-%s-XXXXXX", m, tag);
        if (mkdtemp(dir)) return 0;
    }
    return rel_mkdtemp(dir, cap, tag);
}

static int rm_one(const char *p, const struct stat *sb, int flag,
                  struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

void rel_rmrf(const char *dir)
{
    if (dir && dir[0])
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void rel_path(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

int rel_file_digest(const char *path, uint64_t *digest, int *exists)
{
    unsigned char buf[65536];
    XXH3_state_t *s;
    ssize_t n;
    int fd = open(path, O_RDONLY);
    *digest = 0;
    if (exists) *exists = fd >= 0;
    if (fd < 0) return errno == ENOENT ? 0 : -1;
    s = XXH3_createState();
    if (s == NULL) {
        close(fd);
        return -1;
    }
    XXH3_64bits_reset(s);
    while ((n = read(fd, buf, sizeof buf)) > 0)
        XXH3_64bits_update(s, buf, (size_t)n);
    *digest = XXH3_64bits_digest(s);
    XXH3_freeState(s);
    close(fd);
    return n < 0 ? -1 : 0;
}

int rel_write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    int rc = 0;
    if (f == NULL) return -1;
    if (n && fwrite(p, 1, n, f) != n) rc = -1;
    if (fclose(f) != 0) rc = -1;
    return rc;
}

typedef struct counts { size_t viol, notes; int verbose; } counts;

static void count_cb(void *ctx, const emq_finding *f)
{
    counts *c = ctx;
    if (f->severity == EMQ_CHECK_VIOLATION) c->viol++;
    else c->notes++;
    if (c->verbose)
        fprintf(stderr, "check: %s %s %s: %s\n",
                f->severity == EMQ_CHECK_VIOLATION ? "VIOLATION" : "note",
                f->code, f->key, f->message);
}

int rel_check(emq_db *db, size_t *viol, size_t *notes, int verbose)
{
    counts c = {0, 0, verbose};
    size_t n = 0;
    int rc = emq_check(db, count_cb, &c, &n);
    if (viol) *viol = c.viol;
    if (notes) *notes = c.notes;
    return rc;
}

/* ---------------------------------------------------------------- ledger */

void rel_ledger_path(char *out, size_t cap, const char *dir, int proc)
{
    snprintf(out, cap, "%s/ledger-%d", dir, proc);
}

int rel_ledger_open(rel_ledger *l, const char *path)
{
    l->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    return l->fd < 0 ? -1 : 0;
}

int rel_ledger_put(rel_ledger *l, int ev, const char *id, int64_t token,
                   int sync)
{
    char line[64];
    int n = snprintf(line, sizeof line, "%c %s %lld\n", ev, id,
                     (long long)token);
    if (write(l->fd, line, (size_t)n) != n) return -1;
    if (sync && fdatasync(l->fd) != 0) return -1;
    return 0;
}

void rel_ledger_close(rel_ledger *l)
{
    if (l->fd >= 0) close(l->fd);
    l->fd = -1;
}

int rel_ledger_parse(const char *line, int proc, rel_event *e)
{
    char id[32];
    long long tok;
    if (sscanf(line, "%c %31s %lld", &e->ev, id, &tok) != 3 ||
        strlen(id) != EMQ_ID_LEN)
        return 0;
    memcpy(e->id, id, EMQ_ID_SIZE);
    e->token = tok;
    e->proc = proc;
    return 1;
}

int rel_ledger_read(const char *path, int proc, rel_event **ev, size_t *n)
{
    FILE *f = fopen(path, "r");
    char line[128];
    size_t cap = *n;
    if (f == NULL) return errno == ENOENT ? 0 : -1;
    while (fgets(line, sizeof line, f)) {
        rel_event e;
        size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n') break; /* a torn tail */
        if (!rel_ledger_parse(line, proc, &e)) continue;
        if (*n + 1 > cap) {
            size_t nc = cap ? cap * 2 : 1024;
            rel_event *p = realloc(*ev, nc * sizeof *p);
            if (p == NULL) {
                fclose(f);
                return -1;
            }
            *ev = p;
            cap = nc;
        }
        (*ev)[(*n)++] = e;
    }
    fclose(f);
    return 0;
}

long rel_passed, rel_failed;

int rel_import_raw(emq_db *db, const void *p, size_t n,
                   emq_transfer_summary *sum)
{
    emq_import_options o;
    emq_importer *im;
    int rc;
    emq_import_options_init(&o);
    o.format = EMQ_IMPORT_RAW;
    if ((rc = emq_import_begin(db, &o, &im)) != EMQ_OK)
        return rc;
    if ((rc = emq_import_feed(im, p, n)) != EMQ_OK) {
        emq_import_abort(im);
        return rc;
    }
    return emq_import_finish(im, sum);
}
