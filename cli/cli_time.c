/*
 * cli_time.c — human times for the emqlite tool: durations ("250ms", "5s",
 * "10m", "2h", "1d", "1h30m"; a bare number is milliseconds), instants
 * (ISO-8601 UTC "2026-12-01T10:00:00Z" with optional fraction and offset,
 * Unix milliseconds, "now", "now+5m", "now-1h"), and their printing as
 * ISO-8601 UTC.
 *
 * Rules: parsers are pure (no clock read: "now" is the caller's `now`) and
 * strict — no spaces, no signs except where said, no overflow; every
 * number is checked against INT64 before it is used.
 */
#include <string.h>
#include <stdio.h>
#include "cli_time.h"

/* Parse an unsigned decimal run at *p into *v (<= INT64_MAX); advances *p.
 * Returns the number of digits (0 when none or on overflow). */
static int digits(const char **p, int64_t *v)
{
    int n = 0;
    *v = 0;
    while (**p >= '0' && **p <= '9') {
        int d = **p - '0';
        if (*v > (INT64_MAX - d) / 10) return 0;
        *v = *v * 10 + d;
        (*p)++;
        n++;
    }
    return n;
}

static int mul_add(int64_t *acc, int64_t v, int64_t unit)
{
    if (v > (INT64_MAX - *acc) / unit) return -1;
    *acc += v * unit;
    return 0;
}

int emq_cli_parse_duration(const char *s, int64_t *ms)
{
    const char *p = s;
    int64_t total = 0, v;
    int parts = 0;
    if (s == NULL || *s == '\0') return -1;
    while (*p) {
        int64_t unit;
        if (digits(&p, &v) == 0) return -1;
        if (*p == '\0') {
            /* A bare number is milliseconds, and only alone. */
            if (parts > 0) return -1;
            *ms = v;
            return 0;
        }
        if (p[0] == 'm' && p[1] == 's') { unit = 1; p += 2; }
        else if (*p == 's') { unit = 1000; p++; }
        else if (*p == 'm') { unit = 60000; p++; }
        else if (*p == 'h') { unit = 3600000; p++; }
        else if (*p == 'd') { unit = 86400000; p++; }
        else return -1;
        if (mul_add(&total, v, unit) != 0) return -1;
        parts++;
    }
    *ms = total;
    return 0;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (March-based years, so the leap day ends a year). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;
    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int days_in_month(int64_t y, int m)
{
    static const int n[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : n[m - 1];
}

/* Exactly `n` digits at *p into *v. */
static int fixed(const char **p, int n, int64_t *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if ((*p)[i] < '0' || (*p)[i] > '9') return -1;
        *v = *v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    return 0;
}

static int iso(const char *s, int64_t *ms)
{
    const char *p = s;
    int64_t y, mo, d, h, mi, se, frac = 0, off = 0, days;
    if (fixed(&p, 4, &y) || *p++ != '-' || fixed(&p, 2, &mo) ||
        *p++ != '-' || fixed(&p, 2, &d) || (*p != 'T' && *p != 't'))
        return -1;
    p++;
    if (fixed(&p, 2, &h) || *p++ != ':' || fixed(&p, 2, &mi) ||
        *p++ != ':' || fixed(&p, 2, &se))
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, (int)mo) ||
        h > 23 || mi > 59 || se > 59)
        return -1;
    if (*p == '.') {
        int n = 0;
        p++;
        while (*p >= '0' && *p <= '9') {
            if (n < 3) frac = frac * 10 + (*p - '0');
            n++;
            p++;
        }
        if (n == 0 || n > 9) return -1;
        for (; n < 3; n++) frac *= 10;
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int64_t oh, om;
        int sign = *p++ == '-' ? -1 : 1;
        if (fixed(&p, 2, &oh) || *p++ != ':' || fixed(&p, 2, &om) ||
            oh > 23 || om > 59)
            return -1;
        off = sign * (oh * 3600000 + om * 60000);
    } else {
        return -1; /* a zone is required: times are never local */
    }
    if (*p != '\0') return -1;
    days = days_from_civil(y, (int)mo, (int)d);
    *ms = ((days * 24 + h) * 60 + mi) * 60000 + se * 1000 + frac - off;
    return 0;
}

int emq_cli_parse_instant(const char *s, int64_t now, int64_t *ms)
{
    const char *p = s;
    int64_t v;
    if (s == NULL || *s == '\0') return -1;
    if (strncmp(s, "now", 3) == 0) {
        if (s[3] == '\0') {
            *ms = now;
            return 0;
        }
        if ((s[3] != '+' && s[3] != '-') ||
            emq_cli_parse_duration(s + 4, &v) != 0)
            return -1;
        *ms = s[3] == '+' ? now + v : now - v;
        return 0;
    }
    if (strchr(s, 'T') || strchr(s, 't')) return iso(s, ms);
    if (digits(&p, &v) == 0 || *p != '\0') return -1;
    *ms = v;
    return 0;
}

/* Civil date of day number `z` (days since 1970-01-01). */
static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    int64_t era, doe, yoe, doy, mp;
    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

size_t emq_cli_format_instant(char *buf, size_t size, int64_t ms)
{
    int64_t days = ms / 86400000, rem = ms % 86400000, y;
    int m, d, n;
    if (rem < 0) {
        rem += 86400000;
        days--;
    }
    civil_from_days(days, &y, &m, &d);
    n = snprintf(buf, size, "%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ",
                 (long long)y, m, d, (int)(rem / 3600000),
                 (int)(rem / 60000 % 60), (int)(rem / 1000 % 60),
                 (int)(rem % 1000));
    return n < 0 ? 0 : (size_t)n;
}

size_t emq_cli_format_duration(char *buf, size_t size, int64_t ms)
{
    static const struct { int64_t unit; const char *name; } units[] = {
        {86400000, "d"}, {3600000, "h"}, {60000, "m"}, {1000, "s"},
        {1, "ms"}};
    size_t at = 0;
    int neg = ms < 0;
    uint64_t v = neg ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms;
    if (size == 0) return 0;
    buf[0] = '\0';
    if (neg) at += (size_t)snprintf(buf, size, "-");
    if (v == 0) return (size_t)snprintf(buf, size, "0ms");
    for (size_t i = 0; i < sizeof units / sizeof units[0] && at < size; i++) {
        uint64_t k = v / (uint64_t)units[i].unit;
        if (k == 0) continue;
        at += (size_t)snprintf(buf + at, size - at, "%llu%s",
                               (unsigned long long)k, units[i].name);
        v %= (uint64_t)units[i].unit;
    }
    return at < size ? at : size - 1;
}
