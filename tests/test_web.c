/*
 * test_web.c — suite "web": the dashboard's HTTP handler (web/web.c,
 * api/emqlite_web.h) driven with requests and no socket: the app and its
 * security headers, the refusals (404, 400 naming the rule, 405, 413,
 * traversal, 401, CSRF, read-only), keyset paging and payload-prefix
 * search, the job page (escaping, binary payloads, flows), every action
 * and its effect, lanes, streams, events and the per-minute series.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "tengine.h"
#include "emqlite_web.h"
#include "web_int.h"

#define G1 "PRT0KHTOWnGLuC"

static tclock clk;
static emq_db *db;
static emq_web *web;
static emq_web_response rs;

static void setup(void)
{
    db = topen(&clk);
    ck_assert_int_eq(emq_web_new(db, NULL, &web), EMQ_OK);
    memset(&rs, 0, sizeof rs);
}

static void teardown(void)
{
    emq_web_response_clear(&rs);
    emq_web_free(web);
    web = NULL;
    emq_close(db);
    db = NULL;
}

/* One request on `w`; the response lands in rs (the last one freed). */
static int req_on(emq_web *w, const char *method, const char *path,
                  const char *query, const emq_web_header *h, size_t nh,
                  size_t body_len)
{
    emq_web_request q = {method, path, query, h, nh, NULL, body_len};
    emq_web_response_clear(&rs);
    ck_assert_int_eq(emq_web_handle(w, &q, &rs), EMQ_OK);
    ck_assert_ptr_nonnull(rs.body);
    return rs.status;
}

static int get(const char *path, const char *query)
{
    return req_on(web, "GET", path, query, NULL, 0, 0);
}

static int post_on(emq_web *w, const char *path)
{
    emq_web_header h[2] = {{"X-CSRF-Token", emq_web_csrf(w)},
                           {"Host", "127.0.0.1:8080"}};
    return req_on(w, "POST", path, NULL, h, 2, 0);
}

static int post(const char *path) { return post_on(web, path); }

static const char *hdr(const char *name)
{
    for (size_t i = 0; i < rs.nheaders; i++)
        if (strcasecmp(rs.headers[i].name, name) == 0)
            return rs.headers[i].value;
    return NULL;
}

static int has(const char *s) { return strstr(rs.body, s) != NULL; }

static void job(const char *q, const char *id, const char *payload)
{
    ck_assert_int_eq(emq_enqueue(db, q, id, payload, strlen(payload)),
                     EMQ_ENQUEUED);
}

