/*
 * cli_ui.c — `emqlite ui`: the web dashboard (api/emqlite_web.h) served
 * over HTTP with libmicrohttpd (doc/WEB.md).
 *
 * Rules: the server runs in this thread (MHD's external select loop), so
 * the handle is used by one thread only; each request is answered by
 * emq_web_handle, whose transactions end before the response is queued:
 * nothing is sent while a transaction is open. Bound to 127.0.0.1 by
 * default; an address other than a loopback one requires --token.
 * Without libmicrohttpd the command exits 10 (not in this build).
 */
#include "config.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "emqlite_web.h"

static int cmd_ui(emq_cli *c, int argc, char **argv);

const emq_cli_command emq_cli_ui_commands[] = {
    { "ui", cmd_ui, "[--listen ADDR:PORT] [--read-only] [--token T]",
      "Serve the web dashboard: queues at a glance, a queue's jobs by\n"
      "state, a job, lanes, streams and the live event log, with actions\n"
      "(retry, remove, requeue dead, pause and resume a queue or a lane).\n"
      "  --listen ADDR:PORT  where to listen (default 127.0.0.1:8080;\n"
      "                      [::1]:PORT for IPv6; PORT 0 picks a free one)\n"
      "  --read-only         refuse every action (403)\n"
      "  --token T           require T: open http://ADDR:PORT/?token=T once\n"
      "                      (a cookie), or send Authorization: Bearer T;\n"
      "                      required when ADDR is not a loopback address\n"
      "                      ($EMQLITE_UI_TOKEN is read when not given)\n"
      "Prints the URL when listening (under --json one document:\n"
      "{\"url\", \"listen\", \"port\", \"read_only\"}) and serves until\n"
      "interrupted (SIGINT, SIGTERM).\n"
      "Exit: 0 interrupted, 1 bad usage, 9 cannot listen, 10 built\n"
      "without libmicrohttpd." },
    { NULL, NULL, NULL, NULL }
};

#ifndef HAVE_MHD

static int cmd_ui(emq_cli *c, int argc, char **argv)
{
    const char *listen = NULL, *ro = NULL, *token = NULL;
    emq_cli_opt opts[] = {
        {"--listen", 1, &listen}, {"--read-only", 0, &ro},
        {"--token", 1, &token}, {NULL, 0, NULL}
    };
    const char *pos[1];
    int npos, ex;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, 0, &npos)) >= 0)
        return ex;
    fprintf(stderr, "emqlite: ui: built without libmicrohttpd (install "
            "libmicrohttpd-dev and configure again)\n");
    return EMQ_EXIT_NOTBUILT;
}

#else

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/select.h>
#include <sys/socket.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* One connection's request: the body gathered so far. */
typedef struct conn {
    char *body;
    size_t len, seen;
} conn;

typedef struct server {
    emq_web *web;
    size_t max_body;
} server;

typedef struct hdrs {
    emq_web_header *h;
    size_t n, cap;
    int oom;
} hdrs;

static enum MHD_Result collect(void *cls, enum MHD_ValueKind kind,
                               const char *key, const char *value)
{
    hdrs *h = cls;
    (void)kind;
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 16;
        emq_web_header *n = realloc(h->h, cap * sizeof *n);
        if (n == NULL) { h->oom = 1; return MHD_NO; }
        h->h = n;
        h->cap = cap;
    }
    h->h[h->n].name = key;
    h->h[h->n].value = value ? value : "";
    h->n++;
    return MHD_YES;
}

/* The query string again, from MHD's decoded arguments: percent-encoded
 * as the handler decodes it. */
typedef struct qbuf {
    char *p;
    size_t n, cap;
    int oom;
} qbuf;

static void qput(qbuf *q, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char e[3];
        size_t k = 1;
        if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
            (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.')
            e[0] = (char)ch;
        else {
            e[0] = '%';
            e[1] = hex[ch >> 4];
            e[2] = hex[ch & 15];
            k = 3;
        }
        if (q->n + k + 1 > q->cap) {
            size_t cap = q->cap ? q->cap * 2 : 128;
            while (cap < q->n + k + 1) cap *= 2;
            char *np = realloc(q->p, cap);
            if (np == NULL) { q->oom = 1; return; }
            q->p = np;
            q->cap = cap;
        }
        memcpy(q->p + q->n, e, k);
        q->n += k;
        q->p[q->n] = '\0';
    }
}

