/*
 * batch.c — a pipelined batch of commands (remote.h): each sent as it is
 * added to its key's slot's node (or to one named node), every reply read
 * in order when the batch runs, and the redirections followed before the
 * replies are handed out: each redirected command is sent again, in the
 * order added, to where rm_redirect_to says (after ASKING for an ASK),
 * round after round until none is redirected.
 *
 * Rules: on a cluster a copy of each command (RESP) is kept until the
 * batch is cleared, to send it again; on one server nothing is copied (a
 * redirection there is refused anyway). A failure while adding is kept and
 * reported by rm_batch_run, so callers add without checking; replies not
 * read by a failed run are read and dropped when the batch is cleared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "remote.h"
#include "resp.h"

void rm_batch_init(rm_batch *b, emq_remote *r)
{
    memset(b, 0, sizeof *b);
    b->r = r;
}

/* Send the copy of command i to `to`, after ASKING when `asking`. */
static int resend(rm_batch *b, size_t i, emq_remote *to, int asking)
{
    rm_batch_cmd *c = &b->c[i];
    emq_resp_cmd d;
    int rc = -1;
    memset(&d, 0, sizeof d);
    c->to = to;
    c->asking = 0;
    if (asking) {
        const char *av[1] = { "ASKING" };
        if (rm_sendz(to, 1, av) != 0)
            return -1;
        c->asking = 1;
        c->unread++;
    }
    if (emq_resp_parse(b->cmds.p + c->off, c->len, 0, &d, NULL) == EMQ_OK &&
        (rc = rm_send(to, d.argc, (const char *const *)d.argv, d.lens)) == 0)
        c->unread++;
    emq_resp_cmd_free(&d);
    return rc;
}

void rm_batch_add(rm_batch *b, unsigned slot, emq_remote *to, size_t argc,
                  const char *const *argv, const size_t *lens)
{
    rm_batch_cmd *c;
    if (b->fail)
        return;
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        rm_batch_cmd *v = emq_mem_realloc(b->c, cap * sizeof *v);
        if (!v) {
            b->fail = EMQ_ENOMEM;
            return;
        }
        b->c = v;
        b->cap = cap;
    }
    c = &b->c[b->n];
    memset(c, 0, sizeof *c);
    c->slot = slot;
    c->off = b->cmds.len;
    if (slot != RM_NOSLOT && !(to = rm_route(b->r, slot))) {
        b->fail = EMQ_EREMOTE;
        b->fail_slot = slot;
        return;
    }
    c->to = to;
    if (b->r->cl) {
        int rc = emq_resp_write_array(&b->cmds, argc);
        for (size_t i = 0; i < argc && rc == EMQ_OK; i++)
            rc = emq_resp_write_bulk(&b->cmds, argv[i], lens[i]);
        if (rc != EMQ_OK) {
            b->fail = EMQ_ENOMEM;
            return;
        }
        c->len = b->cmds.len - c->off;
    }
    b->n++;
    if (rm_send(to, argc, argv, lens) != 0) {
        b->fail = EMQ_EIO;
        b->fail_node = to;
    } else {
        c->unread = 1;
    }
}

void rm_batch_addz(rm_batch *b, size_t argc, const char *const *argv)
{
    size_t lens[8], klen = 0;
    const char *key;
    if (argc > 8) {
        b->fail = b->fail ? b->fail : EMQ_EINTERNAL;
        return;
    }
    for (size_t i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    key = rm_cmd_key(argc, argv, lens, &klen);
    rm_batch_add(b, key ? emq_slot(key, klen) : RM_NOSLOT, b->r, argc, argv,
                 lens);
}

/* Read the replies of the commands marked `wanted` (all of them the first
 * time), in order, dropping an ASKING's reply first. */
static int read_replies(emq_db *db, rm_batch *b, const char *what, int all)
{
    for (size_t i = 0; i < b->n; i++) {
        rm_batch_cmd *c = &b->c[i];
        if (!all && !c->again)
            continue;
        c->again = 0;
        if (c->asking) {
            const emq_rreply *a;
            int rc = EMQ_OK;
            if (rm_recv(c->to, &a) != 0)
                return rm_io(db, c->to, what);
            c->unread--;
            c->asking = 0;
            if (a->type == EMQ_RREPLY_ERROR)
                rc = rm_refused(db, c->to, a->str, a->len, NULL, 0);
            rm_release(c->to, a);
            if (rc != EMQ_OK)
                return rc;
        }
        if (rm_recv(c->to, &c->rep) != 0)
            return rm_io(db, c->to, what);
        c->unread--;
    }
    return EMQ_OK;
}

int rm_batch_run(emq_db *db, rm_batch *b, const char *what)
{
    emq_remote *bad;
    int rc;
    if (b->fail == EMQ_ENOMEM || b->fail == EMQ_EINTERNAL)
        return emq_db_fail(db, b->fail, NULL);
    if (b->fail == EMQ_EREMOTE)
        return rm_noslot(db, b->r, b->fail_slot);
    if (b->fail == EMQ_EIO)
        return rm_io(db, b->fail_node, what);
    if ((bad = rm_flush(b->r)) != NULL)
        return rm_io(db, bad, what);
    if ((rc = read_replies(db, b, what, 1)) != EMQ_OK)
        return rc;
    for (;;) {
        int refreshed = 0, again = 0;
        for (size_t i = 0; i < b->n; i++) {
            rm_batch_cmd *c = &b->c[i];
            rm_redir rd;
            emq_remote *to;
            unsigned tries;
            if (c->slot == RM_NOSLOT ||
                rm_redirect(c->rep, c->to, &rd) == RM_REDIR_NONE)
                continue;
            if (rd.kind == RM_REDIR_TRYAGAIN) {
                tries = ++c->waits;
                c->hops = 0;
            } else {
                tries = ++c->hops;
            }
            if ((rc = rm_redirect_to(db, b->r, c->to, &rd, c->slot, tries,
                                     &refreshed, b->wait, b->wctx, &to)) !=
                EMQ_OK)
                return rc;
            rm_release(c->to, c->rep);
            c->rep = NULL;
            c->again = 1;
            again = 1;
            if (resend(b, i, to, rd.kind == RM_REDIR_ASK) != 0)
                return rm_io(db, to, what);
        }
        if (!again)
            break;
        if ((bad = rm_flush(b->r)) != NULL)
            return rm_io(db, bad, what);
        if ((rc = read_replies(db, b, what, 0)) != EMQ_OK)
            return rc;
    }
    return rm_refresh_stale(db, b->r);
}

const emq_rreply *rm_batch_reply(const rm_batch *b, size_t i)
{
    return b->c[i].rep;
}

emq_remote *rm_batch_node(const rm_batch *b, size_t i)
{
    return b->c[i].to;
}

/* Replies still to come (a run that failed, or none) are read and dropped,
 * so that the connections stay in step for the next command. */
void rm_batch_clear(rm_batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        rm_batch_cmd *c = &b->c[i];
        rm_release(c->to, c->rep);
        while (c->unread) {
            const emq_rreply *x;
            if (rm_recv(c->to, &x) != 0)
                break; /* the connection failed: it stays broken */
            rm_release(c->to, x);
            c->unread--;
        }
    }
    b->n = 0;
    b->cmds.len = 0;
    b->fail = 0;
}

void rm_batch_free(rm_batch *b)
{
    rm_batch_clear(b);
    emq_mem_free(b->c);
    emq_buf_free(&b->cmds);
    memset(b, 0, sizeof *b);
}
