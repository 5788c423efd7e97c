/*
 * vjson.c — registry verbs in the golden traces' JSON shapes (vjson.h).
 */
#include "vjson.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int push(emq_vargv *a, const char *p, size_t n)
{
    if (a->argc == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 8;
        const char **v = realloc(a->argv, cap * sizeof *v);
        size_t *l;
        if (!v) return -1;
        a->argv = v;
        if (!(l = realloc(a->len, cap * sizeof *l))) return -1;
        a->len = l;
        a->cap = cap;
    }
    a->argv[a->argc] = p;
    a->len[a->argc] = n;
    a->argc++;
    return 0;
}

static int push_value(emq_vargv *a, const emq_json *v, const char *name,
                      char *err, size_t errlen)
{
    char num[32], **o;
    int n;
    if (v == NULL || v->type == EMQ_JSON_NULL) return push(a, NULL, 0);
    switch (v->type) {
    case EMQ_JSON_STRING:
        return push(a, v->s, v->len);
    case EMQ_JSON_TRUE:
        return push(a, "1", 1);
    case EMQ_JSON_FALSE:
        return push(a, "0", 1);
    case EMQ_JSON_INT:
        n = snprintf(num, sizeof num, "%" PRId64, v->i);
        if (!(o = realloc(a->owned, (a->nowned + 1) * sizeof *o))) return -1;
        a->owned = o;
        if (!(o[a->nowned] = strdup(num))) return -1;
        return push(a, o[a->nowned++], (size_t)n);
    default:
        snprintf(err, errlen, "argument \"%s\": a %s cannot be a verb "
                 "argument", name, v->type == EMQ_JSON_ARRAY ? "nested array"
                 : v->type == EMQ_JSON_OBJECT ? "object" : "float");
        return -1;
    }
}

/* The trace argument `base` (the name up to a '.', or all of it). */
static const emq_json *arg_of(const emq_json *args, const char *name,
                              size_t *baselen)
{
    const char *dot = strchr(name, '.');
    size_t n = dot ? (size_t)(dot - name) : strlen(name), i;
    *baselen = n;
    for (i = 0; args && i < args->n; i++)
        if (args->members[i].klen == n &&
            memcmp(args->members[i].key, name, n) == 0)
            return args->members[i].val;
    return NULL;
}

int emq_vjson_args(const emq_verb_info *v, const emq_json *args,
                   emq_vargv *out, char *err, size_t errlen)
{
    size_t nfixed = 0, i, k, base;
    memset(out, 0, sizeof *out);
    while (nfixed < v->nargs && !(v->args[nfixed].flags & EMQ_ARGF_REST))
        nfixed++;
    for (i = 0; i < nfixed; i++) {
        const char *name = v->args[i].name;
        const emq_json *a = arg_of(args, name, &base);
        if (name[base] == '.') {
            for (k = 0; i >= k + 1 &&
                        strncmp(v->args[i - k - 1].name, name, base + 1) == 0;
                 k++)
                ;
            if (a && a->type == EMQ_JSON_ARRAY)
                a = k < a->n ? a->items[k] : NULL;
            else if (a && a->type != EMQ_JSON_NULL) {
                snprintf(err, errlen, "argument \"%.*s\" is not an array",
                         (int)base, name);
                goto fail;
            }
        }
        if (push_value(out, a, name, err, errlen) != 0) goto fail;
    }
    /* Trailing absent optional arguments are left out. */
    while (out->argc > 0 && out->argv[out->argc - 1] == NULL &&
           (v->args[out->argc - 1].flags & EMQ_ARGF_OPT))
        out->argc--;
    if (nfixed < v->nargs) {
        size_t group = v->nargs - nfixed;
        const emq_json *a = arg_of(args, v->args[nfixed].name, &base);
        if (a == NULL || a->type == EMQ_JSON_NULL) return 0;
        if (a->type != EMQ_JSON_ARRAY) {
            snprintf(err, errlen, "argument \"%.*s\" is not an array",
                     (int)base, v->args[nfixed].name);
            goto fail;
        }
        for (i = 0; i < a->n; i++) {
            const emq_json *e = a->items[i];
            if (v->args[nfixed].name[base] != '.') {
                if (e->type == EMQ_JSON_ARRAY) {
                    /* A nested list (append_batch's records): its length,
                     * then its elements. */
                    emq_json len;
                    memset(&len, 0, sizeof len);
                    len.type = EMQ_JSON_INT;
                    len.i = (int64_t)e->n;
                    if (push_value(out, &len, v->args[nfixed].name, err,
                                   errlen))
                        goto fail;
                    for (k = 0; k < e->n; k++)
                        if (push_value(out, e->items[k],
                                       v->args[nfixed].name, err, errlen))
                            goto fail;
                    continue;
                }
                if (push_value(out, e, v->args[nfixed].name, err, errlen))
                    goto fail;
                continue;
            }
            if (e->type != EMQ_JSON_ARRAY || e->n != group) {
                snprintf(err, errlen, "argument \"%.*s\": element %zu is "
                         "not an array of %zu", (int)base,
                         v->args[nfixed].name, i, group);
                goto fail;
            }
            for (k = 0; k < group; k++)
                if (push_value(out, e->items[k], v->args[nfixed + k].name,
                               err, errlen))
                    goto fail;
        }
    }
    return 0;
fail:
    if (!err[0]) snprintf(err, errlen, "out of memory");
    emq_vargv_free(out);
    return -1;
}

