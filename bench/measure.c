/*
 * measure.c — the benchmark's measuring instruments: the monotonic clock,
 * latency percentiles, peak RSS (VmHWM from /proc), CPU pinning (the
 * in-process equivalent of `taskset -c N`), file and directory sizes, and the
 * ids and payload every system is fed.
 *
 * Rule: nothing here allocates per operation; the workloads call bench_now()
 * around single transitions, so it must stay a bare clock_gettime.
 */
#include <dirent.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

const unsigned char bench_payload[BENCH_PAYLOAD] =
    "emqlite-bench payload: one hundred bytes of job data, the same for "
    "emqlite, raw SQL and the peer....";

int bench_default_ckpt(void)
{
    emq_options o;
    emq_options_init(&o);
    return o.checkpoint_frames;
}

int bench_err(bsys *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return -1;
}

void bench_id(uint64_t seq, char out[EMQ_ID_SIZE])
{
    /* (1 << 40) + seq keeps every id 11 base62 digits wide, so byte order
     * is numeric order and the FIFO order of every system is seq order. */
    emq_id_encode("JOB", (UINT64_C(1) << 40) + seq, out);
}

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_lat_summary(double *us, size_t n, bench_lat *out)
{
    double sum = 0;
    size_t i;
    memset(out, 0, sizeof *out);
    if (n == 0) return;
    qsort(us, n, sizeof *us, cmp_double);
    for (i = 0; i < n; i++) sum += us[i];
    out->mean = sum / (double)n;
    /* Nearest-rank percentiles. */
    out->p50 = us[(n * 50 + 99) / 100 - 1];
    out->p99 = us[(n * 99 + 99) / 100 - 1];
}

int64_t bench_hwm_kb(int pid)
{
    char path[64], line[256];
    int64_t kb = -1;
    FILE *f;
    if (pid > 0) snprintf(path, sizeof path, "/proc/%d/status", pid);
    else snprintf(path, sizeof path, "/proc/self/status");
    if ((f = fopen(path, "r")) == NULL) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kb = strtoll(line + 6, NULL, 10);
            break;
        }
    fclose(f);
    return kb;
}

int bench_hwm_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    int rc;
    if (f == NULL) return -1;
    rc = fputs("5", f) < 0;
    rc |= fclose(f) != 0;
    return rc ? -1 : 0;
}

int bench_ncpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    return CPU_COUNT(&set);
}

int bench_pin(int cpu)
{
    cpu_set_t set;
    long i, n = sysconf(_SC_NPROCESSORS_ONLN);
    CPU_ZERO(&set);
    if (cpu < 0) {
        for (i = 0; i < n && i < CPU_SETSIZE; i++) CPU_SET(i, &set);
    } else {
        CPU_SET(cpu, &set);
    }
    return sched_setaffinity(0, sizeof set, &set);
}

int64_t bench_file_size(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return -1;
    return (int64_t)sb.st_size;
}

int64_t bench_dir_size(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int64_t total = 0;
    char sub[1024];
    struct stat sb;
    if (d == NULL) return -1;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        if (lstat(sub, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode)) {
            int64_t x = bench_dir_size(sub);
            if (x > 0) total += x;
        } else if (S_ISREG(sb.st_mode)) {
            total += (int64_t)sb.st_size;
        }
    }
    closedir(d);
    return total;
}
