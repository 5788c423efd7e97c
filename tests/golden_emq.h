/*
 * golden_emq.h — the emqlite executor of the golden replay (golden_emq.c).
 *
 * Owns: nothing but the constructor: the executor runs each case on a fresh
 * ":memory:" handle with an injected clock; see golden.h for the interface.
 */
#ifndef EMQ_TEST_GOLDEN_EMQ_H
#define EMQ_TEST_GOLDEN_EMQ_H

#include "emqlite.h"
#include "golden.h"

/** Fill `ex` with the emqlite executor. Returns 0, or -1 (out of memory).
 *  Release with emq_golden_emq_exec_free. */
int emq_golden_emq_exec(emq_golden_exec *ex);
void emq_golden_emq_exec_free(emq_golden_exec *ex);

/**
 * Write the trace keyspace `ks` (the shape golden.h describes) into the
 * current case's handle in one transaction, key expiries included, as the
 * state an isolated step starts from (golden_replay --isolated). Returns 0,
 * 1 when it holds a key this loader does not write (a stream), or -1 with
 * `err` filled.
 */
int emq_golden_emq_load(emq_golden_exec *ex, const emq_json *ks,
                        emq_json_buf *err);

/** The current case's handle (from case_begin to case_end; NULL outside a
 *  case), for a harness that acts on it beside the steps (the Lua
 *  differential's raw writes and token reads). The executor keeps it. */
emq_db *emq_golden_emq_db(const emq_golden_exec *ex);

/** An id the trace's host minted in a step this executor did not run (a
 *  borrowed stream append): the case's mint cell moves past it, as the
 *  host's shared cell did, so later mints (the sweep's) match the trace. */
void emq_golden_emq_observe(emq_golden_exec *ex, const char *id, size_t n);

#endif /* EMQ_TEST_GOLDEN_EMQ_H */
