/*
 * cli_flow.c — the emqlite tool's flow commands (PROTOCOL.md §6.4):
 *   flow add QUEUE           add the flow tree (or array of trees) on stdin
 *   flow show QUEUE PARENT   print the flow below PARENT with every state
 *   flow sweep QUEUE         deliver the outbox of a children's queue
 *   flow recover             finish the adds a crash cut
 *
 * The tree on stdin is the golden traces' shape: {"parent": {"id",
 * "payload"}, "children": [child...]}, a child {"id", "payload"} with
 * optional "queue" (else its parent's), "ignore_dependency_on_failure"
 * (true: policy id), "fail_parent_on_failure" (the default) and
 * "children". An "id" may be left out: the tool mints one. A payload is a
 * string or {"b64": "..."}. An array of trees is a bulk (add_bulk).
 *
 * Rules: the tool speaks to the library through emqlite.h only (the tree
 * becomes emq_flow_node structs; `show` reads emq_flow_tree); every
 * failure goes through emq_cli_fail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* Nested deeper than this, a tree is refused while it is read (the
 * library refuses more than 8 levels anyway). */
#define READ_DEPTH 32

/* ------------------------------------------------------------ the tree */

static void node_free(emq_flow_node *n)
{
    size_t i;
    for (i = 0; i < n->n_children; i++)
        node_free((emq_flow_node *)&n->children[i]);
    free((void *)n->children);
    free((void *)n->id);
    free((void *)n->payload);
    free((void *)n->queue);
    memset(n, 0, sizeof *n);
}

static int expect(emq_cli_jin *j, unsigned char ch, const char *what)
{
    emq_cli_jws(j);
    if (j->p >= j->end || *j->p != ch) {
        j->err = what;
        return -1;
    }
    j->p++;
    return 0;
}

/* `,` (1: another member follows) or the closing byte (0). */
static int more(emq_cli_jin *j, unsigned char close)
{
    emq_cli_jws(j);
    if (j->p < j->end && *j->p == ',') {
        j->p++;
        return 1;
    }
    if (j->p < j->end && *j->p == close) {
        j->p++;
        return 0;
    }
    j->err = "expected ',' or a closing bracket";
    return -1;
}

static int jbool(emq_cli_jin *j, int *v)
{
    emq_cli_jws(j);
    if (j->p < j->end && *j->p == 't') {
        *v = 1;
        return emq_cli_jlit(j, "true");
    }
    *v = 0;
    return emq_cli_jlit(j, "false");
}

static int read_node(emq_cli *c, emq_cli_jin *j, emq_flow_node *n,
                     int depth, int root);

/* Mint an id for every node that names none, in pre-order (so that the
 * ids, hence the claim order of siblings, follow the spec). */
static int mint_ids(emq_cli *c, emq_flow_node *n)
{
    size_t i;
    if (n->id == NULL) {
        char *id = malloc(EMQ_ID_SIZE);
        if (!id || emq_cli_mint(c, id) != EMQ_OK) {
            free(id);
            return -1;
        }
        n->id = id;
    }
    for (i = 0; i < n->n_children; i++)
        if (mint_ids(c, (emq_flow_node *)&n->children[i]) < 0) return -1;
    return 0;
}

/* A "children" array into n. */
static int read_children(emq_cli *c, emq_cli_jin *j, emq_flow_node *n,
                         int depth)
{
    emq_flow_node *kids = NULL, *nk;
    size_t cap = 0;
    int m;
    if (expect(j, '[', "\"children\" must be an array") < 0) return -1;
    emq_cli_jws(j);
    if (j->p < j->end && *j->p == ']') {
        j->p++;
        return 0;
    }
    do {
        if (n->n_children == cap) {
            cap = cap ? cap * 2 : 4;
            if (!(nk = realloc(kids, cap * sizeof *nk))) {
                j->err = "out of memory";
                goto fail;
            }
            kids = nk;
        }
        memset(&kids[n->n_children], 0, sizeof *kids);
        n->n_children++;
        if (read_node(c, j, &kids[n->n_children - 1], depth + 1, 0) < 0)
            goto fail;
    } while ((m = more(j, ']')) == 1);
    n->children = kids;
    return m;
fail:
    n->children = kids;
    return -1;
}

/* The reason a value of the tree is refused, naming it (the tool is one
 * thread: one static buffer). */