static enum MHD_Result qarg(void *cls, enum MHD_ValueKind kind,
                            const char *key, const char *value)
{
    qbuf *q = cls;
    (void)kind;
    if (q->n) {
        if (q->n + 2 > q->cap) {
            char *np = realloc(q->p, q->cap + 128);
            if (np == NULL) { q->oom = 1; return MHD_NO; }
            q->p = np;
            q->cap += 128;
        }
        q->p[q->n++] = '&';
        q->p[q->n] = '\0';
    }
    qput(q, key);
    if (value) {
        if (q->n + 2 > q->cap) {
            char *np = realloc(q->p, q->cap + 128);
            if (np == NULL) { q->oom = 1; return MHD_NO; }
            q->p = np;
            q->cap += 128;
        }
        q->p[q->n++] = '=';
        q->p[q->n] = '\0';
        qput(q, value);
    }
    return MHD_YES;
}

static enum MHD_Result plain(struct MHD_Connection *con, unsigned status,
                             const char *text)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ok;
    if (r == NULL) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
    ok = MHD_queue_response(con, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *con,
                              const char *url, const char *method,
                              const char *version, const char *data,
                              size_t *size, void **state)
{
    server *s = cls;
    conn *cn = *state;
    (void)version;
    if (cn == NULL) {              /* the headers: set up the body */
        if ((cn = calloc(1, sizeof *cn)) == NULL) return MHD_NO;
        *state = cn;
        return MHD_YES;
    }
    if (*size) {                   /* a piece of the body */
        cn->seen += *size;
        if (cn->len + *size <= s->max_body) {
            char *nb = realloc(cn->body, cn->len + *size);
            if (nb == NULL) return MHD_NO;
            memcpy(nb + cn->len, data, *size);
            cn->body = nb;
            cn->len += *size;
        }
        *size = 0;
        return MHD_YES;
    }
    hdrs h = {0};
    qbuf q = {0};
    MHD_get_connection_values(con, MHD_HEADER_KIND, collect, &h);
    MHD_get_connection_values(con, MHD_GET_ARGUMENT_KIND, qarg, &q);
    if (h.oom || q.oom) {
        free(h.h);
        free(q.p);
        return plain(con, 500, "out of memory\n");
    }
    emq_web_request rq = { method, url, q.p ? q.p : "", h.h, h.n,
                           cn->seen > s->max_body ? NULL : cn->body,
                           cn->seen };
    emq_web_response rs;
    int rc = emq_web_handle(s->web, &rq, &rs);
    free(h.h);
    free(q.p);
    if (rc != EMQ_OK) return plain(con, 500, "the handler failed\n");
    struct MHD_Response *r = MHD_create_response_from_buffer(
        rs.body_len, rs.body, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ok = MHD_NO;
    if (r) {
        for (size_t i = 0; i < rs.nheaders; i++)
            MHD_add_response_header(r, rs.headers[i].name,
                                    rs.headers[i].value);
        ok = MHD_queue_response(con, (unsigned)rs.status, r);
        MHD_destroy_response(r);
    }
    emq_web_response_clear(&rs);
    return ok;
}

static void done_cb(void *cls, struct MHD_Connection *con, void **state,
                    enum MHD_RequestTerminationCode toe)
{
    conn *cn = *state;
    (void)cls;
    (void)con;
    (void)toe;
    if (cn) {
        free(cn->body);
        free(cn);
        *state = NULL;
    }
}

/* ADDR:PORT (ADDR dotted IPv4 or [IPv6]) into a socket address. */
static int parse_listen(const char *s, struct sockaddr_storage *ss,
                        socklen_t *len, int *loopback)
{
    char host[64];
    const char *colon, *h0 = s, *h1;
    char *end;
    if (s[0] == '[') {
        h0 = s + 1;
        if ((h1 = strchr(s, ']')) == NULL || h1[1] != ':') return -1;
        colon = h1 + 1;
    } else {
        if ((colon = strrchr(s, ':')) == NULL) return -1;
        h1 = colon;
    }
    if ((size_t)(h1 - h0) >= sizeof host || h1 == h0) return -1;
    memcpy(host, h0, (size_t)(h1 - h0));
    host[h1 - h0] = '\0';
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || errno || port < 0 || port > 65535) return -1;
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *len = sizeof *a4;
        *loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
        return 0;
    }
    if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *len = sizeof *a6;
        *loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
        return 0;
    }
    return -1;
}

