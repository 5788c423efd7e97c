/*
 * web_int.h — internals of the web dashboard shared by web/web.c, the
 * generated asset table (web_assets.c, made by web/gen_assets.sh from
 * web/assets/) and the tests and benchmark that reach inside.
 */
#ifndef EMQ_WEB_INT_H
#define EMQ_WEB_INT_H

#include <stddef.h>
#include <stdint.h>
#include "emqlite_web.h"

/** One embedded file of web/assets/. */
typedef struct emq_web_asset {
    const char *name;          /* "index.html", "app.js", ...            */
    const char *type;          /* its Content-Type                        */
    const unsigned char *data;
    size_t len;
} emq_web_asset;
extern const emq_web_asset emq_web_assets[];
extern const size_t emq_web_nassets;

/** A growing text buffer; `oom` set once an append failed. */
typedef struct emq_wb {
    char *p;
    size_t n, cap;
    int oom;
} emq_wb;
void emq_wb_put(emq_wb *b, const void *p, size_t n);
void emq_wb_str(emq_wb *b, const char *s);
void emq_wb_printf(emq_wb *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/** `n` bytes as a JSON value: a string when valid UTF-8 (with < > & '
 *  escaped as \u00XX), else {"b64": "..."}; NULL is null. */
void emq_wb_json(emq_wb *b, const void *v, size_t n);
/** 1 when the bytes are valid UTF-8. */
int emq_web_utf8(const void *v, size_t n);

/**
 * One page of a job set as the jobs API answers it ({"jobs": [...],
 * "scanned", "next"}) appended to `b`: `state` pending, active,
 * scheduled, dead or lane (with group `g`); `after` a cursor "SCORE:ID"
 * or NULL; `rev` walks from the tail; `prefix` (may be NULL) keeps the
 * jobs whose payload starts with it. One read transaction. Returns
 * EMQ_OK, EMQ_EINVAL (a state or cursor outside its rule) or a read
 * failure. `*found` and `*more` (may be NULL) get the jobs written and
 * whether a next page exists.
 */
int emq_web_page(emq_web *w, const char *q, const char *state, const char *g,
                 const char *after, int rev, int64_t limit, const char *prefix,
                 size_t prefix_len, emq_wb *b, int64_t *found, int *more);

#endif /* EMQ_WEB_INT_H */
