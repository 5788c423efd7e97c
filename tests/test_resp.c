/*
 * test_resp.c — Check suite for storage/resp.c, the RESP command codec:
 * whole and split feeds, binary arguments, every malformation the reader
 * must refuse (with the offset it names), truncation, and the writer.
 */
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include "resp.h"
#include "suites.h"

#define S(lit) (lit), (sizeof(lit) - 1)

/* Parse `p[0..n)` with the stateless parser; expect `rc`. */
static int parse1(const char *p, size_t n, emq_resp_cmd *c, emq_resp_error *e)
{
    memset(e, 0, sizeof *e);
    return emq_resp_parse(p, n, 0, c, e);
}

static int arg_is(const emq_resp_cmd *c, size_t i, const char *p, size_t n)
{
    return i < c->argc && c->lens[i] == n && memcmp(c->argv[i], p, n) == 0;
}

START_TEST(parse_yields_one_command_and_its_size)
{
    static const char in[] = "*3\r\n$4\r\nHSET\r\n$1\r\nk\r\n$0\r\n\r\nrest";
    emq_resp_cmd c = {0};
    emq_resp_error e;
    ck_assert_int_eq(parse1(in, sizeof in - 1, &c, &e), EMQ_OK);
    ck_assert_uint_eq(c.argc, 3);
    ck_assert(arg_is(&c, 0, S("HSET")));
    ck_assert(arg_is(&c, 1, S("k")));
    ck_assert(arg_is(&c, 2, S("")));
    ck_assert_uint_eq(c.size, sizeof in - 1 - 4);
    ck_assert_uint_eq(c.offset, 0);
    emq_resp_cmd_free(&c);
}
END_TEST

START_TEST(binary_arguments_with_nul_and_crlf_are_byte_exact)
{
    static const char in[] = "*2\r\n$3\r\nSET\r\n$6\r\na\0\r\nb\xff\r\n";
    emq_resp_cmd c = {0};
    emq_resp_error e;
    ck_assert_int_eq(parse1(in, sizeof in - 1, &c, &e), EMQ_OK);
    ck_assert_uint_eq(c.argc, 2);
    ck_assert(arg_is(&c, 1, "a\0\r\nb\xff", 6));
    ck_assert_uint_eq(c.size, sizeof in - 1);
    emq_resp_cmd_free(&c);
}
END_TEST

START_TEST(every_proper_prefix_needs_more)
{
    static const char in[] = "*2\r\n$3\r\nGET\r\n$10\r\n0123456789\r\n";
    emq_resp_cmd c = {0};
    emq_resp_error e;
    for (size_t n = 0; n < sizeof in - 1; n++)
        ck_assert_msg(parse1(in, n, &c, &e) == EMQ_RESP_MORE,
                      "prefix of %zu bytes", n);
    ck_assert_int_eq(parse1(in, sizeof in - 1, &c, &e), EMQ_OK);
    emq_resp_cmd_free(&c);
}
END_TEST

/* Two commands of a stream, in any split, come out identical. */
static const char two[] =
    "*3\r\n$5\r\nRPUSH\r\n$3\r\nk\0l\r\n$2\r\n\r\n\r\n"
    "*2\r\n$3\r\nDEL\r\n$12\r\nemq:{q}:ring\r\n";

static void check_two(emq_resp_reader *r, size_t *seen)
{
    const emq_resp_cmd *c;
    int rc;
    while ((rc = emq_resp_next(r, &c)) == EMQ_OK) {
        if (*seen == 0) {
            ck_assert_uint_eq(c->argc, 3);
            ck_assert(arg_is(c, 0, S("RPUSH")));
            ck_assert(arg_is(c, 1, "k\0l", 3));
            ck_assert(arg_is(c, 2, S("\r\n")));
            ck_assert_uint_eq(c->offset, 0);
        } else {
            ck_assert_uint_eq(*seen, 1);
            ck_assert_uint_eq(c->argc, 2);
            ck_assert(arg_is(c, 0, S("DEL")));
            ck_assert(arg_is(c, 1, S("emq:{q}:ring")));
            ck_assert_uint_eq(c->offset, 32);
        }
        (*seen)++;
    }
    ck_assert_int_eq(rc, EMQ_RESP_MORE);
}

