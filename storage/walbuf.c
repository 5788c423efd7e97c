/*
 * walbuf.c — one write per commit: a VFS shim over SQLite's default VFS
 * that gathers the frames a transaction appends to the -wal file and hands
 * them to the kernel in one pwrite once its commit frame is complete.
 *
 * Why: SQLite writes each WAL frame with two calls (the 24-byte frame
 * header, then the page), so an enqueue of three frames cost six pwrite
 * and a claim-complete cycle about thirty; the kernel's share of a
 * transition was larger than SQLite's own work (BENCHMARKS.md).
 *
 * Ordering, which makes it safe: no connection reads a frame before the
 * wal-index header that covers it is published, and SQLite publishes that
 * header only after the commit's frames are written. The shim flushes
 *  - when the page of a commit frame (a frame header whose "database size
 *    after commit" field is non-zero) has been gathered: from inside that
 *    xWrite, so a failed flush fails the commit exactly as a failed pwrite
 *    would, before the wal-index learns of any of its frames;
 *  - before every other call on the -wal (sync, truncate, size, lock, file
 *    control, close) and before a read across the gathered bytes' edge (a
 *    read inside them is served from them, one elsewhere from the file):
 *    SQLite always sees the file it wrote;
 *  - before every wal-index lock change and barrier of the database the
 *    -wal belongs to, so frames a rolled-back transaction spilled (a page
 *    cache overflow) reach the file before its write lock is released and
 *    can never land on top of another connection's later frames;
 *  - when a write would overflow the buffer or is not the byte after the
 *    gathered ones (a restart at offset 0), unless it lies inside them (a
 *    frame rewritten in place: patched in the buffer).
 * A flush that fails where no error can be returned (a barrier, an unlock)
 * drops what it could not write: at those points the buffer can only hold
 * frames of a transaction that has failed or rolled back, because a
 * commit's frames were flushed by its own commit write.
 *
 * Durability is SQLite's: with synchronous NORMAL a commit's frames are in
 * the kernel before the commit returns (a killed process loses nothing
 * acknowledged); with FULL the -wal's xSync flushes before it syncs.
 *
 * The shim also makes the wal-index safe on a full disk: every region of
 * the -shm SQLite maps is populated before use (wb_shm_map), so a store
 * to it never faults. Every connection of a handle — read-write, read-only,
 * the look at a file before it is opened — goes through the shim.
 *
 * Rules: one shim per underlying VFS, registered on first use and never
 * unregistered (named "emqwal-" + its name); only main databases and their
 * -wal files are wrapped, every other file gets the underlying methods
 * untouched. One buffer per open -wal, grown up to WB_MAX bytes; when it
 * cannot be allocated, writes go straight through.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "store_int.h"

enum {
    WB_FIRST = 16 * 1024,      /* first buffer size                    */
    WB_MAX = 64 * 1024,        /* at most this per write: SQLite's unix
                                * VFS masks one write's length to 17 bits */
    WB_FRAME_HDR = 24,         /* a WAL frame header                   */
    WB_SHIMS = 8               /* distinct underlying VFSes            */
};

typedef struct wb_file wb_file;
struct wb_file {
    sqlite3_file base;         /* our methods                                */
    sqlite3_file *real;        /* the underlying file, right after us        */
    int is_wal;                /* a -wal (gathers) or a main database        */
    const char *name;          /* main: the name SQLite opened it by         */
    wb_file *peer;             /* main <-> its open -wal (same connection)   */
    wb_file *next;             /* main: the list of open main databases      */
    unsigned char *buf;        /* -wal: gathered bytes ...                   */
    size_t len, cap;
    sqlite3_int64 off;         /* ... starting at this offset                */
    int commit_next;           /* the last write was a commit frame header   */
    unsigned pages;            /* -wal: the database's size in pages that
                                * its last commit frame written gave (0: none
                                * written through this handle yet)           */
    unsigned commit_pages;     /* the same of the commit frame being written */
    long flushes, writes;      /* calls out and in (emq_walbuf_stats)        */
};

typedef struct wb_shim {
    sqlite3_vfs vfs;
    sqlite3_vfs *real;
    char name[64];
} wb_shim;

