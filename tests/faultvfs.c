/*
 * faultvfs.c — the fault-injecting, power-loss-simulating test VFS (see
 * faultvfs.h for the model).
 *
 * Rule: every method forwards to the wrapped file, except xSync, which only
 * marks the bytes durable in the model (no real fsync: the simulated power
 * loss, not the disk, decides what survives); a fault or a dead machine is
 * decided before the forward, so a failed write changes nothing on disk.
 * Undo logs are kept per path (several connections write one WAL) and hold
 * the bytes a write replaced, read back through the real file first.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include "faultvfs.h"

/* ------------------------------------------------------------- undo logs */

typedef struct undo {
    int64_t off;            /* where the write landed (-1: a truncate)     */
    int64_t old_size;       /* the file's size before it                   */
    unsigned char *old;     /* the bytes it replaced (within old_size)     */
    int64_t old_len;
} undo;

typedef struct ulog {
    char *path;
    undo *u;
    size_t n, cap;
    struct ulog *next;
} ulog;

static struct {
    sqlite3_vfs vfs;        /* ours                                        */
    sqlite3_vfs *real;      /* the default we wrap                         */
    int installed;
    long count[FV_NKIND];
    int arm_kind;
    long arm_at;            /* fire when count[arm_kind] reaches this      */
    int arm_err, arm_sticky, fired;
    int track, dead;
    ulog *logs;
} g;

static ulog *log_for(const char *path, int create)
{
    ulog *l;
    for (l = g.logs; l; l = l->next)
        if (strcmp(l->path, path) == 0) return l;
    if (!create) return NULL;
    l = calloc(1, sizeof *l);
    if (l == NULL) return NULL;
    l->path = strdup(path);
    if (l->path == NULL) {
        free(l);
        return NULL;
    }
    l->next = g.logs;
    g.logs = l;
    return l;
}

static void log_clear(ulog *l)
{
    size_t i;
    for (i = 0; i < l->n; i++) free(l->u[i].old);
    l->n = 0;
}

static void logs_free(void)
{
    while (g.logs) {
        ulog *l = g.logs;
        g.logs = l->next;
        log_clear(l);
        free(l->u);
        free(l->path);
        free(l);
    }
}

static int log_push(ulog *l, undo u)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 16;
        undo *p = realloc(l->u, nc * sizeof *p);
        if (p == NULL) return -1;
        l->u = p;
        l->cap = nc;
    }
    l->u[l->n++] = u;
    return 0;
}

/* ------------------------------------------------------------ the files */

typedef struct fv_file {
    sqlite3_file base;
    sqlite3_file *real;     /* lives right after this struct               */
    char *path;             /* NULL for temporary files                    */
} fv_file;

#define REAL(f) (((fv_file *)(f))->real)

/* Count one I/O point of `kind`; returns the injected error or 0. */
static int point(int kind)
{
    g.count[kind]++;
    if (g.arm_at > 0 && kind == g.arm_kind &&
        (g.count[kind] == g.arm_at ||
         (g.arm_sticky && g.count[kind] > g.arm_at))) {
        g.fired = 1;
        if (g.arm_err == 0) { /* the machine dies at this point */
            g.dead = 1;
            return kind == FV_SYNC ? SQLITE_IOERR_FSYNC
                   : kind == FV_WRITE ? SQLITE_IOERR_WRITE
                                      : SQLITE_IOERR_READ;
        }
        return g.arm_err;
    }
    return 0;
}

/* Save what a write of n bytes at off (or a truncate to off, n < 0) is
 * about to replace. */
