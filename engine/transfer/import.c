/*
 * import.c — import a RESP command stream into the file (doc/EXPORT.md §2):
 * emq_import, and the streaming importer under it (begin / feed / finish).
 *
 * Owns: the one write transaction of an import, the command table (the
 * stream's own commands, then the key commands and every type's commands
 * from storage/types.h), the checks an import makes on each frame (the
 * command's arguments, the key grammar and the type its name fixes, the
 * version fence), and, before the commit, the judgement of every queue the
 * stream wrote by the rule set of rules.h — the checker's.
 *
 * Rules: a frame is checked whole before anything of it applies; the first
 * refusal rolls the whole import back. Messages name the byte offset of the
 * refused frame: "import refused at byte N: ...". Under `unchecked` only the
 * rule set is skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "db.h"
#include "abi.h"
#include "export.h"
#include "export_stream.h"
#include "resp.h"
#include "rules.h"
#include "transfer.h"
#include "types.h"

/* ---------------------------------------------------------- small maps */

/* An open-addressed map from a 64-bit hash (never 0) to a value. */
typedef struct hmap {
    uint64_t *k, *v;
    size_t cap, n;   /* cap: 0 or a power of two */
} hmap;

static uint64_t hkey(const void *p, size_t n)
{
    uint64_t h = emq_hash64(p, n);
    return h ? h : 1;
}

static int hm_grow(hmap *m)
{
    size_t cap = m->cap ? 2 * m->cap : 64;
    uint64_t *k = emq_mem_calloc(cap, sizeof *k);
    uint64_t *v = emq_mem_calloc(cap, sizeof *v);
    if (!k || !v) {
        emq_mem_free(k);
        emq_mem_free(v);
        return EMQ_ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->k[i])
            continue;
        size_t j = m->k[i] & (cap - 1);
        while (k[j])
            j = (j + 1) & (cap - 1);
        k[j] = m->k[i];
        v[j] = m->v[i];
    }
    emq_mem_free(m->k);
    emq_mem_free(m->v);
    m->k = k;
    m->v = v;
    m->cap = cap;
    return EMQ_OK;
}

/* The slot of `h`: its entry, or the free slot where it would go. */
static size_t hm_slot(const hmap *m, uint64_t h)
{
    size_t j = h & (m->cap - 1);
    while (m->k[j] && m->k[j] != h)
        j = (j + 1) & (m->cap - 1);
    return j;
}

/* Set h -> v; *fresh (may be NULL) = 1 when h was not there. */
static int hm_put(hmap *m, uint64_t h, uint64_t v, int *fresh)
{
    if (4 * (m->n + 1) > 3 * m->cap && hm_grow(m) != EMQ_OK)
        return EMQ_ENOMEM;
    size_t j = hm_slot(m, h);
    if (fresh)
        *fresh = !m->k[j];
    if (!m->k[j])
        m->n++;
    m->k[j] = h;
    m->v[j] = v;
    return EMQ_OK;
}

static int hm_get(const hmap *m, uint64_t h, uint64_t *v)
{
    if (!m->cap)
        return 0;
    size_t j = hm_slot(m, h);
    if (!m->k[j])
        return 0;
    *v = m->v[j];
    return 1;
}

