/*
 * resp.c — the RESP command codec (see resp.h).
 *
 * A frame is `*<n>\r\n` followed by n bulk strings `$<len>\r\n<len bytes>\r\n`
 * with n >= 1. Counts and lengths are plain decimal (no sign, no leading
 * zero, no spaces); every line ends in CR LF exactly. The parser reads
 * strictly left to right, so a defect is reported as soon as its byte is
 * seen, even in a frame whose tail has not arrived yet; "need more" is
 * answered only when the bytes end while the frame is still well formed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "resp.h"

/* -------------------------------------------------------------- reading */

void emq_resp_cmd_free(emq_resp_cmd *c)
{
    emq_mem_free(c->argv);
    emq_mem_free(c->lens);
    c->argv = NULL;
    c->lens = NULL;
    c->argc = c->cap = 0;
}

static int fail(emq_resp_error *err, uint64_t frame, uint64_t at,
                const char *msg)
{
    if (err) {
        err->frame = frame;
        err->at = at;
        snprintf(err->msg, sizeof err->msg, "%s", msg);
    }
    return EMQ_EPROTO;
}

/* Make room for at least `need` arguments in `c`. */
static int grow(emq_resp_cmd *c, size_t need)
{
    if (need <= c->cap)
        return EMQ_OK;
    size_t cap = c->cap ? c->cap : 8;
    while (cap < need)
        cap *= 2;
    const unsigned char **argv = emq_mem_realloc(c->argv, cap * sizeof *argv);
    if (!argv)
        return EMQ_ENOMEM;
    c->argv = argv;
    size_t *lens = emq_mem_realloc(c->lens, cap * sizeof *lens);
    if (!lens)
        return EMQ_ENOMEM;
    c->lens = lens;
    c->cap = cap;
    return EMQ_OK;
}

/*
 * Read `<lead><decimal>\r\n` at p[*i..n). On EMQ_OK *val holds the number
 * and *i points past the LF. `max` bounds the value; `what` names it.
 */
static int header(const unsigned char *p, size_t n, size_t *i, char lead,
                  uint64_t max, uint64_t *val, uint64_t base, uint64_t frame,
                  emq_resp_error *err)
{
    size_t k = *i;
    if (k >= n)
        return EMQ_RESP_MORE;
    if (p[k] != (unsigned char)lead)
        return fail(err, frame, base + k, lead == '*'
                    ? "expected '*' (a command array)"
                    : "expected '$' (a bulk string)");
    k++;
    uint64_t v = 0;
    size_t digits = 0;
    for (;;) {
        if (k >= n)
            return EMQ_RESP_MORE;
        unsigned char c = p[k];
        if (c == '\r')
            break;
        if (c < '0' || c > '9')
            return fail(err, frame, base + k, "bad byte in a length");
        if (digits == 1 && v == 0)
            return fail(err, frame, base + k, "leading zero in a length");
        v = v * 10 + (uint64_t)(c - '0');
        digits++;
        if (v > max)
            return fail(err, frame, base + k, lead == '*'
                        ? "too many arguments" : "bulk string too long");
        k++;
    }
    if (digits == 0)
        return fail(err, frame, base + k, "empty length");
    if (k + 1 >= n)
        return EMQ_RESP_MORE;
    if (p[k + 1] != '\n')
        return fail(err, frame, base + k + 1, "CR not followed by LF");
    *i = k + 2;
    *val = v;
    return EMQ_OK;
}

int emq_resp_parse(const void *buf, size_t n, uint64_t base, emq_resp_cmd *cmd,
                   emq_resp_error *err)
{
    const unsigned char *p = buf;
    size_t i = 0;
    uint64_t argc;
    int rc = header(p, n, &i, '*', EMQ_RESP_MAX_ARGS, &argc, base, base, err);
    if (rc != EMQ_OK)
        return rc;
    if (argc == 0)
        return fail(err, base, base + i - 3, "empty command array");
    cmd->argc = 0;
    for (uint64_t a = 0; a < argc; a++) {
        uint64_t len;
        rc = header(p, n, &i, '$', EMQ_RESP_MAX_BULK, &len, base, base, err);
        if (rc != EMQ_OK)
            return rc;
        if (n - i < len + 2)
            return EMQ_RESP_MORE;
        if (p[i + len] != '\r' || p[i + len + 1] != '\n')
            return fail(err, base, base + i + len + (p[i + len] == '\r'),
                        "bulk string not followed by CR LF");
        if (grow(cmd, cmd->argc + 1) != EMQ_OK)
            return EMQ_ENOMEM;
        cmd->argv[cmd->argc] = p + i;
        cmd->lens[cmd->argc] = (size_t)len;
        cmd->argc++;
        i += (size_t)len + 2;
    }
    cmd->offset = base;
    cmd->size = i;
    return EMQ_OK;
}