static pthread_mutex_t wb_lock = PTHREAD_MUTEX_INITIALIZER;
static wb_shim shims[WB_SHIMS];
static int nshims;
static wb_file *mains;          /* under wb_lock */

static const sqlite3_io_methods wb_methods_v1, wb_methods_v2, wb_methods_v3;

/* -------------------------------------------------------------- gathering */

/* One call to the underlying file: counted. */
static int put(wb_file *w, const void *data, int amt, sqlite3_int64 at)
{
    w->flushes++;
    return w->real->pMethods->xWrite(w->real, data, amt, at);
}

/* Write the gathered bytes; the buffer is empty afterwards whatever the
 * outcome (a failed flush is reported once, by the caller). */
static int flush(wb_file *w)
{
    int rc = SQLITE_OK;
    if (w->len)
        rc = put(w, w->buf, (int)w->len, w->off);
    w->len = 0;
    return rc;
}

/* Room for `need` bytes in the buffer; 0 when it cannot grow. */
static int reserve(wb_file *w, size_t need)
{
    size_t cap = w->cap ? w->cap : WB_FIRST;
    unsigned char *p;
    if (need <= w->cap)
        return 1;
    if (need > WB_MAX)
        return 0;
    while (cap < need)
        cap *= 2;
    if (cap > WB_MAX)
        cap = WB_MAX;
    p = emq_mem_realloc(w->buf, cap);
    if (!p)
        return 0;
    w->buf = p;
    w->cap = cap;
    return 1;
}

static int wal_write(wb_file *w, const void *data, int amt, sqlite3_int64 at)
{
    const unsigned char *b = data;
    sqlite3_int64 end = w->off + (sqlite3_int64)w->len;
    int rc = SQLITE_OK, header;
    w->writes++;
    header = amt == WB_FRAME_HDR &&
             (b[4] | b[5] | b[6] | b[7]) != 0; /* commit frame header */
    if (w->len && at >= w->off && at + amt <= end) {
        /* Inside the gathered bytes: a frame rewritten in place. */
        memcpy(w->buf + (at - w->off), data, (size_t)amt);
    } else if (w->len && at == end && reserve(w, w->len + (size_t)amt)) {
        memcpy(w->buf + w->len, data, (size_t)amt);
        w->len += (size_t)amt;
    } else if (w->len && at + amt <= w->off) {
        /* Before the gathered bytes, not touching them (a page rewritten
         * in an earlier, flushed frame): order between the two does not
         * matter, nobody reads either before the next flush point. */
        rc = put(w, data, amt, at);
    } else if ((rc = flush(w)) != SQLITE_OK) {
        return rc;
    } else if (reserve(w, (size_t)amt)) {
        memcpy(w->buf, data, (size_t)amt);
        w->len = (size_t)amt;
        w->off = at;
    } else {
        rc = put(w, data, amt, at);
    }
    if (rc != SQLITE_OK)
        return rc;
    if (header) {
        w->commit_next = 1;
        w->commit_pages = (unsigned)b[4] << 24 | (unsigned)b[5] << 16 |
                          (unsigned)b[6] << 8 | b[7];
    } else if (w->commit_next) {
        w->commit_next = 0;
        rc = flush(w); /* the commit frame's page: out before it counts */
        if (rc == SQLITE_OK)
            w->pages = w->commit_pages; /* a commit that failed says none */
    }
    return rc;
}

/* Before a wal-index lock change or barrier of a main database: its -wal's
 * gathered bytes, if any, reach the file; what cannot is dropped. */
static int flush_peer(wb_file *main)
{
    return main->peer ? flush(main->peer) : SQLITE_OK;
}

/* --------------------------------------------------------------- methods */

#define REAL(f) (((wb_file *)(f))->real)

/* Before a call on the file: a -wal's gathered bytes reach it first. */
static int settle(sqlite3_file *f)
{
    wb_file *w = (wb_file *)f;
    return w->is_wal ? flush(w) : SQLITE_OK;
}

