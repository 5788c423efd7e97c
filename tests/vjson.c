/*
 * vjson.c — registry verbs in the golden traces' JSON shapes (vjson.h).
 */
#include "emqlite_protocol.h"
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

/* A flat tail's element: a nested array (a backoff policy's inner policy,
 * ["jitter", ["fixed", 0]]) contributes its elements in order. */
static int push_flat(emq_vargv *a, const emq_json *v, const char *name,
                     char *err, size_t errlen, int depth)
{
    size_t i;
    if (v == NULL || v->type != EMQ_JSON_ARRAY)
        return push_value(a, v, name, err, errlen);
    if (depth >= 16) {
        snprintf(err, errlen, "argument \"%s\" nests too deep", name);
        return -1;
    }
    for (i = 0; i < v->n; i++)
        if (push_flat(a, v->items[i], name, err, errlen, depth + 1) != 0)
            return -1;
    return 0;
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

/*
 * Flow trees. A trace's `flow` (flow_add) or `flows` (add_bulk) holds
 * trees {"parent": {"id", "payload"}, "children": [child...]}, a child
 * {"id", "payload"} with optional "queue" (else its parent's),
 * "ignore_dependency_on_failure" (true: policy id, else fp; a child asking
 * for both policies gets id) and "children". The registry takes them as a
 * flat pre-order list: one group of the repeated tail per node, the root
 * first at level 1, each child right after the node before it, one level
 * deeper than its parent; the group's specs are named x.level, x.id,
 * x.payload, x.queue (the node's resolved queue: the root's is the trace's
 * `q`) and x.policy (fp|id; fp for a root), in whatever order the row
 * declares them.
 */
static int flow_group(emq_vargv *out, const emq_verb_info *v, size_t first,
                      const emq_json *node, int64_t level, const emq_json *q,
                      int id_policy, char *err, size_t errlen)
{
    size_t k;
    for (k = first; k < v->nargs; k++) {
        const char *f = strchr(v->args[k].name, '.');
        emq_json tmp;
        const emq_json *val = NULL;
        f = f ? f + 1 : v->args[k].name;
        memset(&tmp, 0, sizeof tmp);
        if (strcmp(f, "level") == 0) {
            tmp.type = EMQ_JSON_INT;
            tmp.i = level;
            val = &tmp;
        } else if (strcmp(f, "id") == 0 || strcmp(f, "payload") == 0) {
            val = node ? emq_json_get(node, f) : NULL;
        } else if (strcmp(f, "queue") == 0) {
            val = q;
        } else if (strcmp(f, "policy") == 0) {
            if (push(out, id_policy ? "id" : "fp", 2) != 0) return -1;
            continue;
        }
        if (val == NULL) {
            snprintf(err, errlen, "flow node: no \"%s\"", f);
            return -1;
        }
        if (push_value(out, val, v->args[k].name, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static int flow_children(emq_vargv *out, const emq_verb_info *v,
                         size_t first, const emq_json *kids, int64_t level,
                         const emq_json *q, char *err, size_t errlen)
{
    size_t i;
    if (kids == NULL || kids->type == EMQ_JSON_NULL) return 0;
    if (kids->type != EMQ_JSON_ARRAY) {
        snprintf(err, errlen, "flow node: \"children\" is not an array");
        return -1;
    }
    for (i = 0; i < kids->n; i++) {
        const emq_json *c = kids->items[i], *cq, *ig;
        if (c->type != EMQ_JSON_OBJECT) {
            snprintf(err, errlen, "flow node: a child is not an object");
            return -1;
        }
        cq = emq_json_get(c, "queue");
        if (cq == NULL || cq->type == EMQ_JSON_NULL) cq = q;
        ig = emq_json_get(c, "ignore_dependency_on_failure");
        if (flow_group(out, v, first, c, level, cq,
                       ig && ig->type == EMQ_JSON_TRUE, err, errlen) != 0 ||
            flow_children(out, v, first, emq_json_get(c, "children"),
                          level + 1, cq, err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* 1 when `a` is one flow tree. */
static int is_flow(const emq_json *a)
{
    return a && a->type == EMQ_JSON_OBJECT && emq_json_get(a, "parent");
}

static int flow_tail(emq_vargv *out, const emq_verb_info *v, size_t first,
                     const emq_json *args, const emq_json *a, char *err,
                     size_t errlen)
{
    const emq_json *q = emq_json_get(args, "q");
    size_t i, n = is_flow(a) ? 1 : a->n;
    for (i = 0; i < n; i++) {
        const emq_json *f = is_flow(a) ? a : a->items[i];
        if (!is_flow(f) || q == NULL) {
            snprintf(err, errlen, "flows: element %zu is not a flow", i);
            return -1;
        }
        if (flow_group(out, v, first, emq_json_get(f, "parent"), 1, q, 0,
                       err, errlen) != 0 ||
            flow_children(out, v, first, emq_json_get(f, "children"), 2, q,
                          err, errlen) != 0)
            return -1;
    }
    return 0;
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
        if (is_flow(a) || (a->type == EMQ_JSON_ARRAY && a->n > 0 &&
                           is_flow(a->items[0]))) {
            if (flow_tail(out, v, nfixed, args, a, err, errlen) != 0)
                goto fail;
            return 0;
        }
        if (a->type != EMQ_JSON_ARRAY) {
            snprintf(err, errlen, "argument \"%.*s\" is not an array",
                     (int)base, v->args[nfixed].name);
            goto fail;
        }
        /* A one-spec tail whose every element is a list is a list of
         * lists; otherwise it is a prefix-order expression (a backoff
         * policy) whose nested lists are flattened. */
        int lists = a->n > 0;
        for (i = 0; i < a->n; i++)
            if (a->items[i]->type != EMQ_JSON_ARRAY) lists = 0;
        for (i = 0; i < a->n; i++) {
            const emq_json *e = a->items[i];
            if (v->args[nfixed].name[base] != '.') {
                if (lists && e->type == EMQ_JSON_ARRAY) {
                    /* A list of lists (append_batch's records): each list
                     * passes as its length, then its elements. */
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
                if (push_flat(out, e, v->args[nfixed].name, err, errlen, 0))
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

/* ------------------------------------------------------ argv to JSON */

/* The JSON value of one argument of kind `kind`: a decimal int64 (exactly
 * as %PRId64 writes it) as an integer for the integer kinds, 1/0/true/false
 * as a boolean for BOOL, anything else as its bytes; NULL argv as null. */
static emq_json *arg_json(int kind, const char *p, size_t n)
{
    char tmp[32], back[32];
    if (p == NULL) return emq_json_new_null();
    if ((kind == EMQ_ARG_INT || kind == EMQ_ARG_POS ||
         kind == EMQ_ARG_NNEG) && n > 0 && n < sizeof tmp) {
        char *end;
        long long x;
        memcpy(tmp, p, n);
        tmp[n] = 0;
        x = strtoll(tmp, &end, 10);
        snprintf(back, sizeof back, "%lld", x);
        if (*end == 0 && strcmp(back, tmp) == 0)
            return emq_json_new_int((int64_t)x);
    }
    if (kind == EMQ_ARG_BOOL) {
        if ((n == 1 && p[0] == '1') || (n == 4 && memcmp(p, "true", 4) == 0))
            return emq_json_new_bool(1);
        if ((n == 1 && p[0] == '0') || (n == 5 && memcmp(p, "false", 5) == 0))
            return emq_json_new_bool(0);
    }
    return emq_json_new_str(p, n);
}

/* The member of `o` named by `name` up to `n` bytes, created as an empty
 * array when absent. NULL when out of memory. */
static emq_json *array_member(emq_json *o, const char *name, size_t n)
{
    size_t i;
    emq_json *a;
    for (i = 0; i < o->n; i++)
        if (o->members[i].klen == n && memcmp(o->members[i].key, name, n) == 0)
            return o->members[i].val;
    if (!(a = emq_json_new_array()) || emq_json_set(o, name, n, a) != 0)
        return NULL;
    return a;
}

/* The spec of the tail group whose name ends in ".<f>", or -1. */
static long group_spec(const emq_verb_info *v, size_t nfixed, const char *f)
{
    size_t k;
    for (k = nfixed; k < v->nargs; k++) {
        const char *d = strchr(v->args[k].name, '.');
        if (d && strcmp(d + 1, f) == 0) return (long)(k - nfixed);
    }
    return -1;
}

static int set_str(emq_json *o, const char *key, const char *p, size_t n)
{
    return emq_json_set(o, key, strlen(key), emq_json_new_str(p, n));
}

#define FLOW_DEPTH 32

/*
 * The inverse of the flow rule: the groups of a tail naming x.level,
 * x.id, x.payload, x.queue and x.policy are flow nodes in pre-order. Each
 * level-1 node opens a tree {"parent": {"id", "payload"}} (its queue must
 * be the trace's `q`, its policy fp); a node of level L is a child
 * {"id", "payload"[, "queue"][, "ignore_dependency_on_failure": true]} of
 * the last node of level L-1 (its queue written when it differs from its
 * parent's, the flag for policy id). One tree is the value, several (or
 * none) an array. Returns it, or NULL with `err` filled when a trace
 * cannot write the nodes (a level out of order, a root elsewhere than q or
 * not fp, no node in a tail that must not be empty: a flow has its root).
 */
static emq_json *flows_of(const emq_verb_info *v, size_t nfixed, size_t argc,
                          const char *const *argv, const size_t *len,
                          const emq_json *q, char *err, size_t errlen)
{
    size_t group = v->nargs - nfixed, i;
    long lv = group_spec(v, nfixed, "level"), id = group_spec(v, nfixed, "id");
    long pl = group_spec(v, nfixed, "payload");
    long qu = group_spec(v, nfixed, "queue");
    long po = group_spec(v, nfixed, "policy");
    emq_json *roots = emq_json_new_array(), *open[FLOW_DEPTH + 1], *out;
    const char *oq[FLOW_DEPTH + 1];
    size_t oql[FLOW_DEPTH + 1];
    long depth = 0;
#define ARG(f) argv[i + (size_t)(f)]
#define ALEN(f) (len ? len[i + (size_t)(f)] : strlen(ARG(f)))
    if (!roots) goto oom;
    if (id < 0 || pl < 0 || qu < 0 || po < 0 || !q ||
        q->type != EMQ_JSON_STRING) {
        snprintf(err, errlen, "%s: flow nodes need id, payload, queue, "
                 "policy and the trace's q", v->name);
        goto fail;
    }
    for (i = nfixed; i + group <= argc; i += group) {
        char num[24], *end;
        long level;
        emq_json *node = emq_json_new_object(), *kids;
        int policy_id;
        if (!node) goto oom;
        if (!ARG(lv) || !ARG(id) || !ARG(pl) || !ARG(qu) || !ARG(po) ||
            ALEN(lv) == 0 || ALEN(lv) >= sizeof num) {
            emq_json_free(node);
            snprintf(err, errlen, "%s: an absent flow node field", v->name);
            goto fail;
        }
        memcpy(num, ARG(lv), ALEN(lv));
        num[ALEN(lv)] = 0;
        level = strtol(num, &end, 10);
        policy_id = ALEN(po) == 2 && memcmp(ARG(po), "id", 2) == 0;
        if (*end || level < 1 || level > depth + 1 || level > FLOW_DEPTH ||
            (!policy_id && !(ALEN(po) == 2 && memcmp(ARG(po), "fp", 2) == 0))
            || (level == 1 && (policy_id || ALEN(qu) != q->len ||
                               memcmp(ARG(qu), q->s, q->len) != 0))) {
            emq_json_free(node);
            snprintf(err, errlen, "%s: flow node %zu is not a pre-order "
                     "node a trace writes", v->name, (i - nfixed) / group);
            goto fail;
        }
        if (set_str(node, "id", ARG(id), ALEN(id)) != 0 ||
            set_str(node, "payload", ARG(pl), ALEN(pl)) != 0) {
            emq_json_free(node);
            goto oom;
        }
        if (level == 1) {
            emq_json *tree = emq_json_new_object();
            if (!tree) {
                emq_json_free(node);
                goto oom;
            }
            if (emq_json_set(tree, "parent", 6, node) != 0) {
                emq_json_free(tree);
                goto oom;
            }
            if (emq_json_push(roots, tree) != 0) goto oom;
            node = tree;
        } else {
            const emq_json *pk = emq_json_get(open[level - 1], "children");
            if ((ALEN(qu) != oql[level - 1] ||
                 memcmp(ARG(qu), oq[level - 1], ALEN(qu)) != 0) &&
                set_str(node, "queue", ARG(qu), ALEN(qu)) != 0) {
                emq_json_free(node);
                goto oom;
            }
            if (policy_id &&
                emq_json_set(node, "ignore_dependency_on_failure", 28,
                             emq_json_new_bool(1)) != 0) {
                emq_json_free(node);
                goto oom;
            }
            kids = (emq_json *)pk;
            if (!kids && (!(kids = emq_json_new_array()) ||
                          emq_json_set(open[level - 1], "children", 8,
                                       kids) != 0)) {
                emq_json_free(node);
                goto oom;
            }
            if (emq_json_push(kids, node) != 0) goto oom;
        }
        open[level] = node;
        oq[level] = ARG(qu);
        oql[level] = ALEN(qu);
        depth = level;
    }
#undef ARG
#undef ALEN
    if (roots->n == 0 && (v->args[nfixed].flags & EMQ_ARGF_MIN1)) {
        snprintf(err, errlen, "%s: a flow without its root", v->name);
        goto fail;
    }
    if (roots->n == 1) {
        out = roots->items[0];
        roots->n = 0;
        emq_json_free(roots);
        return out;
    }
    return roots;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    emq_json_free(roots);
    return NULL;
}

emq_json *emq_vjson_from_argv(const emq_verb_info *v, size_t argc,
                              const char *const *argv, const size_t *len,
                              char *err, size_t errlen)
{
    emq_json *o = emq_json_new_object(), *tail = NULL;
    size_t nfixed = 0, i, k, group;
    const char *name, *dot;
#define LEN(j) (argv[j] == NULL ? 0 : len ? len[j] : strlen(argv[j]))
    if (!o) goto oom;
    while (nfixed < v->nargs && !(v->args[nfixed].flags & EMQ_ARGF_REST))
        nfixed++;
    if (argc > nfixed && nfixed == v->nargs) {
        snprintf(err, errlen, "%s takes at most %zu arguments, not %zu",
                 v->name, nfixed, argc);
        goto fail;
    }
    for (i = 0; i < nfixed; i++) {
        emq_json *val = arg_json(v->args[i].kind, i < argc ? argv[i] : NULL,
                                 i < argc ? LEN(i) : 0), *a;
        name = v->args[i].name;
        dot = strchr(name, '.');
        if (!val) goto oom;
        if (dot == NULL) {
            if (emq_json_set(o, name, strlen(name), val) != 0) goto oom;
            continue;
        }
        /* element k of the array `x`, k its position among the specs
         * named `x.` (they are contiguous, as emq_vjson_args reads them) */
        if (!(a = array_member(o, name, (size_t)(dot - name))) ||
            emq_json_push(a, val) != 0)
            goto oom;
    }
    if (nfixed == v->nargs) return o;
    group = v->nargs - nfixed;
    if ((argc > nfixed ? argc - nfixed : 0) % group != 0) {
        snprintf(err, errlen, "%s: the repeated tail of %zu arguments is not "
                 "whole groups of %zu", v->name, argc - nfixed, group);
        goto fail;
    }
    name = v->args[nfixed].name;
    dot = strchr(name, '.');
    if (dot && group_spec(v, nfixed, "level") >= 0) {
        emq_json *f = flows_of(v, nfixed, argc, argv, len,
                               emq_json_get(o, "q"), err, errlen);
        if (!f) goto fail;
        if (emq_json_set(o, name, (size_t)(dot - name), f) != 0) goto oom;
        return o;
    }
    if (!(tail = array_member(o, name, dot ? (size_t)(dot - name)
                                           : strlen(name))))
        goto oom;
    for (i = nfixed; i < argc; i += group) {
        emq_json *g = dot ? emq_json_new_array() : tail;
        if (!g) goto oom;
        for (k = 0; k < group; k++)
            if (emq_json_push(g, arg_json(v->args[nfixed + k].kind,
                                          argv[i + k], LEN(i + k))) != 0) {
                if (g != tail) emq_json_free(g);
                goto oom;
            }
        if (g != tail && emq_json_push(tail, g) != 0) goto oom;
    }
    return o;
#undef LEN
oom:
    snprintf(err, errlen, "out of memory");
fail:
    emq_json_free(o);
    return NULL;
}
