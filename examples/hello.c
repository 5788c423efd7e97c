/*
 * hello.c — the smallest emqlite program: open a file, enqueue a job, claim
 * it, complete it. Build with the Makefile beside it (pkg-config emqlite).
 *
 *     make && ./hello            # uses ./hello.db
 */
#include <stdio.h>
#include <string.h>
#include <emqlite.h>

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "hello.db";
    emq_db *db = NULL;
    emq_job job;
    char id[EMQ_ID_SIZE], err[256] = "";
    int rc, status = 1;

    rc = emq_open_ex(path, NULL, &db, err, sizeof err);
    if (rc != EMQ_OK) {
        fprintf(stderr, "hello: open %s: %s\n", path,
                err[0] ? err : emq_strerror(rc));
        return 1;
    }

    /* produce: mint a branded id and admit the job */
    const char *payload = "{\"to\":\"ada@example.com\",\"template\":\"welcome\"}";
    if ((rc = emq_mint(db, "JOB", id)) != EMQ_OK)
        goto fail;
    rc = emq_enqueue(db, "mail", id, payload, strlen(payload));
    if (rc != EMQ_ENQUEUED)
        goto fail;
    printf("enqueued %s\n", id);

    /* work: claim with a 30 s lease, do the work, complete with the token */
    memset(&job, 0, sizeof job);
    rc = emq_claim(db, "mail", 30000, &job);
    if (rc == EMQ_EMPTY) {
        fprintf(stderr, "hello: nothing to claim\n");
        goto done;
    }
    if (rc != EMQ_OK)
        goto fail;
    printf("claimed  %s (token %lld): %.*s\n", job.id, (long long)job.attempts,
           (int)job.payload_len, job.payload ? (const char *)job.payload : "");
    rc = emq_complete(db, "mail", job.id, job.attempts);
    emq_job_clear(&job);
    if (rc != EMQ_OK)
        goto fail;
    printf("completed\n");
    status = 0;
    goto done;

fail:
    /* negative codes carry a message; wire errors their exact wire string */
    fprintf(stderr, "hello: %s\n", rc < 0 ? emq_errmsg(db) : emq_strerror(rc));
done:
    emq_close(db);
    return status;
}