static const char *bad_value(const char *what, const char *v,
                             const char *rule)
{
    static char msg[300];
    snprintf(msg, sizeof msg, "%s '%.40s' %s", what, v, rule);
    return msg;
}

/* One node object ({"id", "payload", ...}); `root`: the parent of a flow,
 * whose object also holds its children in the flow object. */
static int read_node(emq_cli *c, emq_cli_jin *j, emq_flow_node *n,
                     int depth, int root)
{
    unsigned char *key = NULL, *v = NULL;
    size_t kl, vl;
    int m, yes, ignore = 0;
    if (depth > READ_DEPTH) {
        j->err = "the tree is nested too deeply";
        return -1;
    }
    if (expect(j, '{', "a node must be an object") < 0) return -1;
    emq_cli_jws(j);
    if (j->p < j->end && *j->p == '}') {
        j->p++;
        m = 0;
        goto minted;
    }
    do {
        emq_cli_jws(j);
        if (emq_cli_jstring(j, &key, &kl) < 0 ||
            expect(j, ':', "expected ':'") < 0)
            goto fail;
        emq_cli_jws(j);
        if (kl == 2 && memcmp(key, "id", 2) == 0) {
            if (emq_cli_jstring(j, &v, &vl) < 0) goto fail;
            free((void *)n->id);
            n->id = (char *)v;
            if (!emq_id_valid(n->id)) {
                j->err = bad_value("an \"id\"", n->id, "is not a branded "
                                   "id: " EMQ_CLI_ID_RULE);
                v = NULL;
                goto fail;
            }
        } else if (kl == 7 && memcmp(key, "payload", 7) == 0) {
            if (emq_cli_jpayload(j, &v, &vl) < 0) goto fail;
            free((void *)n->payload);
            n->payload = v;
            n->len = vl;
        } else if (!root && kl == 5 && memcmp(key, "queue", 5) == 0) {
            if (emq_cli_jstring(j, &v, &vl) < 0) goto fail;
            free((void *)n->queue);
            n->queue = (char *)v;
            if (!emq_queue_valid(n->queue)) {
                j->err = bad_value("a \"queue\"", n->queue, "is not a "
                                   "queue name: " EMQ_CLI_QUEUE_RULE);
                v = NULL;
                goto fail;
            }
        } else if (!root && kl == 8 && memcmp(key, "children", 8) == 0) {
            if (n->children || read_children(c, j, n, depth) < 0) goto fail;
        } else if (!root && kl == 28 &&
                   memcmp(key, "ignore_dependency_on_failure", 28) == 0) {
            if (jbool(j, &yes) < 0) goto fail;
            ignore = yes;
        } else if (!root && kl == 22 &&
                   memcmp(key, "fail_parent_on_failure", 22) == 0) {
            if (jbool(j, &yes) < 0) goto fail; /* the default */
        } else if (emq_cli_jskip(j) < 0) {
            goto fail;
        }
        v = NULL;
        free(key);
        key = NULL;
    } while ((m = more(j, '}')) == 1);
minted:
    n->policy = ignore ? EMQ_FLOW_ID : EMQ_FLOW_FP;
    return m;
fail:
    free(key);
    return -1;
}

/* One flow object {"parent": {...}, "children": [...]} into root. */
static int read_flow(emq_cli *c, emq_cli_jin *j, emq_flow_node *root)
{
    unsigned char *key = NULL;
    size_t kl;
    int m, have_parent = 0;
    if (expect(j, '{', "a flow must be an object {\"parent\": ..., "
                       "\"children\": [...]}") < 0)
        return -1;
    do {
        emq_cli_jws(j);
        if (emq_cli_jstring(j, &key, &kl) < 0 ||
            expect(j, ':', "expected ':'") < 0)
            goto fail;
        if (kl == 6 && memcmp(key, "parent", 6) == 0) {
            if (have_parent++ || read_node(c, j, root, 1, 1) < 0) goto fail;
        } else if (kl == 8 && memcmp(key, "children", 8) == 0) {
            if (root->children || read_children(c, j, root, 1) < 0)
                goto fail;
        } else if (emq_cli_jskip(j) < 0) {
            goto fail;
        }
        free(key);
        key = NULL;
    } while ((m = more(j, '}')) == 1);
    if (m == 0 && !have_parent) {
        j->err = "a flow needs a \"parent\"";
        return -1;
    }
    return m;
fail:
    free(key);
    return -1;
}

