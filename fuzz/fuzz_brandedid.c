/*
 * fuzz_brandedid.c — the branded-id codec (engine/core/brandedid.c) on arbitrary
 * bytes. Properties: emq_id_check and emq_id_parse agree; a valid id has
 * an A-Z namespace and a snowflake below 2^63 and re-encodes to the same 14
 * bytes; emq_id_valid on the NUL-terminated copy agrees with the check of
 * the bytes before its first NUL; and for two snowflakes taken from the
 * input, encoding preserves their order (the order theorem of §4.1).
 */
#include <string.h>
#include "fuzz.h"
#include "brandedid.h"

FUZZ_ENTRY(brandedid)
{
    char ns[4], ns2[4], out[EMQ_ID_SIZE], copy[64];
    uint64_t snow = 0, snow2 = 0;
    int e = emq_id_check((const char *)data, size, ns, &snow);
    int p = emq_id_parse((const char *)data, size, ns2, &snow2);
    FUZZ_CHECK((e == EMQ_ID_OK) == (p == EMQ_OK), "check %d vs parse %d", e,
               p);
    if (e == EMQ_ID_OK) {
        FUZZ_CHECK(size == EMQ_ID_LEN, "valid id of %zu bytes", size);
        FUZZ_CHECK(snow == snow2 && memcmp(ns, ns2, 4) == 0, "parse differs");
        FUZZ_CHECK(snow <= (uint64_t)INT64_MAX, "snowflake beyond 2^63");
        for (int i = 0; i < 3; i++)
            FUZZ_CHECK(ns[i] >= 'A' && ns[i] <= 'Z', "namespace byte");
        FUZZ_CHECK(emq_id_encode(ns, snow, out) == EMQ_OK, "re-encode");
        FUZZ_CHECK(memcmp(out, data, EMQ_ID_LEN) == 0 &&
                       out[EMQ_ID_LEN] == 0, "round trip");
    } else {
        FUZZ_CHECK(e >= EMQ_ID_BADLEN && e <= EMQ_ID_BADRANGE, "error %d", e);
    }
    if (size < sizeof copy) {
        memcpy(copy, data, size);
        copy[size] = 0;
        /* the C-string form ends at the first NUL */
        int cv = emq_id_check(copy, strlen(copy), NULL, NULL) == EMQ_ID_OK;
        FUZZ_CHECK(emq_id_valid(copy) == cv, "emq_id_valid disagrees");
    }
    if (size >= 16) {
        uint64_t a, b;
        char ea[EMQ_ID_SIZE], eb[EMQ_ID_SIZE];
        memcpy(&a, data, 8);
        memcpy(&b, data + 8, 8);
        a &= (uint64_t)INT64_MAX;
        b &= (uint64_t)INT64_MAX;
        FUZZ_CHECK(emq_id_encode("JOB", a, ea) == EMQ_OK &&
                       emq_id_encode("JOB", b, eb) == EMQ_OK, "encode");
        int c = memcmp(ea, eb, EMQ_ID_LEN);
        FUZZ_CHECK((a < b) == (c < 0) && (a == b) == (c == 0),
                   "order theorem: %llu vs %llu", (unsigned long long)a,
                   (unsigned long long)b);
        FUZZ_CHECK(emq_id_check(ea, EMQ_ID_LEN, ns, &snow) == EMQ_ID_OK &&
                       snow == a, "decode of an encoding");
        FUZZ_CHECK(emq_id_encode("job", a, ea) == EMQ_EID, "lowercase ns");
    }
    return 0;
}