START_TEST(reader_gives_the_same_commands_for_every_two_way_split)
{
    size_t n = sizeof two - 1;
    for (size_t cut = 0; cut <= n; cut++) {
        emq_resp_reader r;
        emq_resp_reader_init(&r);
        size_t seen = 0;
        ck_assert_int_eq(emq_resp_feed(&r, two, cut), EMQ_OK);
        check_two(&r, &seen);
        ck_assert_int_eq(emq_resp_feed(&r, two + cut, n - cut), EMQ_OK);
        check_two(&r, &seen);
        ck_assert_uint_eq(seen, 2);
        ck_assert_uint_eq(emq_resp_pending(&r), 0);
        ck_assert_uint_eq(emq_resp_offset(&r), n);
        emq_resp_reader_free(&r);
    }
}
END_TEST

START_TEST(reader_fed_one_byte_at_a_time)
{
    emq_resp_reader r;
    emq_resp_reader_init(&r);
    size_t seen = 0;
    for (size_t i = 0; i < sizeof two - 1; i++) {
        ck_assert_int_eq(emq_resp_feed(&r, two + i, 1), EMQ_OK);
        check_two(&r, &seen);
    }
    ck_assert_uint_eq(seen, 2);
    emq_resp_reader_free(&r);
}
END_TEST

START_TEST(truncated_stream_leaves_pending_bytes)
{
    emq_resp_reader r;
    emq_resp_reader_init(&r);
    const emq_resp_cmd *c;
    ck_assert_int_eq(emq_resp_feed(&r, two, 45), EMQ_OK);
    ck_assert_int_eq(emq_resp_next(&r, &c), EMQ_OK);
    ck_assert_int_eq(emq_resp_next(&r, &c), EMQ_RESP_MORE);
    ck_assert_ptr_null(c);
    ck_assert_uint_eq(emq_resp_pending(&r), 13);
    ck_assert_uint_eq(emq_resp_offset(&r), 32);
    emq_resp_reader_free(&r);
}
END_TEST

/* A malformed input and where the parser must say the defect is. */
struct bad {
    const char *in;
    size_t n;
    uint64_t at;
};

#define BAD(lit, at) { (lit), sizeof(lit) - 1, (at) }
static const struct bad bads[] = {
    BAD("PING\r\n", 0),                        /* inline command          */
    BAD("+OK\r\n", 0),                         /* a reply, not a command  */
    BAD("*-1\r\n", 1),                         /* null array              */
    BAD("*0\r\n", 1),                          /* empty array             */
    BAD("*01\r\n$1\r\na\r\n", 2),              /* leading zero            */
    BAD("*\r\n", 1),                           /* no digits               */
    BAD("*1 \r\n", 2),                         /* space in a count        */
    BAD("*1\r\r", 3),                          /* CR without LF           */
    BAD("*1\n", 2),                            /* LF alone                */
    BAD("*1\r\n:1\r\n", 4),                    /* integer element         */
    BAD("*1\r\n*1\r\n$1\r\na\r\n", 4),         /* nested array            */
    BAD("*1\r\n$-1\r\n", 5),                   /* null bulk               */
    BAD("*1\r\n$3\r\nabcX\n", 11),             /* bulk overruns its size  */
    BAD("*1\r\n$3\r\nabc\rX", 12),             /* CR then not LF          */
    BAD("*1\r\n$1x\r\n", 6),                   /* junk in a bulk length   */
    BAD("*2\r\n$1\r\na\r\nX", 11),             /* junk where $ belongs    */
    BAD("*1048577\r\n", 7),                    /* too many arguments      */
    BAD("*1\r\n$536870913\r\n", 13),           /* bulk beyond 512 MiB     */
};

START_TEST(malformed_frames_are_refused_with_the_offending_offset)
{
    const struct bad *b = &bads[_i];
    emq_resp_cmd c = {0};
    emq_resp_error e;
    ck_assert_msg(parse1(b->in, b->n, &c, &e) == EMQ_EPROTO, "case %d", _i);
    ck_assert_msg(e.at == b->at, "case %d: at %llu, want %llu", _i,
                  (unsigned long long)e.at, (unsigned long long)b->at);
    ck_assert_uint_eq(e.frame, 0);
    ck_assert(e.msg[0] != '\0');
    emq_resp_cmd_free(&c);
}
END_TEST