/* The text on stdin as one flow or an array of flows. */
static int read_flows(emq_cli *c, const unsigned char *buf, size_t len,
                      emq_flow_node **roots, size_t *n, int *bulk,
                      char *err, size_t errlen)
{
    emq_cli_jin j = {buf, buf + len, NULL};
    emq_flow_node *v = NULL, *nv;
    size_t cap = 0;
    int m = 0;
    *n = 0;
    *bulk = 0;
    emq_cli_jws(&j);
    if (j.p < j.end && *j.p == '[') {
        *bulk = 1;
        j.p++;
        emq_cli_jws(&j);
        if (j.p < j.end && *j.p == ']') {
            j.p++;
            goto done;
        }
    }
    do {
        if (*n == cap) {
            cap = cap ? cap * 2 : 4;
            if (!(nv = realloc(v, cap * sizeof *nv))) {
                j.err = "out of memory";
                m = -1;
                break;
            }
            v = nv;
        }
        memset(&v[*n], 0, sizeof *v);
        (*n)++;
        if ((m = read_flow(c, &j, &v[*n - 1])) < 0) break;
    } while (*bulk && (m = more(&j, ']')) == 1);
done:
    if (m == 0) {
        emq_cli_jws(&j);
        if (j.p != j.end) {
            j.err = "trailing bytes after the flow";
            m = -1;
        }
    }
    *roots = v;
    if (m < 0)
        snprintf(err, errlen, "the flow on stdin: %s (at byte %ld)",
                 j.err ? j.err : "malformed JSON",
                 (long)(j.p - buf));
    return m;
}

/* ------------------------------------------------------------ printing */

static void print_node(const emq_flow_node *n, const char *q, int level)
{
    const char *nq = n->queue ? n->queue : q;
    size_t i;
    printf("%*s%s %s%s\n", 2 * (level - 1), "", n->id, nq,
           level > 1 && n->policy == EMQ_FLOW_ID ? " (ignored on failure)"
                                                 : "");
    for (i = 0; i < n->n_children; i++)
        print_node(&n->children[i], nq, level + 1);
}

static void json_node(const emq_flow_node *n, const char *q)
{
    const char *nq = n->queue ? n->queue : q;
    size_t i;
    fputs("{\"id\":", stdout);
    emq_cli_json_str(stdout, n->id);
    fputs(",\"queue\":", stdout);
    emq_cli_json_str(stdout, nq);
    printf(",\"policy\":\"%s\",\"children\":[",
           n->policy == EMQ_FLOW_ID ? "id" : "fp");
    for (i = 0; i < n->n_children; i++) {
        if (i) fputc(',', stdout);
        json_node(&n->children[i], nq);
    }
    fputs("]}", stdout);
}

/* ------------------------------------------------------------ commands */

