/*
 * xcmd.c — Valkey's stream commands (xcmd.h): argument grammar, the exact
 * error texts, and the reply shapes, over storage/stream.h.
 *
 * The id grammar is Valkey's: `<ms>-<seq>` or `<ms>` (the sequence then
 * defaults to 0 for a start and to its maximum for an end), `-` and `+` for
 * the ends where a non-strict id is read, `<ms>-*` in XADD, `(` before an
 * id for an exclusive interval bound; each half is read as Valkey's
 * string2ull does (a strict 64-bit decimal, else strtoull's whole-string
 * reading), from the argument as a C string, at most 127 bytes.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "emqlite_protocol.h"
#include "xcmd.h"
#include "stream.h"
#include "verb.h"
#include "db.h"

#define SYNTAX "ERR syntax error"
#define NOTINT "ERR value is not an integer or out of range"
#define BADID "ERR Invalid stream ID specified as stream command argument"

typedef struct xc {
    emq_store *st;
    size_t argc;
    const char *const *argv;
    const size_t *len;
    emq_reply *r;
    int64_t *blocked;
} xc;

static const emq_xid XMAX = { UINT64_MAX, UINT64_MAX };

/* --------------------------------------------------------------- errors */

static int err(xc *x, int code, const char *msg)
{
    return emq_reply_error(x->r, EMQ_REPLY_ERROR, msg) < 0 ? EMQ_ENOMEM
                                                           : code;
}

