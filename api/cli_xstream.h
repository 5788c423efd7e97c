/*
 * cli_xstream.h — a stream key in the tool's transfers (push, pull,
 * verify): its image built from a server's XINFO STREAM FULL reply or from
 * the stream commands of an export, written back as those commands, and
 * its digest body (doc/EXPORT.md §3), recomputed here independently of the
 * library, as the verifier of the other types is.
 *
 * Used by api/cli_transfer.c (which holds hiredis replies); nothing here
 * talks to a server.
 */
#ifndef EMQ_CLI_XSTREAM_H
#define EMQ_CLI_XSTREAM_H

#include <stddef.h>
#include <stdint.h>

typedef struct xs_img xs_img;

/** A growable byte buffer (malloc). */
typedef struct xs_buf {
    unsigned char *p;
    size_t len, cap;
} xs_buf;
void xs_buf_free(xs_buf *b);

xs_img *xs_new(void);
void xs_free(xs_img *x);

/**
 * Fill `x` from the RESP2 reply to XINFO STREAM <key> FULL COUNT 0, given
 * as a tree of (type, string, integer, children) through the accessors the
 * caller passes (so this file needs no hiredis). Returns 0, or -1 for a
 * reply of another shape, -2 out of memory.
 */
typedef struct xs_node {
    int kind;            /* 's' string/status, 'i' integer, 'a' array,
                            'n' nil                                     */
    const char *str;
    size_t len;
    long long integer;
    size_t n;            /* children of an array */
    const void *self;    /* the caller's node */
} xs_node;
typedef void (*xs_child_fn)(const void *node, size_t i, xs_node *out);
int xs_from_xinfo(xs_img *x, const xs_node *root, xs_child_fn child);

/**
 * Feed one stream command of an export (XADD, XSETID, XGROUP CREATE /
 * CREATECONSUMER, XCLAIM ... FORCE JUSTID). Returns 0, or -1 for a command
 * an export does not write.
 */
int xs_feed(xs_img *x, size_t argc, const unsigned char *const *argv,
            const size_t *lens);

/** 1 when command argv[0] is one of the stream commands of an export. */
int xs_is_cmd(const unsigned char *arg0, size_t len);

/** The digest body of the image (appended to `out`). 0 or -2. */
int xs_body(xs_img *x, xs_buf *out);

/** The commands an export writes for the image of `key`, as RESP
 *  (appended to `out`); *ncmd receives how many. 0 or -2. */
int xs_commands(xs_img *x, const void *key, size_t klen, xs_buf *out,
                uint64_t *ncmd);

/** The number of entries of the image (for the verifier's notes). */
size_t xs_entries(const xs_img *x);

#endif /* EMQ_CLI_XSTREAM_H */
