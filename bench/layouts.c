/*
 * layouts.c — the schema experiment behind doc/SCHEMA.md: the instructions
 * SQLite spends on "one hash set of three fields plus one zset add in one
 * transaction" under two layouts of a generic keyspace.
 *
 *   naive:   keys(name PK, type); hashes(key, field, val, PK(key, field));
 *            zsets(key, member, score, PK(key, member)) + index on
 *            (key, score, member) — the key text repeated in every row.
 *   emqlite: the storage/ layout through its API (a hash is one encoded
 *            blob in its key row; zset elements keyed by an integer kid).
 *
 * Usage: layouts naive|emqlite N   (run under callgrind and divide by N;
 * `make bench-layouts` does both).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "store.h"

static const char *naive_schema =
    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    "PRAGMA wal_autocheckpoint=0;"
    "CREATE TABLE keys(name BLOB PRIMARY KEY, type INT) WITHOUT ROWID;"
    "CREATE TABLE hashes(key BLOB, field BLOB, val BLOB,"
    " PRIMARY KEY(key, field)) WITHOUT ROWID;"
    "CREATE TABLE zsets(key BLOB, member BLOB, score REAL,"
    " PRIMARY KEY(key, member)) WITHOUT ROWID;"
    "CREATE INDEX zrank ON zsets(key, score, member);";

static int naive(const char *path, int n)
{
    sqlite3 *db;
    sqlite3_stmt *key, *hs, *zs, *b, *c;
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_exec(db, naive_schema, NULL, NULL, NULL) != SQLITE_OK)
        return 1;
    sqlite3_prepare_v2(db, "INSERT INTO keys VALUES(?1, ?2) ON CONFLICT DO "
                       "NOTHING", -1, &key, NULL);
    sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO hashes VALUES(?1, ?2, ?3)",
                       -1, &hs, NULL);
    sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO zsets VALUES(?1, ?2, ?3)",
                       -1, &zs, NULL);
    sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &b, NULL);
    sqlite3_prepare_v2(db, "COMMIT", -1, &c, NULL);
    static const char payload[100];
    const char *f[3] = {"state", "attempts", "payload"};
    for (int i = 0; i < n; i++) {
        char k[64], id[16];
        int kl = snprintf(k, sizeof k, "emq:{bench}:job:JOB%011d", i);
        snprintf(id, sizeof id, "JOB%011d", i);
        const void *v[3] = {"pending", "0", payload};
        int vl[3] = {7, 1, 100};
        sqlite3_step(b);
        sqlite3_reset(b);
        sqlite3_bind_blob(key, 1, k, kl, SQLITE_STATIC);
        sqlite3_bind_int(key, 2, 2);
        sqlite3_step(key);
        sqlite3_reset(key);
        for (int j = 0; j < 3; j++) {
            sqlite3_bind_blob(hs, 1, k, kl, SQLITE_STATIC);
            sqlite3_bind_blob(hs, 2, f[j], (int)strlen(f[j]), SQLITE_STATIC);
            sqlite3_bind_blob(hs, 3, v[j], vl[j], SQLITE_STATIC);
            sqlite3_step(hs);
            sqlite3_reset(hs);
        }
        sqlite3_bind_blob(key, 1, "emq:{bench}:pending", 19, SQLITE_STATIC);
        sqlite3_bind_int(key, 2, 5);
        sqlite3_step(key);
        sqlite3_reset(key);
        sqlite3_bind_blob(zs, 1, "emq:{bench}:pending", 19, SQLITE_STATIC);
        sqlite3_bind_blob(zs, 2, id, 14, SQLITE_STATIC);
        sqlite3_bind_double(zs, 3, 0);
        sqlite3_step(zs);
        sqlite3_reset(zs);
        sqlite3_step(c);
        sqlite3_reset(c);
    }
    sqlite3_finalize(key);
    sqlite3_finalize(hs);
    sqlite3_finalize(zs);
    sqlite3_finalize(b);
    sqlite3_finalize(c);
    sqlite3_close(db);
    return 0;
}

static int emqlite(const char *path, int n)
{
    emq_store_opts o = {.synchronous = EMQ_SYNC_NORMAL, .busy_timeout_ms = 1000};
    emq_store *st;
    if (emq_store_open(path, &o, &st, NULL, 0) != EMQ_OK)
        return 1;
    static const char payload[100];
    for (int i = 0; i < n; i++) {
        char k[64], id[16];
        int kl = snprintf(k, sizeof k, "emq:{bench}:job:JOB%011d", i);
        snprintf(id, sizeof id, "JOB%011d", i);
        emq_bytes fv[] = {{"state", 5}, {"pending", 7}, {"attempts", 8},
                          {"0", 1}, {"payload", 7}, {payload, 100}};
        if (emq_store_begin(st, 1, 0) != EMQ_OK ||
            emq_hash_set(st, k, (size_t)kl, fv, 3, NULL) != EMQ_OK ||
            emq_zset_add(st, "emq:{bench}:pending", 19, id, 14, 0, NULL) ||
            emq_store_commit(st) != EMQ_OK)
            return 1;
    }
    emq_store_close(st);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: layouts naive|emqlite N FILE\n");
        return 2;
    }
    int n = atoi(argv[2]);
    remove(argv[3]);
    if (strcmp(argv[1], "naive") == 0)
        return naive(argv[3], n);
    return emqlite(argv[3], n);
}
