/*
 * cli_call.c — the registry's commands of the emqlite tool: `call` runs any
 * registered verb by its wire name with the arguments as given (the reply
 * printed as the wire answers it), `verbs` lists the registry, and the
 * printers of wire replies (text and JSON) the other commands share.
 *
 * Rules: everything here iterates emq_verb_at()/emq_verb_find(), so a verb
 * added to the registry has a CLI path and a generated help text with no
 * change to this file.
 */
#include <stdio.h>
#include <string.h>
#include "emqlite_protocol.h"
#include "cli.h"

/* ---------------------------------------------------------------- printers */

void emq_cli_reply_json(FILE *f, const emq_reply *r)
{
    size_t i;
    switch (r->type) {
    case EMQ_REPLY_NIL: fputs("null", f); break;
    case EMQ_REPLY_INT: fprintf(f, "%lld", (long long)r->integer); break;
    case EMQ_REPLY_BOOL: fputs(r->integer ? "true" : "false", f); break;
    case EMQ_REPLY_BULK:
    case EMQ_REPLY_STATUS: emq_cli_json_bytes(f, r->str, r->len); break;
    case EMQ_REPLY_ERROR:
    case EMQ_REPLY_REFUSED:
        fprintf(f, "{\"%s\":", r->type == EMQ_REPLY_ERROR ? "error"
                                                          : "refused");
        emq_cli_json_bytes(f, r->str, r->len);
        fputc('}', f);
        break;
    case EMQ_REPLY_ARRAY:
        fputc('[', f);
        for (i = 0; i < r->n; i++) {
            if (i) fputc(',', f);
            emq_cli_reply_json(f, &r->elem[i]);
        }
        fputc(']', f);
        break;
    case EMQ_REPLY_MAP:
        fputc('{', f);
        for (i = 0; i + 1 < r->n; i += 2) {
            if (i) fputc(',', f);
            emq_cli_json_bytes(f, r->elem[i].str, r->elem[i].len);
            fputc(':', f);
            emq_cli_reply_json(f, &r->elem[i + 1]);
        }
        fputc('}', f);
        break;
    default:
        fputs("null", f);
        break;
    }
}

void emq_cli_reply_text(FILE *f, const emq_reply *r, int indent)
{
    size_t i;
    fprintf(f, "%*s", indent, "");
    switch (r->type) {
    case EMQ_REPLY_NIL: fputs("(nil)\n", f); return;
    case EMQ_REPLY_INT: fprintf(f, "%lld\n", (long long)r->integer); return;
    case EMQ_REPLY_BOOL: fputs(r->integer ? "true\n" : "false\n", f); return;
    case EMQ_REPLY_BULK:
    case EMQ_REPLY_STATUS:
    case EMQ_REPLY_ERROR:
    case EMQ_REPLY_REFUSED:
        emq_cli_text_bytes(f, r->str, r->len);
        fputc('\n', f);
        return;
    case EMQ_REPLY_ARRAY:
        if (r->n == 0) {
            fputs("(empty)\n", f);
            return;
        }
        fputs("-\n", f);
        for (i = 0; i < r->n; i++) emq_cli_reply_text(f, &r->elem[i],
                                                      indent + 2);
        return;
    case EMQ_REPLY_MAP:
        fputs(r->n ? "\n" : "(empty)\n", f);
        for (i = 0; i + 1 < r->n; i += 2) {
            const emq_reply *v = &r->elem[i + 1];
            fprintf(f, "%*s", indent + 2, "");
            emq_cli_text_bytes(f, r->elem[i].str, r->elem[i].len);
            if (v->type == EMQ_REPLY_ARRAY || v->type == EMQ_REPLY_MAP) {
                fputs(":\n", f);
                emq_cli_reply_text(f, v, indent + 4);
            } else {
                fputs(": ", f);
                emq_cli_reply_text(f, v, 0);
            }
        }
        return;
    default:
        fputc('\n', f);
        return;
    }
}

/* -------------------------------------------------------- registry texts */

static const char *kind_name(int kind)
{
    switch (kind) {
    case EMQ_VERB_WRITE: return "write";
    case EMQ_VERB_READ: return "read";
    case EMQ_VERB_PROC: return "procedure";
    case EMQ_VERB_HOST: return "host";
    default: return "?";
    }
}

static const char *arg_kind_name(int kind)
{
    switch (kind) {
    case EMQ_ARG_QUEUE: return "a queue name";
    case EMQ_ARG_ID: return "a branded id";
    case EMQ_ARG_GROUP: return "a group (lane) id";
    case EMQ_ARG_BYTES: return "bytes";
    case EMQ_ARG_INT: return "an integer";
    case EMQ_ARG_POS: return "an integer > 0";
    case EMQ_ARG_NNEG: return "an integer >= 0";
    case EMQ_ARG_BOOL: return "1, 0, true or false";
    case EMQ_ARG_WORD: return "one of";
    case EMQ_ARG_DID: return "a dedup id";
    case EMQ_ARG_NAME: return "a name without ':'";
    default: return "?";
    }
}

/* "q id payload [result] [id token]..." */
static void synopsis(FILE *f, const emq_verb_info *v)
{
    int rest = 0;
    for (size_t i = 0; i < v->nargs; i++) {
        const emq_arg_info *a = &v->args[i];
        const char *dot = strchr(a->name, '.');
        const char *n = dot ? dot + 1 : a->name;
        if ((a->flags & EMQ_ARGF_REST) && !rest) {
            fputs(i ? " [" : "[", f);
            rest = 1;
        } else if (i) {
            fputc(' ', f);
        }
        fprintf(f, (a->flags & EMQ_ARGF_OPT) ? "[%s]" : "%s", n);
    }
    if (rest) fputs("]...", f);
}