void emq_vargv_free(emq_vargv *a)
{
    size_t i;
    for (i = 0; i < a->nowned; i++) free(a->owned[i]);
    free(a->owned);
    free(a->argv);
    free(a->len);
    memset(a, 0, sizeof *a);
}

static emq_json *tagged(const char *tag, const char *s, size_t n)
{
    emq_json *o = emq_json_new_object();
    if (o && emq_json_set(o, tag, strlen(tag), emq_json_new_str(s, n))) {
        emq_json_free(o);
        return NULL;
    }
    return o;
}

static emq_json *value(const emq_reply *r)
{
    emq_json *out, *m;
    size_t i;
    switch (r->type) {
    case EMQ_REPLY_NIL: return emq_json_new_null();
    case EMQ_REPLY_INT: return emq_json_new_int(r->integer);
    case EMQ_REPLY_BOOL: return emq_json_new_bool((int)r->integer);
    case EMQ_REPLY_BULK:
    case EMQ_REPLY_STATUS: return emq_json_new_str(r->str, r->len);
    case EMQ_REPLY_ERROR: return tagged("error", r->str, r->len);
    case EMQ_REPLY_REFUSED: return tagged("refused", r->str, r->len);
    case EMQ_REPLY_ARRAY:
        if (!(out = emq_json_new_array())) return NULL;
        for (i = 0; i < r->n; i++)
            if (emq_json_push(out, value(&r->elem[i])) != 0) {
                emq_json_free(out);
                return NULL;
            }
        return out;
    case EMQ_REPLY_MAP:
        if (!(m = emq_json_new_object())) return NULL;
        for (i = 0; i + 1 < r->n; i += 2) {
            const emq_reply *k = &r->elem[i];
            if (emq_json_set(m, k->str ? k->str : "", k->len,
                             value(&r->elem[i + 1])) != 0) {
                emq_json_free(m);
                return NULL;
            }
        }
        if (!(out = emq_json_new_object()) ||
            emq_json_set(out, "map", 3, m) != 0) {
            emq_json_free(out);
            return NULL;
        }
        return out;
    default:
        return tagged("emqlite_error", "unknown reply type", 18);
    }
}

emq_json *emq_vjson_reply(const emq_reply *r, int rc, const char *msg)
{
    char tmp[700];
    int n;
    if (rc >= 0 || r->type == EMQ_REPLY_ERROR || r->type == EMQ_REPLY_REFUSED)
        return value(r);
    n = snprintf(tmp, sizeof tmp, "%s (%d): %s", emq_strerror(rc), rc,
                 msg ? msg : "");
    return tagged("emqlite_error", tmp, n < 0 ? 0
                  : (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}
