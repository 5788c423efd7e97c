"""emqlite.web: the dashboard's handler mounted as a WSGI app (issue 30)."""
import io
import json
import threading
from typing import Any, Dict, List, Optional, Tuple
from wsgiref.util import setup_testing_defaults

import pytest

import emqlite
import emqlite.web


def call(app: Any, method: str, path: str, query: str = "",
         headers: Optional[Dict[str, str]] = None,
         body: bytes = b"") -> Tuple[int, Dict[str, str], bytes]:
    env: Dict[str, Any] = {"REQUEST_METHOD": method, "PATH_INFO": path,
                           "QUERY_STRING": query,
                           "CONTENT_LENGTH": str(len(body)),
                           "wsgi.input": io.BytesIO(body)}
    for k, v in (headers or {}).items():
        env["HTTP_" + k.upper().replace("-", "_")] = v
    setup_testing_defaults(env)
    got: List[Any] = []

    def start(status: str, hdrs: List[Tuple[str, str]]) -> None:
        got.append((int(status.split()[0]), dict(hdrs)))
    data = b"".join(app(env, start))
    return got[0][0], got[0][1], data


def test_serves_the_page_and_the_api() -> None:
    with emqlite.open() as db:
        q = db.queue("mail")
        q.enqueue(b'{"to": "a@example.com"}')
        app = emqlite.web.wsgi_app(db)
        st, h, body = call(app, "GET", "/")
        assert st == 200 and b'src="assets/app.js"' in body
        assert h["X-Frame-Options"] == "DENY"
        assert "default-src 'none'" in h["Content-Security-Policy"]
        st, h, body = call(app, "GET", "/api/overview")
        assert st == 200
        o = json.loads(body)
        assert [x["name"] for x in o["queues"]] == ["mail"]
        assert o["queues"][0]["pending"] == 1
        st, _, body = call(app, "GET", "/api/queues/mail/jobs",
                           "state=pending&limit=10")
        assert st == 200
        assert json.loads(body)["jobs"][0]["preview"] == \
            '{"to": "a@example.com"}'
        assert call(app, "GET", "/nope")[0] == 404
        assert call(app, "GET", "/api/queues/emq")[0] == 400


def test_actions_need_csrf_and_read_only_refuses() -> None:
    with emqlite.open() as db:
        db.queue("mail").enqueue(b"x")
        app = emqlite.web.wsgi_app(db)
        assert call(app, "POST", "/api/queues/mail/pause")[0] == 403
        st, _, body = call(app, "POST", "/api/queues/mail/pause",
                           headers={"X-CSRF-Token": app.csrf})  # type: ignore
        assert st == 200 and json.loads(body)["result"] == "paused"
        assert db.stats("mail")["paused"]
        ro = emqlite.web.wsgi_app(db, read_only=True)
        st, _, body = call(ro, "POST", "/api/queues/mail/resume",
                           headers={"X-CSRF-Token": ro.csrf})  # type: ignore
        assert st == 403 and b"read-only" in body
        assert db.stats("mail")["paused"]
        assert call(app, "POST", "/api/queues/mail/pause", body=b"x" * 70000,
                    headers={"X-CSRF-Token": app.csrf})[0] == 413  # type: ignore


def test_token_and_threads() -> None:
    with emqlite.open() as db:
        app = emqlite.web.wsgi_app(db, token="t0ken")
        assert call(app, "GET", "/api/overview")[0] == 401
        st, h, _ = call(app, "GET", "/", "token=t0ken")
        assert st == 303 and "HttpOnly" in h["Set-Cookie"]
        ok: List[int] = []

        def worker() -> None:  # a server thread borrows the handle
            ok.append(call(app, "GET", "/api/overview",
                           headers={"Authorization": "Bearer t0ken"})[0])
        ts = [threading.Thread(target=worker) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert ok == [200] * 4
        with pytest.raises(ValueError):
            emqlite.web.wsgi_app(db, token="has space")