static int flow_add(emq_cli *c, int argc, char **argv)
{
    const char *pos[1];
    unsigned char *buf = NULL;
    emq_flow_node *roots = NULL;
    size_t n = 0, len = 0, cap = 0, i;
    int npos, ex, bulk, rc, *verdicts = NULL;
    char err[300];
    if ((ex = emq_cli_parse(c, argc, argv, NULL, pos, 1, 1, &npos)) >= 0)
        return ex;
    for (;;) { /* stdin, whole */
        size_t r;
        if (len == cap) {
            unsigned char *nb = realloc(buf, (cap = cap ? cap * 2 : 4096) + 1);
            if (!nb) {
                free(buf);
                return emq_cli_fail(c, EMQ_ENOMEM, NULL);
            }
            buf = nb;
        }
        if ((r = fread(buf + len, 1, cap - len, stdin)) == 0) break;
        len += r;
    }
    if (ferror(stdin)) {
        free(buf);
        return emq_cli_fail(c, EMQ_EIO, "cannot read the flow from stdin");
    }
    if ((ex = emq_cli_open(c)) != 0) {
        free(buf);
        return ex;
    }
    if (read_flows(c, buf ? buf : (unsigned char *)"", len, &roots, &n,
                   &bulk, err, sizeof err) < 0) {
        ex = emq_cli_fail(c, EMQ_EPROTO, err);
        goto done;
    }
    for (i = 0; i < n; i++)
        if (mint_ids(c, &roots[i]) < 0) {
            ex = emq_cli_fail(c, EMQ_EIO, "cannot mint an id");
            goto done;
        }
    if (bulk && n > 0 && !(verdicts = calloc(n, sizeof *verdicts))) {
        ex = emq_cli_fail(c, EMQ_ENOMEM, NULL);
        goto done;
    }
    rc = bulk ? emq_flow_add_bulk(c->db, pos[0], roots, n, verdicts)
              : emq_flow_add(c->db, pos[0], &roots[0]);
    if (rc < 0) {
        ex = emq_cli_fail(c, rc, NULL);
        goto done;
    }
    if (c->json) {
        printf("{\"queue\":");
        emq_cli_json_str(stdout, pos[0]);
        fputs(",\"flows\":[", stdout);
        for (i = 0; i < n; i++) {
            printf("%s{\"result\":\"%s\",\"flow\":", i ? "," : "",
                   !verdicts || verdicts[i] == EMQ_OK ? "ok"
                   : emq_cli_class_of(verdicts[i]));
            json_node(&roots[i], pos[0]);
            fputc('}', stdout);
        }
        fputs("]}\n", stdout);
    } else {
        for (i = 0; i < n; i++) {
            if (verdicts && verdicts[i] != EMQ_OK)
                printf("# refused (%s):\n", emq_cli_class_of(verdicts[i]));
            print_node(&roots[i], pos[0], 1);
        }
    }
    ex = EMQ_EXIT_OK;
done:
    for (i = 0; i < n; i++) node_free(&roots[i]);
    free(roots);
    free(verdicts);
    free(buf);
    return ex;
}

static void text_value(const char *p, size_t n)
{
    emq_cli_text_bytes(stdout, p, n);
}

/* The nodes from `i` on at `level` (and their subtrees), as JSON. */
static size_t json_tree(const emq_flow_info *v, size_t n, size_t i)
{
    int level = v[i].level, first = 1;
    fputs("{\"id\":", stdout);
    emq_cli_json_bytes(stdout, v[i].id, v[i].id_len);
    fputs(",\"queue\":", stdout);
    if (v[i].queue) emq_cli_json_str(stdout, v[i].queue);
    else fputs("null", stdout);
    fputs(",\"state\":", stdout);
    if (v[i].state) emq_cli_json_str(stdout, v[i].state);
    else fputs("null", stdout);
    fputs(",\"dependencies\":", stdout);
    if (v[i].has_dependencies) printf("%lld", (long long)v[i].dependencies);
    else fputs("null", stdout);
    fputs(",\"outcome\":", stdout);
    if (v[i].outcome) emq_cli_json_str(stdout, v[i].outcome);
    else fputs("null", stdout);
    fputs(",\"value\":", stdout);
    if (v[i].value) emq_cli_json_bytes(stdout, v[i].value, v[i].value_len);
    else fputs("null", stdout);
    fputs(",\"children\":[", stdout);
    for (i++; i < n && v[i].level > level; first = 0) {
        if (!first) fputc(',', stdout);
        i = json_tree(v, n, i);
    }
    fputs("]}", stdout);
    return i;
}

static int flow_show(emq_cli *c, int argc, char **argv)
{
    const char *pos[2];
    emq_flow_info *v = NULL;
    size_t n = 0, i;
    int npos, ex, rc;
    if ((ex = emq_cli_parse(c, argc, argv, NULL, pos, 2, 2, &npos)) >= 0)
        return ex;
    if ((ex = emq_cli_open(c)) != 0) return ex;
    if ((rc = emq_flow_tree(c->db, pos[0], pos[1], &v, &n)) < 0)
        return emq_cli_fail(c, rc, NULL);
    if (c->json) {
        json_tree(v, n, 0);
        fputc('\n', stdout);
    } else {
        for (i = 0; i < n; i++) {
            printf("%*s", 2 * (v[i].level - 1), "");
            text_value(v[i].id, v[i].id_len);
            printf(" %s %s", v[i].queue ? v[i].queue : "?",
                   v[i].state ? v[i].state : "(no row)");
            if (v[i].has_dependencies)
                printf(" dependencies=%lld", (long long)v[i].dependencies);
            if (v[i].outcome) {
                printf(" %s", v[i].outcome);
                if (v[i].value) {
                    fputc('=', stdout);
                    text_value(v[i].value, v[i].value_len);
                }
            }
            fputc('\n', stdout);
        }
    }
    emq_flow_tree_free(v, n);
    return EMQ_EXIT_OK;
}

