/*
 * workload.c — the four workloads, identical for every system: single
 * enqueues, enqueue_many batches, full cycles (enqueue + claim + complete),
 * and steady cycles at a fixed queue depth.
 *
 * Rules: only the transitions are inside the timed region; the checks that
 * make a run trustworthy (every verdict, FIFO order of claims, the pending
 * count before and after) run outside it. Every id comes from bench_id(seq),
 * seq strictly increasing, so the job a claim must return is known.
 */
#include <stdlib.h>
#include <string.h>
#include "bench.h"

static int expect_pending(bsys *s, int64_t want, const char *when)
{
    int64_t n = -1;
    if (s->ops->pending(s, &n) < 0) return -1;
    if (n != want)
        return bench_err(s, "%s: %s: %lld pending, expected %lld", s->name,
                         when, (long long)n, (long long)want);
    return 0;
}

int bench_w_enqueue(bsys *s, uint64_t *seq, int64_t n, bench_phase *out)
{
    char id[EMQ_ID_SIZE];
    int64_t before = 0, i;
    double t0;
    memset(out, 0, sizeof *out);
    if (s->ops->pending(s, &before) < 0) return -1;
    t0 = bench_now();
    for (i = 0; i < n; i++) {
        bench_id((*seq)++, id);
        if (s->ops->enqueue(s, id) < 0) return -1;
    }
    out->rate = (double)n / (bench_now() - t0);
    out->ops = n;
    out->next_seq = *seq;
    return expect_pending(s, before + n, "after enqueue");
}

int bench_w_many(bsys *s, uint64_t *seq, int64_t batches, bench_phase *out)
{
    bench_item *it = malloc(BENCH_BATCH * sizeof *it);
    int64_t before = 0, b;
    double elapsed = 0, t0;
    size_t i;
    int rc = -1;
    memset(out, 0, sizeof *out);
    if (!it) return bench_err(s, "out of memory");
    if (s->ops->pending(s, &before) < 0) goto done;
    for (b = 0; b < batches; b++) {
        for (i = 0; i < BENCH_BATCH; i++) bench_id((*seq)++, it[i].id);
        t0 = bench_now();   /* minting ids is the caller's, not timed */
        if (s->ops->enqueue_many(s, it, BENCH_BATCH) < 0) goto done;
        elapsed += bench_now() - t0;
    }
    out->ops = batches * BENCH_BATCH;
    out->rate = (double)out->ops / elapsed;
    out->next_seq = *seq;
    rc = expect_pending(s, before + out->ops, "after enqueue_many");
done:
    free(it);
    return rc;
}

int bench_w_cycle(bsys *s, uint64_t *seq, int64_t n, bench_phase *out)
{
    char id[EMQ_ID_SIZE], got[EMQ_ID_SIZE];
    double *lat = malloc((size_t)(n > 0 ? n : 1) * sizeof *lat), t0, t1;
    int64_t i, token;
    int rc = -1;
    memset(out, 0, sizeof *out);
    if (!lat) return bench_err(s, "out of memory");
    if (expect_pending(s, 0, "before cycles") < 0) goto done;
    t0 = bench_now();
    for (i = 0; i < n; i++) {
        bench_id((*seq)++, id);
        if (s->ops->enqueue(s, id) < 0) goto done;
        t1 = bench_now();
        rc = s->ops->claim(s, got, &token);
        lat[i] = (bench_now() - t1) * 1e6;
        if (rc != 0) {
            if (rc > 0) bench_err(s, "%s: claim found nothing", s->name);
            rc = -1;
            goto done;
        }
        rc = -1;
        if (strcmp(got, id) != 0 || token != 1) {
            bench_err(s, "%s: claimed %s token %lld, expected %s token 1",
                      s->name, got, (long long)token, id);
            goto done;
        }
        if (s->ops->complete(s, got, token) < 0) goto done;
    }
    out->rate = (double)n / (bench_now() - t0);
    out->ops = n;
    out->next_seq = *seq;
    bench_lat_summary(lat, (size_t)n, &out->claim);
    rc = expect_pending(s, 0, "after cycles");
done:
    free(lat);
    return rc;
}

int bench_w_depth(bsys *s, uint64_t *seq, uint64_t *oldest, int64_t depth,
                  int64_t n, bench_phase *out)
{
    bench_item *it = malloc(BENCH_BATCH * sizeof *it);
    double *lat = malloc((size_t)(n > 0 ? n : 1) * sizeof *lat), t0, t1;
    char id[EMQ_ID_SIZE], want[EMQ_ID_SIZE];
    int64_t have = 0, i, token;
    size_t k, m;
    int rc = -1;
    memset(out, 0, sizeof *out);
    if (!it || !lat) {
        bench_err(s, "out of memory");
        goto done;
    }
    /* Top up to `depth` with enqueue_many (not timed). */
    if (s->ops->pending(s, &have) < 0) goto done;
    while (have < depth) {
        m = (size_t)(depth - have < BENCH_BATCH ? depth - have : BENCH_BATCH);
        for (k = 0; k < m; k++) bench_id((*seq)++, it[k].id);
        if (s->ops->enqueue_many(s, it, m) < 0) goto done;
        have += (int64_t)m;
    }
    if (expect_pending(s, depth, "after top-up") < 0) goto done;
    if (s->ops->settle(s) < 0 || s->ops->footprint(s, &out->foot) < 0)
        goto done;
    /* Steady state: claim the oldest, complete it, enqueue one. */
    t0 = bench_now();
    for (i = 0; i < n; i++) {
        t1 = bench_now();
        rc = s->ops->claim(s, id, &token);
        lat[i] = (bench_now() - t1) * 1e6;
        if (rc != 0) {
            if (rc > 0) bench_err(s, "%s: claim found nothing", s->name);
            rc = -1;
            goto done;
        }
        rc = -1;
        bench_id((*oldest)++, want);
        if (strcmp(id, want) != 0) {
            bench_err(s, "%s: depth %lld: claimed %s, expected %s (FIFO)",
                      s->name, (long long)depth, id, want);
            goto done;
        }
        if (s->ops->complete(s, id, token) < 0) goto done;
        bench_id((*seq)++, id);
        if (s->ops->enqueue(s, id) < 0) goto done;
    }
    out->rate = (double)n / (bench_now() - t0);
    out->ops = n;
    out->depth = depth;
    out->next_seq = *seq;
    bench_lat_summary(lat, (size_t)n, &out->claim);
    rc = expect_pending(s, depth, "after steady cycles");
done:
    free(it);
    free(lat);
    return rc;
}
