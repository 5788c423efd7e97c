/*
 * brandedid.c — the 14-byte branded id (PROTOCOL.md §4): codec, hash32,
 * snowflake fields and the process-wide minter.
 *
 * An id is NS (3 bytes A-Z) ++ base62(snowflake) at fixed width 11 with the
 * alphabet 0-9A-Za-z (ascending ASCII, so memcmp order = numeric order).
 * Rules a reader must not break here:
 *  - validation checks length, namespace, charset, range in that order and
 *    never normalises; the range test is the byte comparison of the payload
 *    against "AzL8n0Y58m7" (= 2^63 - 1), done before any arithmetic;
 *  - minting goes through one atomic cell per node id for the whole
 *    process, holding the next free ts << 12 | seq, so every handle of a
 *    process that shares a node id draws from one strictly increasing
 *    sequence. A cell only ever rises: seeding (from the reservation a
 *    file handle reads at lease time, doc/IDS.md) is a CAS max;
 *  - past the 41-bit horizon (2093-09-06T15:47:35.551Z) nothing is minted:
 *    emq_snow_mint answers EMQ_SNOW_EXHAUSTED and the cell stays, never an
 *    id that repeats or leaves the 63-bit range.
 */
#include <stdatomic.h>
#include <string.h>
#include "brandedid.h"

/* ------------------------------------------------------------------ base62 */

static const char b62_alphabet[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/* The payload of the largest snowflake, 2^63 - 1. */
static const char b62_max[] = "AzL8n0Y58m7";

#define B62_WIDTH 11
#define SNOW_MAX UINT64_C(0x7FFFFFFFFFFFFFFF)

/* Digit value of `c`, or -1 when it is not in the alphabet. */
static int b62_digit(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'Z')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 36;
    return -1;
}

void emq_b62_encode(uint64_t v, char out[11])
{
    for (int i = B62_WIDTH - 1; i >= 0; i--) {
        out[i] = b62_alphabet[v % 62];
        v /= 62;
    }
}

/* ------------------------------------------------------------------- codec */

static int ns_byte_ok(unsigned char c)
{
    return c >= 'A' && c <= 'Z';
}

int emq_id_check(const char *id, size_t len, char ns[4], uint64_t *snow)
{
    const unsigned char *p = (const unsigned char *)id;

    if (id == NULL || len != EMQ_ID_LEN)
        return EMQ_ID_BADLEN;
    for (int i = 0; i < 3; i++)
        if (!ns_byte_ok(p[i]))
            return EMQ_ID_BADNS;
    for (int i = 3; i < EMQ_ID_LEN; i++)
        if (b62_digit(p[i]) < 0)
            return EMQ_ID_BADCHARSET;
    if (memcmp(p + 3, b62_max, B62_WIDTH) > 0)
        return EMQ_ID_BADRANGE;

    if (ns != NULL) {
        memcpy(ns, id, 3);
        ns[3] = '\0';
    }
    if (snow != NULL) {
        uint64_t v = 0;
        for (int i = 3; i < EMQ_ID_LEN; i++)
            v = v * 62 + (uint64_t)b62_digit(p[i]);
        *snow = v;
    }
    return EMQ_ID_OK;
}

/*
 * `ns` must be a NUL-terminated string of exactly three bytes A-Z: "JOBS"
 * is refused rather than silently cut to "JOB". Bytes are read only while
 * they are A-Z, so a shorter string is never over-read.
 */
int emq_id_encode(const char *ns, uint64_t snow, char out[EMQ_ID_SIZE])
{
    if (ns == NULL || out == NULL || snow > SNOW_MAX)
        return EMQ_EID;
    for (int i = 0; i < 3; i++)
        if (!ns_byte_ok((unsigned char)ns[i]))
            return EMQ_EID;
    if (ns[3] != '\0')
        return EMQ_EID;
    memcpy(out, ns, 3);
    emq_b62_encode(snow, out + 3);
    out[EMQ_ID_LEN] = '\0';
    return EMQ_OK;
}

int emq_id_parse(const char *id, size_t len, char ns[4], uint64_t *snow)
{
    return emq_id_check(id, len, ns, snow) == EMQ_ID_OK ? EMQ_OK : EMQ_EID;
}