static void verb_help(FILE *f, const emq_verb_info *v)
{
    fprintf(f, "usage: emqlite [--db PATH] [--json] call %s ", v->name);
    synopsis(f, v);
    fprintf(f, "\n\n%s\n(tier %d, %s; keys: %s)\n\nArguments:\n", v->summary,
            v->tier, kind_name(v->kind), v->keys);
    for (size_t i = 0; i < v->nargs; i++) {
        const emq_arg_info *a = &v->args[i];
        fprintf(f, "  %-16s %s%s%s%s%s\n", a->name, arg_kind_name(a->kind),
                a->words ? " " : "", a->words ? a->words : "",
                (a->flags & EMQ_ARGF_OPT) ? " (optional)" : "",
                (a->flags & EMQ_ARGF_REST) ? " (repeated)" : "");
    }
    fputs("\nArguments are taken byte for byte; put '--' before one that "
          "starts with '-'.\nExit: 0 done, 2 empty, 3 duplicate or exists, "
          "6 gone or absent, or the\nfailure's status (emqlite(1)).\n", f);
}

/* ------------------------------------------------------------- commands */

#define MAX_CALL_ARGS 256

static int cmd_call(emq_cli *c, int argc, char **argv)
{
    const char *pos[MAX_CALL_ARGS + 1];
    const emq_verb_info *v;
    emq_reply r = {0};
    int npos, ex, rc, i;

    /* `call VERB --help` is the verb's generated help. */
    for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            if (i > 1 && (v = emq_verb_find(argv[1])) != NULL) {
                verb_help(stdout, v);
                return EMQ_EXIT_OK;
            }
            break;
        }
    if ((ex = emq_cli_parse(c, argc, argv, NULL, pos, 1, MAX_CALL_ARGS + 1,
                            &npos)) >= 0)
        return ex;
    if ((v = emq_verb_find(pos[0])) == NULL)
        return emq_cli_usage(c, "unknown verb '%s' (emqlite verbs lists "
                             "them)", pos[0]);
    if ((ex = emq_cli_open(c)) != 0) return ex;
    rc = emq_call(c->db, v->name, (size_t)npos - 1, pos + 1, NULL, &r);
    if (rc < 0 && r.type != EMQ_REPLY_ERROR && r.type != EMQ_REPLY_REFUSED) {
        emq_reply_clear(&r);
        return emq_cli_fail(c, rc, NULL);
    }
    if (c->json) {
        fputs("{\"verb\":", stdout);
        emq_cli_json_str(stdout, v->name);
        fputs(",\"reply\":", stdout);
        emq_cli_reply_json(stdout, &r);
        printf(",\"code\":%d}\n", rc);
    } else if (rc >= 0) {
        emq_cli_reply_text(stdout, &r, 0);
    }
    emq_reply_clear(&r);
    if (rc < 0) {
        if (c->json) return emq_cli_exit_of(rc);
        return emq_cli_fail(c, rc, NULL);
    }
    return emq_cli_exit_of(rc); /* a verdict's exit: its table row */
}

static int cmd_verbs(emq_cli *c, int argc, char **argv)
{
    const char *pos[1];
    int npos, ex;
    size_t i, k;
    if ((ex = emq_cli_parse(c, argc, argv, NULL, pos, 0, 0, &npos)) >= 0)
        return ex;
    if (c->json) fputc('[', stdout);
    for (i = 0; i < emq_verb_count(); i++) {
        const emq_verb_info *v = emq_verb_at(i);
        if (!c->json) {
            printf("%-26s T%d %-9s ", v->name, v->tier, kind_name(v->kind));
            synopsis(stdout, v);
            printf("\n    %s\n", v->summary);
            continue;
        }
        printf("%s{\"name\":", i ? "," : "");
        emq_cli_json_str(stdout, v->name);
        printf(",\"id\":%d,\"tier\":%d,\"kind\":\"%s\",\"args\":[", v->id,
               v->tier, kind_name(v->kind));
        for (k = 0; k < v->nargs; k++) {
            printf("%s{\"name\":", k ? "," : "");
            emq_cli_json_str(stdout, v->args[k].name);
            printf(",\"kind\":%d,\"optional\":%s,\"repeated\":%s}",
                   v->args[k].kind,
                   (v->args[k].flags & EMQ_ARGF_OPT) ? "true" : "false",
                   (v->args[k].flags & EMQ_ARGF_REST) ? "true" : "false");
        }
        fputs("],\"keys\":", stdout);
        emq_cli_json_str(stdout, v->keys);
        fputs(",\"summary\":", stdout);
        emq_cli_json_str(stdout, v->summary);
        fputc('}', stdout);
    }
    if (c->json) fputs("]\n", stdout);
    return EMQ_EXIT_OK;
}

const emq_cli_command emq_cli_call_commands[] = {
    { "call", cmd_call, "VERB [ARG...]",
      "Run any verb of the protocol by its wire name (see 'emqlite verbs')\n"
      "with the arguments as given, and print its reply as the wire answers\n"
      "it: integers, strings, (nil), arrays one element a line, maps as\n"
      "'name: value'. 'emqlite call VERB --help' shows the verb's arguments.\n"
      "Exit: 0 done, 2 empty, 3 duplicate or exists, 6 gone or absent, or\n"
      "the failure's status." },
    { "verbs", cmd_verbs, "",
      "List every verb of the registry: its wire name, tier, kind, arguments\n"
      "and what it does." },
    { NULL, NULL, NULL, NULL }
};
