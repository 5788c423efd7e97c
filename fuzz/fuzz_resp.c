/*
 * fuzz_resp.c — the RESP command reader (storage/resp.c) on arbitrary
 * bytes. The first input byte seeds how the stream is split; the rest is
 * the stream. Properties: each command parsed in one shot sits where the
 * parser says, its arguments lie inside its frame, and re-encoding it with
 * the writer gives back the frame's exact bytes (the format is canonical);
 * a refusal names a frame and a byte inside the input; the incremental
 * reader, fed the same stream in arbitrary pieces, yields the same commands
 * at the same offsets and ends the same way (the same refusal, or the same
 * number of pending bytes).
 */
#include <string.h>
#include "fuzz.h"
#include "resp.h"

#define RESP_MAXCMDS 256

typedef struct resp_seen {
    uint64_t offset;
    size_t size;
} resp_seen;

FUZZ_ENTRY(resp)
{
    emq_resp_cmd cmd;
    emq_resp_error err, err1;
    emq_buf enc = {0};
    resp_seen seen[RESP_MAXCMDS];
    size_t nseen = 0, pos = 0, n, i;
    int end;
    const uint8_t *p;
    uint32_t split;
    if (size < 1) return 0;
    split = data[0];
    p = data + 1;
    n = size - 1;
    memset(&cmd, 0, sizeof cmd);
    memset(&err1, 0, sizeof err1);
    for (;;) {
        end = emq_resp_parse(p + pos, n - pos, pos, &cmd, &err1);
        if (end != EMQ_OK) break;
        FUZZ_CHECK(cmd.offset == pos && cmd.size > 0 &&
                       cmd.size <= n - pos, "frame placement");
        FUZZ_CHECK(cmd.argc >= 1, "empty command");
        emq_bytes *av = calloc(cmd.argc, sizeof *av);
        FUZZ_CHECK(av != NULL, "oom");
        for (i = 0; i < cmd.argc; i++) {
            FUZZ_CHECK(cmd.argv[i] >= p + pos &&
                           cmd.argv[i] + cmd.lens[i] <= p + pos + cmd.size,
                       "argument outside its frame");
            av[i].p = cmd.argv[i];
            av[i].n = cmd.lens[i];
        }
        enc.len = 0;
        FUZZ_CHECK(emq_resp_write_cmd(&enc, cmd.argc, av) == EMQ_OK, "write");
        free(av);
        FUZZ_CHECK(enc.len == cmd.size &&
                       memcmp(enc.p, p + pos, cmd.size) == 0,
                   "re-encoding differs from the frame");
        if (nseen < RESP_MAXCMDS) {
            seen[nseen].offset = pos;
            seen[nseen].size = cmd.size;
        }
        nseen++;
        pos += cmd.size;
    }
    FUZZ_CHECK(end == EMQ_RESP_MORE || end == EMQ_EPROTO, "parse rc %d", end);
    if (end == EMQ_EPROTO)
        FUZZ_CHECK(err1.frame == pos && err1.at >= pos && err1.at < n,
                   "refusal at frame %llu byte %llu, expected frame %zu",
                   (unsigned long long)err1.frame,
                   (unsigned long long)err1.at, pos);
    emq_resp_cmd_free(&cmd);
    emq_buf_free(&enc);

    /* the same stream through the incremental reader, in pieces */
    emq_resp_reader r;
    const emq_resp_cmd *c;
    size_t fed = 0, got = 0;
    int rc = EMQ_RESP_MORE;
    emq_resp_reader_init(&r);
    while (fed < n || rc == EMQ_OK) {
        if (rc != EMQ_OK && fed < n) {
            split = split * 1103515245u + 12345u;
            size_t piece = 1 + (split >> 16) % 64;
            if (piece > n - fed) piece = n - fed;
            FUZZ_CHECK(emq_resp_feed(&r, p + fed, piece) == EMQ_OK, "feed");
            fed += piece;
        }
        rc = emq_resp_next(&r, &c);
        if (rc == EMQ_OK) {
            if (got < RESP_MAXCMDS && got < nseen)
                FUZZ_CHECK(c->offset == seen[got].offset &&
                               c->size == seen[got].size,
                           "reader command %zu at %llu, one-shot at %llu",
                           got, (unsigned long long)c->offset,
                           (unsigned long long)seen[got].offset);
            got++;
            continue;
        }
        if (rc == EMQ_EPROTO) break;
        FUZZ_CHECK(rc == EMQ_RESP_MORE, "next rc %d", rc);
    }
    FUZZ_CHECK(got == nseen, "reader yielded %zu commands, one-shot %zu", got,
               nseen);
    FUZZ_CHECK(rc == end, "reader ended %d, one-shot %d", rc, end);
    if (rc == EMQ_EPROTO) {
        err = *emq_resp_reader_error(&r);
        FUZZ_CHECK(err.frame == err1.frame && err.at == err1.at,
                   "reader refusal at %llu/%llu, one-shot %llu/%llu",
                   (unsigned long long)err.frame, (unsigned long long)err.at,
                   (unsigned long long)err1.frame,
                   (unsigned long long)err1.at);
        FUZZ_CHECK(emq_resp_next(&r, &c) == EMQ_EPROTO, "refusal not sticky");
    } else {
        FUZZ_CHECK(emq_resp_pending(&r) == n - pos && emq_resp_offset(&r) ==
                       pos, "pending %zu, expected %zu",
                   emq_resp_pending(&r), n - pos);
    }
    emq_resp_reader_free(&r);
    return 0;
}
