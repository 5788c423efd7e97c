/*
 * cli_json.c — the emqlite tool's JSON: writing values (strings, binary-safe
 * byte strings) and reading the NDJSON lines of `enqueue-many --ndjson`.
 *
 * The one rule for bytes (documented in doc/emqlite.1, JSON OUTPUT): bytes
 * that are valid UTF-8 are written as a JSON string, escaped; any other bytes
 * are written as the object {"b64": "<base64>"}. Input accepts the same two
 * shapes, so what `job --json` prints can be fed back.
 */
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cli_time.h"

/* ---------------------------------------------------------------- UTF-8 */

int emq_cli_utf8_valid(const unsigned char *p, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char b = p[i];
        size_t n;
        uint32_t cp;
        if (b < 0x80) {
            i++;
            continue;
        } else if (b >= 0xC2 && b <= 0xDF) {
            n = 1; cp = b & 0x1F;
        } else if (b >= 0xE0 && b <= 0xEF) {
            n = 2; cp = b & 0x0F;
        } else if (b >= 0xF0 && b <= 0xF4) {
            n = 3; cp = b & 0x07;
        } else {
            return 0;
        }
        if (len - i - 1 < n)
            return 0;
        for (size_t k = 1; k <= n; k++) {
            if ((p[i + k] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (p[i + k] & 0x3F);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
            cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += n + 1;
    }
    return 1;
}

/* --------------------------------------------------------------- base64 */

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void emq_cli_b64_write(FILE *f, const unsigned char *p, size_t len)
{
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        fputc(b64chars[v >> 18], f);
        fputc(b64chars[(v >> 12) & 63], f);
        fputc(b64chars[(v >> 6) & 63], f);
        fputc(b64chars[v & 63], f);
    }
    if (len - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        fputc(b64chars[v >> 18], f);
        fputc(b64chars[(v >> 12) & 63], f);
        fputs("==", f);
    } else if (len - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        fputc(b64chars[v >> 18], f);
        fputc(b64chars[(v >> 12) & 63], f);
        fputc(b64chars[(v >> 6) & 63], f);
        fputc('=', f);
    }
}

static int b64val(unsigned char c)
{
    const char *q = c ? strchr(b64chars, c) : NULL;
    return q ? (int)(q - b64chars) : -1;
}

/* Decode padded or unpadded base64 into out (room for len*3/4+3 bytes).
 * Returns the decoded length or -1. */
static long b64_decode(const unsigned char *s, size_t len, unsigned char *out)
{
    size_t o = 0, i = 0;
    while (len > 0 && s[len - 1] == '=')
        len--;
    if (len % 4 == 1)
        return -1;
    for (; i < len; i += 4) {
        uint32_t v = 0;
        size_t k, n = len - i < 4 ? len - i : 4;
        for (k = 0; k < n; k++) {
            int d = b64val(s[i + k]);
            if (d < 0)
                return -1;
            v = v << 6 | (uint32_t)d;
        }
        v <<= 6 * (4 - n);
        out[o++] = (unsigned char)(v >> 16);
        if (n > 2)
            out[o++] = (unsigned char)(v >> 8);
        if (n > 3)
            out[o++] = (unsigned char)v;
    }
    return (long)o;
}

/* ---------------------------------------------------------------- output */

static void json_escaped(FILE *f, const unsigned char *p, size_t len)
{
    fputc('"', f);
    for (size_t i = 0; i < len; i++) {
        unsigned char b = p[i];
        switch (b) {
        case '"':  fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\b': fputs("\\b", f); break;
        case '\t': fputs("\\t", f); break;
        case '\n': fputs("\\n", f); break;
        case '\f': fputs("\\f", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (b < 0x20 || b == 0x7F)
                fprintf(f, "\\u%04x", b);
            else
                fputc(b, f);
        }
    }
    fputc('"', f);
}

void emq_cli_json_bytes(FILE *f, const void *p, size_t len)
{
    const unsigned char *u = p ? p : (const unsigned char *)"";
    if (emq_cli_utf8_valid(u, len)) {
        json_escaped(f, u, len);
    } else {
        fputs("{\"b64\":\"", f);
        emq_cli_b64_write(f, u, len);
        fputs("\"}", f);
    }
}

void emq_cli_json_str(FILE *f, const char *s)
{
    emq_cli_json_bytes(f, s, s ? strlen(s) : 0);
}

void emq_cli_json_hist_details(FILE *f, const emq_history_entry *e,
                               int run_at_obj)
{
    if (e->attempts >= 0)
        fprintf(f, ",\"attempts\":%lld", (long long)e->attempts);
    if (e->delay_ms >= 0)
        fprintf(f, ",\"delay_ms\":%lld", (long long)e->delay_ms);
    if (e->run_at_ms >= 0 && run_at_obj) {
        char b[48];
        emq_cli_format_instant(b, sizeof b, e->run_at_ms);
        fprintf(f, ",\"run_at\":{\"ms\":%lld,\"utc\":\"%s\"}",
                (long long)e->run_at_ms, b);
    } else if (e->run_at_ms >= 0) {
        fprintf(f, ",\"run_at\":%lld", (long long)e->run_at_ms);
    }
    if (e->error) {
        fputs(",\"error\":", f);
        emq_cli_json_bytes(f, e->error, e->error_len);
    }
    if (e->host) {
        fputs(",\"host\":", f);
        emq_cli_json_str(f, e->host);
        fprintf(f, ",\"pid\":%lld", (long long)e->pid);
    }
    if (e->worker) {
        fputs(",\"worker\":", f);
        emq_cli_json_str(f, e->worker);
    }
}

void emq_cli_text_bytes(FILE *f, const void *p, size_t len)
{
    const unsigned char *u = p;
    size_t i = 0;
    while (i < len) {
        unsigned char b = u[i];
        if (b >= 0x80) {
            /* pass a valid UTF-8 sequence through whole */
            size_t n = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
            if (n > 1 && i + n <= len && emq_cli_utf8_valid(u + i, n)) {
                fwrite(u + i, 1, n, f);
                i += n;
                continue;
            }
            fprintf(f, "\\x%02x", b);
        } else if (b == '\\') {
            fputs("\\\\", f);
        } else if (b == '\n') {
            fputs("\\n", f);
        } else if (b == '\t') {
            fputs("\\t", f);
        } else if (b == '\r') {
            fputs("\\r", f);
        } else if (b < 0x20 || b == 0x7F) {
            fprintf(f, "\\x%02x", b);
        } else {
            fputc(b, f);
        }
        i++;
    }
}

/* ---------------------------------------------------------------- input */

/* A cursor over one line of JSON (cli.h: the flow commands parse trees
 * with the same reader). */
typedef emq_cli_jin jin;

static void ws(jin *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
                             *j->p == '\r' || *j->p == '\n'))
        j->p++;
}