static int save(fv_file *f, int64_t off, int64_t n)
{
    sqlite3_int64 size = 0;
    ulog *l;
    undo u;
    if (!g.track || f->path == NULL) return SQLITE_OK;
    if (REAL(f)->pMethods->xFileSize(REAL(f), &size) != SQLITE_OK)
        return SQLITE_IOERR;
    if ((l = log_for(f->path, 1)) == NULL) return SQLITE_NOMEM;
    memset(&u, 0, sizeof u);
    u.off = n < 0 ? -1 : off;
    u.old_size = size;
    /* bytes of the old file that the operation overwrites or cuts off */
    int64_t from = off;
    int64_t to = n < 0 ? size : (off + n < size ? off + n : size);
    if (to > from) {
        u.old_len = to - from;
        u.old = malloc((size_t)u.old_len);
        if (u.old == NULL) return SQLITE_NOMEM;
        if (REAL(f)->pMethods->xRead(REAL(f), u.old, (int)u.old_len, from) !=
            SQLITE_OK) {
            free(u.old);
            return SQLITE_IOERR;
        }
        u.off = from;
    }
    if (log_push(l, u) != 0) {
        free(u.old);
        return SQLITE_NOMEM;
    }
    return SQLITE_OK;
}

static int u_close(sqlite3_file *f)
{
    fv_file *p = (fv_file *)f;
    int rc = p->real->pMethods ? p->real->pMethods->xClose(p->real)
                               : SQLITE_OK;
    free(p->path);
    p->path = NULL;
    return rc;
}

static int u_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
    int e;
    if (g.dead) return SQLITE_IOERR_READ;
    e = point(FV_READ);
    if (e) return e;
    return REAL(f)->pMethods->xRead(REAL(f), buf, n, off);
}

static int u_write(sqlite3_file *f, const void *buf, int n,
                   sqlite3_int64 off)
{
    int e;
    if (g.dead) return SQLITE_IOERR_WRITE;
    if ((e = point(FV_WRITE)) != 0) return e;
    if ((e = save((fv_file *)f, off, n)) != SQLITE_OK) return e;
    return REAL(f)->pMethods->xWrite(REAL(f), buf, n, off);
}

static int u_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    int e;
    if (g.dead) return SQLITE_IOERR_TRUNCATE;
    if ((e = save((fv_file *)f, size, -1)) != SQLITE_OK) return e;
    return REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int u_sync(sqlite3_file *f, int flags)
{
    fv_file *p = (fv_file *)f;
    int e, rc;
    if (g.dead) return SQLITE_IOERR_FSYNC;
    if ((e = point(FV_SYNC)) != 0) return e;
    /* Durability is the model's (the undo logs), not the disk's: a real
     * fsync would only make the tests slow. */
    (void)flags;
    rc = SQLITE_OK;
    if (rc == SQLITE_OK && p->path) {
        ulog *l = log_for(p->path, 0);
        if (l) log_clear(l);
    }
    return rc;
}

static int fv_size(sqlite3_file *f, sqlite3_int64 *size)
{
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int fv_lock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xLock(REAL(f), l);
}

static int fv_unlock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xUnlock(REAL(f), l);
}

