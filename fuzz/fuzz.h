/*
 * fuzz.h — what the libFuzzer targets share: the failure hook and the entry
 * point's name.
 *
 * A target is one file fuzz/fuzz_<name>.c defining FUZZ_ENTRY(name). Built
 * by `make fuzz` (clang -fsanitize=fuzzer,address,undefined) the entry is
 * LLVMFuzzerTestOneInput; included by tests/test_fuzz.c (the Check suite
 * that replays fuzz/corpus and fuzz/regress) with EMQ_FUZZ_REPLAY defined,
 * it is fuzz_<name>_one. A broken property calls FUZZ_FAIL, which prints
 * and aborts: libFuzzer keeps the input, the replay suite fails.
 */
#ifndef EMQ_FUZZ_H
#define EMQ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef EMQ_FUZZ_REPLAY
#define FUZZ_ENTRY(name) int fuzz_##name##_one(const uint8_t *data, size_t size)
#else
#define FUZZ_ENTRY(name) \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
#endif

#define FUZZ_FAIL(...)                                                        \
    do {                                                                      \
        fprintf(stderr, "fuzz property broken at %s:%d: ", __FILE__,          \
                __LINE__);                                                    \
        fprintf(stderr, __VA_ARGS__);                                         \
        fputc('\n', stderr);                                                  \
        abort();                                                              \
    } while (0)

#define FUZZ_CHECK(cond, ...)                                                 \
    do {                                                                      \
        if (!(cond)) FUZZ_FAIL(__VA_ARGS__);                                  \
    } while (0)

#endif /* EMQ_FUZZ_H */
