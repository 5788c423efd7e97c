/*
 * check_main.c — the one Check runner: every suite listed in suites.def runs
 * here and prints one summary line. CK_RUN_SUITE selects a single suite.
 */
#include <stdlib.h>
#include <check.h>
#include "suites.h"

int main(void)
{
    SRunner *sr = srunner_create(NULL);
#define SUITE(name) srunner_add_suite(sr, suite_##name());
#include "suites.def"
#undef SUITE
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
