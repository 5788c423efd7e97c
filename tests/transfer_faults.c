/*
 * transfer_faults.c — issue 27 item 11: a transfer to a server that goes
 * away mid-write never kills the process by SIGPIPE.
 *
 *   transfer_faults lib DIR          the library: emq_push to a fake server
 *                                    on a unix socket that closes the
 *                                    connection (a) right after the probe
 *                                    (the push then writes to a closed
 *                                    socket: SIGPIPE before the fix), (b)
 *                                    at the push's first command
 *   transfer_faults serve SOCK       the fake server alone (for the CLI):
 *                                    answers the probe and the cluster
 *                                    question and closes at once (the
 *                                    CLI's next write meets a closed
 *                                    socket)
 *
 * SIGPIPE stays at its default disposition (SIG_DFL) throughout, as in a
 * program that never heard of it: before the fix the push dies by SIGPIPE
 * (status 141 from a shell). Each case runs in a child so that such a death
 * is reported, not suffered. Exit 0 when every case passes.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "emqlite.h"
#include "emqlite_remote.h"

static int failures;

#define CHECK(c, ...)                                                        \
    do {                                                                     \
        if (!(c)) {                                                          \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);             \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
            failures++;                                                      \
        }                                                                    \
    } while (0)

/* ------------------------------------------------------ the fake server */

static int listen_on(const char *path)
{
    struct sockaddr_un a;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || strlen(path) >= sizeof a.sun_path)
        return -1;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    strcpy(a.sun_path, path);
    unlink(path);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 4) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Read into buf until it holds one whole RESP array of bulk strings; the
 * command's name (first argument) goes to name. 1, or 0 at EOF/error. */
static int read_command(int fd, char *buf, size_t cap, size_t *have,
                        char *name, size_t ncap)
{
    for (;;) {
        /* parse what we have */
        const char *p = buf, *end = buf + *have;
        long n, i;
        char *e;
        if (*have > 0 && buf[0] == '*') {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (nl) {
                n = strtol(p + 1, &e, 10);
                p = nl + 1;
                for (i = 0; i < n; i++) {
                    long len;
                    if (p >= end || *p != '$')
                        break;
                    nl = memchr(p, '\n', (size_t)(end - p));
                    if (!nl)
                        break;
                    len = strtol(p + 1, &e, 10);
                    if (end - (nl + 1) < len + 2)
                        break;
                    if (i == 0) {
                        size_t k = (size_t)len < ncap - 1 ? (size_t)len
                                                          : ncap - 1;
                        memcpy(name, nl + 1, k);
                        name[k] = '\0';
                    }
                    p = nl + 1 + len + 2;
                }
                if (i == n) {
                    size_t used = (size_t)(p - buf);
                    memmove(buf, p, *have - used);
                    *have -= used;
                    return 1;
                }
            }
        }
        if (*have == cap)
            return 0;
        ssize_t got = read(fd, buf + *have, cap - *have);
        if (got <= 0)
            return 0;
        *have += (size_t)got;
    }
}

/* Serve one connection: the probe (COMMAND INFO) answered as a server
 * without the optional commands, CLUSTER refused as a standalone server
 * does; at the first other command read `more` bytes more (or for 300 ms
 * at most) and close; after `answers` answers (> 0) close at once, so
 * that the client's next command is written to a closed socket. */
static void serve_one(int lfd, size_t more, int answers)
{
    static char buf[1 << 16];
    size_t have = 0;
    char name[64];
    int c = accept(lfd, NULL, NULL);
    if (c < 0)
        _exit(2);
    while (read_command(c, buf, sizeof buf, &have, name, sizeof name)) {
        const char *rep = NULL;
        if (strcasecmp(name, "COMMAND") == 0)
            rep = "*4\r\n*0\r\n*0\r\n*0\r\n*0\r\n";
        else if (strcasecmp(name, "CLUSTER") == 0)
            rep = "-ERR This instance has cluster support disabled\r\n";
        if (!rep)
            break;
        if (write(c, rep, strlen(rep)) < 0)
            _exit(2);
        if (--answers == 0)           /* closed right after that answer */
            break;
    }
    while (more > 0) {
        struct pollfd pf = { c, POLLIN, 0 };
        if (poll(&pf, 1, 300) <= 0)
            break;
        ssize_t got = read(c, buf, sizeof buf < more ? sizeof buf : more);
        if (got <= 0)
            break;
        more -= (size_t)got;
    }
    close(c);
}

/* ----------------------------------------------------------- the cases */

