/*
 * resp.h — the RESP codec for command streams (exports, AOF files, pipes).
 *
 * Owns: reading commands — RESP arrays of bulk strings, the only frame an
 * AOF or a `redis-cli --pipe` stream holds — out of bytes, and writing
 * commands as such arrays. No I/O: the reader is fed bytes and yields
 * commands; the writer appends to an emq_buf. Inline commands, simple
 * strings, integers, nulls and nested arrays are refused as malformed.
 *
 * Rules: a yielded command's argument pointers point into the bytes being
 * parsed (the caller's buffer for emq_resp_parse, the reader's own buffer
 * for emq_resp_next) and stay valid only until the next call on the same
 * reader or buffer. Every offset is a byte offset from the start of the
 * stream, so a refusal can name where the bad frame is.
 */
#ifndef EMQ_RESP_H
#define EMQ_RESP_H

#include <stddef.h>
#include <stdint.h>
#include "store.h"

/** Positive "need more bytes" result of the parsers (not an error). */
#define EMQ_RESP_MORE 101

/** Limits a frame must respect (as Redis: 512 MiB per bulk). */
#define EMQ_RESP_MAX_ARGS  (1024 * 1024)
#define EMQ_RESP_MAX_BULK  ((size_t)512 * 1024 * 1024)

/** One command: argc arguments as (pointer, length) views. */
typedef struct emq_resp_cmd {
    size_t argc;
    const unsigned char **argv; /* argv[i][lens[i]] is the byte after the arg */
    size_t *lens;
    size_t cap;                 /* room in argv/lens (owned by the struct)  */
    uint64_t offset;            /* stream offset of the frame's '*'          */
    size_t size;                /* bytes the frame occupies                  */
} emq_resp_cmd;

/** Release the argument arrays of `c` (not the bytes they point at). */
void emq_resp_cmd_free(emq_resp_cmd *c);

/** Where and why a parse failed. */
typedef struct emq_resp_error {
    uint64_t frame;   /* stream offset of the malformed frame's first byte */
    uint64_t at;      /* stream offset of the first offending byte          */
    char msg[80];     /* a short English description                        */
} emq_resp_error;

/**
 * Parse one command from the start of `p[0..n)`, which sits at stream offset
 * `base`. Returns EMQ_OK with `*cmd` filled (cmd->size bytes used),
 * EMQ_RESP_MORE when the bytes end inside a frame (n == 0 included),
 * EMQ_EPROTO when the frame is malformed (`err`, may be NULL, says where),
 * or EMQ_ENOMEM. Stateless: the caller keeps the position.
 */
int emq_resp_parse(const void *p, size_t n, uint64_t base, emq_resp_cmd *cmd,
                   emq_resp_error *err);

/** An incremental reader: feed it bytes in any split, take commands out. */
typedef struct emq_resp_reader {
    emq_buf buf;        /* bytes fed and not yet consumed start at `pos`   */
    size_t pos;
    uint64_t consumed;  /* stream offset of buf.p[0]                       */
    emq_resp_cmd cmd;   /* the last command yielded                        */
    int failed;         /* a malformed frame was met: the reader is stuck  */
    emq_resp_error err;
} emq_resp_reader;

void emq_resp_reader_init(emq_resp_reader *r);
void emq_resp_reader_free(emq_resp_reader *r);
/** Append `n` bytes to the reader. EMQ_OK or EMQ_ENOMEM. Invalidates the
 *  last command's pointers. */
int emq_resp_feed(emq_resp_reader *r, const void *p, size_t n);
/**
 * Take the next complete command: EMQ_OK with `*out` pointing at the
 * reader's command (valid until the next feed/next), EMQ_RESP_MORE when no
 * complete frame is buffered, EMQ_EPROTO when the next frame is malformed
 * (then every later call answers EMQ_EPROTO too; see emq_resp_reader_error),
 * or EMQ_ENOMEM.
 */
int emq_resp_next(emq_resp_reader *r, const emq_resp_cmd **out);
/** The raw bytes of the command emq_resp_next last yielded (its `size`
 *  bytes; valid until the next feed/next). */
const unsigned char *emq_resp_frame(const emq_resp_reader *r);
/** Bytes buffered that do not yet form a complete frame (at end of input,
 *  nonzero means the stream was truncated). */
size_t emq_resp_pending(const emq_resp_reader *r);
/** Stream offset of the first byte not yet consumed. */
uint64_t emq_resp_offset(const emq_resp_reader *r);
/** The error of the last EMQ_EPROTO. */
const emq_resp_error *emq_resp_reader_error(const emq_resp_reader *r);

/* ------------------------------------------------------------- writer */

/** Append the array header "*<n>\r\n". EMQ_OK or EMQ_ENOMEM. */
int emq_resp_write_array(emq_buf *out, size_t n);
/** Append one bulk string "$<len>\r\n<bytes>\r\n". */
int emq_resp_write_bulk(emq_buf *out, const void *p, size_t len);
/** Append a decimal integer as a bulk string. */
int emq_resp_write_bulk_i64(emq_buf *out, int64_t v);
/** Append a whole command of `argc` arguments. */
int emq_resp_write_cmd(emq_buf *out, size_t argc, const emq_bytes *argv);

#endif /* EMQ_RESP_H */
