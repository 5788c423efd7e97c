/*
 * test_fuzz.c — suite "fuzz": the five libFuzzer targets (fuzz/fuzz_*.c),
 * compiled here without libFuzzer, replay every committed input of
 * fuzz/corpus/<target>/ and fuzz/regress/<target>/ (inputs that once broke
 * a property). A broken property aborts, which fails the test. The inputs
 * are found under $srcdir (set by `make check`), else next to this file.
 * Under EMQ_TEST_QUICK at most 40 corpus inputs per target are replayed.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "relutil.h"
#include "suites.h"

#define EMQ_FUZZ_REPLAY 1
#include "../fuzz/fuzz_brandedid.c"
#include "../fuzz/fuzz_keys.c"
#include "../fuzz/fuzz_resp.c"
#include "../fuzz/fuzz_verbs.c"
#include "../fuzz/fuzz_streams.c"

typedef int (*fuzz_fn)(const uint8_t *, size_t);

static const struct {
    const char *name;
    fuzz_fn fn;
} targets[] = {
    {"brandedid", fuzz_brandedid_one},
    {"keys", fuzz_keys_one},
    {"resp", fuzz_resp_one},
    {"verbs", fuzz_verbs_one},
    {"streams", fuzz_streams_one},
};

static void top(char *out, size_t cap)
{
    const char *s = getenv("srcdir");
    if (s && s[0]) {
        snprintf(out, cap, "%s", s);
        return;
    }
    snprintf(out, cap, "%s", __FILE__);
    char *t = strstr(out, "tests/test_fuzz.c");
    if (t) *t = 0;
    if (out[0] == 0 || t == NULL) snprintf(out, cap, ".");
    size_t n = strlen(out);
    if (n > 1 && out[n - 1] == '/') out[n - 1] = 0;
}

/* Replay the regular files of dir through fn (at most `max`); returns how
 * many. */
static long replay(const char *dir, fuzz_fn fn, long max)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    long n = 0;
    if (d == NULL) return 0;
    while (n < max && (e = readdir(d)) != NULL) {
        char p[1024];
        FILE *f;
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if ((f = fopen(p, "rb")) == NULL) continue;
        unsigned char *buf = malloc(1 << 20);
        ck_assert_ptr_nonnull(buf);
        size_t len = fread(buf, 1, 1 << 20, f);
        fclose(f);
        fn(buf, len);
        free(buf);
        n++;
    }
    closedir(d);
    return n;
}

START_TEST(committed_inputs_keep_every_property)
{
    char root[900], dir[1024];
    top(root, sizeof root);
    snprintf(dir, sizeof dir, "%s/fuzz/corpus/%s", root, targets[_i].name);
    /* under EMQ_TEST_QUICK (the sanitizer and valgrind runs) a sample of
     * the corpus; the regress inputs always */
    long n = replay(dir, targets[_i].fn, rel_size(1000000, 40));
    ck_assert_msg(n > 0, "no corpus found in %s", dir);
    snprintf(dir, sizeof dir, "%s/fuzz/regress/%s", root, targets[_i].name);
    n += replay(dir, targets[_i].fn, 1000000);
    fprintf(stderr, "fuzz: %s: %ld committed inputs replayed\n",
            targets[_i].name, n);
    /* the empty input and a one-byte input are inputs too */
    targets[_i].fn((const uint8_t *)"", 0);
    targets[_i].fn((const uint8_t *)"\x13", 1);
}
END_TEST

Suite *suite_fuzz(void)
{
    Suite *s = suite_create("fuzz");
    TCase *t = tcase_create("replay");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, committed_inputs_keep_every_property, 0, 5);
    suite_add_tcase(s, t);
    return s;
}
