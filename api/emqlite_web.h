/*
 * emqlite_web.h — the web dashboard as an HTTP handler that knows no
 * sockets (doc/WEB.md).
 *
 * A server of the caller's choice (libmicrohttpd in `emqlite ui`, a WSGI
 * server through the Python package, anything else) hands each request —
 * method, path, query, headers, body — to emq_web_handle() and sends the
 * response it fills — status, headers, body. The handler serves a small
 * single-page app (HTML, CSS and JavaScript compiled into the library; no
 * network needed) and a JSON API over the reads and operator verbs of
 * api/emqlite.h, on one handle.
 *
 * Rules: every transaction a request runs is over before emq_web_handle
 * returns, so a server never holds a write transaction while it sends.
 * Calls on one emq_web are not concurrent (it uses one emq_db): a
 * threaded server serializes them. Every input is checked before it
 * reaches the library; a refusal is a 4xx response naming the rule.
 */
#ifndef EMQLITE_WEB_H
#define EMQLITE_WEB_H

#include <stddef.h>
#include <stdint.h>
#include "emqlite.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bodies above this many bytes are refused with 413 by default. */
#define EMQ_WEB_MAX_BODY 65536

/** Options of emq_web_new(); emq_web_options_init() fills the defaults. */
typedef struct emq_web_options {
    size_t size;          /**< the caller's sizeof, set by the init        */
    int read_only;        /**< 1: every action answers 403                 */
    const char *token;    /**< NULL: no login; else every request must
                               carry it (Authorization: Bearer, or the
                               cookie that GET /?token=... sets)         */
    size_t max_body;      /**< 413 above it (EMQ_WEB_MAX_BODY)            */
} emq_web_options;
void emq_web_options_init_size(emq_web_options *o, size_t size);
#define emq_web_options_init(o) emq_web_options_init_size((o), sizeof *(o))

typedef struct emq_web emq_web;

/**
 * A handler over `db` (the caller keeps it open while the handler lives;
 * the handler does not close it). `o` may be NULL (the defaults). The
 * handler mints its CSRF token from the system's random source. Returns
 * EMQ_OK, EMQ_EINVAL (NULL db or out, a token with bytes outside
 * printable ASCII or longer than 256) or EMQ_ENOMEM.
 */
int emq_web_new(emq_db *db, const emq_web_options *o, emq_web **out);
/** Free a handler (NULL is ignored). */
void emq_web_free(emq_web *w);
/** The handler's CSRF token (a NUL-terminated hex string): the value the
 *  X-CSRF-Token header of every POST must carry. */
const char *emq_web_csrf(const emq_web *w);

/** One header: NUL-terminated name and value. */
typedef struct emq_web_header {
    const char *name;
    const char *value;
} emq_web_header;

/** A request as the server parsed it. */
typedef struct emq_web_request {
    const char *method;        /**< "GET", "POST", ...                    */
    const char *path;          /**< "/api/queues", without the query      */
    const char *query;         /**< after '?', undecoded; NULL or ""      */
    const emq_web_header *headers;
    size_t nheaders;
    const void *body;          /**< may be NULL when body_len is 0 or the
                                    server stopped reading past max_body */
    size_t body_len;           /**< the body's length (413 above max)     */
} emq_web_request;

/** A response, filled by emq_web_handle (release with
 *  emq_web_response_clear). */
typedef struct emq_web_response {
    int status;
    emq_web_header *headers;   /**< owned by the response                 */
    size_t nheaders;
    char *body;                /**< owned by the response                 */
    size_t body_len;
} emq_web_response;
void emq_web_response_clear(emq_web_response *r);

/**
 * Answer one request into `*resp` (which need not be initialized). Every
 * answer, errors included, is a response: returns EMQ_OK, or EMQ_EINVAL
 * (NULL arguments) / EMQ_ENOMEM when no response could be built.
 */
int emq_web_handle(emq_web *w, const emq_web_request *req,
                   emq_web_response *resp);

#ifdef __cplusplus
}
#endif

#endif /* EMQLITE_WEB_H */