static int cmd_ui(emq_cli *c, int argc, char **argv)
{
    const char *listen = "127.0.0.1:8080", *ro = NULL, *token = NULL;
    emq_cli_opt opts[] = {
        {"--listen", 1, &listen}, {"--read-only", 0, &ro},
        {"--token", 1, &token}, {NULL, 0, NULL}
    };
    const char *pos[1];
    struct sockaddr_storage ss;
    socklen_t slen;
    int npos, loopback, ex, rc;
    if ((ex = emq_cli_parse(c, argc, argv, opts, pos, 0, 0, &npos)) >= 0)
        return ex;
    if (token == NULL && getenv("EMQLITE_UI_TOKEN") &&
        getenv("EMQLITE_UI_TOKEN")[0])
        token = getenv("EMQLITE_UI_TOKEN");
    if (parse_listen(listen, &ss, &slen, &loopback) != 0)
        return emq_cli_usage(c, "--listen must be ADDR:PORT (an IPv4 address "
                             "or [IPv6], a port from 0 to 65535), not '%s'",
                             listen);
    if (!loopback && token == NULL)
        return emq_cli_usage(c, "--listen %s is not a loopback address: "
                             "binding there requires --token", listen);
    if ((ex = emq_cli_open(c)) != 0) return ex;
    emq_web_options o;
    emq_web_options_init(&o);
    o.read_only = ro != NULL;
    o.token = token;
    emq_web *web = NULL;
    if ((rc = emq_web_new(c->db, &o, &web)) != EMQ_OK) {
        if (rc == EMQ_EINVAL)
            return emq_cli_usage(c, "--token must be 1 to 256 printable "
                                 "ASCII characters without space, ';' or "
                                 "','");
        return emq_cli_fail(c, rc, "cannot set up the dashboard");
    }
    server s = { web, o.max_body };
    unsigned flags = MHD_USE_ERROR_LOG;
    if (ss.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, 0, NULL, NULL, answer, &s,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_NOTIFY_COMPLETED, done_cb, NULL,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
        MHD_OPTION_END);
    if (d == NULL) {
        emq_web_free(web);
        fprintf(stderr, "emqlite: ui: cannot listen on %s\n", listen);
        return EMQ_EXIT_ERROR;
    }
    const union MHD_DaemonInfo *inf =
        MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = inf ? inf->port : 0;
    char host[64];
    if (ss.ss_family == AF_INET6) {
        host[0] = '[';
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr,
                  host + 1, sizeof host - 2);
        strcat(host, "]");
    } else {
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host,
                  sizeof host);
    }
    if (c->json) {
        printf("{\"url\":\"http://%s:%u/\",\"listen\":\"%s:%u\",\"port\":%u,"
               "\"read_only\":%s}\n", host, port, host, port, port,
               ro ? "true" : "false");
    } else {
        printf("emqlite ui: serving http://%s:%u/%s%s\n", host, port,
               token ? " (open it with ?token=...)" : "",
               ro ? " read-only" : "");
    }
    fflush(stdout);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    while (!stop) {
        fd_set rs, ws, es;
        MHD_socket max = 0;
        FD_ZERO(&rs);
        FD_ZERO(&ws);
        FD_ZERO(&es);
        if (MHD_get_fdset(d, &rs, &ws, &es, &max) != MHD_YES) break;
        struct timeval tv = {0, 250000};
        if (select(max + 1, &rs, &ws, &es, &tv) < 0 && errno != EINTR) break;
        MHD_run(d);
    }
    MHD_stop_daemon(d);
    emq_web_free(web);
    return EMQ_EXIT_OK;
}

#endif /* HAVE_MHD */