static emq_db *make_db(const char *dir)
{
    char path[512], id[EMQ_ID_SIZE];
    emq_db *db = NULL;
    static char payload[1 << 20];
    memset(payload, 'x', sizeof payload);
    snprintf(path, sizeof path, "%s/f.db", dir);
    if (emq_open(path, NULL, &db) != EMQ_OK)
        return NULL;
    for (int i = 0; i < 8; i++)        /* 8 MiB: more than a socket holds */
        if (emq_mint(db, "JOB", id) != EMQ_OK ||
            emq_enqueue(db, "q", id, payload, sizeof payload) !=
                EMQ_ENQUEUED)
            return NULL;
    return db;
}

/* In a child: connect to the fake server on `sock`, which has forked
 * `srv` (it closes after `more` bytes of the push), push, and report. */
static int push_case(const char *dir, const char *label, size_t more)
{
    char sock[512], err[700] = "";
    snprintf(sock, sizeof sock, "%s/%s.sock", dir, label);
    int lfd = listen_on(sock);
    if (lfd < 0) {
        fprintf(stderr, "%s: cannot listen on %s\n", label, sock);
        return 1;
    }
    fflush(stdout);
    pid_t srv = fork();
    if (srv == 0) {
        serve_one(lfd, more, more ? -1 : 1);
        _exit(0);
    }
    close(lfd);
    emq_db *db = make_db(dir);
    emq_remote *r = NULL;
    emq_remote_options o;
    emq_remote_options_init(&o);
    o.cluster = EMQ_CLUSTER_OFF;
    o.io_timeout_ms = 10000;          /* a hang is a failure, not a wait */
    int rc = db ? emq_remote_connect(sock, &o, &r, err, sizeof err) : -1;
    CHECK(rc == EMQ_OK, "%s: connect: %d %s", label, rc, err);
    if (rc != EMQ_OK)
        return 1;
    if (more == 0) {                  /* closed before the push writes */
        int st;
        waitpid(srv, &st, 0);
    }
    emq_push_options po;
    emq_push_report rep;
    memset(&rep, 0, sizeof rep);
    emq_push_options_init(&po);
    rc = emq_push(db, r, &po, &rep);
    const char *m = emq_errmsg(db);
    printf("%s: emq_push -> %d: %s\n", label, rc, m);
    fflush(stdout);
    CHECK(rc == EMQ_EIO || rc == EMQ_EREMOTE, "%s: a typed error, got %d",
          label, rc);
    CHECK(strstr(m, sock) != NULL, "%s: the message names the server %s: %s",
          label, sock, m);
    /* the disposition and the mask are as they were: SIG_DFL, unblocked,
     * nothing pending */
    struct sigaction sa;
    sigset_t mask, pend;
    sigaction(SIGPIPE, NULL, &sa);
    pthread_sigmask(SIG_BLOCK, NULL, &mask);
    sigpending(&pend);
    CHECK(sa.sa_handler == SIG_DFL, "%s: SIGPIPE disposition changed", label);
    CHECK(!sigismember(&mask, SIGPIPE), "%s: SIGPIPE left blocked", label);
    CHECK(!sigismember(&pend, SIGPIPE), "%s: SIGPIPE left pending", label);
    emq_push_report_free(&rep);
    emq_remote_close(r);
    emq_close(db);
    if (more) {
        int st;
        waitpid(srv, &st, 0);
    }
    return failures ? 1 : 0;
}

static int run_child(const char *dir, const char *label, size_t more)
{
    fflush(stdout);                   /* nothing printed twice by the child */
    pid_t pid = fork();
    int st = 0;
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        _exit(push_case(dir, label, more));
    }
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st)) {
        fprintf(stderr, "FAIL %s: the process died by signal %d%s\n", label,
                WTERMSIG(st), WTERMSIG(st) == SIGPIPE ? " (SIGPIPE)" : "");
        return 1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "FAIL %s: exit %d\n", label, WEXITSTATUS(st));
        return 1;
    }
    printf("%s: survived with the typed error\n", label);
    return 0;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_DFL);
    if (argc == 3 && strcmp(argv[1], "serve") == 0) {
        int lfd = listen_on(argv[2]);
        if (lfd < 0)
            return 2;
        printf("ready\n");
        fflush(stdout);
        serve_one(lfd, 0, 2);
        close(lfd);
        return 0;
    }
    if (argc != 3 || strcmp(argv[1], "lib") != 0) {
        fprintf(stderr, "usage: transfer_faults lib DIR | serve SOCK\n");
        return 2;
    }
    if (!emq_remote_available()) {
        printf("SKIP: built without hiredis\n");
        return 77;
    }
    int bad = 0;
    char d1[600], d2[600];
    snprintf(d1, sizeof d1, "%s/a", argv[2]);
    snprintf(d2, sizeof d2, "%s/b", argv[2]);
    if (mkdir(d1, 0700) != 0 || mkdir(d2, 0700) != 0)
        return 2;
    bad += run_child(d1, "closed-after-probe", 0);
    bad += run_child(d2, "closed-at-the-first-command", 64 * 1024);
    return bad ? 1 : 0;
}
