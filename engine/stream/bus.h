/*
 * stream_int.h — what the stream verbs (stream.c), their typed calls and
 * consumer loop (stream_api.c) and their export (export_stream.c) share
 * (internal to the engine).
 */
#ifndef EMQ_STREAM_INT_H
#define EMQ_STREAM_INT_H

#include <stddef.h>
#include "emqlite.h"

/** emq_stream_entry_id's refusals (positive). */
#define EMQ_STREAM_MALFORMED 1
#define EMQ_STREAM_KIND      2

/**
 * T5.1 entry_id(branded): "<unix ms>-<low 22 bits>" of an EVT branded id,
 * into `out` (EMQ_XID_SIZE bytes) and *outlen. Returns EMQ_OK, or
 * EMQ_STREAM_MALFORMED (not a valid branded id) / EMQ_STREAM_KIND (another
 * namespace).
 */
int emq_stream_entry_id(const char *branded, size_t len, char *out,
                        size_t *outlen);

#endif /* EMQ_STREAM_INT_H */
