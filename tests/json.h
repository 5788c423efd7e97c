/*
 * json.h — a small, strict JSON reader and writer for the golden traces.
 *
 * Owns: parsing one JSON text (RFC 8259, nothing more: no comments, no
 * trailing commas, no NaN, no leading zeros, no lone surrogates, the input
 * must be valid UTF-8) from a caller's buffer into a value tree, building
 * values by hand, and writing a value back as compact JSON for messages.
 * Pure: no I/O. Every allocation is checked and goes through a replaceable
 * allocator, so tests can fail the n-th allocation and count leaks.
 *
 * Rules: strings are byte strings (escapes decoded, \uXXXX and surrogate
 * pairs to UTF-8), always NUL-terminated but binary-safe (use `len`). A tree
 * owns all its nodes and strings; free it with emq_json_free().
 */
#ifndef EMQ_TEST_JSON_H
#define EMQ_TEST_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum emq_json_type {
    EMQ_JSON_NULL = 0,
    EMQ_JSON_FALSE,
    EMQ_JSON_TRUE,
    EMQ_JSON_INT,    /* an integer that fits int64: `i`, and its `raw` text */
    EMQ_JSON_FLOAT,  /* any other number: `d`, and its `raw` text            */
    EMQ_JSON_STRING, /* `s`/`len`                                            */
    EMQ_JSON_ARRAY,  /* `items`/`n`                                          */
    EMQ_JSON_OBJECT  /* `members`/`n`, in document order                     */
} emq_json_type;

typedef struct emq_json emq_json;

typedef struct emq_json_member {
    char *key;       /* NUL-terminated, binary-safe (klen) */
    size_t klen;
    emq_json *val;
} emq_json_member;

struct emq_json {
    emq_json_type type;
    int64_t i;                 /* EMQ_JSON_INT                               */
    double d;                  /* EMQ_JSON_INT and EMQ_JSON_FLOAT            */
    char *raw;                 /* numbers: the source text (NUL-terminated)  */
    char *s;                   /* EMQ_JSON_STRING (NUL-terminated)           */
    size_t len;
    emq_json **items;          /* EMQ_JSON_ARRAY                             */
    emq_json_member *members;  /* EMQ_JSON_OBJECT                            */
    size_t n, cap;             /* items or members                           */
};

/* Result codes. */
#define EMQ_JSON_OK      0
#define EMQ_JSON_ESYNTAX (-1) /* malformed text; see the error's pos/msg   */
#define EMQ_JSON_ENOMEM  (-2) /* an allocation failed; nothing is leaked   */
#define EMQ_JSON_EDEPTH  (-3) /* nested deeper than EMQ_JSON_MAX_DEPTH     */

#define EMQ_JSON_MAX_DEPTH 256

typedef struct emq_json_error {
    size_t pos;      /* byte offset of the fault in the input */
    char msg[96];    /* a short English description          */
} emq_json_error;

/**
 * Parse exactly one JSON text from `buf[0..len)` (whitespace around it is
 * allowed; anything else after it is an error). Objects with a repeated key
 * are refused. On success `*out` is a new tree; on failure `*out` is NULL
 * and `err` (may be NULL) says where and why.
 */
int emq_json_parse(const char *buf, size_t len, emq_json **out,
                   emq_json_error *err);

/** Free a tree (NULL is ignored). */
void emq_json_free(emq_json *v);

/* ------------------------------------------------------------ building */

/* Constructors return NULL when out of memory. */
emq_json *emq_json_new_null(void);
emq_json *emq_json_new_bool(int b);
emq_json *emq_json_new_int(int64_t i);
emq_json *emq_json_new_float(double d);
emq_json *emq_json_new_str(const void *p, size_t len);
emq_json *emq_json_new_array(void);
emq_json *emq_json_new_object(void);
/** Append `item` to `arr`; on success `arr` owns it. On failure (ENOMEM)
 *  `item` is freed, so callers may chain without leaking. */
int emq_json_push(emq_json *arr, emq_json *item);
/** Append member `key` = `val` to `obj` (no duplicate check); ownership as
 *  emq_json_push. */
int emq_json_set(emq_json *obj, const void *key, size_t klen, emq_json *val);
/** Replace `dst`'s contents with `src`'s and free the husk of `src`. */
void emq_json_move(emq_json *dst, emq_json *src);
/** A deep copy, or NULL when out of memory. */
emq_json *emq_json_dup(const emq_json *v);

/* ------------------------------------------------------------- reading */

/** The member `key` (NUL-terminated) of an object, or NULL. */
emq_json *emq_json_get(const emq_json *obj, const char *key);
/** 1 when `v` is an object with exactly the members named (NULL-ended). */
int emq_json_has_exactly(const emq_json *v, const char *const *names);
/** Structural equality; numbers compare by value (1 == 1.0). */
int emq_json_equal(const emq_json *a, const emq_json *b);
/** A static name for a type ("string", "array", ...). */
const char *emq_json_type_name(emq_json_type t);

/* ------------------------------------------------------------- writing */

/** A growable text buffer for emq_json_write; `p` is NUL-terminated. */
typedef struct emq_json_buf {
    char *p;
    size_t len, cap;
    int oom;          /* set once an append failed; text is then partial */
} emq_json_buf;

/**
 * Append `v` as compact JSON to `b`. A string that is valid UTF-8 without
 * NUL is written as a JSON string, any other as {"b64": "..."} (the trace
 * convention). Stops after about `limit` bytes (0: no limit), ending in
 * "...". Returns EMQ_JSON_OK or EMQ_JSON_ENOMEM.
 */
int emq_json_write(emq_json_buf *b, const emq_json *v, size_t limit);
int emq_json_buf_puts(emq_json_buf *b, const char *s, size_t n);
void emq_json_buf_free(emq_json_buf *b);

/* ------------------------------------------------------------- helpers */

/** 1 when `p[0..n)` is valid UTF-8 (RFC 3629). */
int emq_json_utf8_valid(const void *p, size_t n);
/**
 * Decode standard base64 (with padding, no whitespace) into a new malloc'd
 * buffer (NUL-terminated, not counted). Returns EMQ_JSON_OK,
 * EMQ_JSON_ESYNTAX for bad input or EMQ_JSON_ENOMEM.
 */
int emq_json_b64_decode(const char *s, size_t n, unsigned char **out,
                        size_t *outlen);

/* ----------------------------------------------------------- allocator */

typedef struct emq_json_allocator {
    void *(*malloc_fn)(size_t);
    void *(*realloc_fn)(void *, size_t);
    void (*free_fn)(void *);
} emq_json_allocator;
/** Install an allocator for every tree operation (NULL: the C library's).
 *  For tests; not thread-safe. */
void emq_json_set_allocator(const emq_json_allocator *a);
/** Free memory returned by this module's allocator (emq_json_b64_decode). */
void emq_json_release(void *p);

#endif /* EMQ_TEST_JSON_H */
