/*
 * jobrow.c — the job row's dictionary: the field names and state strings a
 * job row holds (PROTOCOL.md §3), which storage keeps as one-byte tokens in
 * every hash blob (storage/hashcodec.h). Storage knows no names of its own;
 * emq_open hands it this table.
 *
 * Append only: a word's index is its token, and tokens are on disk. A new
 * word goes at the end of its list; none is ever removed or reordered.
 */
#include "db.h"

#define W(s) {s, sizeof s - 1}
static const emq_hash_word fields[] = {
    W("state"), W("attempts"), W("payload"), W("last_error"), W("progress"),
    W("group"), W("parent"), W("parent_queue"), W("parent_policy"),
    W("stalled"), W("lock"),
};
static const emq_hash_word values[] = {
    W("pending"), W("active"), W("scheduled"), W("dead"),
    W("awaiting_children"), W("fp"), W("id"),
};
#undef W

const emq_hash_dict emq_jobrow_dict = {
    fields, values, sizeof fields / sizeof *fields,
    sizeof values / sizeof *values,
};
