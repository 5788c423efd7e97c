/*
 * abi.c — the extensible-struct rule of emqlite.h ("Structs and the ABI"):
 * how the library reads and fills an options struct that a caller compiled
 * against an older or a newer header. Every such struct begins with
 * `size_t size`, the caller's sizeof, written by its init macro.
 */
#include <string.h>

#include "abi.h"
#include "emqlite.h"

void emq_struct_out(void *dst, size_t size, const void *def, size_t full)
{
    unsigned char *d = dst;

    if (size < sizeof(size_t)) return;
    memcpy(d, def, size < full ? size : full);
    if (size > full) memset(d + full, 0, size - full);
    memcpy(d, &size, sizeof size);
}

int emq_struct_in(void *dst, size_t full, const void *src)
{
    const unsigned char *s = src;
    size_t size, i;

    memcpy(&size, s, sizeof size);
    if (size < sizeof(size_t)) return EMQ_EINVAL;
    for (i = full; i < size; i++)
        if (s[i] != 0) return EMQ_EINVAL;
    memcpy(dst, s, size < full ? size : full);
    memcpy(dst, &full, sizeof full);
    return EMQ_OK;
}
