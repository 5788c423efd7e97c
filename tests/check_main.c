/*
 * check_main.c — the one Check runner. Every suite of suites.def is built
 * in; which ones run:
 *
 *   check_emqlite                      every suite (CK_RUN_SUITE picks one)
 *   check_emqlite GROUP                the suites of that group
 *   check_emqlite tests/unit/G.unit    the same, as `make check` calls it
 *                                      (LOG_COMPILER for .unit files)
 *
 * Each run prints Check's one summary line. A group with no suite is a
 * usage error (exit 2), so a misspelt .unit file cannot pass empty.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include "suites.h"

/* The group named by `arg`: its base name without the .unit suffix. */
static void group_of(const char *arg, char *out, size_t cap)
{
    const char *b = strrchr(arg, '/');
    size_t n;
    b = b ? b + 1 : arg;
    n = strcspn(b, ".");
    if (n >= cap) n = cap - 1;
    memcpy(out, b, n);
    out[n] = '\0';
}

int main(int argc, char **argv)
{
    char group[64] = "";
    int added = 0;
    if (argc > 2) {
        fprintf(stderr, "usage: %s [GROUP | tests/unit/GROUP.unit]\n",
                argv[0]);
        return 2;
    }
    if (argc == 2) group_of(argv[1], group, sizeof group);
    SRunner *sr = srunner_create(NULL);
#define SUITE(name, grp)                                                      \
    if (!group[0] || strcmp(group, #grp) == 0) {                             \
        srunner_add_suite(sr, suite_##name());                               \
        added++;                                                             \
    }
#include "suites.def"
#undef SUITE
    if (added == 0) {
        fprintf(stderr, "%s: no suite in group '%s' (tests/suites.def)\n",
                argv[0], group);
        srunner_free(sr);
        return 2;
    }
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