/* A dead job: claimed once and retried with a cap of one attempt. */
static void dead_job(const char *q, const char *id)
{
    emq_job j;
    job(q, id, "doomed");
    ck_assert_int_eq(emq_claim(db, q, 30000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, id);
    ck_assert_int_eq(emq_retry(db, q, id, j.attempts, 0, 1, "boom", 4),
                     EMQ_DEAD);
    emq_job_clear(&j);
}

START_TEST(serves_the_app_with_security_headers)
{
    ck_assert_int_eq(get("/", NULL), 200);
    ck_assert(has("<script src=\"assets/app.js\""));
    ck_assert_str_eq(hdr("Content-Type"), "text/html; charset=utf-8");
    ck_assert_ptr_nonnull(strstr(hdr("Content-Security-Policy"),
                                 "default-src 'none'"));
    ck_assert_ptr_nonnull(strstr(hdr("Content-Security-Policy"),
                                 "frame-ancestors 'none'"));
    ck_assert_str_eq(hdr("X-Content-Type-Options"), "nosniff");
    ck_assert_str_eq(hdr("X-Frame-Options"), "DENY");
    ck_assert_str_eq(hdr("Referrer-Policy"), "no-referrer");
    ck_assert_int_eq(get("/assets/app.js", NULL), 200);
    ck_assert(has("textContent"));
    ck_assert_ptr_null(strstr(rs.body, "innerHTML"));
    ck_assert_str_eq(hdr("Content-Type"), "text/javascript; charset=utf-8");
    ck_assert_int_eq(get("/assets/app.css", NULL), 200);
    /* errors carry the headers too */
    ck_assert_int_eq(get("/nope", NULL), 404);
    ck_assert_str_eq(hdr("X-Frame-Options"), "DENY");
}
END_TEST

START_TEST(refuses_unknown_paths_and_traversal)
{
    ck_assert_int_eq(get("/assets/secret.txt", NULL), 404);
    ck_assert_int_eq(get("/api/nothing", NULL), 404);
    ck_assert_int_eq(get("/api/queues/mail/nothing", NULL), 404);
    ck_assert_int_eq(get("/api/queues/mail/jobs/JOB00000000001/x", NULL),
                     404);
    ck_assert_int_eq(get("/assets/../web.c", NULL), 400);
    ck_assert(has("the path may not hold"));
    ck_assert_int_eq(get("/assets/%2e%2e/web.c", NULL), 400);
    ck_assert_int_eq(get("/assets/..", NULL), 400);
    ck_assert_int_eq(get("/assets\\app.js", NULL), 400);
    ck_assert_int_eq(get("relative", NULL), 400);
    ck_assert_int_eq(req_on(web, "DELETE", "/api/overview", NULL, NULL, 0,
                            0), 405);
    ck_assert_str_eq(hdr("Allow"), "GET, HEAD, POST");
}
END_TEST

START_TEST(bad_names_ids_and_parameters_are_400_with_the_rule)
{
    ck_assert_int_eq(get("/api/queues/emq", NULL), 400);
    ck_assert(has("a queue name is 1 to 128 characters"));
    ck_assert_int_eq(get("/api/queues/bad name/jobs", NULL), 400);
    ck_assert(has("queue \\u0027bad name\\u0027: a queue name is"));
    ck_assert_int_eq(get("/api/queues/mail/jobs/JOB1", NULL), 400);
    ck_assert(has("an id is 14 characters"));
    ck_assert(has("JOB1"));
    ck_assert_int_eq(get("/api/queues/mail/jobs", "state=done"), 400);
    ck_assert(has("state must be pending, active, scheduled, dead, completed or lane"));
    ck_assert_int_eq(get("/api/queues/mail/jobs", "limit=0"), 400);
    ck_assert(has("limit must be an integer from 1 to 500"));
    ck_assert_int_eq(get("/api/queues/mail/jobs", "limit=12x"), 400);
    ck_assert_int_eq(get("/api/queues/mail/jobs", "after=JOB00000000001"),
                     400);
    ck_assert(has("SCORE:ID"));
    ck_assert_int_eq(get("/api/queues/mail/jobs", "after=0:JOB%00"), 400);
    ck_assert_int_eq(get("/api/queues/mail/jobs", "state=lane"), 400);
    ck_assert(has("group"));
    ck_assert_int_eq(get("/api/queues/mail/jobs", "state=lane&group=x"), 400);
    ck_assert_int_eq(get("/api/events", "queue=a%2Fb"), 400);
    ck_assert_int_eq(post("/api/queues/mail/lanes/nope/pause"), 400);
    ck_assert_int_eq(post("/api/queues/mail/explode"), 404);
    ck_assert(has("pause, resume, requeue-dead"));
}
END_TEST

START_TEST(oversize_bodies_are_413)
{
    ck_assert_int_eq(req_on(web, "POST", "/api/queues/mail/pause", NULL,
                            NULL, 0, EMQ_WEB_MAX_BODY + 1), 413);
    ck_assert(has("65536"));
    /* a smaller limit of the caller's */
    emq_web_options o;
    emq_web *w2;
    emq_web_options_init(&o);
    o.max_body = 10;
    ck_assert_int_eq(emq_web_new(db, &o, &w2), EMQ_OK);
    ck_assert_int_eq(req_on(w2, "GET", "/", NULL, NULL, 0, 11), 413);
    ck_assert_int_eq(req_on(w2, "GET", "/", NULL, NULL, 0, 10), 200);
    emq_web_free(w2);
}
END_TEST

START_TEST(actions_need_the_csrf_token_and_origin)
{
    emq_stats st;
    emq_web_header bad[1] = {{"X-CSRF-Token", "0000"}};
    ck_assert_int_eq(req_on(web, "POST", "/api/queues/mail/pause", NULL,
                            NULL, 0, 0), 403);
    ck_assert(has("X-CSRF-Token"));
    ck_assert_int_eq(req_on(web, "POST", "/api/queues/mail/pause", NULL,
                            bad, 1, 0), 403);
    emq_web_header cross[3] = {{"X-CSRF-Token", emq_web_csrf(web)},
                               {"Host", "127.0.0.1:8080"},
                               {"Origin", "http://evil.example"}};
    ck_assert_int_eq(req_on(web, "POST", "/api/queues/mail/pause", NULL,
                            cross, 3, 0), 403);
    ck_assert_int_eq(emq_stats_get(db, "mail", &st), EMQ_OK);
    ck_assert_int_eq(st.paused, 0);
    cross[2].value = "http://127.0.0.1:8080";
    ck_assert_int_eq(req_on(web, "POST", "/api/queues/mail/pause", NULL,
                            cross, 3, 0), 200);
    ck_assert_int_eq(emq_stats_get(db, "mail", &st), EMQ_OK);
    ck_assert_int_eq(st.paused, 1);
    /* the session hands the token to the page */
    ck_assert_int_eq(get("/api/session", NULL), 200);
    ck_assert(has(emq_web_csrf(web)));
    ck_assert_uint_eq(strlen(emq_web_csrf(web)), 64);
}
END_TEST

START_TEST(without_a_token_only_loopback_hosts_are_answered)
{
    const char *ok[] = {"127.0.0.1:8080", "127.0.0.1", "localhost:80",
                        "LOCALHOST", "[::1]:8080", "[::1]", "127.1.2.3:1"};
    const char *bad[] = {"evil.example:8080", "127.0.0.1.evil.example",
                         "10.0.0.1:8080", "[::2]:80", "localhost.evil",
                         "127.0.0.1:80x", ""};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        emq_web_header h[1] = {{"Host", ok[i]}};
        ck_assert_int_eq(req_on(web, "GET", "/api/session", NULL, h, 1, 0),
                         200);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        emq_web_header h[1] = {{"Host", bad[i]}};
        ck_assert_int_eq(req_on(web, "GET", "/api/session", NULL, h, 1, 0),
                         403);
        ck_assert(has("not a loopback name"));
    }
    /* with a token, any name (the token is the guard) */
    emq_web_options o;
    emq_web *t;
    emq_web_options_init(&o);
    o.token = "tok";
    ck_assert_int_eq(emq_web_new(db, &o, &t), EMQ_OK);
    emq_web_header h[2] = {{"Host", "dash.example:443"},
                           {"Authorization", "Bearer tok"}};
    ck_assert_int_eq(req_on(t, "GET", "/api/session", NULL, h, 2, 0), 200);
    emq_web_free(t);
}
END_TEST

