/*
 * test_cli_time.c — suite "cli_time": the tool's human durations and
 * instants (cli/cli_time.c), parsed and printed.
 */
#include <check.h>
#include <string.h>
#include "cli_time.h"
#include "suites.h"

START_TEST(durations_take_units_and_bare_milliseconds)
{
    static const struct { const char *s; int64_t ms; } ok[] = {
        {"250ms", 250}, {"5s", 5000}, {"10m", 600000}, {"2h", 7200000},
        {"1d", 86400000}, {"1h30m", 5400000}, {"1m1s1ms", 61001},
        {"0", 0}, {"1500", 1500}, {"0s", 0},
    };
    static const char *const bad[] = {
        "", "-5", "+5", " 5", "5 ", "5x", "s", "1.5s", "5sm", "1s5",
        "\t5", "99999999999999999999", "9223372036854775807d",
    };
    int64_t v;
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        ck_assert_msg(emq_cli_parse_duration(ok[i].s, &v) == 0, "%s",
                      ok[i].s);
        ck_assert_int_eq(v, ok[i].ms);
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(emq_cli_parse_duration(bad[i], &v) == -1, "'%s'",
                      bad[i]);
}
END_TEST

START_TEST(instants_are_iso_utc_unix_ms_or_now)
{
    int64_t v;
    ck_assert_int_eq(emq_cli_parse_instant("2026-12-01T10:00:00Z", 0, &v), 0);
    ck_assert_int_eq(v, INT64_C(1796119200000));
    ck_assert_int_eq(emq_cli_parse_instant("2024-01-01T00:00:00.5Z", 0, &v),
                     0);
    ck_assert_int_eq(v, INT64_C(1704067200500));
    ck_assert_int_eq(
        emq_cli_parse_instant("2024-01-01T01:00:00+01:00", 0, &v), 0);
    ck_assert_int_eq(v, INT64_C(1704067200000));
    ck_assert_int_eq(emq_cli_parse_instant("2024-02-29T00:00:00Z", 0, &v), 0);
    ck_assert_int_eq(emq_cli_parse_instant("1704067200000", 0, &v), 0);
    ck_assert_int_eq(v, INT64_C(1704067200000));
    ck_assert_int_eq(emq_cli_parse_instant("now", 42, &v), 0);
    ck_assert_int_eq(v, 42);
    ck_assert_int_eq(emq_cli_parse_instant("now+5s", 1000, &v), 0);
    ck_assert_int_eq(v, 6000);
    ck_assert_int_eq(emq_cli_parse_instant("now-1s", 1000, &v), 0);
    ck_assert_int_eq(v, 0);
    static const char *const bad[] = {
        "", "tomorrow", "2026-12-01T10:00:00", "2026-13-01T10:00:00Z",
        "2023-02-29T00:00:00Z", "2026-12-01 10:00:00Z", "2026-12-01T24:00:00Z",
        "now+", "now*5s", "-5", "12ab", "2026-12-01T10:00:00Zx",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(emq_cli_parse_instant(bad[i], 0, &v) == -1, "'%s'",
                      bad[i]);
}
END_TEST

START_TEST(instants_and_durations_print_back)
{
    char b[64];
    int64_t v;
    emq_cli_format_instant(b, sizeof b, INT64_C(1796119200123));
    ck_assert_str_eq(b, "2026-12-01T10:00:00.123Z");
    ck_assert_int_eq(emq_cli_parse_instant(b, 0, &v), 0);
    ck_assert_int_eq(v, INT64_C(1796119200123));
    emq_cli_format_instant(b, sizeof b, 0);
    ck_assert_str_eq(b, "1970-01-01T00:00:00.000Z");
    emq_cli_format_instant(b, sizeof b, -1);
    ck_assert_str_eq(b, "1969-12-31T23:59:59.999Z");
    emq_cli_format_duration(b, sizeof b, 5400250);
    ck_assert_str_eq(b, "1h30m250ms");
    emq_cli_format_duration(b, sizeof b, 0);
    ck_assert_str_eq(b, "0ms");
    emq_cli_format_duration(b, sizeof b, -1500);
    ck_assert_str_eq(b, "-1s500ms");
}
END_TEST

Suite *suite_cli_time(void)
{
    Suite *s = suite_create("cli_time");
    TCase *t = tcase_create("parse");
    tcase_add_test(t, durations_take_units_and_bare_milliseconds);
    tcase_add_test(t, instants_are_iso_utc_unix_ms_or_now);
    tcase_add_test(t, instants_and_durations_print_back);
    suite_add_tcase(s, t);
    return s;
}
