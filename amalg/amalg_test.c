/*
 * amalg_test.c: a quick test of the amalgamation, built from emqlite.c and
 * the public headers alone (no source tree, no libtool):
 *
 *     cc -c emqlite.c && cc amalg_test.c emqlite.o -lsqlite3 -lxxhash -lpthread -lm
 *     ./a.out DIR
 *
 * It works in DIR (a scratch directory) and prints one line per check and
 * "amalg_test: N passed, M failed" at the end; exit 0 when none failed.
 * Time comes from the handle's injectable clock, never from sleeps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "emqlite.h"
#include "emqlite_protocol.h"
#include "emqlite_remote.h"

static int passed, failed;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
    if (ok)
        passed++;
    else
        failed++;
}

static int64_t fixed_now;
static int64_t fixed_clock(void *ctx)
{
    (void)ctx;
    return fixed_now;
}

int main(int argc, char **argv)
{
    char path[4096], id[EMQ_ID_SIZE], id2[EMQ_ID_SIZE], err[256] = "";
    emq_db *db = NULL, *db2 = NULL;
    emq_job job;
    emq_stats st;
    int rc;

    if (argc != 2) {
        fprintf(stderr, "usage: amalg_test DIR\n");
        return 2;
    }
    snprintf(path, sizeof path, "%s/amalg.db", argv[1]);

    check(emq_version() != NULL && strlen(emq_version()) > 0,
          "emq_version answers");
    check(emq_open_ex(path, NULL, &db, err, sizeof err) == EMQ_OK,
          "open a new file");
    if (!db) {
        fprintf(stderr, "amalg_test: open %s: %s\n", path, err);
        printf("amalg_test: %d passed, %d failed\n", passed, failed + 1);
        return 1;
    }
    fixed_now = 1700000000000;
    emq_set_clock(db, fixed_clock, NULL);

    check(emq_mint(db, "JOB", id) == EMQ_OK && emq_id_valid(id),
          "mint a branded id");
    check(emq_enqueue(db, "mail", id, "hi\0there", 8) == EMQ_ENQUEUED,
          "enqueue a binary payload");
    check(emq_enqueue(db, "mail", id, "other", 5) == EMQ_DUPLICATE,
          "the same id again is a duplicate");
    rc = emq_enqueue(db, "bad:queue{", id, "x", 1);
    check(rc < 0 && strlen(emq_errmsg(db)) > 0,
          "a bad queue name is a typed error with a message");

    memset(&job, 0, sizeof job);
    rc = emq_claim(db, "mail", 30000, &job);
    check(rc == EMQ_OK && strcmp(job.id, id) == 0 && job.attempts == 1 &&
              job.payload_len == 8 && memcmp(job.payload, "hi\0there", 8) == 0,
          "claim returns the job, token 1, payload intact");
    check(emq_complete(db, "mail", job.id, job.attempts + 1) == EMQ_ESTALE,
          "complete with a wrong token is stale");
    check(emq_complete(db, "mail", job.id, job.attempts) == EMQ_OK,
          "complete with the token");
    emq_job_clear(&job);
    check(emq_stats_get(db, "mail", &st) == EMQ_OK && st.completed == 1 &&
              st.pending == 0 && st.active == 0,
          "stats: one completed, nothing pending or active");

    /* a second handle on the same file sees what the first wrote */
    check(emq_mint(db, "JOB", id2) == EMQ_OK &&
              emq_enqueue_in(db, "mail", id2, "later", 5, 5000) == EMQ_SCHEDULED,
          "schedule a job 5 s ahead");
    check(emq_open(path, NULL, &db2) == EMQ_OK, "open a second handle");
    if (db2) {
        emq_set_clock(db2, fixed_clock, NULL);
        memset(&job, 0, sizeof job);
        check(emq_claim(db2, "mail", 1000, &job) == EMQ_EMPTY,
              "nothing due yet on the second handle");
        fixed_now += 5000;
        int64_t moved = -1;
        check(emq_promote(db2, "mail", 10, &moved) == EMQ_OK && moved == 1,
              "after 5 s on the clock, promote moves it");
        check(emq_claim(db2, "mail", 1000, &job) == EMQ_OK &&
                  strcmp(job.id, id2) == 0,
              "the second handle claims it");
        emq_job_clear(&job);
        emq_close(db2);
    }

    /* the registry surface (emqlite_protocol.h) */
    check(emq_verb_count() > 0 && emq_verb_find("enqueue") != NULL &&
              strcmp(emq_verb_find("enqueue")->name, "enqueue") == 0,
          "the verb registry lists enqueue");
    {
        emq_reply r = {0};
        const char *args[] = {"mail"};
        rc = emq_call(db, "no-such-verb", 1, args, NULL, &r);
        check(rc == EMQ_EINVAL, "emq_call on an unknown verb is EMQ_EINVAL");
        emq_reply_clear(&r);
    }
#ifdef EMQ_WITH_HIREDIS
    check(emq_remote_available() == 1, "built with hiredis: remote available");
#else
    {
        emq_remote *rm = NULL;
        rc = emq_remote_connect("127.0.0.1:1", NULL, &rm, err, sizeof err);
        check(emq_remote_available() == 0 && rc == EMQ_ENOTSUP && rm == NULL &&
                  strstr(err, "without hiredis") != NULL,
              "built without hiredis: connect says so");
    }
#endif
    emq_close(db);

    /* reopen: what was committed is there */
    check(emq_open(path, NULL, &db) == EMQ_OK &&
              emq_stats_get(db, "mail", &st) == EMQ_OK && st.completed == 1 &&
              st.active == 1,
          "reopened: one completed, one active");
    emq_close(db);

    printf("amalg_test: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
