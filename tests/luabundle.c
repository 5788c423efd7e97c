/*
 * luabundle.c — load the project's Lua bundle onto a server (luabundle.h).
 */
#include "luabundle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file at `path` in a new buffer (*len bytes); NULL on failure
 * with errno set. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *src = NULL;
    size_t n = 0, cap = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (n == cap) {
            char *p = realloc(src, cap ? 2 * cap : 16384);
            if (!p) {
                free(src);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            src = p;
            cap = cap ? 2 * cap : 16384;
        }
        size_t got = fread(src + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(src);
        fclose(f);
        errno = EIO;
        return NULL;
    }
    fclose(f);
    *len = n;
    return src;
}

int emq_luabundle_load(redisContext *c, const char *dir,
                       const char *const *names, size_t n, char (*sha)[41],
                       char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        size_t len = 0;
        snprintf(path, sizeof path, "%s/%s.lua", dir, names[i]);
        char *src = slurp(path, &len);
        if (!src) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            return -1;
        }
        const char *av[3] = {"SCRIPT", "LOAD", src};
        size_t an[3] = {6, 4, len};
        redisReply *r = redisCommandArgv(c, 3, av, an);
        free(src);
        if (!r || r->type != REDIS_REPLY_STRING || r->len != 40) {
            snprintf(err, errlen, "SCRIPT LOAD %s: %s", path,
                     r && r->str ? r->str : c->errstr);
            if (r)
                freeReplyObject(r);
            return -1;
        }
        memcpy(sha[i], r->str, 40);
        sha[i][40] = '\0';
        freeReplyObject(r);
    }
    return 0;
}