void emq_resp_reader_init(emq_resp_reader *r)
{
    memset(r, 0, sizeof *r);
}

void emq_resp_reader_free(emq_resp_reader *r)
{
    emq_buf_free(&r->buf);
    emq_resp_cmd_free(&r->cmd);
    memset(r, 0, sizeof *r);
}

int emq_resp_feed(emq_resp_reader *r, const void *p, size_t n)
{
    if (r->pos > 0) {
        /* Drop the consumed bytes so the buffer holds one partial frame. */
        size_t left = r->buf.len - r->pos;
        if (left)
            memmove(r->buf.p, r->buf.p + r->pos, left);
        r->buf.len = left;
        r->consumed += r->pos;
        r->pos = 0;
    }
    r->cmd.argc = 0;
    return n ? emq_buf_append(&r->buf, p, n) : EMQ_OK;
}

int emq_resp_next(emq_resp_reader *r, const emq_resp_cmd **out)
{
    *out = NULL;
    if (r->failed)
        return EMQ_EPROTO;
    if (!r->buf.p)
        return EMQ_RESP_MORE;
    int rc = emq_resp_parse(r->buf.p + r->pos, r->buf.len - r->pos,
                            r->consumed + r->pos, &r->cmd, &r->err);
    if (rc == EMQ_EPROTO)
        r->failed = 1;
    if (rc != EMQ_OK)
        return rc;
    r->pos += r->cmd.size;
    *out = &r->cmd;
    return EMQ_OK;
}

const unsigned char *emq_resp_frame(const emq_resp_reader *r)
{
    return r->buf.p + r->pos - r->cmd.size;
}

size_t emq_resp_pending(const emq_resp_reader *r)
{
    return r->buf.len - r->pos;
}

uint64_t emq_resp_offset(const emq_resp_reader *r)
{
    return r->consumed + r->pos;
}

const emq_resp_error *emq_resp_reader_error(const emq_resp_reader *r)
{
    return &r->err;
}

/* -------------------------------------------------------------- writing */

static int put_header(emq_buf *out, char lead, uint64_t n)
{
    char tmp[32];
    int k = snprintf(tmp, sizeof tmp, "%c%llu\r\n", lead,
                     (unsigned long long)n);
    return emq_buf_append(out, tmp, (size_t)k);
}

int emq_resp_write_array(emq_buf *out, size_t n)
{
    return put_header(out, '*', n);
}

int emq_resp_write_bulk(emq_buf *out, const void *p, size_t len)
{
    if (put_header(out, '$', len) != EMQ_OK
        || emq_buf_append(out, p, len) != EMQ_OK
        || emq_buf_append(out, "\r\n", 2) != EMQ_OK)
        return EMQ_ENOMEM;
    return EMQ_OK;
}

int emq_resp_write_bulk_i64(emq_buf *out, int64_t v)
{
    char tmp[24];
    int k = snprintf(tmp, sizeof tmp, "%lld", (long long)v);
    return emq_resp_write_bulk(out, tmp, (size_t)k);
}

int emq_resp_write_cmd(emq_buf *out, size_t argc, const emq_bytes *argv)
{
    if (emq_resp_write_array(out, argc) != EMQ_OK)
        return EMQ_ENOMEM;
    for (size_t i = 0; i < argc; i++)
        if (emq_resp_write_bulk(out, argv[i].p, argv[i].n) != EMQ_OK)
            return EMQ_ENOMEM;
    return EMQ_OK;
}
