/*
 * server.c — the peer's private redis-server (or valkey-server): started on a
 * free loopback port in a fresh directory, pinned to one CPU (the in-process
 * form of `taskset -c N`), with no persistence or with appendonly yes +
 * appendfsync always, and stopped by its own pid.
 *
 * Rules: the server binds 127.0.0.1 only and keeps its files in its own
 * directory, which is removed when it stops; we only ever signal the pid we
 * forked. AOF rewrites are disabled so the AOF size is what the workload
 * wrote. REDIS_SERVER overrides the binary.
 */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

static char server_path[1100];

static int executable(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode) && access(p, X_OK) == 0;
}

const char *bench_server_binary(void)
{
    const char *env = getenv("REDIS_SERVER"), *path = getenv("PATH");
    static const char *const names[] = {"valkey-server", "redis-server"};
    char dir[1024];
    size_t i;
    if (env && env[0]) return executable(env) ? env : NULL;
    if (!path) path = "/usr/bin:/bin";
    for (i = 0; i < 2; i++) {
        const char *p = path;
        while (*p) {
            size_t n = strcspn(p, ":");
            if (n > 0 && n < sizeof dir) {
                memcpy(dir, p, n);
                dir[n] = 0;
                snprintf(server_path, sizeof server_path, "%s/%s", dir,
                         names[i]);
                if (executable(server_path)) return server_path;
            }
            p += n;
            if (*p == ':') p++;
        }
    }
    return NULL;
}

/* A port the kernel just handed out on 127.0.0.1 (free a moment ago). */
static int free_port(void)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;
    if (fd < 0) return -1;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* 1 once something accepts connections on 127.0.0.1:port. */
static int accepting(int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), ok;
    if (fd < 0) return 0;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

static int launch(bench_server *sv, const char *bin, int cpu)
{
    char port[16], log[600];
    int pid, n, status;
    snprintf(port, sizeof port, "%d", sv->port);
    snprintf(log, sizeof log, "%s/server.log", sv->dir);
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (cpu >= 0) bench_pin(cpu);
        execl(bin, bin, "--port", port, "--bind", "127.0.0.1",
              "--unixsocket", sv->sock, "--unixsocketperm", "700",
              "--protected-mode", "yes", "--save", "", "--dir", sv->dir,
              "--logfile", log, "--daemonize", "no",
              "--appendonly", sv->persist ? "yes" : "no",
              "--appendfsync", "always",
              "--auto-aof-rewrite-percentage", "0", (char *)NULL);
        _exit(127);
    }
    for (n = 0; n < 100; n++) {
        if (waitpid(pid, &status, WNOHANG) == pid) return -1; /* exited */
        if (accepting(sv->port)) {
            sv->pid = pid;
            return 0;
        }
        usleep(50000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

int bench_server_start(bench_server *sv, const char *parent, int persist,
                       int cpu)
{
    const char *bin = bench_server_binary();
    int tries;
    memset(sv, 0, sizeof *sv);
    sv->persist = persist;
    if (!bin) {
        fprintf(stderr, "emqlite-bench: no redis-server or valkey-server\n");
        return -1;
    }
    snprintf(sv->dir, sizeof sv->dir, "%s/server.XXXXXX", parent);
    if (mkdtemp(sv->dir) == NULL) {
        fprintf(stderr, "emqlite-bench: mkdtemp %s: %s\n", sv->dir,
                strerror(errno));
        return -1;
    }
    /* The server runs in its --dir, so a relative one (a relative --dir
     * of the program) would name its log file from the wrong place. */
    {
        char *abs = realpath(sv->dir, NULL);
        if (abs && strlen(abs) < sizeof sv->dir)
            memcpy(sv->dir, abs, strlen(abs) + 1);
        free(abs);
    }
    snprintf(sv->sock, sizeof sv->sock, "%s/s.sock", sv->dir);
    for (tries = 0; tries < 10; tries++) {
        if ((sv->port = free_port()) < 0) break;
        if (launch(sv, bin, cpu) == 0) return 0;
    }
    fprintf(stderr, "emqlite-bench: could not start %s (see %s/server.log)\n",
            bin, sv->dir);
    return -1;
}

void bench_rmrf(const char *dir)
{
    char cmd[1200];
    /* Our own mkdtemp directory: a plain recursive delete. */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "emqlite-bench: could not remove %s\n", dir);
}

void bench_server_stop(bench_server *sv)
{
    int status;
    if (sv->pid > 0) {
        kill(sv->pid, SIGTERM);
        waitpid(sv->pid, &status, 0);
        sv->pid = 0;
    }
    if (sv->dir[0]) {
        bench_rmrf(sv->dir);
        sv->dir[0] = 0;
    }
}