START_TEST(read_only_refuses_every_action)
{
    emq_web_options o;
    emq_web *ro;
    emq_stats st;
    emq_web_options_init(&o);
    o.read_only = 1;
    ck_assert_int_eq(emq_web_new(db, &o, &ro), EMQ_OK);
    dead_job("mail", "JOB00000000001");
    ck_assert_int_eq(post_on(ro, "/api/queues/mail/pause"), 403);
    ck_assert(has("read-only"));
    ck_assert_int_eq(post_on(ro, "/api/queues/mail/requeue-dead"), 403);
    ck_assert_int_eq(post_on(ro, "/api/queues/mail/jobs/JOB00000000001/"
                                 "retry"), 403);
    ck_assert_int_eq(emq_stats_get(db, "mail", &st), EMQ_OK);
    ck_assert_int_eq(st.paused, 0);
    ck_assert_int_eq(st.dead, 1);
    ck_assert_int_eq(req_on(ro, "GET", "/api/session", NULL, NULL, 0, 0),
                     200);
    ck_assert(has("\"read_only\":true"));
    ck_assert_int_eq(req_on(ro, "GET", "/api/overview", NULL, NULL, 0, 0),
                     200);
    emq_web_free(ro);
}
END_TEST

START_TEST(a_token_guards_every_path)
{
    emq_web_options o;
    emq_web *t;
    emq_web_options_init(&o);
    o.token = "s3cret-token";
    ck_assert_int_eq(emq_web_new(db, &o, &t), EMQ_OK);
    ck_assert_int_eq(req_on(t, "GET", "/", NULL, NULL, 0, 0), 401);
    ck_assert_int_eq(req_on(t, "GET", "/api/overview", NULL, NULL, 0, 0),
                     401);
    ck_assert_int_eq(req_on(t, "GET", "/", "token=wrong", NULL, 0, 0), 401);
    ck_assert_int_eq(req_on(t, "GET", "/", "token=s3cret-token", NULL, 0, 0),
                     303);
    ck_assert_str_eq(hdr("Location"), "./");
    ck_assert_ptr_nonnull(strstr(hdr("Set-Cookie"), "HttpOnly"));
    ck_assert_ptr_nonnull(strstr(hdr("Set-Cookie"), "SameSite=Strict"));
    emq_web_header c[1] = {{"Cookie", "a=b; emqlite_token=s3cret-token"}};
    ck_assert_int_eq(req_on(t, "GET", "/api/overview", NULL, c, 1, 0), 200);
    emq_web_header a[1] = {{"Authorization", "Bearer s3cret-token"}};
    ck_assert_int_eq(req_on(t, "GET", "/api/overview", NULL, a, 1, 0), 200);
    a[0].value = "Bearer s3cret-tokem";
    ck_assert_int_eq(req_on(t, "GET", "/api/overview", NULL, a, 1, 0), 401);
    emq_web_free(t);
    o.token = "has space";
    ck_assert_int_eq(emq_web_new(db, &o, &t), EMQ_EINVAL);
    ck_assert_ptr_null(t);
}
END_TEST

/* The ids of a page's body, in order, into ids[] (returns how many). */
static int page_ids(char ids[][EMQ_ID_SIZE], int max)
{
    int n = 0;
    const char *p = rs.body;
    while ((p = strstr(p, "{\"id\":\"")) != NULL && n < max) {
        p += 7;
        memcpy(ids[n], p, EMQ_ID_LEN);
        ids[n][EMQ_ID_LEN] = '\0';
        n++;
    }
    return n;
}