static int hex4(jin *j, uint32_t *v)
{
    *v = 0;
    if (j->end - j->p < 4)
        return -1;
    for (int k = 0; k < 4; k++) {
        unsigned char c = *j->p++;
        int d = c >= '0' && c <= '9' ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        *v = *v << 4 | (uint32_t)d;
    }
    return 0;
}

static size_t put_utf8(unsigned char *o, uint32_t cp)
{
    if (cp < 0x80) { o[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Parse a JSON string at the cursor; *out (malloc'd, NUL-terminated, may be
 * NULL to skip) receives the decoded bytes. The decoded form is never longer
 * than the source text. */
static int jstring(jin *j, unsigned char **out, size_t *olen)
{
    unsigned char *buf = NULL;
    size_t n = 0;
    if (j->p >= j->end || *j->p != '"') {
        j->err = "expected a string";
        return -1;
    }
    j->p++;
    buf = malloc((size_t)(j->end - j->p) + 1);
    if (!buf) {
        j->err = "out of memory";
        return -1;
    }
    for (;;) {
        if (j->p >= j->end) {
            j->err = "unterminated string";
            goto fail;
        }
        unsigned char c = *j->p++;
        if (c == '"')
            break;
        if (c < 0x20) {
            j->err = "control byte in a string";
            goto fail;
        }
        if (c != '\\') {
            buf[n++] = c;
            continue;
        }
        if (j->p >= j->end) {
            j->err = "unterminated string";
            goto fail;
        }
        c = *j->p++;
        switch (c) {
        case '"': buf[n++] = '"'; break;
        case '\\': buf[n++] = '\\'; break;
        case '/': buf[n++] = '/'; break;
        case 'b': buf[n++] = '\b'; break;
        case 'f': buf[n++] = '\f'; break;
        case 'n': buf[n++] = '\n'; break;
        case 'r': buf[n++] = '\r'; break;
        case 't': buf[n++] = '\t'; break;
        case 'u': {
            uint32_t cp, lo;
            if (hex4(j, &cp) < 0) {
                j->err = "bad \\u escape";
                goto fail;
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u') {
                    j->err = "unpaired surrogate";
                    goto fail;
                }
                j->p += 2;
                if (hex4(j, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF) {
                    j->err = "unpaired surrogate";
                    goto fail;
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                j->err = "unpaired surrogate";
                goto fail;
            }
            n += put_utf8(buf + n, cp);
            break;
        }
        default:
            j->err = "bad escape";
            goto fail;
        }
    }
    buf[n] = 0;
    if (out) {
        *out = buf;
        *olen = n;
    } else {
        free(buf);
    }
    return 0;
fail:
    free(buf);
    return -1;
}

static int jvalue_skip(jin *j, int depth);

static int jlit(jin *j, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0) {
        j->err = "bad literal";
        return -1;
    }
    j->p += n;
    return 0;
}

/* Skip any JSON value (for keys of an item object we do not use). */
static int jvalue_skip(jin *j, int depth)
{
    if (depth > 64) {
        j->err = "nested too deeply";
        return -1;
    }
    ws(j);
    if (j->p >= j->end) {
        j->err = "expected a value";
        return -1;
    }
    unsigned char c = *j->p;
    if (c == '"')
        return jstring(j, NULL, NULL);
    if (c == 't')
        return jlit(j, "true");
    if (c == 'f')
        return jlit(j, "false");
    if (c == 'n')
        return jlit(j, "null");
    if (c == '-' || (c >= '0' && c <= '9')) {
        while (j->p < j->end && strchr("+-0123456789.eE", *j->p))
            j->p++;
        return 0;
    }
    if (c == '[' || c == '{') {
        unsigned char close = c == '[' ? ']' : '}';
        j->p++;
        ws(j);
        if (j->p < j->end && *j->p == close) {
            j->p++;
            return 0;
        }
        for (;;) {
            ws(j);
            if (close == '}') {
                if (jstring(j, NULL, NULL) < 0)
                    return -1;
                ws(j);
                if (j->p >= j->end || *j->p != ':') {
                    j->err = "expected ':'";
                    return -1;
                }
                j->p++;
            }
            if (jvalue_skip(j, depth + 1) < 0)
                return -1;
            ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            if (j->p < j->end && *j->p == close) {
                j->p++;
                return 0;
            }
            j->err = "expected ',' or a closing bracket";
            return -1;
        }
    }
    j->err = "unexpected byte";
    return -1;
}

/* A payload value: a string, or {"b64": "..."}. */
static int jpayload(jin *j, unsigned char **out, size_t *olen)
{
    ws(j);
    if (j->p < j->end && *j->p == '"')
        return jstring(j, out, olen);
    if (j->p >= j->end || *j->p != '{') {
        j->err = "payload must be a string or {\"b64\": ...}";
        return -1;
    }
    j->p++;
    ws(j);
    unsigned char *key = NULL, *text = NULL;
    size_t klen, tlen;
    if (jstring(j, &key, &klen) < 0)
        return -1;
    int isb64 = klen == 3 && memcmp(key, "b64", 3) == 0;
    free(key);
    if (!isb64) {
        j->err = "payload object must be {\"b64\": ...}";
        return -1;
    }
    ws(j);
    if (j->p >= j->end || *j->p != ':') {
        j->err = "expected ':'";
        return -1;
    }
    j->p++;
    ws(j);
    if (jstring(j, &text, &tlen) < 0)
        return -1;
    ws(j);
    if (j->p >= j->end || *j->p != '}') {
        free(text);
        j->err = "payload object must hold only \"b64\"";
        return -1;
    }
    j->p++;
    unsigned char *bin = malloc(tlen / 4 * 3 + 4);
    long bn = bin ? b64_decode(text, tlen, bin) : -1;
    free(text);
    if (bn < 0) {
        free(bin);
        j->err = "bad base64";
        return -1;
    }
    bin[bn] = 0;
    *out = bin;
    *olen = (size_t)bn;
    return 0;
}

/* The reader for the other files of the tool (cli.h). */
void emq_cli_jws(emq_cli_jin *j)
{
    ws(j);
}

int emq_cli_jstring(emq_cli_jin *j, unsigned char **out, size_t *olen)
{
    return jstring(j, out, olen);
}

int emq_cli_jpayload(emq_cli_jin *j, unsigned char **out, size_t *olen)
{
    return jpayload(j, out, olen);
}

int emq_cli_jskip(emq_cli_jin *j)
{
    return jvalue_skip(j, 0);
}

int emq_cli_jlit(emq_cli_jin *j, const char *lit)
{
    return jlit(j, lit);
}

int emq_cli_ndjson_item(const char *line, size_t len, char *id, size_t idsize,
                        unsigned char **payload, size_t *plen, char *err,
                        size_t errlen)
{
    jin j = { (const unsigned char *)line, (const unsigned char *)line + len,
              NULL };
    unsigned char *pl = NULL, *key = NULL, *idv = NULL;
    size_t pn = 0, kn, idn;
    int have_payload = 0;

    id[0] = 0;
    ws(&j);
    if (j.p < j.end && *j.p == '"') {
        if (jstring(&j, &pl, &pn) < 0)
            goto fail;
        have_payload = 1;
    } else if (j.p < j.end && *j.p == '{') {
        j.p++;
        ws(&j);
        if (j.p < j.end && *j.p == '}') {
            j.p++;
        } else {
            for (;;) {
                ws(&j);
                if (jstring(&j, &key, &kn) < 0)
                    goto fail;
                ws(&j);
                if (j.p >= j.end || *j.p != ':') {
                    j.err = "expected ':'";
                    goto fail;
                }
                j.p++;
                ws(&j);
                if (kn == 7 && memcmp(key, "payload", 7) == 0) {
                    free(pl);
                    pl = NULL;
                    if (jpayload(&j, &pl, &pn) < 0)
                        goto fail;
                    have_payload = 1;
                } else if (kn == 2 && memcmp(key, "id", 2) == 0) {
                    if (jstring(&j, &idv, &idn) < 0)
                        goto fail;
                    if (idn == 0 || idn >= idsize || memchr(idv, 0, idn)) {
                        j.err = "\"id\" is not a branded id";
                        goto fail;
                    }
                    memcpy(id, idv, idn + 1);
                    free(idv);
                    idv = NULL;
                } else if (jvalue_skip(&j, 0) < 0) {
                    goto fail;
                }
                free(key);
                key = NULL;
                ws(&j);
                if (j.p < j.end && *j.p == ',') {
                    j.p++;
                    continue;
                }
                if (j.p < j.end && *j.p == '}') {
                    j.p++;
                    break;
                }
                j.err = "expected ',' or '}'";
                goto fail;
            }
        }
        if (!have_payload) {
            j.err = "object has no \"payload\"";
            goto fail;
        }
    } else {
        j.err = "expected a JSON string or object";
        goto fail;
    }
    ws(&j);
    if (j.p != j.end) {
        j.err = "trailing bytes after the value";
        goto fail;
    }
    *payload = pl;
    *plen = pn;
    return 0;
fail:
    snprintf(err, errlen, "%s", j.err ? j.err : "malformed JSON");
    free(pl);
    free(key);
    free(idv);
    id[0] = 0;
    return -1;
}

void emq_cli_json_stats(char *const *names, const emq_stats *st,
                        const int64_t *extra, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",{\"queue\":" : "{\"queue\":", stdout);
        emq_cli_json_str(stdout, names[i]);
        printf(",\"pending\":%lld,\"active\":%lld,\"scheduled\":%lld,"
               "\"dead\":%lld,\"completed\":%lld,\"failed\":%lld,",
               (long long)st[i].pending, (long long)st[i].active,
               (long long)st[i].scheduled, (long long)st[i].dead,
               (long long)st[i].completed, (long long)st[i].failed);
        if (extra)
            printf("\"lane\":%lld,\"awaiting_children\":%lld,",
                   (long long)extra[2 * i], (long long)extra[2 * i + 1]);
        printf("\"paused\":%s}", st[i].paused ? "true" : "false");
    }
}