START_TEST(offsets_count_from_the_stream_start_after_good_frames)
{
    emq_resp_reader r;
    emq_resp_reader_init(&r);
    const emq_resp_cmd *c;
    ck_assert_int_eq(emq_resp_feed(&r, S("*1\r\n$4\r\nPING\r\n")), EMQ_OK);
    ck_assert_int_eq(emq_resp_next(&r, &c), EMQ_OK);
    ck_assert_int_eq(emq_resp_feed(&r, S("*1\r\n$4\r\nEXEC\r\n*2\r\n$")),
                     EMQ_OK);
    ck_assert_int_eq(emq_resp_next(&r, &c), EMQ_OK);
    ck_assert_uint_eq(c->offset, 14);
    ck_assert_int_eq(emq_resp_feed(&r, S("1\r\nab\r\n")), EMQ_OK);
    ck_assert_int_eq(emq_resp_next(&r, &c), EMQ_EPROTO);
    const emq_resp_error *e = emq_resp_reader_error(&r);
    ck_assert_uint_eq(e->frame, 28);
    ck_assert_uint_eq(e->at, 28 + 4 + 4 + 1);
    /* A reader that met a malformed frame stays refused. */
    ck_assert_int_eq(emq_resp_feed(&r, S("*1\r\n$4\r\nPING\r\n")), EMQ_OK);
    ck_assert_int_eq(emq_resp_next(&r, &c), EMQ_EPROTO);
    emq_resp_reader_free(&r);
}
END_TEST

START_TEST(writer_output_parses_back_to_the_same_command)
{
    emq_buf out = {0};
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    emq_bytes argv[4] = {
        {"ZADD", 4}, {"emq:{q}:active", 14}, {"", 0}, {all, 256}};
    ck_assert_int_eq(emq_resp_write_cmd(&out, 4, argv), EMQ_OK);
    ck_assert_int_eq(emq_resp_write_array(&out, 2), EMQ_OK);
    ck_assert_int_eq(emq_resp_write_bulk(&out, "X", 1), EMQ_OK);
    ck_assert_int_eq(emq_resp_write_bulk_i64(&out, INT64_MIN), EMQ_OK);

    static const char head[] = "*4\r\n$4\r\nZADD\r\n$14\r\nemq:{q}:active\r\n"
                               "$0\r\n\r\n$256\r\n";
    ck_assert_mem_eq(out.p, head, sizeof head - 1);

    emq_resp_cmd c = {0};
    emq_resp_error e;
    ck_assert_int_eq(emq_resp_parse(out.p, out.len, 0, &c, &e), EMQ_OK);
    ck_assert_uint_eq(c.argc, 4);
    for (size_t i = 0; i < 4; i++)
        ck_assert(arg_is(&c, i, argv[i].p, argv[i].n));
    size_t used = c.size;
    ck_assert_int_eq(emq_resp_parse(out.p + used, out.len - used, used, &c, &e),
                     EMQ_OK);
    ck_assert_uint_eq(c.offset, used);
    ck_assert(arg_is(&c, 1, S("-9223372036854775808")));
    ck_assert_uint_eq(used + c.size, out.len);
    emq_resp_cmd_free(&c);
    emq_buf_free(&out);
}
END_TEST

Suite *suite_resp(void)
{
    Suite *s = suite_create("resp");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, parse_yields_one_command_and_its_size);
    tcase_add_test(tc, binary_arguments_with_nul_and_crlf_are_byte_exact);
    tcase_add_test(tc, every_proper_prefix_needs_more);
    tcase_add_test(tc, reader_gives_the_same_commands_for_every_two_way_split);
    tcase_add_test(tc, reader_fed_one_byte_at_a_time);
    tcase_add_test(tc, truncated_stream_leaves_pending_bytes);
    tcase_add_loop_test(tc, malformed_frames_are_refused_with_the_offending_offset,
                        0, (int)(sizeof bads / sizeof bads[0]));
    tcase_add_test(tc, offsets_count_from_the_stream_start_after_good_frames);
    tcase_add_test(tc, writer_output_parses_back_to_the_same_command);
    suite_add_tcase(s, tc);
    return s;
}