static int wb_close(sqlite3_file *f)
{
    wb_file *w = (wb_file *)f;
    int rc = settle(f), rc2;
    pthread_mutex_lock(&wb_lock);
    if (w->peer)
        w->peer->peer = NULL;
    if (!w->is_wal) {
        wb_file **pp = &mains;
        while (*pp && *pp != w)
            pp = &(*pp)->next;
        if (*pp)
            *pp = w->next;
    }
    pthread_mutex_unlock(&wb_lock);
    emq_mem_free(w->buf);
    w->buf = NULL;
    rc2 = w->real->pMethods->xClose(w->real);
    return rc != SQLITE_OK ? rc : rc2;
}

/* A read inside the gathered bytes is served from them, one that does not
 * touch them from the file (which holds every other byte); only a read
 * across their edge flushes first. */
static int wb_read(sqlite3_file *f, void *out, int amt, sqlite3_int64 at)
{
    wb_file *w = (wb_file *)f;
    int rc = SQLITE_OK;
    if (w->is_wal && w->len) {
        sqlite3_int64 end = w->off + (sqlite3_int64)w->len;
        if (at >= w->off && at + amt <= end) {
            memcpy(out, w->buf + (at - w->off), (size_t)amt);
            return SQLITE_OK;
        }
        if (at < end && at + amt > w->off && (rc = flush(w)) != SQLITE_OK)
            return rc;
    }
    return w->real->pMethods->xRead(w->real, out, amt, at);
}

static int wb_write(sqlite3_file *f, const void *data, int amt,
                    sqlite3_int64 at)
{
    wb_file *w = (wb_file *)f;
    if (w->is_wal)
        return wal_write(w, data, amt, at);
    return w->real->pMethods->xWrite(w->real, data, amt, at);
}

