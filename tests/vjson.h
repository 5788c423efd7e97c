/*
 * vjson.h — registry verbs in the golden traces' JSON shapes: named JSON
 * arguments to a verb's byte-string argv, and an emq_reply to the trace's
 * reply value. Shared by every harness that drives emqlite by wire name
 * (the golden replayer, the Lua differential runner, the fuzz target).
 *
 * Argument rule (the registry's names, engine/core/verbs.def): a spec named `x`
 * takes the trace argument `x`; a fixed spec named `x.y` takes element k of
 * the array `x` (k = its position among the specs named `x.`); a repeated
 * tail named `x.y`, `x.z` takes the array `x` of [y, z] arrays, a tail of
 * one spec named `x` the flat array `x`: when every element of `x` is
 * itself an array (append_batch's `records`) each passes as its length in
 * decimal followed by its elements; otherwise a nested array inside it is
 * flattened in order (a backoff policy). Strings pass as bytes, integers
 * as decimal text, booleans as 1/0, null (or a missing argument) as
 * absent. A flow tree (or an array of them) in `x` becomes the pre-order
 * node list of a tail x.level, x.id, x.payload, x.queue, x.policy (vjson.c
 * says how).
 */
#ifndef EMQ_TEST_VJSON_H
#define EMQ_TEST_VJSON_H

#include <stddef.h>
#include "emqlite.h"
#include "emqlite_protocol.h"
#include "json.h"

/** A verb's argument vector, ready for emq_call. */
typedef struct emq_vargv {
    const char **argv;
    size_t *len;
    size_t argc, cap;
    char **owned;      /* decimal renderings made for integers */
    size_t nowned;
} emq_vargv;

/**
 * Build the argv of verb `v` from the JSON object `args`. Returns 0, or -1
 * with `err` filled (an argument of the wrong JSON type, out of memory).
 */
int emq_vjson_args(const emq_verb_info *v, const emq_json *args,
                   emq_vargv *out, char *err, size_t errlen);
void emq_vargv_free(emq_vargv *a);

/**
 * The trace's reply for a call that returned `rc` with `r`: the reply's
 * value (maps as {"map": {...}}, errors as {"error": s}, refusals as
 * {"refused": s}); a failure that is not a wire reply becomes
 * {"emqlite_error": "<class> (<rc>): <msg>"}, which no trace contains.
 * NULL when out of memory.
 */
emq_json *emq_vjson_reply(const emq_reply *r, int rc, const char *msg);

/**
 * The inverse of emq_vjson_args: the trace's JSON args object for the argv
 * of verb `v` (`argc` arguments, a NULL argv[i] absent; `len` may be NULL
 * for NUL-terminated strings), by the argument rule above: a fixed spec `x`
 * is the member x, a fixed `x.y` element k of the array x, a repeated tail
 * the array x of [y, z] arrays (flat for one spec without a dot; [] for no
 * group). Values by the spec's kind: INT, POS and NNEG as JSON integers
 * when the text is a decimal int64 written as %PRId64 writes it, BOOL
 * 1/true and 0/false as booleans, anything else (and a text its kind does
 * not parse) as a string of the same bytes; an absent argument is null.
 * emq_vjson_args of the result gives back the argv (a boolean as 1/0).
 * Returns the object (caller frees), or NULL with `err` filled (more
 * arguments than specs, a tail that is not whole groups, out of memory).
 */
emq_json *emq_vjson_from_argv(const emq_verb_info *v, size_t argc,
                              const char *const *argv, const size_t *len,
                              char *err, size_t errlen);

#endif /* EMQ_TEST_VJSON_H */
