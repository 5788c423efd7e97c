/*
 * cli_time.h — human durations and instants for the emqlite tool
 * (cli_time.c). Pure functions: no clock read, no allocation.
 */
#ifndef EMQ_CLI_TIME_H
#define EMQ_CLI_TIME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** "250ms", "5s", "10m", "2h", "1d", concatenations ("1h30m"), or a bare
 *  number of milliseconds. 0, or -1 for anything else (no sign, no space,
 *  no overflow). */
int emq_cli_parse_duration(const char *s, int64_t *ms);

/** An instant: ISO-8601 with a zone ("2026-12-01T10:00:00Z",
 *  "2026-12-01T10:00:00.250+01:00"), Unix milliseconds, "now" (= `now`),
 *  "now+DURATION", "now-DURATION". 0, or -1. */
int emq_cli_parse_instant(const char *s, int64_t now, int64_t *ms);

/** `ms` as "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC); returns the length. */
size_t emq_cli_format_instant(char *buf, size_t size, int64_t ms);

/** `ms` as "1h30m5s250ms" (largest units first, "0ms" for 0). */
size_t emq_cli_format_duration(char *buf, size_t size, int64_t ms);

#endif /* EMQ_CLI_TIME_H */