static int fv_reserved(sqlite3_file *f, int *out)
{
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int fv_fcntl(sqlite3_file *f, int op, void *arg)
{
    if (op == SQLITE_FCNTL_MMAP_SIZE) { /* keep every read an xRead */
        if (arg) *(sqlite3_int64 *)arg = 0;
        return SQLITE_OK;
    }
    return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int fv_sector(sqlite3_file *f)
{
    return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int fv_devchar(sqlite3_file *f)
{
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int fv_shm_map(sqlite3_file *f, int pg, int pgsz, int extend,
                      void volatile **pp)
{
    return REAL(f)->pMethods->xShmMap(REAL(f), pg, pgsz, extend, pp);
}

static int fv_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
    return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}

static void fv_shm_barrier(sqlite3_file *f)
{
    REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int fv_shm_unmap(sqlite3_file *f, int del)
{
    return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

/* Handles in several threads (tests of group commit) share the counters,
 * the undo logs and the power switch: one lock around every method that
 * reads or writes them. */
static pthread_mutex_t fv_mu = PTHREAD_MUTEX_INITIALIZER;
#define LOCKED(call)                                                       \
    do {                                                                   \
        int rc_;                                                           \
        pthread_mutex_lock(&fv_mu);                                        \
        rc_ = (call);                                                      \
        pthread_mutex_unlock(&fv_mu);                                      \
        return rc_;                                                        \
    } while (0)

static int fv_close(sqlite3_file *f) { LOCKED(u_close(f)); }
static int fv_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
    LOCKED(u_read(f, buf, n, off));
}
static int fv_write(sqlite3_file *f, const void *buf, int n,
                    sqlite3_int64 off)
{
    LOCKED(u_write(f, buf, n, off));
}
static int fv_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    LOCKED(u_truncate(f, size));
}
static int fv_sync(sqlite3_file *f, int flags) { LOCKED(u_sync(f, flags)); }

static const sqlite3_io_methods fv_io = {
    2, /* no xFetch/xUnfetch: no memory-mapped reads */
    fv_close, fv_read, fv_write, fv_truncate, fv_sync, fv_size, fv_lock,
    fv_unlock, fv_reserved, fv_fcntl, fv_sector, fv_devchar, fv_shm_map,
    fv_shm_lock, fv_shm_barrier, fv_shm_unmap, NULL, NULL,
};

/* -------------------------------------------------------------- the VFS */

static int u_open(sqlite3_vfs *v, const char *name, sqlite3_file *f,
                  int flags, int *out)
{
    fv_file *p = (fv_file *)f;
    int rc;
    (void)v;
    memset(p, 0, sizeof *p);
    p->real = (sqlite3_file *)&p[1];
    rc = g.real->xOpen(g.real, name, p->real, flags, out);
    if (rc != SQLITE_OK) {
        /* xClose is still called by SQLite when pMethods is set */
        if (p->real->pMethods) p->base.pMethods = &fv_io;
        return rc;
    }
    if (name) {
        p->path = strdup(name);
        if (p->path == NULL) {
            p->real->pMethods->xClose(p->real);
            return SQLITE_NOMEM;
        }
    }
    p->base.pMethods = &fv_io;
    return SQLITE_OK;
}

static int u_delete(sqlite3_vfs *v, const char *name, int dirsync)
{
    ulog *l;
    (void)v;
    if (g.dead) return SQLITE_IOERR_DELETE;
    if ((l = log_for(name, 0)) != NULL) log_clear(l);
    (void)dirsync; /* directory entries are durable in the model */
    return g.real->xDelete(g.real, name, 0);
}

static int fv_open(sqlite3_vfs *v, const char *name, sqlite3_file *f,
                   int flags, int *out)
{
    LOCKED(u_open(v, name, f, flags, out));
}

static int fv_delete(sqlite3_vfs *v, const char *name, int dirsync)
{
    LOCKED(u_delete(v, name, dirsync));
}

static int fv_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
    (void)v;
    return g.real->xAccess(g.real, name, flags, out);
}

static int fv_fullpath(sqlite3_vfs *v, const char *name, int n, char *out)
{
    (void)v;
    return g.real->xFullPathname(g.real, name, n, out);
}

static void *fv_dlopen(sqlite3_vfs *v, const char *p)
{
    (void)v;
    return g.real->xDlOpen(g.real, p);
}

static void fv_dlerror(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    g.real->xDlError(g.real, n, out);
}

static void (*fv_dlsym(sqlite3_vfs *v, void *h, const char *s))(void)
{
    (void)v;
    return g.real->xDlSym(g.real, h, s);
}

static void fv_dlclose(sqlite3_vfs *v, void *h)
{
    (void)v;
    g.real->xDlClose(g.real, h);
}

static int fv_random(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return g.real->xRandomness(g.real, n, out);
}

static int fv_sleep(sqlite3_vfs *v, int us)
{
    (void)v;
    return g.real->xSleep(g.real, us);
}

static int fv_time(sqlite3_vfs *v, double *out)
{
    (void)v;
    return g.real->xCurrentTime(g.real, out);
}

static int fv_lasterr(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return g.real->xGetLastError(g.real, n, out);
}

static int fv_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
    (void)v;
    return g.real->xCurrentTimeInt64(g.real, out);
}

int fv_install(void)
{
    if (g.installed) return 0;
    if (sqlite3_initialize() != SQLITE_OK) return -1;
    g.real = sqlite3_vfs_find(NULL);
    if (g.real == NULL || g.real->iVersion < 2) return -1;
    memset(&g.vfs, 0, sizeof g.vfs);
    g.vfs.iVersion = 2;
    g.vfs.szOsFile = (int)sizeof(fv_file) + g.real->szOsFile;
    g.vfs.mxPathname = g.real->mxPathname;
    g.vfs.zName = "emqfault";
    g.vfs.xOpen = fv_open;
    g.vfs.xDelete = fv_delete;
    g.vfs.xAccess = fv_access;
    g.vfs.xFullPathname = fv_fullpath;
    g.vfs.xDlOpen = fv_dlopen;
    g.vfs.xDlError = fv_dlerror;
    g.vfs.xDlSym = fv_dlsym;
    g.vfs.xDlClose = fv_dlclose;
    g.vfs.xRandomness = fv_random;
    g.vfs.xSleep = fv_sleep;
    g.vfs.xCurrentTime = fv_time;
    g.vfs.xGetLastError = fv_lasterr;
    g.vfs.xCurrentTimeInt64 = fv_time64;
    if (sqlite3_vfs_register(&g.vfs, 1) != SQLITE_OK) return -1;
    g.installed = 1;
    fv_disarm();
    fv_count_reset();
    return 0;
}

void fv_uninstall(void)
{
    if (!g.installed) return;
    sqlite3_vfs_unregister(&g.vfs);
    sqlite3_vfs_register(g.real, 1);
    g.installed = 0;
    g.track = 0;
    g.dead = 0;
    fv_disarm();
    logs_free();
}

void fv_count_reset(void)
{
    memset(g.count, 0, sizeof g.count);
    if (g.arm_at > 0) g.arm_at = 0;
}

long fv_count(int kind)
{
    long n;
    pthread_mutex_lock(&fv_mu);
    n = g.count[kind];
    pthread_mutex_unlock(&fv_mu);
    return n;
}

void fv_arm(int kind, long nth, int err, int sticky)
{
    g.arm_kind = kind;
    g.arm_at = nth > 0 ? g.count[kind] + nth : 0;
    g.arm_err = err;
    g.arm_sticky = sticky;
    g.fired = 0;
}

void fv_disarm(void)
{
    g.arm_at = 0;
}

int fv_fired(void)
{
    return g.fired;
}

void fv_track(int on)
{
    ulog *l;
    for (l = g.logs; l; l = l->next) log_clear(l);
    g.track = on;
}

long fv_unsynced(void)
{
    long n = 0;
    ulog *l;
    for (l = g.logs; l; l = l->next) n += (long)l->n;
    return n;
}

void fv_power_off(void)
{
    pthread_mutex_lock(&fv_mu);
    g.dead = 1;
    pthread_mutex_unlock(&fv_mu);
}

/* xorshift64*: the draw of the kept prefix. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

long fv_power_loss(int keep_prefix, uint64_t seed)
{
    long dropped = 0;
    uint64_t rs = seed ? seed : 88172645463325252ULL;
    ulog *l;
    for (l = g.logs; l; l = l->next) {
        size_t keep = 0, i, pl = strlen(l->path);
        int fd;
        /* the shared-memory index of a WAL database is volatile */
        if (pl > 4 && strcmp(l->path + pl - 4, "-wal") == 0) {
            char *shm = strdup(l->path);
            if (shm) {
                memcpy(shm + pl - 4, "-shm", 4);
                unlink(shm);
                free(shm);
            }
        }
        if (l->n == 0) continue;
        if (keep_prefix == 2) keep = l->n; /* the disk got everything */
        else if (keep_prefix) keep = (size_t)(next_rand(&rs) % (l->n + 1));
        fd = open(l->path, O_WRONLY);
        if (fd < 0) return -1;
        for (i = l->n; i > keep; i--) {
            const undo *u = &l->u[i - 1];
            if (u->old_len > 0 &&
                pwrite(fd, u->old, (size_t)u->old_len, u->off) !=
                    (ssize_t)u->old_len) {
                close(fd);
                return -1;
            }
            if (ftruncate(fd, u->old_size) != 0) {
                close(fd);
                return -1;
            }
            dropped++;
        }
        close(fd);
        log_clear(l);
    }
    g.dead = 0;
    return dropped;
}