static int flow_sweep(emq_cli *c, int argc, char **argv)
{
    const char *pos[1], *batch = "100";
    const emq_cli_opt opts[] = {{"--batch", 1, &batch}, {NULL, 0, NULL}};
    int64_t b, d = 0;
    int npos, ex, rc;
    char num[24];
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 1, 1, &npos)) >= 0)
        return ex;
    if ((ex = emq_cli_int(c, "--batch", batch, &b)) != 0) return ex;
    if ((ex = emq_cli_open(c)) != 0) return ex;
    if ((rc = emq_flow_sweep(c->db, pos[0], b, &d)) < 0)
        return emq_cli_fail(c, rc, NULL);
    snprintf(num, sizeof num, "%lld", (long long)d);
    if (c->json) {
        printf("{\"queue\":");
        emq_cli_json_str(stdout, pos[0]);
        printf(",\"delivered\":%lld}\n", (long long)d);
    } else {
        puts(num);
    }
    return EMQ_EXIT_OK;
}

static int flow_recover(emq_cli *c, int argc, char **argv)
{
    const char *pos[1];
    int64_t n = 0;
    int npos, ex, rc;
    if ((ex = emq_cli_parse(c, argc, argv, NULL, pos, 0, 0, &npos)) >= 0)
        return ex;
    if ((ex = emq_cli_open(c)) != 0) return ex;
    if ((rc = emq_flow_recover(c->db, &n)) < 0)
        return emq_cli_fail(c, rc, NULL);
    if (c->json) printf("{\"finished\":%lld}\n", (long long)n);
    else printf("%lld\n", (long long)n);
    return EMQ_EXIT_OK;
}

static int cmd_flow(emq_cli *c, int argc, char **argv)
{
    static const struct {
        const char *name;
        emq_cli_fn fn;
        const char *syn; /* the positionals' names (emq_cli_parse) */
    } subs[] = {{"add", flow_add, "QUEUE"},
                {"show", flow_show, "QUEUE PARENT"},
                {"sweep", flow_sweep, "QUEUE [--batch N]"},
                {"recover", flow_recover, ""}};
    const char *pos[1];
    int npos, ex;
    if (argc > 1)
        for (size_t i = 0; i < sizeof subs / sizeof *subs; i++)
            if (strcmp(argv[1], subs[i].name) == 0) {
                c->syn = subs[i].syn;
                c->sub = subs[i].name;
                return subs[i].fn(c, argc - 1, argv + 1);
            }
    /* no subcommand, or --help: the command's own parse answers */
    if ((ex = emq_cli_parse(c, argc, argv, NULL, pos, 1, 1, &npos)) >= 0)
        return ex;
    return emq_cli_usage(c, "unknown flow command '%s' (add, show, sweep, "
                         "recover)", pos[0]);
}

const emq_cli_command emq_cli_flow_commands[] = {
    { "flow", cmd_flow,
      "add QUEUE < TREE.json | show QUEUE PARENT | sweep QUEUE [--batch N] "
      "| recover",
      "Flows: parents that wait for their children (PROTOCOL.md 6.4).\n"
      "  flow add QUEUE   add the flow tree read from stdin, the parent in\n"
      "                   QUEUE: {\"parent\": {\"id\", \"payload\"},\n"
      "                   \"children\": [{\"id\", \"payload\", \"queue\",\n"
      "                   \"ignore_dependency_on_failure\", \"children\"}]}\n"
      "                   (ids left out are minted; an array of trees is a\n"
      "                   bulk). Prints the tree with its ids.\n"
      "  flow show QUEUE PARENT  print the flow below PARENT: each node's\n"
      "                   queue, state, dependencies and outcome.\n"
      "  flow sweep QUEUE deliver up to --batch (100) entries of the outbox\n"
      "                   of the children's QUEUE to their parents; print\n"
      "                   the number delivered.\n"
      "  flow recover     finish every flow add a crash cut; print how many.\n"
      "Exit: 0 done, 4 an id not JOB-namespaced (EMQKIND), 1 a tree refused\n"
      "(deeper than 8 levels, an id twice) or malformed." },
    { NULL, NULL, NULL, NULL }
};