static void hm_free(hmap *m)
{
    emq_mem_free(m->k);
    emq_mem_free(m->v);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------ importer */

struct emq_importer {
    emq_db *db;
    emq_store *st;
    emq_import_options opt;
    int rc;                 /* < 0 once refused: the import is over      */
    int open;               /* the write transaction is the import's     */
    emq_resp_reader rd;
    emq_bytes *argv;        /* the frame being applied, as views         */
    size_t capv;
    int version_seen;
    const char *file_wire;  /* the file's identity when the import began */
    int file_empty;         /* ... and it held no other key              */
    uint64_t commands, bytes;
    /* what the judgement needs (checked imports only) */
    hmap offsets;           /* key -> offset of the last frame writing it */
    hmap queues;            /* queue name -> 1                           */
    emq_buf qnames;         /* the queues written: "emq:{q}:" each, NUL-ended */
};

/* Refuse the frame at `off` with EMQ_EPROTO and a message naming it. */
static int refuse(emq_db *db, uint64_t off, const char *why,
                  const void *arg, size_t alen)
{
    char msg[EMQ_ERRMSG_MAX];
    char shown[48];
    size_t k = 0;
    if (arg) {
        const unsigned char *a = arg;
        size_t i = 0;
        for (; i < alen && k < 36; i++) {
            if (a[i] >= 0x20 && a[i] < 0x7F && a[i] != '\'')
                shown[k++] = (char)a[i];
            else
                k += (size_t)snprintf(shown + k, sizeof shown - k, "\\x%02x",
                                      a[i]);
        }
        if (i < alen)
            k += (size_t)snprintf(shown + k, sizeof shown - k, "...");
    }
    shown[k] = '\0';
    if (arg)
        snprintf(msg, sizeof msg, "import refused at byte %llu: %s '%s'",
                 (unsigned long long)off, why, shown);
    else
        snprintf(msg, sizeof msg, "import refused at byte %llu: %s",
                 (unsigned long long)off, why);
    return emq_db_wire(db, EMQ_EPROTO, msg);
}

static int refuse_arg(emq_db *db, const emq_resp_cmd *c, const char *why,
                      size_t i)
{
    return refuse(db, c->offset, why, c->argv[i], c->lens[i]);
}

/* Store failures inside the import name the frame too. */
static int store_rc(emq_db *db, emq_store *st, const emq_resp_cmd *c, int rc)
{
    char msg[EMQ_ERRMSG_MAX];
    if (rc == EMQ_EWRONGTYPE)
        snprintf(msg, sizeof msg, "import refused at byte %llu: %s",
                 (unsigned long long)c->offset, EMQ_WRONGTYPE_MSG);
    else
        snprintf(msg, sizeof msg, "import failed at byte %llu: %s",
                 (unsigned long long)c->offset, emq_store_errmsg(st));
    return emq_db_wire(db, rc, msg);
}

/* ------------------------------------------------------ command table */

/* The stream's own commands: an AOF holds them; they change nothing. */
static const struct {
    const char *name;
    size_t argc;
    const char *usage;
} stream_cmds[] = {
    { "SELECT", 2, "SELECT takes one index" },
    { "MULTI", 1, "MULTI/EXEC take no arguments" },
    { "EXEC", 1, "MULTI/EXEC take no arguments" },
};

/* A command of the table: a key command (t NULL) or one of a type's. */
typedef struct cmdref {
    const emq_cmddef *def;
    const emq_typedef *t;
} cmdref;

static int find_cmd(const emq_bytes *argv, size_t argc, cmdref *out)
{
    size_t nt;
    const emq_typedef *rows = emq_typedefs(&nt);
    for (const emq_cmddef *d = emq_key_cmds; d->name; d++)
        if (emq_arg_is(argv, argc, 0, d->name)) {
            out->def = d;
            out->t = NULL;
            return 1;
        }
    for (size_t i = 0; i < nt; i++)
        for (const emq_cmddef *d = rows[i].cmds; d && d->name; d++)
            if (emq_arg_is(argv, argc, 0, d->name)) {
                out->def = d;
                out->t = &rows[i];
                return 1;
            }
    return 0;
}

/* Remember what the judgement needs: the key's frame and its queue (the
 * key is argument `ka` of the command: 1, XGROUP's 2). */
static int note_write(emq_importer *im, const emq_resp_cmd *c, size_t ka,
                      const emq_keyinfo *ki)
{
    int fresh;
    if (im->opt.unchecked)
        return EMQ_OK;
    if (hm_put(&im->offsets, hkey(c->argv[ka], c->lens[ka]), c->offset,
               NULL) != EMQ_OK)
        return EMQ_ENOMEM;
    if (ki->family != EMQ_K_QUEUE)
        return EMQ_OK;
    size_t plen = 5 + ki->qlen + 2; /* "emq:{" q "}:" */
    if (hm_put(&im->queues, hkey(c->argv[ka], plen), 1, &fresh) != EMQ_OK)
        return EMQ_ENOMEM;
    if (fresh && (emq_buf_append(&im->qnames, c->argv[ka], plen) != EMQ_OK ||
                  emq_buf_append(&im->qnames, "", 1) != EMQ_OK))
        return EMQ_ENOMEM;
    return EMQ_OK;
}

/* Check one frame whole, then apply it. */
static int apply(emq_importer *im, const emq_resp_cmd *c)
{
    emq_db *db = im->db;
    size_t argc = c->argc;
    emq_keyinfo ki;
    emq_why why = {NULL, -1};
    cmdref cmd;
    int rc;

    if (argc > im->capv) {
        emq_bytes *a = emq_mem_realloc(im->argv, argc * sizeof *a);
        if (!a)
            return emq_db_fail(db, EMQ_ENOMEM, NULL);
        im->argv = a;
        im->capv = argc;
    }
    for (size_t i = 0; i < argc; i++)
        im->argv[i] = (emq_bytes){c->argv[i], c->lens[i]};
    const emq_bytes *argv = im->argv;

    for (size_t i = 0; i < sizeof stream_cmds / sizeof *stream_cmds; i++)
        if (emq_arg_is(argv, argc, 0, stream_cmds[i].name))
            return argc == stream_cmds[i].argc
                       ? EMQ_OK
                       : refuse(db, c->offset, stream_cmds[i].usage, NULL, 0);
    if (emq_stream_import_cmd(c)) {
        /* A stream command (XADD, XSETID, XGROUP, XCLAIM, ...): Valkey's
         * own, run by the engine's stream commands; it checks the key is a
         * stream key of the grammar and refuses an error reply. */
        size_t ka = emq_arg_is(argv, argc, 0, "XGROUP") ? 2 : 1;
        if ((rc = emq_stream_import(db, im->st, c)) != EMQ_OK)
            return rc;
        if (!emq_key_parse(c->argv[ka], c->lens[ka], &ki))
            return refuse_arg(db, c, "key outside the EchoMQ grammar", ka);
        if ((rc = note_write(im, c, ka, &ki)) != EMQ_OK)
            return emq_db_fail(db, rc, NULL);
        return EMQ_OK;
    }
    if (!find_cmd(argv, argc, &cmd))
        return refuse_arg(db, c, "unknown command", 0);
    if (cmd.def->check(argv, argc, &why) != EMQ_OK)
        return why.arg >= 0 ? refuse_arg(db, c, why.msg, (size_t)why.arg)
                            : refuse(db, c->offset, why.msg, NULL, 0);
    if (!emq_key_parse(c->argv[1], c->lens[1], &ki))
        return refuse_arg(db, c, "key outside the EchoMQ grammar", 1);
    if (!cmd.t) {
        if (ki.family == EMQ_K_VERSION)
            return refuse(db, c->offset, "the version key never expires",
                          NULL, 0);
    } else if (ki.family == EMQ_K_VERSION && cmd.t->type != EMQ_T_STRING) {
        return refuse_arg(db, c, "the version key is a string", 1);
    } else if (ki.type != 0 && ki.type != cmd.t->type) {
        return refuse_arg(db, c, "wrong type for the key", 1);
    } else if (ki.family == EMQ_K_VERSION) {
        /* SET {emq}:version: an identity of the table, without an
         * expiry; the file takes it, unless it holds keys already and
         * speaks another one (a file has one identity). */
        const char *w = argc == 3 ? emq_wire_known(c->argv[2], c->lens[2])
                                  : NULL;
        if (!w || (im->file_wire && w != im->file_wire && !im->file_empty)) {
            char msg[EMQ_ERRMSG_MAX], known[100], shown[120];
            emq_wire_list(known, sizeof known);
            emq_show_bytes(shown, sizeof shown, c->argv[2], c->lens[2]);
            if (!w)
                snprintf(msg, sizeof msg, "import refused at byte %llu: SET "
                         "{emq}:version '%s': the stream's identity is not "
                         "%s%s", (unsigned long long)c->offset, shown, known,
                         argc == 3 ? "" : " (or it carries an option)");
            else
                snprintf(msg, sizeof msg, "import refused at byte %llu: SET "
                         "{emq}:version '%s': the file holds keys and speaks "
                         "%s (a file has one identity: 'emqlite wire --set' "
                         "changes it)", (unsigned long long)c->offset, shown,
                         im->file_wire);
            return emq_db_wire(db, EMQ_EWIRE, msg);
        }
        im->version_seen = 1;
    }
    if ((rc = cmd.def->apply(im->st, argv, argc)) != EMQ_OK)
        return store_rc(db, im->st, c, rc);
    if ((rc = note_write(im, c, 1, &ki)) != EMQ_OK)
        return emq_db_fail(db, rc, NULL);
    return EMQ_OK;
}

/* ---------------------------------------------------------- judgement */

typedef struct verdict {
    int found;
    char code[16];
    unsigned char key[EMQ_KEY_MAX];
    size_t klen;
    char msg[300];
} verdict;

static void on_rule(void *ctx, int sev, const char *code, const void *key,
                    size_t klen, const char *msg)
{
    verdict *v = ctx;
    if (sev != EMQ_CHECK_VIOLATION || v->found)
        return;
    v->found = 1;
    snprintf(v->code, sizeof v->code, "%s", code);
    v->klen = klen < sizeof v->key ? klen : sizeof v->key;
    memcpy(v->key, key, v->klen);
    snprintf(v->msg, sizeof v->msg, "%s", msg);
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Judge every queue the stream wrote, as emq_check would: the first
 * violation refuses the import. */
static int judge(emq_importer *im)
{
    emq_db *db = im->db;
    verdict v;
    emq_judge *j = NULL;
    const char **q = NULL;
    size_t nq = im->queues.n;
    int rc;

    memset(&v, 0, sizeof v);
    if (nq == 0)
        return EMQ_OK;
    if (!(q = emq_mem_malloc(nq * sizeof *q)) ||
        emq_judge_new(im->st, on_rule, &v, &j) != EMQ_OK) {
        rc = emq_db_fail(db, EMQ_ENOMEM, NULL);
        goto done;
    }
    const char *p = (const char *)im->qnames.p;
    for (size_t i = 0; i < nq; i++, p += strlen(p) + 1)
        q[i] = p;
    qsort(q, nq, sizeof *q, cmp_cstr);
    rc = EMQ_OK;
    for (size_t i = 0; i < nq && rc == EMQ_OK && !v.found; i++) {
        emq_rkeys keys = {NULL, 0, 0};
        rc = emq_rkeys_scan(im->st, q[i], strlen(q[i]), &keys);
        if (rc == EMQ_OK)
            rc = emq_judge_keys(j, keys.k, keys.n);
        emq_rkeys_free(&keys);
    }
    if (rc < 0) {
        rc = emq_db_fail(db, rc, rc == EMQ_ENOMEM ? NULL
                                                  : emq_store_errmsg(im->st));
        goto done;
    }
    if (v.found) {
        char shown[200], msg[EMQ_ERRMSG_MAX + 600];
        uint64_t off = im->bytes;
        int known = hm_get(&im->offsets, hkey(v.key, v.klen), &off);
        emq_show_bytes(shown, sizeof shown, v.key, v.klen);
        snprintf(msg, sizeof msg, "import refused at byte %llu: %s "
                 "violation on %s%s: %s", (unsigned long long)off, v.code,
                 shown, known ? "" : " (a key the file held)", v.msg);
        rc = emq_db_wire(db, EMQ_EPROTO, msg);
    }
done:
    emq_judge_free(j);
    emq_mem_free(q);
    return rc;
}

/* ---------------------------------------------------------------- API */

void emq_import_options_init_size(emq_import_options *o, size_t size)
{
    emq_import_options d;
    memset(&d, 0, sizeof d);
    emq_struct_out(o, size, &d, sizeof d);
}

static void importer_free(emq_importer *im)
{
    emq_resp_reader_free(&im->rd);
    emq_mem_free(im->argv);
    hm_free(&im->offsets);
    hm_free(&im->queues);
    emq_buf_free(&im->qnames);
    emq_mem_free(im);
}

/* End the import's transaction with `rc` (< 0: roll back); sticky. */
static int over(emq_importer *im, int rc)
{
    if (im->open) {
        im->open = 0;
        rc = emq_db_tx_end(im->db, rc);
    }
    if (rc < 0)
        im->rc = rc;
    return rc;
}

/* A key scan's visit: stop (1) at the first key but the version's. */
static int other_key(void *ctx, const unsigned char *key, size_t klen,
                     int type)
{
    static const char vk[] = EMQ_VERSION_KEY;
    (void)ctx;
    (void)type;
    return !(klen == sizeof vk - 1 && memcmp(key, vk, klen) == 0);
}

int emq_import_begin(emq_db *db, const emq_import_options *opt,
                     emq_importer **out)
{
    int64_t now;
    int rc;
    if (out)
        *out = NULL;
    if ((rc = emq_db_enter(db)) < 0)
        return rc;
    if (!out)
        return emq_db_fail(db, EMQ_EINVAL, "import: no importer pointer");
    emq_import_options o;
    emq_import_options_init(&o);
    if (opt && emq_struct_in(&o, sizeof o, opt) != EMQ_OK)
        return emq_db_fail(db, EMQ_EINVAL, "import: options not set by "
                           "emq_import_options_init(), or a field this "
                           "library does not know");
    emq_importer *im = emq_mem_calloc(1, sizeof *im);
    if (!im)
        return emq_db_fail(db, EMQ_ENOMEM, NULL);
    im->db = db;
    im->st = emq_db_store(db);
    im->opt = o;
    emq_resp_reader_init(&im->rd);
    if ((rc = emq_db_tx_begin(db, 1, &now)) < 0) {
        importer_free(im);
        return rc;
    }
    im->open = 1;
    /* What the file is before the stream: its identity, and whether it
     * holds any key but the stamp. */
    {
        static const char vk[] = EMQ_VERSION_KEY;
        emq_buf v = {0};
        rc = emq_str_get(im->st, vk, sizeof vk - 1, &v);
        if (rc == EMQ_OK)
            im->file_wire = emq_wire_known(v.p, v.len);
        emq_buf_free(&v);
        if (rc >= 0 || rc == EMQ_NOTFOUND)
            rc = emq_key_scan(im->st, "", 0, other_key, im);
        if (rc < 0) {
            rc = emq_db_fail(db, rc, emq_store_errmsg(im->st));
            over(im, rc);
            importer_free(im);
            return rc;
        }
        im->file_empty = rc == EMQ_OK;
    }
    *out = im;
    return EMQ_OK;
}

int emq_import_feed(emq_importer *im, const void *bytes, size_t len)
{
    const emq_resp_cmd *c;
    int rc;
    if (!im)
        return EMQ_EINVAL;
    if (im->rc < 0)
        return im->rc;
    emq_db_clear(im->db);
    if (!bytes && len)
        return over(im, emq_db_fail(im->db, EMQ_EINVAL, "import: no bytes"));
    if (emq_resp_feed(&im->rd, bytes, len) != EMQ_OK)
        return over(im, emq_db_fail(im->db, EMQ_ENOMEM, NULL));
    im->bytes += len;
    while ((rc = emq_resp_next(&im->rd, &c)) == EMQ_OK) {
        if ((rc = apply(im, c)) != EMQ_OK)
            return over(im, rc);
        im->commands++;
    }
    if (rc == EMQ_EPROTO) {
        const emq_resp_error *e = emq_resp_reader_error(&im->rd);
        char why[160];
        snprintf(why, sizeof why, "malformed RESP (%s at byte %llu)", e->msg,
                 (unsigned long long)e->at);
        return over(im, refuse(im->db, e->frame, why, NULL, 0));
    }
    if (rc != EMQ_RESP_MORE)
        return over(im, emq_db_fail(im->db, rc, "import"));
    return EMQ_OK;
}

int emq_import_finish(emq_importer *im, emq_transfer_summary *sum)
{
    emq_transfer_summary s;
    int rc;
    if (!im)
        return EMQ_EINVAL;
    if ((rc = im->rc) < 0)
        goto done;
    emq_db_clear(im->db);
    if (emq_resp_pending(&im->rd)) {
        rc = refuse(im->db, emq_resp_offset(&im->rd), "truncated frame",
                    NULL, 0);
    } else if (!im->version_seen) {
        rc = emq_db_wire(im->db, EMQ_EWIRE, "import refused: the stream "
                         "never sets {emq}:version (to an identity of the "
                         "wire table: echomq:4.0.0 or echomq:3.0.0)");
    } else if (!im->opt.unchecked) {
        rc = judge(im);
    }
    /* Digested inside the transaction: a digest that fails (out of memory)
     * takes the import back with it. */
    if (rc == EMQ_OK && sum && (rc = emq_digest_tx(im->db, im->st, &s)) ==
                                   EMQ_OK) {
        s.commands = im->commands;
        s.bytes = im->bytes;
    }
    rc = over(im, rc);
    if (rc == EMQ_OK && sum)
        *sum = s;
done:
    importer_free(im);
    return rc;
}

void emq_import_abort(emq_importer *im)
{
    if (!im)
        return;
    if (im->open)
        emq_store_rollback(im->st);
    importer_free(im);
}

int emq_import(emq_db *db, const void *bytes, size_t len,
               emq_transfer_summary *sum)
{
    emq_importer *im;
    int rc = emq_db_enter(db);
    if (rc < 0)
        return rc;
    if (!bytes && len)
        return emq_db_fail(db, EMQ_EINVAL, "import: no bytes");
    if ((rc = emq_import_begin(db, NULL, &im)) != EMQ_OK)
        return rc;
    if ((rc = emq_import_feed(im, bytes, len)) != EMQ_OK) {
        emq_import_abort(im);
        return rc;
    }
    return emq_import_finish(im, sum);
}