/* The "next" cursor of the last page, or "" at the end. */
static void next_of(char *out, size_t cap)
{
    const char *p = strstr(rs.body, "\"next\":");
    ck_assert_ptr_nonnull(p);
    p += 7;
    if (*p != '"') { out[0] = '\0'; return; }
    size_t n = strcspn(p + 1, "\"");
    ck_assert_uint_lt(n, cap);
    memcpy(out, p + 1, n);
    out[n] = '\0';
}

START_TEST(pages_a_set_by_keyset_without_gaps_or_repeats)
{
    char ids[130][EMQ_ID_SIZE], got[200][EMQ_ID_SIZE], cur[64], q[128];
    int total = 0, pages = 0;
    for (int i = 0; i < 120; i++) {
        ck_assert_int_eq(emq_mint(db, "JOB", ids[i]), EMQ_OK);
        job("mail", ids[i], i % 2 ? "b-odd" : "a-even");
    }
    qsort(ids, 120, EMQ_ID_SIZE, (int (*)(const void *, const void *))strcmp);
    cur[0] = '\0';
    do {
        snprintf(q, sizeof q, "state=pending&limit=50%s%s",
                 cur[0] ? "&after=" : "", cur);
        ck_assert_int_eq(get("/api/queues/mail/jobs", q), 200);
        total += page_ids(got + total, 200 - total);
        next_of(cur, sizeof cur);
        pages++;
    } while (cur[0] && pages < 10);
    ck_assert_int_eq(pages, 3);
    ck_assert_int_eq(total, 120);
    for (int i = 0; i < 120; i++) ck_assert_str_eq(got[i], ids[i]);
    /* from the tail */
    ck_assert_int_eq(get("/api/queues/mail/jobs", "limit=2&desc=1"), 200);
    ck_assert_int_eq(page_ids(got, 2), 2);
    ck_assert_str_eq(got[0], ids[119]);
    ck_assert_str_eq(got[1], ids[118]);
    /* a page that ends exactly at the set's end says so */
    snprintf(q, sizeof q, "limit=5&after=0:%s", ids[114]);
    ck_assert_int_eq(get("/api/queues/mail/jobs", q), 200);
    ck_assert_int_eq(page_ids(got, 10), 5);
    ck_assert(has("\"next\":null"));
    /* payload-prefix search: only the matches, in order */
    ck_assert_int_eq(get("/api/queues/mail/jobs", "prefix=b-&limit=100"),
                     200);
    ck_assert_int_eq(page_ids(got, 200), 60);
    ck_assert(!has("a-even"));
    ck_assert(has("\"scanned\":120"));
    ck_assert_int_eq(get("/api/queues/mail/jobs", "prefix=zzz"), 200);
    ck_assert_int_eq(page_ids(got, 200), 0);
}
END_TEST

START_TEST(pages_scored_sets_by_score_then_id)
{
    char a[EMQ_ID_SIZE], b[EMQ_ID_SIZE], c[EMQ_ID_SIZE], ids[4][EMQ_ID_SIZE];
    char cur[64], q[96];
    ck_assert_int_eq(emq_mint(db, "JOB", a), EMQ_OK);
    ck_assert_int_eq(emq_mint(db, "JOB", b), EMQ_OK);
    ck_assert_int_eq(emq_mint(db, "JOB", c), EMQ_OK);
    ck_assert_int_eq(emq_enqueue_at(db, "mail", a, "x", 1, T0 + 5000),
                     EMQ_SCHEDULED);
    ck_assert_int_eq(emq_enqueue_at(db, "mail", b, "x", 1, T0 + 1000),
                     EMQ_SCHEDULED);
    ck_assert_int_eq(emq_enqueue_at(db, "mail", c, "x", 1, T0 + 1000),
                     EMQ_SCHEDULED);
    ck_assert_int_eq(get("/api/queues/mail/jobs", "state=scheduled&limit=1"),
                     200);
    ck_assert_int_eq(page_ids(ids, 4), 1);
    next_of(cur, sizeof cur);
    snprintf(q, sizeof q, "state=scheduled&limit=5&after=%s", cur);
    ck_assert_int_eq(get("/api/queues/mail/jobs", q), 200);
    ck_assert_int_eq(page_ids(ids + 1, 3), 2);
    ck_assert_str_eq(ids[2], a);        /* the latest run-at comes last */
    ck_assert_str_ne(ids[0], ids[1]);
    ck_assert(strcmp(ids[0], ids[1]) < 0); /* equal run-ats by id */
}
END_TEST