int emq_id_valid(const char *id)
{
    size_t len = 0;

    if (id == NULL)
        return 0;
    /* Bounded strlen: anything longer than 14 is invalid anyway. */
    while (len <= EMQ_ID_LEN && id[len] != '\0')
        len++;
    return emq_id_check(id, len, NULL, NULL) == EMQ_ID_OK;
}

/* ------------------------------------------------------------ hash, fields */

uint32_t emq_hash32(uint64_t snow)
{
    uint64_t h = snow;
    h ^= h >> 33;
    h *= UINT64_C(0xFF51AFD7ED558CCD);
    h ^= h >> 33;
    return (uint32_t)h;
}

int64_t emq_snow_unix_ms(uint64_t snow)
{
    return (int64_t)(snow >> 22) + EMQ_EPOCH_MS;
}

unsigned emq_snow_node(uint64_t snow)
{
    return (unsigned)((snow >> 12) & 0x3FF);
}

unsigned emq_snow_seq(uint64_t snow)
{
    return (unsigned)(snow & 0xFFF);
}

#define TS_MAX ((INT64_C(1) << 41) - 1)
_Static_assert(EMQ_CELL_MAX == ((uint64_t)TS_MAX << 12 | 0xFFF),
               "the last cell is the horizon's last sequence number");

/* ms since the epoch for Unix ms `t`, clamped into the 41-bit field. */
static uint64_t epoch_ms(int64_t t)
{
    if (t <= EMQ_EPOCH_MS)
        return 0;
    if (t - EMQ_EPOCH_MS > TS_MAX)
        return (uint64_t)TS_MAX;
    return (uint64_t)(t - EMQ_EPOCH_MS);
}

/* Instants before the epoch give 0; past the 41-bit horizon (year 2093) the
 * timestamp saturates at its largest value. */
uint64_t emq_snow_min_for(int64_t unix_ms)
{
    return epoch_ms(unix_ms) << 22;
}

/* ----------------------------------------------------------------- minting */

#define NODES 1024

/* One cell per node id: ts << 12 | seq of the next id that node may use,
 * i.e. one past the last id minted (so a fresh cell at the epoch's first ms
 * yields seq 0, and min_for(epoch) = 0 is mintable). */
static _Atomic uint64_t mint_cells[NODES];

/*
 * Each mint uses max((now - epoch) << 12, last + 1) and stores one past it
 * with a CAS loop, so a burst past 4096 in one ms borrows the next ms and a
 * clock that steps back keeps minting from the logical clock. `node` is
 * taken modulo 1024 (callers validate it). Thread-safe and lock-free.
 * A now before the epoch counts as the epoch.
 */
uint64_t emq_snow_mint(unsigned node, int64_t now_ms)
{
    _Atomic uint64_t *cell = &mint_cells[node & (NODES - 1)];
    uint64_t floor = epoch_ms(now_ms) << 12;
    uint64_t free_ = atomic_load_explicit(cell, memory_order_relaxed);
    uint64_t next;

    do {
        next = free_ > floor ? free_ : floor;
        if (next > EMQ_CELL_MAX)
            return EMQ_SNOW_EXHAUSTED; /* the cell stays where it is */
    } while (!atomic_compare_exchange_weak_explicit(
                 cell, &free_, next + 1, memory_order_relaxed,
                 memory_order_relaxed));

    return (next >> 12) << 22 | (uint64_t)(node & (NODES - 1)) << 12 |
           (next & 0xFFF);
}

void emq_snow_seed(unsigned node, uint64_t cell)
{
    _Atomic uint64_t *c = &mint_cells[node & (NODES - 1)];
    uint64_t cur = atomic_load_explicit(c, memory_order_relaxed);

    if (cell > EMQ_CELL_MAX + 1)
        cell = EMQ_CELL_MAX + 1; /* past the horizon: exhausted */
    while (cur < cell &&
           !atomic_compare_exchange_weak_explicit(c, &cur, cell,
                                                  memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

uint64_t emq_snow_cell(uint64_t snow)
{
    return (snow >> 22) << 12 | (snow & 0xFFF);
}
