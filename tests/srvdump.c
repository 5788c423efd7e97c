/*
 * srvdump.c — a live server's keyspace as tests/ksdump.h text (srvdump.h).
 */
#include <stdlib.h>
#include <string.h>
#include "srvdump.h"
#include "ksdump.h"

static int cmp_reply(const void *a, const void *b)
{
    const redisReply *x = *(redisReply *const *)a, *y = *(redisReply *const *)b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(x->str, y->str, n) : 0;
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int type_of(const char *t)
{
    static const struct { const char *name; int type; } types[] = {
        { "string", EMQ_T_STRING }, { "hash", EMQ_T_HASH },
        { "list", EMQ_T_LIST }, { "set", EMQ_T_SET }, { "zset", EMQ_T_ZSET },
    };
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (strcmp(t, types[i].name) == 0)
            return types[i].type;
    return 0;
}

long sd_dump(redisContext *c, emq_buf *out, sd_key_fn fn, void *ctx)
{
    redisReply *all = redisCommand(c, "KEYS *");
    long n = -1;
    out->len = 0;
    if (!all || all->type != REDIS_REPLY_ARRAY)
        goto done;
    qsort(all->element, all->elements, sizeof *all->element, cmp_reply);
    for (size_t i = 0; i < all->elements; i++) {
        const char *k = all->element[i]->str;
        size_t kn = all->element[i]->len;
        int version = kn == 13 && memcmp(k, "{emq}:version", 13) == 0;
        redisReply *t = redisCommand(c, "TYPE %b", k, kn);
        redisReply *e = redisCommand(c, "PEXPIRETIME %b", k, kn);
        redisReply *v = NULL;
        if (!t || t->type != REDIS_REPLY_STATUS || !e ||
            e->type != REDIS_REPLY_INTEGER) {
            if (t) freeReplyObject(t);
            if (e) freeReplyObject(e);
            goto done;
        }
        int type = type_of(t->str);
        int64_t exp = e->integer < 0 ? -1 : e->integer;
        if (!version)
            kd_key(out, k, kn, type, exp);
        switch (type) {
        case EMQ_T_STRING:
            v = redisCommand(c, "GET %b", k, kn);
            if (v && !version)
                kd_string(out, v->str, v->len);
            break;
        case EMQ_T_HASH:
            v = redisCommand(c, "HGETALL %b", k, kn);
            if (v && !version) {
                size_t nf = v->elements / 2;
                kd_pair *f = calloc(nf + 1, sizeof *f);
                for (size_t j = 0; j < nf; j++)
                    f[j] = (kd_pair){
                        (const unsigned char *)v->element[2 * j]->str,
                        v->element[2 * j]->len,
                        (const unsigned char *)v->element[2 * j + 1]->str,
                        v->element[2 * j + 1]->len};
                kd_hash(out, f, nf); /* sorts its copy of the views */
                free(f);
            }
            break;
        case EMQ_T_LIST:
        case EMQ_T_SET:
            v = type == EMQ_T_LIST ? redisCommand(c, "LRANGE %b 0 -1", k, kn)
                                   : redisCommand(c, "SMEMBERS %b", k, kn);
            if (v && type == EMQ_T_SET)
                qsort(v->element, v->elements, sizeof *v->element,
                      cmp_reply);
            for (size_t j = 0; v && !version && j < v->elements; j++)
                kd_elem(out, v->element[j]->str, v->element[j]->len);
            break;
        case EMQ_T_ZSET:
            v = redisCommand(c, "ZRANGE %b 0 -1 WITHSCORES", k, kn);
            for (size_t j = 0; v && !version && j + 1 < v->elements; j += 2)
                kd_zmember(out, v->element[j]->str, v->element[j]->len,
                           strtod(v->element[j + 1]->str, NULL));
            break;
        default:
            break;
        }
        if (fn)
            fn(ctx, k, kn, type, exp, v);
        if (v)
            freeReplyObject(v);
        freeReplyObject(t);
        freeReplyObject(e);
    }
    n = (long)all->elements;
done:
    if (all)
        freeReplyObject(all);
    emq_buf_append(out, "", 1); /* NUL for printing */
    return n;
}