START_TEST(the_job_page_escapes_and_shows_binary_payloads)
{
    ck_assert_int_eq(emq_enqueue(db, "mail", "JOB00000000001",
                                 "<img src=x onerror=alert(1)>&'", 30),
                     EMQ_ENQUEUED);
    ck_assert_int_eq(emq_enqueue(db, "mail", "JOB00000000002", "\xff\x00z",
                                 3), EMQ_ENQUEUED);
    ck_assert_int_eq(get("/api/queues/mail/jobs/JOB00000000001", NULL), 200);
    ck_assert_ptr_null(strchr(rs.body, '<'));
    ck_assert_ptr_null(strchr(rs.body, '>'));
    ck_assert_ptr_null(strchr(rs.body, '\''));
    ck_assert(has("\\u003cimg src=x onerror=alert(1)\\u003e\\u0026\\u0027"));
    ck_assert(has("\"state\":\"pending\""));
    ck_assert(has("\"history\":[{\"seq\":1,\"at\":"));
    ck_assert(has("\"kind\":\"enqueued\""));
    ck_assert_int_eq(get("/api/queues/mail/jobs/JOB00000000002", NULL), 200);
    ck_assert(has("\"payload\":{\"b64\":\"/wB6\"}"));
    ck_assert_int_eq(get("/api/queues/mail/jobs", NULL), 200);
    ck_assert_ptr_null(strchr(rs.body, '<'));
    ck_assert_int_eq(get("/api/queues/mail/jobs/JOB00000000009", NULL), 404);
    ck_assert(has("no job JOB00000000009 in queue mail"));
}
END_TEST

/* The job page tells a job's story from the history: a dead job's
 * entries with its error and who failed it; a completed job, gone from the
 * keyspace, from its kept record (payload, result) with its history; and
 * the session says what the file records. */
START_TEST(the_job_page_shows_history_and_kept_jobs)
{
    emq_job j;
    emq_history_config c;
    dead_job("mail", "JOB00000000001");
    ck_assert_int_eq(get("/api/queues/mail/jobs/JOB00000000001", NULL), 200);
    ck_assert(has("\"state\":\"dead\""));
    ck_assert(has("{\"seq\":1,\"at\":"));
    ck_assert(has("\"kind\":\"claimed\",\"attempts\":1,"));
    ck_assert(has("\"kind\":\"dead\",\"attempts\":1,"));
    ck_assert(has("\"error\":\"boom\""));
    ck_assert(has("\"pid\":"));
    job("mail", "JOB00000000002", "{\"to\":\"a@b\"}");
    ck_assert_int_eq(emq_claim(db, "mail", 30000, &j), EMQ_OK);
    ck_assert_str_eq(j.id, "JOB00000000002");
    clk.now += 7;
    ck_assert_int_eq(emq_complete_result(db, "mail", j.id, j.attempts, "42",
                                         2), EMQ_OK);
    emq_job_clear(&j);
    ck_assert_int_eq(get("/api/queues/mail/jobs/JOB00000000002", NULL), 200);
    ck_assert(has("\"state\":\"completed\""));
    ck_assert(has("\"row\":false"));
    ck_assert(has("\"kept_at\":"));
    ck_assert(has("\"result\":\"42\""));
    ck_assert(has("\"kind\":\"completed\",\"attempts\":1,"));
    ck_assert_int_eq(get("/api/session", NULL), 200);
    ck_assert(has("\"history\":\"on\""));
    ck_assert_int_eq(emq_history_config_get(db, &c), EMQ_OK);
    c.enabled = EMQ_HISTORY_FAILURES;
    ck_assert_int_eq(emq_history_config_set(db, &c), EMQ_OK);
    ck_assert_int_eq(get("/api/session", NULL), 200);
    ck_assert(has("\"history\":\"failures\""));
    job("mail", "JOB00000000003", "x");
    ck_assert_int_eq(get("/api/queues/mail/jobs/JOB00000000003", NULL), 200);
    ck_assert(has("\"history\":[]"));
}
END_TEST

/* Completed jobs, gone from the keyspace, are listed from their kept
 * records, newest first, paged by the cursor the page answers. */
START_TEST(completed_jobs_are_listed_from_their_kept_records)
{
    const char *ids[3] = {"JOB00000000001", "JOB00000000002",
                          "JOB00000000003"};
    char cur[64], q[96];
    const char *n;
    for (int i = 0; i < 3; i++) {
        emq_job j;
        job("mail", ids[i], i == 1 ? "\xff" : "p");
        ck_assert_int_eq(emq_claim(db, "mail", 30000, &j), EMQ_OK);
        clk.now += 10;
        ck_assert_int_eq(emq_complete(db, "mail", j.id, j.attempts), EMQ_OK);
        emq_job_clear(&j);
    }
    ck_assert_int_eq(get("/api/queues/mail/jobs", "state=completed&limit=2"),
                     200);
    ck_assert_ptr_nonnull(strstr(rs.body, "{\"jobs\":[{\"id\":\"JOB00000000003\""));
    ck_assert(has("{\"id\":\"JOB00000000002\",\"score\":"));
    ck_assert(has("\"preview\":{\"b64\":\"/w==\"}"));
    ck_assert(!has("JOB00000000001"));
    ck_assert_ptr_nonnull(n = strstr(rs.body, "\"next\":\""));
    n += 8;
    snprintf(cur, sizeof cur, "%.*s", (int)(strchr(n, '"') - n), n);
    ck_assert_ptr_nonnull(strstr(cur, ":JOB00000000002"));
    snprintf(q, sizeof q, "state=completed&limit=2&after=%s", cur);
    ck_assert_int_eq(get("/api/queues/mail/jobs", q), 200);
    ck_assert(has("{\"jobs\":[{\"id\":\"JOB00000000001\""));
    ck_assert(has("\"next\":null"));
    ck_assert_int_eq(get("/api/queues/mail/jobs", "state=completed&prefix=p"),
                     400);
    ck_assert(has("takes no prefix or group"));
    ck_assert_int_eq(get("/api/queues/mail/jobs", "state=nope"), 400);
    ck_assert(has("dead, completed or lane"));
}
END_TEST

