/*
 * strerror.c — emq_strerror(): one static English sentence per result code.
 *
 * Rule: every code of emqlite.h (verdicts and failures) has its own text, and
 * an unknown code still yields a non-NULL string.
 */
#include "emqlite.h"

const char *emq_strerror(int rc)
{
    switch (rc) {
    case EMQ_OK:         return "ok";
    case EMQ_ENQUEUED:   return "enqueued: the job was admitted";
    case EMQ_DUPLICATE:  return "duplicate: a row with that id exists";
    case EMQ_SCHEDULED:  return "scheduled: the job waits for its run-at";
    case EMQ_DEAD:       return "dead: the job reached its attempts cap";
    case EMQ_EMPTY:      return "empty: nothing to claim, or the queue is "
                                "paused";
    case EMQ_GONE:       return "gone: the job row does not exist";
    case EMQ_EKIND:      return "kind error: the job id is not JOB-namespaced";
    case EMQ_ESTALE:     return "stale: the token does not match the job's "
                                "attempts, or the job is gone";
    case EMQ_EWRONGTYPE: return "wrong type: a key holds another kind of value";
    case EMQ_EWIRE:      return "version fence: the file speaks another wire";
    case EMQ_EQUEUE:     return "invalid queue name";
    case EMQ_EID:        return "not a valid branded id";
    case EMQ_EINVAL:     return "invalid argument";
    case EMQ_EBUSY:      return "busy: the file stayed locked past the busy "
                                "timeout";
    case EMQ_EIO:        return "I/O error; nothing was applied";
    case EMQ_EFULL:      return "disk or quota full; nothing was applied";
    case EMQ_ENOMEM:     return "out of memory; nothing was applied";
    case EMQ_ENOTEMQ:    return "not an emqlite file (left untouched)";
    case EMQ_ESCHEMA:    return "the file has a newer schema, or an older one "
                                "a read-only handle cannot upgrade (left "
                                "untouched)";
    case EMQ_ECORRUPT:   return "the file is damaged";
    case EMQ_ETOOBIG:    return "payload exceeds the configured maximum";
    case EMQ_EREADONLY:  return "read-only: the file, its directory or the "
                                "handle does not allow writes";
    case EMQ_ECANTOPEN:  return "the file cannot be opened";
    case EMQ_EPROTO:     return "malformed input";
    case EMQ_EINTERNAL:  return "internal error: an unexpected SQLite error";
    case EMQ_EEMPTY:     return "empty batch (empty_pipeline)";
    case EMQ_ENOTSUP:    return "the feature was not built in";
    case EMQ_EEXIST:     return "the target already holds those keys";
    case EMQ_EREMOTE:    return "the server refused a command";
    case EMQ_EEXHAUSTED: return "no branded id is left to mint: the id "
                                "clock reached its 2093 horizon";
    default:             return "unknown result code";
    }
}
