/*
 * results.c — the result codes' table (EMQ_RESULT_MAP of emqlite.h) as
 * rows, and emq_strerror().
 *
 * Rule: nothing here lists a code by hand; every fact about a code is its
 * row in emqlite.h. An unknown code still yields a non-NULL string.
 */
#include "emqlite.h"

static const emq_result_row rows[] = {
#define ROW(name, code, wire, cls, exit, exc, kind, text)                   \
    { code, "EMQ_" #name, wire, cls, exit, exc, kind, text },
    EMQ_RESULT_MAP(ROW)
#undef ROW
};

const emq_result_row *emq_result_at(size_t i)
{
    return i < sizeof rows / sizeof rows[0] ? &rows[i] : NULL;
}

const emq_result_row *emq_result_info(int rc)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].code == rc)
            return &rows[i];
    return NULL;
}

const char *emq_strerror(int rc)
{
    const emq_result_row *r = emq_result_info(rc);
    return r ? r->text : "unknown result code";
}