START_TEST(the_job_page_shows_a_flow)
{
    emq_flow_node kids[2] = {
        {"JOB00000000011", "k1", 2, NULL, EMQ_FLOW_FP, NULL, 0},
        {"JOB00000000012", "k2", 2, NULL, EMQ_FLOW_FP, NULL, 0}};
    emq_flow_node root = {"JOB00000000010", "p", 1, NULL, EMQ_FLOW_FP, kids,
                          2};
    ck_assert_int_eq(emq_flow_add(db, "mail", &root), EMQ_OK);
    ck_assert_int_eq(get("/api/queues/mail/jobs/JOB00000000010", NULL), 200);
    ck_assert(has("\"state\":\"awaiting_children\""));
    ck_assert(has("{\"level\":1,\"id\":\"JOB00000000010\""));
    ck_assert(has("{\"level\":2,\"id\":\"JOB00000000011\""));
    ck_assert(has("{\"level\":2,\"id\":\"JOB00000000012\""));
    ck_assert_int_eq(get("/api/queues/mail/jobs/JOB00000000011", NULL), 200);
    ck_assert(has("\"parent\":\"JOB00000000010\""));
}
END_TEST

START_TEST(actions_apply_and_answer_their_result)
{
    emq_stats st;
    int state;
    dead_job("mail", "JOB00000000001");
    dead_job("mail", "JOB00000000002");
    dead_job("mail", "JOB00000000003");
    ck_assert_int_eq(get("/api/queues/mail/jobs/JOB00000000001", NULL), 200);
    ck_assert(has("\"last_error\":\"boom\""));
    ck_assert(has("\"attempts\":\"1\""));
    ck_assert_int_eq(post("/api/queues/mail/jobs/JOB00000000001/retry"), 200);
    ck_assert(has("\"result\":\"requeued\""));
    ck_assert_int_eq(emq_job_state(db, "mail", "JOB00000000001", &state),
                     EMQ_OK);
    ck_assert_int_eq(state, EMQ_STATE_PENDING);
    /* retry of a job that is not dead: 409 with the wire's words */
    ck_assert_int_eq(post("/api/queues/mail/jobs/JOB00000000001/retry"), 409);
    ck_assert(has("not dead"));
    ck_assert_int_eq(post("/api/queues/mail/jobs/JOB00000000002/remove"),
                     200);
    ck_assert(has("\"result\":\"removed\""));
    ck_assert_int_eq(post("/api/queues/mail/jobs/JOB00000000002/remove"),
                     404);
    ck_assert_int_eq(post("/api/queues/mail/requeue-dead"), 200);
    ck_assert(has("\"count\":1,\"skipped\":0"));
    ck_assert_int_eq(emq_stats_get(db, "mail", &st), EMQ_OK);
    ck_assert_int_eq(st.dead, 0);
    ck_assert_int_eq(st.pending, 2);
    ck_assert_int_eq(post("/api/queues/mail/pause"), 200);
    ck_assert_int_eq(get("/api/overview", NULL), 200);
    ck_assert(has("\"paused\":true"));
    ck_assert_int_eq(post("/api/queues/mail/resume"), 200);
    ck_assert(has("\"result\":\"resumed\""));
    ck_assert_int_eq(emq_stats_get(db, "mail", &st), EMQ_OK);
    ck_assert_int_eq(st.paused, 0);
}
END_TEST

/* Run-now moves a scheduled job and answers 409 on any other; requeue-dead
 * by age takes the dead jobs minted before now - older_than only, by count
 * at most count, and refuses a bad parameter with the rule. */
