/*
 * cli_helper.c — fixtures for tests/cli_test.sh that the emqlite tool cannot
 * make by itself:
 *
 *   cli_helper lock FILE          hold FILE's write lock (BEGIN IMMEDIATE),
 *                                 print "locked", release at EOF on stdin
 *   cli_helper stamp FILE VALUE   overwrite {emq}:version of an emqlite file
 *                                 (through the storage layer)
 *   cli_helper foreign FILE       create a SQLite file that is not emqlite's
 *
 * The lock is released by the test closing a pipe, so no test sleeps.
 */
#include <stdio.h>
#include <string.h>
#include <sqlite3.h>
#include "store.h"

static int lock_file(const char *path)
{
    sqlite3 *db = NULL;
    char *err = NULL;
    int c, status = 1;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        goto done;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "cli_helper: lock: %s\n", err ? err : "?");
        goto done;
    }
    printf("locked\n");
    fflush(stdout);
    while ((c = getchar()) != EOF)
        ;
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    status = 0;
done:
    sqlite3_free(err);
    sqlite3_close(db);
    return status;
}

static int stamp_file(const char *path, const char *value)
{
    emq_store *st = NULL;
    emq_store_opts o;
    char err[256] = "";
    static const char key[] = "{emq}:version";
    int rc;

    memset(&o, 0, sizeof o);
    o.synchronous = EMQ_SYNC_NORMAL;
    o.busy_timeout_ms = 1000;
    rc = emq_store_open(path, &o, &st, err, sizeof err);
    if (rc != EMQ_OK) {
        fprintf(stderr, "cli_helper: stamp: %s\n", err);
        return 1;
    }
    rc = emq_store_begin(st, 1, 0);
    if (rc == EMQ_OK)
        rc = emq_str_set(st, key, sizeof key - 1, value, strlen(value), -1, 0,
                         NULL);
    if (rc == EMQ_OK)
        rc = emq_store_commit(st);
    else
        emq_store_rollback(st);
    if (rc != EMQ_OK)
        fprintf(stderr, "cli_helper: stamp: %s\n", emq_store_errmsg(st));
    emq_store_close(st);
    return rc == EMQ_OK ? 0 : 1;
}

static int foreign_file(const char *path)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "CREATE TABLE notes(body TEXT);"
                          "INSERT INTO notes VALUES('not a queue');",
                          NULL, NULL, NULL);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "lock") == 0)
        return lock_file(argv[2]);
    if (argc == 4 && strcmp(argv[1], "stamp") == 0)
        return stamp_file(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "foreign") == 0)
        return foreign_file(argv[2]);
    fprintf(stderr, "usage: cli_helper lock FILE | stamp FILE VALUE | "
            "foreign FILE\n");
    return 2;
}
