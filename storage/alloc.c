/*
 * alloc.c — the one door emqlite's own heap memory goes through.
 *
 * Every allocation in storage/ and engine/ (buffers, hash codecs, handles,
 * results handed to the caller) calls emq_mem_*(), which call the allocator
 * the application installed with emq_set_allocator(), libc's by default.
 * SQLite's allocations are SQLite's: sqlite3_config(SQLITE_CONFIG_MALLOC).
 *
 * The allocator may only change while no store is open, so a block is always
 * freed by the allocator that made it (results the caller still holds are
 * the caller's to release first; see emqlite.h).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "store.h"

static void *libc_malloc(void *ctx, size_t n)
{
    (void)ctx;
    return malloc(n);
}

static void *libc_realloc(void *ctx, void *p, size_t n)
{
    (void)ctx;
    return realloc(p, n);
}

static void libc_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static const emq_allocator libc_allocator = {
    libc_malloc, libc_realloc, libc_free, NULL
};

static emq_allocator cur = {libc_malloc, libc_realloc, libc_free, NULL};
static atomic_long open_stores;

int emq_set_allocator(const emq_allocator *a)
{
    if (a != NULL && (a->malloc_fn == NULL || a->realloc_fn == NULL ||
                      a->free_fn == NULL))
        return EMQ_EINVAL;
    if (atomic_load(&open_stores) != 0)
        return EMQ_EINVAL;
    cur = a ? *a : libc_allocator;
    return EMQ_OK;
}

void emq_mem_hold(void) { atomic_fetch_add(&open_stores, 1); }
void emq_mem_release(void) { atomic_fetch_sub(&open_stores, 1); }

/* A request of 0 bytes asks for 1, so NULL always means "out of memory". */
void *emq_mem_malloc(size_t n)
{
    return cur.malloc_fn(cur.ctx, n ? n : 1);
}

void *emq_mem_calloc(size_t count, size_t size)
{
    void *p;
    if (size != 0 && count > SIZE_MAX / size)
        return NULL;
    if ((p = emq_mem_malloc(count * size)) != NULL)
        memset(p, 0, count * size);
    return p;
}

void *emq_mem_realloc(void *p, size_t n)
{
    return cur.realloc_fn(cur.ctx, p, n ? n : 1);
}

void emq_mem_free(void *p)
{
    if (p != NULL)
        cur.free_fn(cur.ctx, p);
}