START_TEST(run_now_and_requeue_dead_by_age_or_count)
{
    emq_stats st;
    int state;
    char fresh[EMQ_ID_SIZE];
    ck_assert_int_eq(emq_enqueue_in(db, "later", "JOB00000000005", "s", 1,
                                    60000), EMQ_SCHEDULED);
    ck_assert_int_eq(post("/api/queues/later/jobs/JOB00000000005/run-now"),
                     200);
    ck_assert(has("\"result\":\"moved\""));
    ck_assert_int_eq(emq_job_state(db, "later", "JOB00000000005", &state),
                     EMQ_OK);
    ck_assert_int_eq(state, EMQ_STATE_PENDING);
    ck_assert_int_eq(post("/api/queues/later/jobs/JOB00000000005/run-now"),
                     409);
    ck_assert(has("not scheduled"));

    /* three dead jobs minted long ago (fixed ids), one minted now */
    dead_job("mail", "JOB00000000001");
    dead_job("mail", "JOB00000000002");
    dead_job("mail", "JOB00000000003");
    ck_assert_int_eq(emq_mint(db, "JOB", fresh), EMQ_OK);
    dead_job("mail", fresh);
    emq_web_header h[2] = {{"X-CSRF-Token", emq_web_csrf(web)},
                           {"Host", "127.0.0.1:8080"}};
    ck_assert_int_eq(req_on(web, "POST", "/api/queues/mail/requeue-dead",
                            "count=2", h, 2, 0), 200);
    ck_assert(has("\"count\":2,\"skipped\":0"));
    ck_assert_int_eq(req_on(web, "POST", "/api/queues/mail/requeue-dead",
                            "older_than=3600000", h, 2, 0), 200);
    ck_assert(has("\"count\":1,\"skipped\":0"));
    ck_assert_int_eq(emq_stats_get(db, "mail", &st), EMQ_OK);
    ck_assert_int_eq(st.dead, 1); /* the fresh one stays */
    ck_assert_int_eq(emq_job_state(db, "mail", fresh, &state), EMQ_OK);
    ck_assert_int_eq(state, EMQ_STATE_DEAD);
    ck_assert_int_eq(req_on(web, "POST", "/api/queues/mail/requeue-dead",
                            "older_than=soon", h, 2, 0), 400);
    ck_assert(has("older_than must be an integer"));
    ck_assert_int_eq(req_on(web, "POST", "/api/queues/mail/requeue-dead",
                            "count=0", h, 2, 0), 400);
    ck_assert_int_eq(emq_stats_get(db, "mail", &st), EMQ_OK);
    ck_assert_int_eq(st.dead, 1);
}
END_TEST

START_TEST(lanes_show_depth_limit_weight_and_pause)
{
    char id[EMQ_ID_SIZE];
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(emq_mint(db, "JOB", id), EMQ_OK);
        ck_assert_int_eq(emq_lane_enqueue(db, "mail", G1, id, "x", 1),
                         EMQ_ENQUEUED);
    }
    ck_assert_int_eq(emq_lane_limit(db, "mail", G1, 2), EMQ_OK);
    ck_assert_int_eq(emq_lane_weight(db, "mail", G1, 5), EMQ_OK);
    ck_assert_int_eq(get("/api/queues/mail/lanes", NULL), 200);
    ck_assert(has("{\"group\":\"" G1 "\",\"depth\":3,\"paused\":false,"
                  "\"in_flight\":0,\"weight\":5,\"limit\":2}"));
    ck_assert_int_eq(post("/api/queues/mail/lanes/" G1 "/pause"), 200);
    ck_assert_int_eq(get("/api/queues/mail/lanes", NULL), 200);
    ck_assert(has("\"paused\":true"));
    ck_assert_int_eq(get("/api/queues/mail/jobs", "state=lane&group=" G1),
                     200);
    char ids[8][EMQ_ID_SIZE];
    ck_assert_int_eq(page_ids(ids, 8), 3);
    ck_assert(has("\"next\":null"));
    ck_assert_int_eq(get("/api/overview", NULL), 200);
    ck_assert(has("\"lanes\":1,\"lane_jobs\":3"));
    ck_assert_int_eq(post("/api/queues/mail/lanes/" G1 "/resume"), 200);
    ck_assert_int_eq(get("/api/queues/mail/lanes", NULL), 200);
    ck_assert(has("\"paused\":false"));
}
END_TEST

START_TEST(streams_show_groups_consumers_lag_and_pending)
{
    const void *fv[2] = {"k", "v"};
    size_t fl[2] = {1, 1};
    char id[EMQ_ID_SIZE];
    emq_stream_entry *e = NULL;
    size_t n = 0;
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(emq_stream_append(db, "mail", "audit", fv, fl, 2,
                                           id), EMQ_OK);
    ck_assert_int_eq(emq_stream_group_create(db, "mail", "audit", "billing",
                                             "0", 0), EMQ_OK);
    ck_assert_int_eq(emq_stream_group_read(db, "mail", "audit", "billing",
                                           "w1", ">", 2, -1, &e, &n), EMQ_OK);
    ck_assert_uint_eq(n, 2);
    emq_stream_entries_free(e, n);
    ck_assert_int_eq(get("/api/queues/mail/streams", NULL), 200);
    ck_assert(has("{\"name\":\"audit\",\"length\":3"));
    ck_assert(has("{\"name\":\"billing\""));
    ck_assert(has("\"pending\":2,\"lag\":1"));
    ck_assert(has("\"consumers\":[{\"name\":\"w1\",\"pending\":2"));
    ck_assert_int_eq(get("/api/queues/other/streams", NULL), 200);
    ck_assert(has("{\"streams\":[]}"));
}
END_TEST

