/*
 * golden_replay.c — replay golden traces against emqlite.
 *
 *   tests/golden_replay [--quiet] [--parse-only] [--case NAME] [--stop] FILE...
 *
 * Every case of every file runs on a fresh in-memory emqlite handle (see
 * golden_emq.c); the program prints PASS or the first mismatch per case and
 * ends with "N passed, N failed" (see emq_golden_main in golden.h).
 */
#include "golden.h"
#include "golden_emq.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    emq_golden_exec ex;
    int rc;
    if (emq_golden_emq_exec(&ex) != 0) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        return 2;
    }
    rc = emq_golden_main(argc, argv, &ex);
    emq_golden_emq_exec_free(&ex);
    return rc;
}
