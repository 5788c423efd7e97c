"""emqlite.web — the dashboard's handler (api/emqlite_web.h) as a WSGI app.

    import emqlite, emqlite.web
    db = emqlite.open("jobs.db")
    app = emqlite.web.wsgi_app(db, read_only=False)
    # wsgiref.simple_server.make_server("127.0.0.1", 8080, app).serve_forever()

The same handler `emqlite ui` serves: the page, its assets and the JSON
API, from the library (nothing is read from disk, nothing from a CDN).
Mount it at the root or under a prefix (the page uses relative URLs; open
it with a trailing slash). Requests from any server thread are answered
one at a time on the Database's handle, which they borrow under its lock
as the asyncio claim does; every transaction ends before the response is
returned, so nothing is sent while one is open.
"""
import os as _os
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from ._native import ffi as _ffi, lib as _lib

__all__ = ["wsgi_app"]

StartResponse = Callable[[str, List[Tuple[str, str]]], Any]
WSGIApp = Callable[[Dict[str, Any], StartResponse], Iterable[bytes]]

_REASONS = {200: "OK", 303: "See Other", 400: "Bad Request",
            401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            405: "Method Not Allowed", 409: "Conflict",
            413: "Payload Too Large", 500: "Internal Server Error",
            503: "Service Unavailable"}


def wsgi_app(db: Any, *, read_only: bool = False,
             token: Optional[str] = None,
             max_body: int = 65536) -> WSGIApp:
    """A WSGI application serving the dashboard over `db` (an open
    emqlite.Database, which must outlive the app). `read_only` refuses
    every action (403); `token` requires it on every request (open
    /?token=... once, or send Authorization: Bearer ...); bodies over
    `max_body` bytes are refused (413). Raises ValueError for a token with
    spaces, ';' or ',' or longer than 256 characters."""
    opts = _ffi.new("emq_web_options *")
    _lib.emq_web_options_init_size(opts, _ffi.sizeof("emq_web_options"))
    opts.read_only = 1 if read_only else 0
    opts.max_body = max_body
    keep = []
    if token is not None:
        t = _ffi.new("char[]", token.encode("utf-8"))
        keep.append(t)
        opts.token = t
    out = _ffi.new("emq_web **")
    h = db._h
    with h.lock:
        rc = _lib.emq_web_new(db._check(), opts, out)
    if rc != 0:
        raise ValueError("emqlite.web: the handler was refused (%s): a "
                         "token is 1 to 256 printable ASCII characters "
                         "without space, ';' or ','"
                         % _ffi.string(_lib.emq_strerror(rc)).decode())
    web = _ffi.gc(out[0], _lib.emq_web_free)

    def app(environ: Dict[str, Any], start_response: StartResponse
            ) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        # PEP 3333: PATH_INFO is the decoded path as latin-1 text
        path = (environ.get("PATH_INFO") or "/").encode("latin-1")
        query = (environ.get("QUERY_STRING") or "").encode("latin-1")
        names = []
        for k, v in environ.items():
            if k.startswith("HTTP_"):
                names.append((k[5:].replace("_", "-"), v))
            elif k in ("CONTENT_TYPE", "CONTENT_LENGTH") and v:
                names.append((k.replace("_", "-"), v))
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        body = b""
        if length > 0 and length <= max_body:
            body = environ["wsgi.input"].read(length)
        cheaders = _ffi.new("emq_web_header[]", max(len(names), 1))
        hold = []
        for i, (k, v) in enumerate(names):
            kb = _ffi.new("char[]", k.encode("latin-1"))
            vb = _ffi.new("char[]", str(v).encode("latin-1", "replace"))
            hold += [kb, vb]
            cheaders[i].name = kb
            cheaders[i].value = vb
        m = _ffi.new("char[]", method.encode("latin-1"))
        p = _ffi.new("char[]", path)
        q = _ffi.new("char[]", query)
        b = _ffi.new("char[]", body) if body else _ffi.NULL
        req = _ffi.new("emq_web_request *")
        req.method, req.path, req.query = m, p, q
        req.headers, req.nheaders = cheaders, len(names)
        req.body, req.body_len = b, max(length, 0)
        resp = _ffi.new("emq_web_response *")
        if h.pid != _os.getpid():
            raise RuntimeError("an emqlite Database does not cross fork: "
                               "make the app in the child")
        lk = h.lock
        if not lk.acquire(False):
            _lib.emq_claim_wait_interrupt(h.ptr)
            lk.acquire()
        try:
            if h.ptr is None:
                raise ValueError("the database %r is closed" % db.path)
            rc = _lib.emq_web_handle(web, req, resp)
        finally:
            lk.release()
        if rc != 0:
            start_response("500 Internal Server Error",
                           [("Content-Type", "text/plain")])
            return [b"the handler failed\n"]
        try:
            status = int(resp.status)
            headers = [(_ffi.string(resp.headers[i].name).decode("latin-1"),
                        _ffi.string(resp.headers[i].value).decode("latin-1"))
                       for i in range(resp.nheaders)]
            data = bytes(_ffi.buffer(resp.body, resp.body_len))
        finally:
            _lib.emq_web_response_clear(resp)
        headers.append(("Content-Length", str(len(data))))
        start_response("%d %s" % (status, _REASONS.get(status, "")), headers)
        return [b"" if method == "HEAD" else data]

    app.csrf = _ffi.string(_lib.emq_web_csrf(web)).decode()  # type: ignore
    app._keep = (web, keep, db)  # type: ignore
    return app