START_TEST(events_and_the_per_minute_series)
{
    emq_job j;
    job("mail", "JOB00000000001", "x");
    ck_assert_int_eq(emq_claim(db, "mail", 30000, &j), EMQ_OK);
    ck_assert_int_eq(emq_complete(db, "mail", j.id, j.attempts), EMQ_OK);
    emq_job_clear(&j);
    dead_job("mail", "JOB00000000002");
    ck_assert_int_eq(get("/api/events", NULL), 200);
    ck_assert(has("\"event\":\"completed\",\"job\":\"JOB00000000001\""));
    ck_assert(has("\"event\":\"failed\",\"job\":\"JOB00000000002\""));
    ck_assert_int_eq(get("/api/events", "after=1&limit=1"), 200);
    ck_assert(!has("\"seq\":1,"));
    ck_assert(has("\"cursor\":2"));
    ck_assert_int_eq(get("/api/events", "queue=other"), 200);
    ck_assert(has("{\"events\":[]"));
    /* a retry that reschedules publishes no event: the history counts it */
    job("mail", "JOB00000000003", "x");
    ck_assert_int_eq(emq_claim(db, "mail", 30000, &j), EMQ_OK);
    ck_assert_int_eq(emq_retry(db, "mail", j.id, j.attempts, 1000, 3,
                               "later", 5), EMQ_SCHEDULED);
    emq_job_clear(&j);
    /* the last minute of the series holds all three; two minutes on, they
     * have moved one place left ... */
    ck_assert_int_eq(get("/api/overview", NULL), 200);
    ck_assert(has(",0,1],\"failed\":["));
    ck_assert(has(",0,1],\"retried\":["));
    ck_assert(has(",0,1]}}"));
    clk.now += 120000;
    ck_assert_int_eq(get("/api/queues/mail", NULL), 200);
    ck_assert(has(",1,0,0],\"failed\":["));
    ck_assert(has(",1,0,0],\"retried\":["));
    ck_assert(has(",1,0,0]}}"));
    /* ... and an hour on they are gone */
    clk.now += 3600000;
    ck_assert_int_eq(get("/api/queues/mail", NULL), 200);
    ck_assert(!has(",1,"));
    ck_assert(!has("[1,"));
}
END_TEST

START_TEST(bad_calls)
{
    emq_web_request q = {"GET", "/", NULL, NULL, 0, NULL, 0};
    emq_web *w = (emq_web *)1;
    ck_assert_int_eq(emq_web_new(NULL, NULL, &w), EMQ_EINVAL);
    ck_assert_ptr_null(w);
    ck_assert_int_eq(emq_web_handle(web, NULL, &rs), EMQ_EINVAL);
    ck_assert_int_eq(emq_web_handle(NULL, &q, &rs), EMQ_EINVAL);
    q.path = NULL;
    ck_assert_int_eq(emq_web_handle(web, &q, &rs), EMQ_EINVAL);
    emq_web_free(NULL);
    emq_web_response_clear(NULL);
}
END_TEST

Suite *suite_web(void)
{
    Suite *s = suite_create("web");
    TCase *tc = tcase_create("handler");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, serves_the_app_with_security_headers);
    tcase_add_test(tc, refuses_unknown_paths_and_traversal);
    tcase_add_test(tc, bad_names_ids_and_parameters_are_400_with_the_rule);
    tcase_add_test(tc, oversize_bodies_are_413);
    tcase_add_test(tc, actions_need_the_csrf_token_and_origin);
    tcase_add_test(tc, without_a_token_only_loopback_hosts_are_answered);
    tcase_add_test(tc, read_only_refuses_every_action);
    tcase_add_test(tc, a_token_guards_every_path);
    tcase_add_test(tc, pages_a_set_by_keyset_without_gaps_or_repeats);
    tcase_add_test(tc, pages_scored_sets_by_score_then_id);
    tcase_add_test(tc, the_job_page_escapes_and_shows_binary_payloads);
    tcase_add_test(tc, the_job_page_shows_a_flow);
    tcase_add_test(tc, the_job_page_shows_history_and_kept_jobs);
    tcase_add_test(tc, completed_jobs_are_listed_from_their_kept_records);
    tcase_add_test(tc, actions_apply_and_answer_their_result);
    tcase_add_test(tc, run_now_and_requeue_dead_by_age_or_count);
    tcase_add_test(tc, lanes_show_depth_limit_weight_and_pause);
    tcase_add_test(tc, streams_show_groups_consumers_lag_and_pending);
    tcase_add_test(tc, events_and_the_per_minute_series);
    tcase_add_test(tc, bad_calls);
    suite_add_tcase(s, tc);
    return s;
}