static int wb_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int wb_sync(sqlite3_file *f, int flags)
{
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int wb_size(sqlite3_file *f, sqlite3_int64 *out)
{
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xFileSize(REAL(f), out);
}

static int wb_lock_(sqlite3_file *f, int level)
{
    int rc = settle(f);
    return rc != SQLITE_OK ? rc : REAL(f)->pMethods->xLock(REAL(f), level);
}

static int wb_unlock(sqlite3_file *f, int level)
{
    (void)settle(f);
    return REAL(f)->pMethods->xUnlock(REAL(f), level);
}

static int wb_reserved(sqlite3_file *f, int *out)
{
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int wb_fcntl(sqlite3_file *f, int op, void *arg)
{
    int rc = settle(f);
    return rc != SQLITE_OK ? rc
                           : REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int wb_sector(sqlite3_file *f)
{
    return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int wb_devchar(sqlite3_file *f)
{
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

/*
 * A wal-index region is used through a shared map of the -shm file, and a
 * store to a page of it whose blocks are not allocated faults (SIGBUS) on
 * a full disk. SQLite's unix VFS sizes the -shm by writing one byte at the
 * end of each 4 KiB page, which allocates every block only where blocks
 * are 4 KiB: on a file system of 1 KiB blocks (mkfs.ext4's default below
 * 512 MB) three of each four stay holes. So every region SQLite maps is
 * populated for writing before SQLite may touch it (MADV_POPULATE_WRITE:
 * the kernel allocates each page's blocks now, and answers EFAULT instead
 * of raising SIGBUS when it cannot); a region that cannot be populated is
 * refused with SQLITE_FULL, which the caller reports as a full disk. A
 * populated page keeps its blocks while the file lives (SQLite never
 * shrinks a -shm in use). A read-only map (SQLITE_READONLY) is never
 * written; a kernel without the advice (before Linux 5.14) keeps the old
 * behaviour.
 */
static int populate(void volatile *p, int len)
{
#ifdef MADV_POPULATE_WRITE
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)p, start;
    if (page <= 0)
        page = 4096;
    start = a & ~(uintptr_t)(page - 1);
    if (madvise((void *)start, (size_t)(a - start) + (size_t)len,
                MADV_POPULATE_WRITE) != 0) {
        if (errno == EFAULT)
            return SQLITE_FULL;
        if (errno != EINVAL && errno != ENOSYS)
            return SQLITE_IOERR_SHMMAP;
    }
#else
    (void)p;
    (void)len;
#endif
    return SQLITE_OK;
}

static int wb_shm_map(sqlite3_file *f, int pg, int pgsz, int extend,
                      void volatile **out)
{
    int rc = REAL(f)->pMethods->xShmMap(REAL(f), pg, pgsz, extend, out);
    if (rc == SQLITE_OK && *out && (rc = populate(*out, pgsz)) != SQLITE_OK)
        *out = NULL;
    return rc;
}

static int wb_shm_lock(sqlite3_file *f, int at, int n, int flags)
{
    int rc = flush_peer((wb_file *)f);
    if (rc != SQLITE_OK && !(flags & SQLITE_SHM_UNLOCK))
        return rc;
    return REAL(f)->pMethods->xShmLock(REAL(f), at, n, flags);
}

static void wb_shm_barrier(sqlite3_file *f)
{
    (void)flush_peer((wb_file *)f);
    REAL(f)->pMethods->xShmBarrier(REAL(f));
}

/* The -shm is never deleted (SQLite deletes it when the last connection
 * closes after a full checkpoint): kept, the next first opener truncates
 * it and grows it again into the blocks the truncation just freed, so a
 * file closed on a full disk still opens there. A kept -shm is what a
 * crash leaves; SQLite rebuilds it at the next first open. */
static int wb_shm_unmap(sqlite3_file *f, int del)
{
    (void)del;
    (void)flush_peer((wb_file *)f);
    return REAL(f)->pMethods->xShmUnmap(REAL(f), 0);
}

static int wb_fetch(sqlite3_file *f, sqlite3_int64 at, int amt, void **out)
{
    int rc = settle(f);
    return rc != SQLITE_OK ? rc
                           : REAL(f)->pMethods->xFetch(REAL(f), at, amt, out);
}

static int wb_unfetch(sqlite3_file *f, sqlite3_int64 at, void *p)
{
    return REAL(f)->pMethods->xUnfetch(REAL(f), at, p);
}

#define WB_METHODS(version, fetch, unfetch)                                  \
    {version, wb_close, wb_read, wb_write, wb_truncate, wb_sync, wb_size,  \
     wb_lock_, wb_unlock, wb_reserved, wb_fcntl, wb_sector, wb_devchar,    \
     wb_shm_map, wb_shm_lock, wb_shm_barrier, wb_shm_unmap, fetch, unfetch}
static const sqlite3_io_methods wb_methods_v1 = WB_METHODS(1, NULL, NULL);
static const sqlite3_io_methods wb_methods_v2 = WB_METHODS(2, NULL, NULL);
static const sqlite3_io_methods wb_methods_v3 =
    WB_METHODS(3, wb_fetch, wb_unfetch);

/* ------------------------------------------------------------------- VFS */

static int wb_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f,
                   int flags, int *out_flags)
{
    sqlite3_vfs *real = ((wb_shim *)vfs)->real;
    wb_file *w = (wb_file *)f;
    int rc, wal = (flags & SQLITE_OPEN_WAL) != 0;
    if (!name || !(wal || (flags & SQLITE_OPEN_MAIN_DB)))
        /* Anything else keeps the underlying file as it is. */
        return real->xOpen(real, name, f, flags, out_flags);
    memset(w, 0, sizeof *w);
    w->real = (sqlite3_file *)(w + 1);
    w->is_wal = wal;
    w->name = name;
    rc = real->xOpen(real, name, w->real, flags, out_flags);
    if (rc != SQLITE_OK || !w->real->pMethods) {
        f->pMethods = NULL;
        return rc;
    }
    f->pMethods = w->real->pMethods->iVersion >= 3   ? &wb_methods_v3
                  : w->real->pMethods->iVersion == 2 ? &wb_methods_v2
                                                     : &wb_methods_v1;
    pthread_mutex_lock(&wb_lock);
    if (!wal) {
        w->next = mains;
        mains = w;
    } else {
        const char *db = sqlite3_filename_database(name);
        for (wb_file *m = mains; m; m = m->next)
            if (m->name == db && !m->peer) {
                m->peer = w;
                w->peer = m;
                break;
            }
    }
    pthread_mutex_unlock(&wb_lock);
    return SQLITE_OK;
}

#define FWD(f, ...) return ((wb_shim *)v)->real->f(((wb_shim *)v)->real, __VA_ARGS__)
static int wb_delete(sqlite3_vfs *v, const char *n, int s) { FWD(xDelete, n, s); }
static int wb_access(sqlite3_vfs *v, const char *n, int fl, int *o) { FWD(xAccess, n, fl, o); }
static int wb_full(sqlite3_vfs *v, const char *n, int k, char *o) { FWD(xFullPathname, n, k, o); }
static void *wb_dlopen(sqlite3_vfs *v, const char *p) { FWD(xDlOpen, p); }
static void wb_dlerror(sqlite3_vfs *v, int n, char *o) { FWD(xDlError, n, o); }
static void (*wb_dlsym(sqlite3_vfs *v, void *h, const char *s))(void) { FWD(xDlSym, h, s); }
static void wb_dlclose(sqlite3_vfs *v, void *h) { FWD(xDlClose, h); }
static int wb_random(sqlite3_vfs *v, int n, char *o) { FWD(xRandomness, n, o); }
static int wb_sleep(sqlite3_vfs *v, int us) { FWD(xSleep, us); }
static int wb_time(sqlite3_vfs *v, double *o) { FWD(xCurrentTime, o); }
static int wb_lasterr(sqlite3_vfs *v, int n, char *o) { FWD(xGetLastError, n, o); }
static int wb_time64(sqlite3_vfs *v, sqlite3_int64 *o) { FWD(xCurrentTimeInt64, o); }
#undef FWD

const char *emq_walbuf_vfs(void)
{
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    const char *name = NULL;
    int i;
    if (!real || real->iVersion < 2)
        return NULL;
    pthread_mutex_lock(&wb_lock);
    for (i = 0; i < nshims; i++)
        if (shims[i].real == real || &shims[i].vfs == real) {
            name = shims[i].name;
            goto done;
        }
    if (nshims == WB_SHIMS || strlen(real->zName) > sizeof shims[0].name - 8)
        goto done;
    wb_shim *s = &shims[nshims];
    memset(s, 0, sizeof *s);
    s->real = real;
    strcpy(s->name, "emqwal-");
    strcat(s->name, real->zName);
    s->vfs.iVersion = 2;
    s->vfs.szOsFile = (int)sizeof(wb_file) + real->szOsFile;
    s->vfs.mxPathname = real->mxPathname;
    s->vfs.zName = s->name;
    s->vfs.xOpen = wb_open;
    s->vfs.xDelete = wb_delete;
    s->vfs.xAccess = wb_access;
    s->vfs.xFullPathname = wb_full;
    s->vfs.xDlOpen = wb_dlopen;
    s->vfs.xDlError = wb_dlerror;
    s->vfs.xDlSym = wb_dlsym;
    s->vfs.xDlClose = wb_dlclose;
    s->vfs.xRandomness = wb_random;
    s->vfs.xSleep = wb_sleep;
    s->vfs.xCurrentTime = wb_time;
    s->vfs.xGetLastError = wb_lasterr;
    s->vfs.xCurrentTimeInt64 = wb_time64;
    if (sqlite3_vfs_register(&s->vfs, 0) == SQLITE_OK) {
        nshims++;
        name = s->name;
    }
done:
    pthread_mutex_unlock(&wb_lock);
    return name;
}

/* The open -wal of the connection's main database, when it is wrapped. */
static wb_file *wal_of(sqlite3 *db)
{
    sqlite3_file *f = NULL;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &f) ==
            SQLITE_OK && f &&
        (f->pMethods == &wb_methods_v1 || f->pMethods == &wb_methods_v2 ||
         f->pMethods == &wb_methods_v3))
        return ((wb_file *)f)->peer;
    return NULL;
}

void emq_walbuf_stats(sqlite3 *db, long *writes, long *flushes)
{
    wb_file *w = wal_of(db);
    *writes = w ? w->writes : 0;
    *flushes = w ? w->flushes : 0;
}

int64_t emq_walbuf_pages(sqlite3 *db)
{
    wb_file *w = wal_of(db);
    return w ? (int64_t)w->pages : 0;
}