static int errf(xc *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* An EMQ_EENGINE error reply formatted like Valkey's (%s stops at NUL). */
static int errf(xc *x, const char *fmt, ...)
{
    va_list ap;
    char small[256], *p = small;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return err(x, EMQ_EENGINE, "ERR");
    if ((size_t)n >= sizeof small) {
        if (!(p = emq_mem_malloc((size_t)n + 1)))
            return EMQ_ENOMEM;
        va_start(ap, fmt);
        vsnprintf(p, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    n = err(x, EMQ_EENGINE, p);
    if (p != small)
        emq_mem_free(p);
    return n;
}

/* A store result that is a reply: WRONGTYPE, or the engine's own error. */
static int store_rc(xc *x, int rc)
{
    if (rc == EMQ_EWRONGTYPE)
        return err(x, rc, EMQ_WRONGTYPE_MSG);
    if (rc == EMQ_ENONMONO || rc == EMQ_EENGINE)
        return err(x, rc, emq_store_errmsg(x->st));
    return rc;
}

static int arity(xc *x, const char *name)
{
    return errf(x, "ERR wrong number of arguments for '%s' command", name);
}

/* -------------------------------------------------------------- parsing */

static const char *A(const xc *x, size_t i) { return x->argv[i]; }

static int is(const xc *x, size_t i, const char *word)
{
    return i < x->argc && strcasecmp(x->argv[i], word) == 0;
}

/* getLongLongFromObject: a strict 64-bit decimal. */
static int parse_ll(const xc *x, size_t i, int64_t *v)
{
    return emq_parse_i64(x->argv[i], x->len[i], v);
}

static int get_ll(xc *x, size_t i, int64_t *v, const char *msg)
{
    if (parse_ll(x, i, v) == 0)
        return 0;
    err(x, EMQ_EENGINE, msg ? msg : NOTINT);
    return -1;
}

/* Valkey's string2ull over a C string. */
static int s2ull(const char *s, uint64_t *v)
{
    int64_t ll;
    char *end = NULL;
    unsigned long long u;
    if (emq_parse_i64(s, strlen(s), &ll) == 0) {
        if (ll < 0)
            return -1;
        *v = (uint64_t)ll;
        return 0;
    }
    errno = 0;
    u = strtoull(s, &end, 10);
    if (errno == EINVAL || errno == ERANGE || !(*s != '\0' && *end == '\0'))
        return -1;
    *v = u;
    return 0;
}

enum { ID_STRICT = 1, ID_SEQAUTO = 2 };

/* Parse an id (see the file comment). *seq_given (may be NULL) is 0 for
 * `<ms>-*`. Returns 0, or -1 for an invalid id. */
static int parse_id(const char *s, size_t n, uint64_t missing_seq, int flags,
                    emq_xid *id, int *seq_given)
{
    char buf[128], *dash;
    if (n > 127)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if ((flags & ID_STRICT) && (buf[0] == '-' || buf[0] == '+') &&
        buf[1] == '\0')
        return -1;
    if (seq_given)
        *seq_given = 1;
    if (buf[0] == '-' && buf[1] == '\0') {
        id->ms = id->seq = 0;
        return 0;
    }
    if (buf[0] == '+' && buf[1] == '\0') {
        *id = XMAX;
        return 0;
    }
    if ((dash = strchr(buf, '-')) != NULL)
        *dash = '\0';
    if (s2ull(buf, &id->ms) != 0)
        return -1;
    if (!dash) {
        id->seq = missing_seq;
        return 0;
    }
    if ((flags & ID_SEQAUTO) && seq_given && strcmp(dash + 1, "*") == 0) {
        id->seq = 0;
        *seq_given = 0;
        return 0;
    }
    return s2ull(dash + 1, &id->seq);
}

static int get_id(xc *x, size_t i, uint64_t missing_seq, int flags,
                  emq_xid *id)
{
    if (parse_id(A(x, i), x->len[i], missing_seq, flags, id, NULL) == 0)
        return 0;
    err(x, EMQ_EENGINE, BADID);
    return -1;
}

/* An interval bound: `(` makes it exclusive (then strict). */
static int get_interval(xc *x, size_t i, uint64_t missing_seq, emq_xid *id,
                        int *excl)
{
    const char *s = A(x, i);
    size_t n = x->len[i];
    int ex = excl && n > 1 && s[0] == '(';
    if (excl)
        *excl = ex;
    if (parse_id(ex ? s + 1 : s, ex ? n - 1 : n, missing_seq,
                 ex ? ID_STRICT : 0, id, NULL) == 0)
        return 0;
    err(x, EMQ_EENGINE, BADID);
    return -1;
}

/* Apply exclusive bounds: start+1, end-1 (Valkey's interval errors). */
static int exclude(xc *x, emq_xid *start, int sx, emq_xid *end, int ex)
{
    if (sx && emq_xid_incr(start) != 0) {
        err(x, EMQ_EENGINE, "ERR invalid start ID for the interval");
        return -1;
    }
    if (ex && emq_xid_decr(end) != 0) {
        err(x, EMQ_EENGINE, "ERR invalid end ID for the interval");
        return -1;
    }
    return 0;
}

/* --------------------------------------------------------------- replies */

static int put_id(emq_reply *r, emq_xid id)
{
    char b[EMQ_XID_BUF];
    size_t n = emq_xid_fmt(b, id);
    return emq_reply_push_bulk(r, b, n);
}

static int set_id(emq_reply *r, emq_xid id)
{
    char b[EMQ_XID_BUF];
    size_t n = emq_xid_fmt(b, id);
    return emq_reply_bulk(r, b, n);
}

/* Append [id, [f, v, ...]] (or [id, nil]) to the array r. */
static int on_entry(void *ctx, emq_xid id, const emq_bytes *fv, size_t nfv)
{
    emq_reply *r = ctx, *e = emq_reply_push(r), *f;
    if (!e || emq_reply_array(e, EMQ_REPLY_ARRAY, 2) < 0 || put_id(e, id) < 0)
        return EMQ_ENOMEM;
    if (!(f = emq_reply_push(e)))
        return EMQ_ENOMEM;
    if (!fv)
        return EMQ_OK; /* nil fields: the entry is gone */
    if (emq_reply_array(f, EMQ_REPLY_ARRAY, nfv) < 0)
        return EMQ_ENOMEM;
    for (size_t i = 0; i < nfv; i++)
        if (emq_reply_push_bulk(f, fv[i].p, fv[i].n) < 0)
            return EMQ_ENOMEM;
    return EMQ_OK;
}

/* Append the bare id (JUSTID claims, deleted ids). */
static int on_id(void *ctx, emq_xid id, const emq_bytes *fv, size_t nfv)
{
    (void)fv, (void)nfv;
    return put_id(ctx, id);
}

/* Map helpers (RESP3): key then value. */
static emq_reply *map_key(emq_reply *m, const char *k)
{
    if (emq_reply_push_bulk(m, k, strlen(k)) < 0)
        return NULL;
    return emq_reply_push(m);
}

static int map_int(emq_reply *m, const char *k, int64_t v)
{
    emq_reply *e = map_key(m, k);
    if (!e)
        return EMQ_ENOMEM;
    emq_reply_int(e, v);
    return EMQ_OK;
}

static int map_id(emq_reply *m, const char *k, emq_xid id)
{
    emq_reply *e = map_key(m, k);
    return e ? set_id(e, id) : EMQ_ENOMEM;
}

/* ------------------------------------------------------------------ XADD */

/* Shared by XADD and XTRIM: MAXLEN/MINID [=|~] threshold [LIMIT n] (and,
 * for XADD, NOMKSTREAM and the id). *at = the first argument not read. */
static int parse_trim(xc *x, size_t at0, int xadd, emq_xadd *a, size_t *at)
{
    size_t i = at0;
    int limit_given = 0, approx = 0;
    int64_t limit = 0, v;
    a->trim.how = EMQ_XTRIM_NONE;
    for (; i < x->argc; i++) {
        size_t more = x->argc - 1 - i;
        const char *o = A(x, i);
        if (xadd && o[0] == '*' && o[1] == '\0') {
            a->idmode = EMQ_XADD_AUTO;
            break;
        } else if ((is(x, i, "maxlen") || is(x, i, "minid")) && more) {
            int maxlen = is(x, i, "maxlen");
            const char *nx = A(x, i + 1);
            if (a->trim.how != EMQ_XTRIM_NONE)
                return err(x, EMQ_EENGINE, "ERR syntax error, MAXLEN and "
                           "MINID options at the same time are not "
                           "compatible");
            approx = 0;
            if (more >= 2 && nx[0] == '~' && nx[1] == '\0') {
                approx = 1;
                i++;
            } else if (more >= 2 && nx[0] == '=' && nx[1] == '\0') {
                i++;
            }
            if (maxlen) {
                if (get_ll(x, i + 1, &v, NULL))
                    return EMQ_EENGINE;
                if (v < 0)
                    return err(x, EMQ_EENGINE, "ERR The MAXLEN argument "
                               "must be >= 0.");
                a->trim.maxlen = (uint64_t)v;
            } else if (get_id(x, i + 1, 0, ID_STRICT, &a->trim.minid)) {
                return EMQ_EENGINE;
            }
            i++;
            a->trim.how = maxlen ? EMQ_XTRIM_MAXLEN : EMQ_XTRIM_MINID;
        } else if (is(x, i, "limit") && more) {
            if (get_ll(x, i + 1, &limit, NULL))
                return EMQ_EENGINE;
            if (limit < 0)
                return err(x, EMQ_EENGINE, "ERR The LIMIT argument must be "
                           ">= 0.");
            limit_given = 1;
            i++;
        } else if (xadd && is(x, i, "nomkstream")) {
            a->nomkstream = 1;
        } else if (xadd) {
            int seq_given = 1;
            if (parse_id(o, x->len[i], 0, ID_STRICT | ID_SEQAUTO, &a->id,
                         &seq_given) != 0)
                return err(x, EMQ_EENGINE, BADID);
            a->idmode = seq_given ? EMQ_XADD_EXPLICIT : EMQ_XADD_SEQAUTO;
            break;
        } else {
            return err(x, EMQ_EENGINE, SYNTAX);
        }
    }
    if (limit && a->trim.how == EMQ_XTRIM_NONE)
        return err(x, EMQ_EENGINE, "ERR syntax error, LIMIT cannot be used "
                   "without specifying a trimming strategy");
    if (!xadd && a->trim.how == EMQ_XTRIM_NONE)
        return err(x, EMQ_EENGINE, "ERR syntax error, XTRIM must be called "
                   "with a trimming strategy");
    if (limit_given && !approx)
        return err(x, EMQ_EENGINE, "ERR syntax error, LIMIT cannot be used "
                   "without the special ~ option");
    a->trim.approx = approx;
    a->trim.limit = limit_given ? limit : -1;
    *at = i;
    return EMQ_OK;
}

static int x_add(xc *x)
{
    emq_xadd a;
    emq_bytes *fv = NULL;
    emq_xid id;
    size_t at, nfv, i;
    int rc;
    if (x->argc < 5)
        return arity(x, "xadd");
    memset(&a, 0, sizeof a);
    if ((rc = parse_trim(x, 2, 1, &a, &at)) != EMQ_OK)
        return rc;
    nfv = at + 1 <= x->argc ? x->argc - at - 1 : 0;
    if (at >= x->argc || nfv < 2 || nfv % 2)
        return arity(x, "xadd");
    if (!(fv = emq_mem_malloc(nfv * sizeof *fv)))
        return EMQ_ENOMEM;
    for (i = 0; i < nfv; i++) {
        fv[i].p = A(x, at + 1 + i);
        fv[i].n = x->len[at + 1 + i];
    }
    a.fv = fv;
    a.nfv = nfv;
    rc = emq_xs_add(x->st, A(x, 1), x->len[1], &a, &id);
    emq_mem_free(fv);
    if (rc == EMQ_NOTFOUND) {
        emq_reply_nil(x->r);
        return EMQ_OK;
    }
    if (rc != EMQ_OK)
        return store_rc(x, rc);
    return set_id(x->r, id);
}

static int x_trim(xc *x)
{
    emq_xadd a;
    size_t at;
    int64_t removed;
    int rc;
    if (x->argc < 4)
        return arity(x, "xtrim");
    memset(&a, 0, sizeof a);
    if ((rc = parse_trim(x, 2, 0, &a, &at)) != EMQ_OK)
        return rc;
    if ((rc = emq_xs_trim(x->st, A(x, 1), x->len[1], &a.trim, &removed))
        != EMQ_OK)
        return store_rc(x, rc);
    emq_reply_int(x->r, removed);
    return EMQ_OK;
}

/* ------------------------------------------------------------- ranges */

static int x_range(xc *x, int rev)
{
    emq_xid start, end;
    int sx, ex, rc;
    int64_t count = -1;
    emq_xmeta m;
    size_t si = rev ? 3 : 2, ei = rev ? 2 : 3;
    if (x->argc < 4)
        return arity(x, rev ? "xrevrange" : "xrange");
    if (get_interval(x, si, 0, &start, &sx) ||
        exclude(x, &start, sx, &end, 0) ||
        get_interval(x, ei, UINT64_MAX, &end, &ex) ||
        exclude(x, &start, 0, &end, ex))
        return EMQ_EENGINE;
    for (size_t j = 4; j < x->argc; j++) {
        if (is(x, j, "COUNT") && j + 1 < x->argc) {
            if (get_ll(x, j + 1, &count, NULL))
                return EMQ_EENGINE;
            if (count < 0)
                count = 0;
            j++;
        } else {
            return err(x, EMQ_EENGINE, SYNTAX);
        }
    }
    rc = emq_xs_meta(x->st, A(x, 1), x->len[1], &m);
    if (rc == EMQ_NOTFOUND)
        return emq_reply_array(x->r, EMQ_REPLY_ARRAY, 0);
    if (rc != EMQ_OK)
        return store_rc(x, rc);
    if (count == 0) {
        emq_reply_nil(x->r);
        return EMQ_OK;
    }
    if ((rc = emq_reply_array(x->r, EMQ_REPLY_ARRAY, 0)) < 0)
        return rc;
    rc = emq_xs_range(x->st, A(x, 1), x->len[1], start, end, rev,
                      count < 0 ? 0 : (uint64_t)count, on_entry, x->r);
    return rc == EMQ_OK ? EMQ_OK : store_rc(x, rc);
}

static int x_len(xc *x)
{
    emq_xmeta m;
    int rc;
    if (x->argc != 2)
        return arity(x, "xlen");
    rc = emq_xs_meta(x->st, A(x, 1), x->len[1], &m);
    if (rc == EMQ_NOTFOUND)
        m.length = 0;
    else if (rc != EMQ_OK)
        return store_rc(x, rc);
    emq_reply_int(x->r, (int64_t)m.length);
    return EMQ_OK;
}

/* Parse argv[from..argc) as ids (strict) into a fresh array. */
static int get_ids(xc *x, size_t from, size_t to, emq_xid **ids)
{
    size_t n = to - from;
    *ids = emq_mem_malloc((n ? n : 1) * sizeof **ids);
    if (!*ids)
        return EMQ_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (get_id(x, from + i, 0, ID_STRICT, &(*ids)[i])) {
            emq_mem_free(*ids);
            *ids = NULL;
            return EMQ_EENGINE;
        }
    return EMQ_OK;
}

static int x_del(xc *x)
{
    emq_xmeta m;
    emq_xid *ids;
    int64_t deleted;
    int rc;
    if (x->argc < 3)
        return arity(x, "xdel");
    rc = emq_xs_meta(x->st, A(x, 1), x->len[1], &m);
    if (rc == EMQ_NOTFOUND) {
        emq_reply_int(x->r, 0);
        return EMQ_OK;
    }
    if (rc != EMQ_OK)
        return store_rc(x, rc);
    if ((rc = get_ids(x, 2, x->argc, &ids)) != EMQ_OK)
        return rc;
    rc = emq_xs_del(x->st, A(x, 1), x->len[1], ids, x->argc - 2, &deleted);
    emq_mem_free(ids);
    if (rc != EMQ_OK)
        return store_rc(x, rc);
    emq_reply_int(x->r, deleted);
    return EMQ_OK;
}

static int x_setid(xc *x)
{
    emq_xid id, maxdel = { 0, 0 };
    int64_t added = -1;
    int rc;
    if (x->argc < 3)
        return arity(x, "xsetid");
    if (get_id(x, 2, 0, ID_STRICT, &id))
        return EMQ_EENGINE;
    for (size_t i = 3; i < x->argc; i += 2) {
        int more = i + 1 < x->argc;
        if (is(x, i, "ENTRIESADDED") && more) {
            if (get_ll(x, i + 1, &added, NULL))
                return EMQ_EENGINE;
            if (added < 0)
                return err(x, EMQ_EENGINE, "ERR entries_added must be "
                                           "positive");
        } else if (is(x, i, "MAXDELETEDID") && more) {
            if (get_id(x, i + 1, 0, ID_STRICT, &maxdel))
                return EMQ_EENGINE;
            if (emq_xid_cmp(id, maxdel) < 0)
                return err(x, EMQ_EENGINE, "ERR The ID specified in XSETID "
                           "is smaller than the provided "
                           "max_deleted_entry_id");
        } else {
            return err(x, EMQ_EENGINE, SYNTAX);
        }
    }
    rc = emq_xs_setid(x->st, A(x, 1), x->len[1], id, added, &maxdel);
    if (rc == EMQ_NOTFOUND)
        return err(x, EMQ_EENGINE, "ERR no such key");
    if (rc != EMQ_OK)
        return store_rc(x, rc);
    return emq_reply_status(x->r, "OK");
}

/* ---------------------------------------------------------------- XGROUP */

static int nogroup_for_key(xc *x, size_t gi, size_t ki)
{
    return errf(x, "NOGROUP No such consumer group '%s' for key name '%s'",
                A(x, gi), A(x, ki));
}

static int x_group(xc *x)
{
    const char *sub = x->argc > 1 ? A(x, 1) : "";
    int mkstream = 0, rc, n;
    int64_t er = -1, v;
    emq_xid id, *pid = &id;
    emq_xmeta m;
    struct { const char *name, *full; size_t min, max; } subs[] = {
        { "CREATE", "xgroup|create", 5, 8 },
        { "SETID", "xgroup|setid", 5, 7 },
        { "DESTROY", "xgroup|destroy", 4, 4 },
        { "CREATECONSUMER", "xgroup|createconsumer", 5, 5 },
        { "DELCONSUMER", "xgroup|delconsumer", 5, 5 },
    };
    size_t k;
    if (x->argc < 2)
        return arity(x, "xgroup");
    for (k = 0; k < 5 && strcasecmp(sub, subs[k].name) != 0; k++)
        ;
    if (k == 5)
        return errf(x, "ERR unknown subcommand '%.128s'. Try XGROUP HELP.",
                    sub);
    if (x->argc < subs[k].min || (k >= 2 && x->argc != subs[k].min))
        return arity(x, subs[k].full);
    /* CREATE's and SETID's options first, as Valkey parses them. */
    if (k <= 1) {
        for (size_t i = 5; i < x->argc;) {
            if (k == 0 && is(x, i, "MKSTREAM")) {
                mkstream = 1;
                i++;
            } else if (is(x, i, "ENTRIESREAD") && i + 1 < x->argc) {
                if (get_ll(x, i + 1, &v, NULL))
                    return EMQ_EENGINE;
                if (v < 0 && v != -1)
                    return err(x, EMQ_EENGINE, "ERR value for ENTRIESREAD "
                               "must be positive or -1");
                er = v;
                i += 2;
            } else {
                return errf(x, "ERR unknown subcommand or wrong number of "
                            "arguments for '%.128s'. Try XGROUP HELP.", sub);
            }
        }
    }
    if (x->argc > subs[k].max || (k == 1 && x->argc == 6))
        return errf(x, "ERR unknown subcommand or wrong number of arguments "
                    "for '%.128s'. Try XGROUP HELP.", sub);
    rc = emq_xs_meta(x->st, A(x, 2), x->len[2], &m);
    if (rc != EMQ_OK && rc != EMQ_NOTFOUND)
        return store_rc(x, rc);
    if (rc == EMQ_NOTFOUND && !mkstream)
        return err(x, EMQ_EENGINE, "ERR The XGROUP subcommand requires the "
                   "key to exist. Note that for CREATE you may want to use "
                   "the MKSTREAM option to create an empty stream "
                   "automatically.");
    /* SETID and the consumer subcommands need the group. */
    if ((k == 1 || k == 3 || k == 4) &&
        (rc = emq_xs_group_exists(x->st, A(x, 2), x->len[2], A(x, 3),
                                  x->len[3])) != EMQ_OK)
        return rc == EMQ_XNOGROUP ? nogroup_for_key(x, 3, 2)
                                  : store_rc(x, rc);
    switch (k) {
    case 0: /* CREATE */
        if (strcmp(A(x, 4), "$") == 0)
            pid = NULL;
        else if (get_id(x, 4, 0, ID_STRICT, &id))
            return EMQ_EENGINE;
        rc = emq_xs_group_create(x->st, A(x, 2), x->len[2], A(x, 3),
                                 x->len[3], pid, mkstream, er);
        if (rc == EMQ_EXISTS)
            return err(x, EMQ_EENGINE, "BUSYGROUP Consumer Group name "
                                       "already exists");
        if (rc != EMQ_OK)
            return store_rc(x, rc);
        return emq_reply_status(x->r, "OK");
    case 1: /* SETID */
        if (strcmp(A(x, 4), "$") == 0)
            pid = NULL;
        else if (get_id(x, 4, 0, 0, &id))
            return EMQ_EENGINE;
        rc = emq_xs_group_setid(x->st, A(x, 2), x->len[2], A(x, 3),
                                x->len[3], pid, er);
        if (rc == EMQ_XNOGROUP)
            return nogroup_for_key(x, 3, 2);
        if (rc != EMQ_OK)
            return store_rc(x, rc);
        return emq_reply_status(x->r, "OK");
    case 2: /* DESTROY */
        rc = emq_xs_group_destroy(x->st, A(x, 2), x->len[2], A(x, 3),
                                  x->len[3], &n);
        if (rc != EMQ_OK)
            return store_rc(x, rc);
        emq_reply_int(x->r, n);
        return EMQ_OK;
    case 3: /* CREATECONSUMER */
        rc = emq_xs_consumer_create(x->st, A(x, 2), x->len[2], A(x, 3),
                                    x->len[3], A(x, 4), x->len[4], &n);
        if (rc == EMQ_XNOGROUP)
            return nogroup_for_key(x, 3, 2);
        if (rc != EMQ_OK)
            return store_rc(x, rc);
        emq_reply_int(x->r, n);
        return EMQ_OK;
    default: /* DELCONSUMER */
        rc = emq_xs_consumer_delete(x->st, A(x, 2), x->len[2], A(x, 3),
                                    x->len[3], A(x, 4), x->len[4], &v);
        if (rc == EMQ_XNOGROUP)
            return nogroup_for_key(x, 3, 2);
        if (rc != EMQ_OK)
            return store_rc(x, rc);
        emq_reply_int(x->r, v);
        return EMQ_OK;
    }
}

/* ------------------------------------------------------------ XREADGROUP */

static int nogroup(xc *x, size_t ki, size_t gi, const char *tail)
{
    return errf(x, "NOGROUP No such key '%s' or consumer group '%s'%s",
                A(x, ki), A(x, gi), tail);
}

/* Stream ki's key and group exist: EMQ_OK; else the NOGROUP reply's code
 * (or a store failure's). */
static int group_check(xc *x, size_t ki, size_t gi)
{
    int rc = emq_xs_group_exists(x->st, A(x, ki), x->len[ki], A(x, gi),
                                 x->len[gi]);
    if (rc == EMQ_NOTFOUND || rc == EMQ_XNOGROUP)
        return nogroup(x, ki, gi, " in XREADGROUP with GROUP option");
    return rc == EMQ_OK ? EMQ_OK : store_rc(x, rc);
}

static int x_readgroup(xc *x)
{
    size_t gi = 0, sa = 0, ns = 0, i;
    int64_t count = 0, block = -1;
    int noack = 0, rc;
    emq_xid *ids = NULL;
    int *newest = NULL;
    if (x->argc < 7)
        return arity(x, "xreadgroup");
    for (i = 1; i < x->argc; i++) {
        size_t more = x->argc - i - 1;
        if (is(x, i, "BLOCK") && more) {
            i++;
            if (parse_ll(x, i, &block) != 0)
                return err(x, EMQ_EENGINE, "ERR timeout is not an integer or "
                                           "out of range");
            if (block < 0)
                return err(x, EMQ_EENGINE, "ERR timeout is negative");
        } else if (is(x, i, "COUNT") && more) {
            i++;
            if (get_ll(x, i, &count, NULL))
                return EMQ_EENGINE;
            if (count < 0)
                count = 0;
        } else if (is(x, i, "STREAMS") && more) {
            sa = i + 1;
            ns = x->argc - sa;
            if (ns % 2)
                return err(x, EMQ_EENGINE, "ERR Unbalanced 'xreadgroup' list "
                           "of streams: for each stream key an ID or '>' "
                           "must be specified.");
            ns /= 2;
            break;
        } else if (is(x, i, "GROUP") && more >= 2) {
            gi = i + 1;
            i += 2;
        } else if (is(x, i, "NOACK")) {
            noack = 1;
        } else {
            return err(x, EMQ_EENGINE, SYNTAX);
        }
    }
    if (sa == 0)
        return err(x, EMQ_EENGINE, SYNTAX);
    if (gi == 0)
        return err(x, EMQ_EENGINE, "ERR Missing GROUP option for XREADGROUP");
    if (x->blocked)
        *x->blocked = block;
    if (!(ids = emq_mem_calloc(ns, sizeof *ids)) ||
        !(newest = emq_mem_calloc(ns, sizeof *newest))) {
        rc = EMQ_ENOMEM;
        goto done;
    }
    /* Every key, group and id is checked before anything is served. With
     * one stream the key and group are checked by the read itself (its
     * first step, before any write: one lookup of the group row, not two),
     * here only when the id is refused, as the group's error comes first. */
    int pre = ns > 1;
    for (i = 0; i < ns; i++) {
        size_t ki = sa + i, ii = sa + ns + i;
        if (pre && (rc = group_check(x, ki, gi)) != EMQ_OK)
            goto done;
        if (strcmp(A(x, ii), "$") == 0) {
            if (!pre && (rc = group_check(x, ki, gi)) != EMQ_OK)
                goto done;
            rc = err(x, EMQ_EENGINE, "ERR The $ ID is meaningless in the "
                     "context of XREADGROUP: you want to read the history of "
                     "this consumer by specifying a proper ID, or use the > "
                     "ID to get new messages. The $ ID would just return an "
                     "empty result set.");
            goto done;
        }
        if (strcmp(A(x, ii), ">") == 0) {
            newest[i] = 1;
            continue;
        }
        if (get_id(x, ii, 0, ID_STRICT, &ids[i])) {
            rc = EMQ_EENGINE;
            if (!pre) {
                int g = group_check(x, ki, gi);
                if (g != EMQ_OK)
                    rc = g;
            }
            goto done;
        }
        /* The maximum id is how Valkey marks `>`. */
        newest[i] = emq_xid_cmp(ids[i], XMAX) == 0;
    }
    if ((rc = emq_reply_array(x->r, EMQ_REPLY_MAP, 0)) < 0)
        goto done;
    for (i = 0; i < ns; i++) {
        size_t ki = sa + i;
        emq_reply entries = {0};
        int64_t served = 0;
        if ((rc = emq_reply_array(&entries, EMQ_REPLY_ARRAY, 0)) < 0)
            goto done;
        rc = emq_xs_readgroup(x->st, A(x, ki), x->len[ki], A(x, gi),
                              x->len[gi], A(x, gi + 1), x->len[gi + 1],
                              newest[i] ? NULL : &ids[i], (uint64_t)count,
                              noack, on_entry, &entries, &served);
        if (rc == EMQ_OK && (!newest[i] || served > 0)) {
            emq_reply *v;
            if (emq_reply_push_bulk(x->r, A(x, ki), x->len[ki]) < 0 ||
                !(v = emq_reply_push(x->r)))
                rc = EMQ_ENOMEM;
            else
                *v = entries, memset(&entries, 0, sizeof entries);
        }
        emq_reply_clear(&entries);
        if (rc == EMQ_NOTFOUND || rc == EMQ_XNOGROUP) { /* one stream */
            rc = nogroup(x, ki, gi, " in XREADGROUP with GROUP option");
            goto done;
        }
        if (rc != EMQ_OK)
            goto store;
    }
    if (x->r->n == 0)
        emq_reply_nil(x->r); /* nothing served: nil (after BLOCK too) */
    rc = EMQ_OK;
    goto done;
store:
    rc = store_rc(x, rc);
done:
    emq_mem_free(ids);
    emq_mem_free(newest);
    return rc;
}

static int x_ack(xc *x)
{
    emq_xid *ids;
    int64_t acked;
    int rc;
    if (x->argc < 4)
        return arity(x, "xack");
    /* Without the key or the group nothing is acked, whatever the ids. */
    rc = emq_xs_group_exists(x->st, A(x, 1), x->len[1], A(x, 2), x->len[2]);
    if (rc == EMQ_NOTFOUND || rc == EMQ_XNOGROUP) {
        emq_reply_int(x->r, 0);
        return EMQ_OK;
    }
    if (rc != EMQ_OK)
        return store_rc(x, rc);
    if ((rc = get_ids(x, 3, x->argc, &ids)) != EMQ_OK)
        return rc;
    rc = emq_xs_ack(x->st, A(x, 1), x->len[1], A(x, 2), x->len[2], ids,
                    x->argc - 3, &acked);
    emq_mem_free(ids);
    if (rc != EMQ_OK)
        return store_rc(x, rc);
    emq_reply_int(x->r, acked);
    return EMQ_OK;
}

/* -------------------------------------------------------------- XPENDING */

static int on_owner(void *ctx, const unsigned char *c, size_t clen,
                    int64_t n)
{
    emq_reply *r = ctx, *e = emq_reply_push(r);
    char num[24];
    if (!e || emq_reply_array(e, EMQ_REPLY_ARRAY, 2) < 0 ||
        emq_reply_push_bulk(e, c, clen) < 0 ||
        emq_reply_push_bulk(e, num, emq_fmt_i64(num, n)) < 0)
        return EMQ_ENOMEM;
    return EMQ_OK;
}

typedef struct pctx {
    emq_reply *r;
    int64_t now;
} pctx;

static int on_pending(void *ctx, emq_xid id, const unsigned char *c,
                      size_t clen, int64_t delivered, int64_t count)
{
    pctx *p = ctx;
    emq_reply *e = emq_reply_push(p->r);
    int64_t idle = p->now - delivered;
    if (!e || emq_reply_array(e, EMQ_REPLY_ARRAY, 4) < 0 ||
        put_id(e, id) < 0 || emq_reply_push_bulk(e, c, clen) < 0 ||
        emq_reply_push_int(e, idle < 0 ? 0 : idle) < 0 ||
        emq_reply_push_int(e, count) < 0)
        return EMQ_ENOMEM;
    return EMQ_OK;
}

static int x_pending(xc *x)
{
    int64_t min_idle = 0, count = 0;
    emq_xid start = { 0, 0 }, end = XMAX;
    size_t at = 3;
    int sx, ex, rc, extended = x->argc > 3;
    emq_xmeta m;
    if (x->argc < 3)
        return arity(x, "xpending");
    if (x->argc != 3 && (x->argc < 6 || x->argc > 9))
        return err(x, EMQ_EENGINE, SYNTAX);
    if (extended) {
        if (is(x, 3, "IDLE")) {
            if (get_ll(x, 4, &min_idle, NULL))
                return EMQ_EENGINE;
            if (x->argc < 8)
                return err(x, EMQ_EENGINE, SYNTAX);
            at = 5;
        }
        /* count, then start, then end, as Valkey reads them */
        if (get_ll(x, at + 2, &count, NULL) ||
            get_interval(x, at, 0, &start, &sx) ||
            exclude(x, &start, sx, &end, 0) ||
            get_interval(x, at + 1, UINT64_MAX, &end, &ex) ||
            exclude(x, &start, 0, &end, ex))
            return EMQ_EENGINE;
        if (count < 0)
            count = 0;
    }
    rc = emq_xs_meta(x->st, A(x, 1), x->len[1], &m);
    if (rc != EMQ_OK && rc != EMQ_NOTFOUND)
        return store_rc(x, rc);
    if (!extended) {
        emq_xpsum sum;
        emq_reply list = {0};
        emq_reply *e;
        if (rc == EMQ_OK &&
            (rc = emq_reply_array(&list, EMQ_REPLY_ARRAY, 0)) == EMQ_OK)
            rc = emq_xs_pending_summary(x->st, A(x, 1), x->len[1], A(x, 2),
                                        x->len[2], &sum, on_owner, &list);
        if (rc == EMQ_NOTFOUND || rc == EMQ_XNOGROUP) {
            emq_reply_clear(&list);
            return nogroup(x, 1, 2, "");
        }
        if (rc != EMQ_OK) {
            emq_reply_clear(&list);
            return store_rc(x, rc);
        }
        if ((rc = emq_reply_array(x->r, EMQ_REPLY_ARRAY, 4)) < 0 ||
            (rc = emq_reply_push_int(x->r, (int64_t)sum.count)) < 0) {
            emq_reply_clear(&list);
            return rc;
        }
        if (sum.count == 0) {
            emq_reply_clear(&list);
            for (int k = 0; k < 3; k++)
                if (!emq_reply_push(x->r))
                    return EMQ_ENOMEM;
            return EMQ_OK;
        }
        if ((rc = put_id(x->r, sum.min)) < 0 ||
            (rc = put_id(x->r, sum.max)) < 0 || !(e = emq_reply_push(x->r))) {
            emq_reply_clear(&list);
            return EMQ_ENOMEM;
        }
        *e = list;
        return EMQ_OK;
    }
    pctx p = { x->r, 0 };
    p.now = emq_store_now(x->st);
    if (rc == EMQ_OK &&
        (rc = emq_reply_array(x->r, EMQ_REPLY_ARRAY, 0)) == EMQ_OK)
        rc = emq_xs_pending_range(x->st, A(x, 1), x->len[1], A(x, 2),
                                  x->len[2], start, end, (uint64_t)count,
                                  x->argc > at + 3 ? A(x, at + 3) : NULL,
                                  x->argc > at + 3 ? x->len[at + 3] : 0,
                                  min_idle, on_pending, &p);
    if (rc == EMQ_NOTFOUND || rc == EMQ_XNOGROUP)
        return nogroup(x, 1, 2, "");
    return rc == EMQ_OK ? EMQ_OK : store_rc(x, rc);
}

/* ---------------------------------------------------- XCLAIM, XAUTOCLAIM */

static int x_claim(xc *x)
{
    emq_xclaim o;
    emq_xid *ids = NULL;
    int64_t min_idle, now;
    size_t j, last;
    int rc;
    if (x->argc < 6)
        return arity(x, "xclaim");
    rc = emq_xs_group_exists(x->st, A(x, 1), x->len[1], A(x, 2), x->len[2]);
    if (rc == EMQ_NOTFOUND || rc == EMQ_XNOGROUP)
        return nogroup(x, 1, 2, "");
    if (rc != EMQ_OK)
        return store_rc(x, rc);
    if (get_ll(x, 4, &min_idle, "ERR Invalid min-idle-time argument for "
                                "XCLAIM"))
        return EMQ_EENGINE;
    if (min_idle < 0)
        min_idle = 0;
    /* The ids run until the first argument that is not one. */
    for (j = 5; j < x->argc; j++) {
        emq_xid id;
        if (parse_id(A(x, j), x->len[j], 0, ID_STRICT, &id, NULL) != 0)
            break;
    }
    last = j;
    memset(&o, 0, sizeof o);
    o.delivery_time = -1;
    o.retrycount = -1;
    now = emq_store_now(x->st);
    for (; j < x->argc; j++) {
        int more = j + 1 < x->argc;
        if (is(x, j, "FORCE")) {
            o.force = 1;
        } else if (is(x, j, "JUSTID")) {
            o.justid = 1;
        } else if (is(x, j, "IDLE") && more) {
            int64_t v;
            if (get_ll(x, ++j, &v, "ERR Invalid IDLE option argument for "
                                   "XCLAIM"))
                return EMQ_EENGINE;
            o.delivery_time = now - v;
        } else if (is(x, j, "TIME") && more) {
            if (get_ll(x, ++j, &o.delivery_time, "ERR Invalid TIME option "
                                                 "argument for XCLAIM"))
                return EMQ_EENGINE;
        } else if (is(x, j, "RETRYCOUNT") && more) {
            if (get_ll(x, ++j, &o.retrycount, "ERR Invalid RETRYCOUNT option "
                                              "argument for XCLAIM"))
                return EMQ_EENGINE;
        } else if (is(x, j, "LASTID") && more) {
            if (get_id(x, ++j, 0, ID_STRICT, &o.lastid))
                return EMQ_EENGINE;
            o.has_lastid = 1;
        } else {
            return errf(x, "ERR Unrecognized XCLAIM option '%s'", A(x, j));
        }
    }
    /* A TIME/IDLE that came out negative or in the future means now. */
    if (o.delivery_time >= 0 && o.delivery_time > now)
        o.delivery_time = now;
    if ((rc = get_ids(x, 5, last, &ids)) != EMQ_OK)
        return rc;
    if ((rc = emq_reply_array(x->r, EMQ_REPLY_ARRAY, 0)) == EMQ_OK)
        rc = emq_xs_claim(x->st, A(x, 1), x->len[1], A(x, 2), x->len[2],
                          A(x, 3), x->len[3], min_idle, ids, last - 5, &o,
                          o.justid ? on_id : on_entry, x->r);
    emq_mem_free(ids);
    return rc == EMQ_OK ? EMQ_OK : store_rc(x, rc);
}

static int x_autoclaim(xc *x)
{
    emq_xid start, cursor, none;
    int64_t min_idle, count = 100;
    int justid = 0, sx, rc;
    emq_reply *claimed, *deleted;
    if (x->argc < 6)
        return arity(x, "xautoclaim");
    /* Arguments first, then the key and the group (Valkey's order). */
    if (get_ll(x, 4, &min_idle, "ERR Invalid min-idle-time argument for "
                                "XAUTOCLAIM"))
        return EMQ_EENGINE;
    if (min_idle < 0)
        min_idle = 0;
    if (get_interval(x, 5, 0, &start, &sx) ||
        exclude(x, &start, sx, &none, 0))
        return EMQ_EENGINE;
    for (size_t j = 6; j < x->argc; j++) {
        if (is(x, j, "COUNT") && j + 1 < x->argc) {
            if (parse_ll(x, j + 1, &count) != 0 || count < 1 ||
                count > INT64_MAX / (int64_t)sizeof(emq_xid))
                return err(x, EMQ_EENGINE, "ERR COUNT must be > 0");
            j++;
        } else if (is(x, j, "JUSTID")) {
            justid = 1;
        } else {
            return err(x, EMQ_EENGINE, SYNTAX);
        }
    }
    rc = emq_xs_group_exists(x->st, A(x, 1), x->len[1], A(x, 2), x->len[2]);
    if (rc == EMQ_NOTFOUND || rc == EMQ_XNOGROUP)
        return nogroup(x, 1, 2, "");
    if (rc != EMQ_OK)
        return store_rc(x, rc);
    /* The reply: [cursor, claimed, deleted]; the cursor is set last. */
    if ((rc = emq_reply_array(x->r, EMQ_REPLY_ARRAY, 3)) < 0 ||
        !emq_reply_push(x->r) || !emq_reply_push(x->r) ||
        !emq_reply_push(x->r))
        return EMQ_ENOMEM;
    claimed = &x->r->elem[1];
    deleted = &x->r->elem[2];
    if (emq_reply_array(claimed, EMQ_REPLY_ARRAY, 0) < 0 ||
        emq_reply_array(deleted, EMQ_REPLY_ARRAY, 0) < 0)
        return EMQ_ENOMEM;
    rc = emq_xs_autoclaim(x->st, A(x, 1), x->len[1], A(x, 2), x->len[2],
                          A(x, 3), x->len[3], min_idle, start,
                          (uint64_t)count, justid, justid ? on_id : on_entry,
                          claimed, on_id, deleted, &cursor);
    if (rc != EMQ_OK)
        return store_rc(x, rc);
    return set_id(&x->r->elem[0], cursor);
}

/* ------------------------------------------------------------------ XINFO */

typedef struct ictx {
    emq_store *st;
    xc *x;
    const char *key;
    size_t klen;
    emq_reply *r;
    int full;
    uint64_t count;
    int64_t now;
} ictx;

/* A group's entries-read and lag (nil when unknown). */
static int map_counters(emq_reply *m, const emq_xgroup_info *g)
{
    emq_reply *e;
    if (!(e = map_key(m, "entries-read")))
        return EMQ_ENOMEM;
    if (g->entries_read >= 0)
        emq_reply_int(e, g->entries_read);
    if (!(e = map_key(m, "lag")))
        return EMQ_ENOMEM;
    if (g->lag_known)
        emq_reply_int(e, g->lag);
    return EMQ_OK;
}

static int on_group_short(void *ctx, const emq_xgroup_info *g)
{
    ictx *ic = ctx;
    emq_reply *m = emq_reply_push(ic->r), *e;
    if (!m || emq_reply_array(m, EMQ_REPLY_MAP, 12) < 0 ||
        !(e = map_key(m, "name")) || emq_reply_bulk(e, g->name, g->nlen) < 0 ||
        map_int(m, "consumers", g->consumers) < 0 ||
        map_int(m, "pending", g->pending) < 0 ||
        map_id(m, "last-delivered-id", g->last) < 0 ||
        map_counters(m, g) < 0)
        return EMQ_ENOMEM;
    return EMQ_OK;
}

static int on_group_pel(void *ctx, emq_xid id, const unsigned char *c,
                        size_t clen, int64_t delivered, int64_t count)
{
    emq_reply *r = ctx, *e = emq_reply_push(r);
    if (!e || emq_reply_array(e, EMQ_REPLY_ARRAY, 4) < 0 ||
        put_id(e, id) < 0 || emq_reply_push_bulk(e, c, clen) < 0 ||
        emq_reply_push_int(e, delivered) < 0 ||
        emq_reply_push_int(e, count) < 0)
        return EMQ_ENOMEM;
    return EMQ_OK;
}

static int on_consumer_pel(void *ctx, emq_xid id, const unsigned char *c,
                           size_t clen, int64_t delivered, int64_t count)
{
    emq_reply *r = ctx, *e = emq_reply_push(r);
    (void)c, (void)clen;
    if (!e || emq_reply_array(e, EMQ_REPLY_ARRAY, 3) < 0 ||
        put_id(e, id) < 0 || emq_reply_push_int(e, delivered) < 0 ||
        emq_reply_push_int(e, count) < 0)
        return EMQ_ENOMEM;
    return EMQ_OK;
}

typedef struct cctx {
    ictx *ic;
    const emq_xgroup_info *g;
    emq_reply *r;
} cctx;

static int on_consumer_full(void *ctx, const unsigned char *c, size_t clen,
                            int64_t seen, int64_t active, int64_t pending)
{
    cctx *cc = ctx;
    emq_reply *m = emq_reply_push(cc->r), *e;
    int rc;
    if (!m || emq_reply_array(m, EMQ_REPLY_MAP, 10) < 0 ||
        !(e = map_key(m, "name")) || emq_reply_bulk(e, c, clen) < 0 ||
        map_int(m, "seen-time", seen) < 0 ||
        map_int(m, "active-time", active) < 0 ||
        map_int(m, "pel-count", pending) < 0 ||
        !(e = map_key(m, "pending")) ||
        emq_reply_array(e, EMQ_REPLY_ARRAY, 0) < 0)
        return EMQ_ENOMEM;
    rc = emq_xs_pel(cc->ic->st, cc->ic->key, cc->ic->klen, cc->g->name,
                    cc->g->nlen, c, clen, cc->ic->count, on_consumer_pel, e);
    return rc;
}

static int on_group_full(void *ctx, const emq_xgroup_info *g)
{
    ictx *ic = ctx;
    emq_reply *m = emq_reply_push(ic->r), *e;
    int rc;
    if (!m || emq_reply_array(m, EMQ_REPLY_MAP, 14) < 0 ||
        !(e = map_key(m, "name")) || emq_reply_bulk(e, g->name, g->nlen) < 0 ||
        map_id(m, "last-delivered-id", g->last) < 0 ||
        map_counters(m, g) < 0 ||
        map_int(m, "pel-count", g->pending) < 0 ||
        !(e = map_key(m, "pending")) ||
        emq_reply_array(e, EMQ_REPLY_ARRAY, 0) < 0)
        return EMQ_ENOMEM;
    if ((rc = emq_xs_pel(ic->st, ic->key, ic->klen, g->name, g->nlen, NULL, 0,
                         ic->count, on_group_pel, e)) != EMQ_OK)
        return rc;
    if (!(e = map_key(m, "consumers")) ||
        emq_reply_array(e, EMQ_REPLY_ARRAY, 0) < 0)
        return EMQ_ENOMEM;
    cctx cc = { ic, g, e };
    return emq_xs_consumers(ic->st, ic->key, ic->klen, g->name, g->nlen,
                            on_consumer_full, &cc);
}

/* One entry as a value (first-entry / last-entry): [id, fields] or nil. */
typedef struct one {
    emq_reply *r;
} one;

static int on_one(void *ctx, emq_xid id, const emq_bytes *fv, size_t nfv)
{
    emq_reply tmp = {0};
    int rc;
    if ((rc = emq_reply_array(&tmp, EMQ_REPLY_ARRAY, 1)) < 0 ||
        (rc = on_entry(&tmp, id, fv, nfv)) < 0) {
        emq_reply_clear(&tmp);
        return rc;
    }
    emq_reply_clear(((one *)ctx)->r);
    *((one *)ctx)->r = tmp.elem[0];
    memset(&tmp.elem[0], 0, sizeof tmp.elem[0]);
    emq_reply_clear(&tmp);
    return EMQ_OK;
}

static int on_group_count(void *ctx, const emq_xgroup_info *g)
{
    (void)g;
    ++*(int64_t *)ctx;
    return EMQ_OK;
}

static int x_info_stream(xc *x)
{
    emq_xmeta m;
    emq_reply *r = x->r, *e;
    int full = 0, rc;
    int64_t count = 10, ngroups = 0;
    emq_xid zero = { 0, 0 };
    if (x->argc < 3)
        return arity(x, "xinfo|stream");
    if (x->argc > 3) {
        if (!is(x, 3, "FULL") || (x->argc != 4 && x->argc != 6) ||
            (x->argc == 6 && !is(x, 4, "COUNT")))
            return err(x, EMQ_EENGINE, SYNTAX);
        full = 1;
        if (x->argc == 6) {
            if (get_ll(x, 5, &count, NULL))
                return EMQ_EENGINE;
            if (count < 0)
                count = 10;
        }
    }
    rc = emq_xs_meta(x->st, A(x, 2), x->len[2], &m);
    if (rc == EMQ_NOTFOUND)
        return err(x, EMQ_EENGINE, "ERR no such key");
    if (rc != EMQ_OK)
        return store_rc(x, rc);
    /* radix-tree-keys/-nodes describe Valkey's own memory layout: here
     * one key per block of 100 entries, and one node more. */
    int64_t rkeys = (int64_t)((m.length + 99) / 100);
    if ((rc = emq_reply_array(r, EMQ_REPLY_MAP, 20)) < 0 ||
        map_int(r, "length", (int64_t)m.length) < 0 ||
        map_int(r, "radix-tree-keys", rkeys) < 0 ||
        map_int(r, "radix-tree-nodes", rkeys + 1) < 0 ||
        map_id(r, "last-generated-id", m.last) < 0 ||
        map_id(r, "max-deleted-entry-id", m.max_deleted) < 0 ||
        map_int(r, "entries-added", (int64_t)m.entries_added) < 0 ||
        map_id(r, "recorded-first-entry-id", m.first) < 0)
        return EMQ_ENOMEM;
    ictx ic = { x->st, x, A(x, 2), x->len[2], NULL, full,
                full ? (uint64_t)count : 0, emq_store_now(x->st) };
    if (!full) {
        if ((rc = emq_xs_groups(x->st, A(x, 2), x->len[2], on_group_count,
                                &ngroups)) != EMQ_OK)
            return store_rc(x, rc);
        if (map_int(r, "groups", ngroups) < 0)
            return EMQ_ENOMEM;
        for (int k = 0; k < 2; k++) {
            one o;
            if (!(e = map_key(r, k ? "last-entry" : "first-entry")))
                return EMQ_ENOMEM;
            o.r = e;
            rc = emq_xs_range(x->st, A(x, 2), x->len[2], zero, XMAX, k, 1,
                              on_one, &o);
            if (rc != EMQ_OK)
                return store_rc(x, rc);
        }
        return EMQ_OK;
    }
    if (!(e = map_key(r, "entries")) ||
        emq_reply_array(e, EMQ_REPLY_ARRAY, 0) < 0)
        return EMQ_ENOMEM;
    if ((rc = emq_xs_range(x->st, A(x, 2), x->len[2], zero, XMAX, 0,
                           (uint64_t)count, on_entry, e)) != EMQ_OK)
        return store_rc(x, rc);
    if (!(e = map_key(r, "groups")) ||
        emq_reply_array(e, EMQ_REPLY_ARRAY, 0) < 0)
        return EMQ_ENOMEM;
    ic.r = e;
    rc = emq_xs_groups(x->st, A(x, 2), x->len[2], on_group_full, &ic);
    return rc == EMQ_OK ? EMQ_OK : store_rc(x, rc);
}

static int on_consumer_short(void *ctx, const unsigned char *c, size_t clen,
                             int64_t seen, int64_t active, int64_t pending)
{
    ictx *ic = ctx;
    emq_reply *m = emq_reply_push(ic->r), *e;
    if (!m || emq_reply_array(m, EMQ_REPLY_MAP, 8) < 0 ||
        !(e = map_key(m, "name")) || emq_reply_bulk(e, c, clen) < 0 ||
        map_int(m, "pending", pending) < 0 ||
        map_int(m, "idle", ic->now - seen) < 0 ||
        map_int(m, "inactive", active < 0 ? -1 : ic->now - active) < 0)
        return EMQ_ENOMEM;
    return EMQ_OK;
}

/* XINFO GROUPS / CONSUMERS: the key must exist (argv[2]); then an empty
 * array reply to fill. EMQ_OK or the reply's code. */
static int info_key(xc *x)
{
    emq_xmeta m;
    int rc = emq_xs_meta(x->st, A(x, 2), x->len[2], &m);
    if (rc == EMQ_NOTFOUND)
        return err(x, EMQ_EENGINE, "ERR no such key");
    if (rc != EMQ_OK)
        return store_rc(x, rc);
    return emq_reply_array(x->r, EMQ_REPLY_ARRAY, 0);
}

static int x_info(xc *x)
{
    const char *sub = x->argc > 1 ? A(x, 1) : "";
    ictx ic;
    int rc;
    if (x->argc < 2)
        return arity(x, "xinfo");
    if (strcasecmp(sub, "STREAM") == 0)
        return x_info_stream(x);
    memset(&ic, 0, sizeof ic);
    ic.st = x->st;
    ic.x = x;
    ic.r = x->r;
    ic.now = emq_store_now(x->st);
    if (strcasecmp(sub, "GROUPS") == 0) {
        if (x->argc != 3)
            return arity(x, "xinfo|groups");
        if ((rc = info_key(x)) != EMQ_OK)
            return rc;
        rc = emq_xs_groups(x->st, A(x, 2), x->len[2], on_group_short, &ic);
        return rc == EMQ_OK ? EMQ_OK : store_rc(x, rc);
    }
    if (strcasecmp(sub, "CONSUMERS") == 0) {
        if (x->argc != 4)
            return arity(x, "xinfo|consumers");
        if ((rc = info_key(x)) != EMQ_OK)
            return rc;
        rc = emq_xs_consumers(x->st, A(x, 2), x->len[2], A(x, 3), x->len[3],
                              on_consumer_short, &ic);
        if (rc == EMQ_XNOGROUP)
            return nogroup_for_key(x, 3, 2);
        return rc == EMQ_OK ? EMQ_OK : store_rc(x, rc);
    }
    return errf(x, "ERR unknown subcommand '%.128s'. Try XINFO HELP.", sub);
}

/* ---------------------------------------------------------------- dispatch */

int emq_xcmd(emq_store *st, size_t argc, const char *const *argv,
             const size_t *len, emq_reply *r, int64_t *blocked)
{
    xc x = { st, argc, argv, len, r, blocked };
    emq_reply_clear(r);
    if (blocked)
        *blocked = -1;
    if (argc == 0)
        return err(&x, EMQ_EENGINE, "ERR empty command");
    const char *c = argv[0];
    if (!strcasecmp(c, "XADD")) return x_add(&x);
    if (!strcasecmp(c, "XRANGE")) return x_range(&x, 0);
    if (!strcasecmp(c, "XREVRANGE")) return x_range(&x, 1);
    if (!strcasecmp(c, "XLEN")) return x_len(&x);
    if (!strcasecmp(c, "XDEL")) return x_del(&x);
    if (!strcasecmp(c, "XTRIM")) return x_trim(&x);
    if (!strcasecmp(c, "XSETID")) return x_setid(&x);
    if (!strcasecmp(c, "XGROUP")) return x_group(&x);
    if (!strcasecmp(c, "XREADGROUP")) return x_readgroup(&x);
    if (!strcasecmp(c, "XACK")) return x_ack(&x);
    if (!strcasecmp(c, "XPENDING")) return x_pending(&x);
    if (!strcasecmp(c, "XCLAIM")) return x_claim(&x);
    if (!strcasecmp(c, "XAUTOCLAIM")) return x_autoclaim(&x);
    if (!strcasecmp(c, "XINFO")) return x_info(&x);
    return errf(&x, "ERR unknown command '%.128s'", c);
}

typedef struct xrun {
    size_t argc;
    const char *const *argv;
    const size_t *len;
    emq_reply *r;
} xrun;

static int run_tx(emq_db *db, emq_store *st, int64_t now, void *ctx)
{
    xrun *x = ctx;
    int rc;
    (void)now;
    rc = emq_xcmd(st, x->argc, x->argv, x->len, x->r, NULL);
    /* An error reply rolls back; its text is the handle's message. */
    if (rc < 0 && x->r->type == EMQ_REPLY_ERROR)
        emq_db_wire(db, rc, x->r->str);
    return rc;
}

int emq_xcmd_run(emq_db *db, size_t argc, const char *const *argv,
                 const size_t *len, emq_reply *r)
{
    xrun x = { argc, argv, len, r };
    int rc = emq_db_enter(db);
    if (rc < 0)
        return rc;
    rc = emq_db_run(db, 1, run_tx, &x);
    /* emq_db_run rolled back: an error reply survives, nothing else. */
    if (rc < 0 && r->type != EMQ_REPLY_ERROR)
        emq_reply_clear(r);
    return rc;
}
