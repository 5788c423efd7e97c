/*
 * abi.h — reading and filling the caller's options structs under the
 * extensible-struct rule (engine/core/abi.c).
 */
#ifndef EMQ_ABI_H
#define EMQ_ABI_H

#include <stddef.h>

/* Fill the caller's struct `dst` of `size` bytes from the library's
 * defaults `def` (`full` bytes): the bytes both know, zeros beyond, and
 * `size` in its first field. Nothing is written when `size` cannot hold
 * the size field. */
void emq_struct_out(void *dst, size_t size, const void *def, size_t full);

/* Read the caller's struct `src` over `dst` (the library's `full`-byte
 * struct, already holding the defaults): the first min(src->size, full)
 * bytes. EMQ_EINVAL when src->size cannot hold the size field (the struct
 * was not initialised by its init) or a byte beyond `full` is set (a field
 * this library does not know); `dst` is then unchanged. */
int emq_struct_in(void *dst, size_t full, const void *src);

#endif
