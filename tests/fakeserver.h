/*
 * fakeserver.h — an in-memory server behind the transport interface of
 * api/emqlite_remote.h, for testing push, pull and verify without a
 * network: the commands the transfer module sends (COMMAND INFO, SCAN,
 * TYPE, PEXPIRETIME, PTTL, GET, HGETALL, LRANGE, SMEMBERS, ZRANGE
 * WITHSCORES, HPEXPIRETIME, ZCARD, UNLINK, DEL, SET [NX], MULTI, EXEC and
 * the data commands of an export) run against a private emqlite store.
 *
 * It differs from a real server where that tests the module: SCAN pages
 * two keys at a time, SMEMBERS answers in reverse byte order, and faults
 * can be injected (an error reply for one command name, a connection that
 * fails after N commands, a key reported as a stream).
 */
#ifndef EMQ_TEST_FAKESERVER_H
#define EMQ_TEST_FAKESERVER_H

#include "emqlite_remote.h"
#include "store.h"

typedef struct fake {
    emq_store *st;
    int64_t now;               /* the server's clock (expiries)          */
    int has[4];                /* PEXPIRETIME HPEXPIRETIME HPEXPIREAT UNLINK */
    const char *error_on;      /* answer this command with an error      */
    long fail_after;           /* commands until the connection fails (-1) */
    const char *stream_key;    /* a key reported as a stream (NULL)      */
    long commands;             /* commands received                      */
    int multi;
    size_t queued;
    emq_rreply **q;             /* replies not yet read                   */
    size_t head, n, cap;
} fake;

/** A fake holding nothing, every command known, at `now`. */
void fake_init(fake *f, int64_t now);
/** Free what is left (after emq_remote_close, which calls close). */
void fake_free(fake *f);
/** The transport to hand to emq_remote_open with the fake as ctx. */
extern const emq_transport fake_transport;
/** Run one command as if sent (its reply is dropped): test setup. */
void fake_cmd(fake *f, size_t argc, const char *const *argv);

#endif /* EMQ_TEST_FAKESERVER_H */
