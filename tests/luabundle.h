/*
 * luabundle.h — load the project's Lua bundle (tests/lua/) onto a server.
 *
 * Owns: reading `<dir>/<name>.lua` for each name asked for and sending it
 * with SCRIPT LOAD, keeping the SHA-1 the server answers, so that callers
 * run the scripts with EVALSHA. Shared by the golden replay on a server
 * (tests/golden_redis.c) and the transfer tests (tests/redis_transfer.c).
 * Rule: the library never prints or exits; the caller decides.
 */
#ifndef EMQ_TEST_LUABUNDLE_H
#define EMQ_TEST_LUABUNDLE_H

#include <stddef.h>
#include <hiredis/hiredis.h>

/**
 * SCRIPT LOAD each of `names[0..n)` from `dir` on `c`; sha[i] receives the
 * 40 hex digits and a NUL. Returns 0, or -1 with `err` filled (the file that
 * could not be read, or the server's refusal); scripts loaded before the
 * failure stay loaded.
 */
int emq_luabundle_load(redisContext *c, const char *dir,
                       const char *const *names, size_t n, char (*sha)[41],
                       char *err, size_t errlen);

#endif /* EMQ_TEST_LUABUNDLE_H */
