#!/bin/sh
# cli_ui_test.sh — `emqlite ui` without a browser: --help, the refusals
# (a non-loopback address without --token, a malformed --listen, a bad
# token), --json's document, a served page and API over a real socket
# (python3's urllib), --read-only's 403 on an action, the token's 401, and
# SIGTERM ending it with 0. Skipped (77) when the build has no
# libmicrohttpd (ui exits 10) or there is no python3.
LC_ALL=C
export LC_ALL
unset EMQLITE_DB EMQLITE_NOW_MS EMQLITE_UI_TOKEN
top=$(pwd)
EMQLITE=${EMQLITE:-$top/emqlite}
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
no() { fail=$((fail + 1)); echo "FAIL $1"; }
command -v python3 >/dev/null 2>&1 || { echo "cli_ui_test: no python3: skipped"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/emq-ui.XXXXXX") || exit 1
db=$dir/t.db
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
"$EMQLITE" --db "$db" ui --listen 127.0.0.1:0 --token 'a b' >/dev/null 2>"$dir/err"
rc=$?
if [ $rc -eq 10 ]; then
    echo "cli_ui_test: emqlite ui is not in this build (no libmicrohttpd): skipped"
    exit 77
fi
[ $rc -eq 1 ] && grep -q "token must be" "$dir/err" && ok "a token with a space is refused" || no "bad token ($rc)"
"$EMQLITE" ui --help | grep -q -- "--read-only" && ok "ui --help" || no "ui --help"
"$EMQLITE" --db "$db" ui --listen 0.0.0.0:0 >/dev/null 2>"$dir/err"
[ $? -eq 1 ] && grep -q "requires --token" "$dir/err" && ok "0.0.0.0 without --token is refused" || no "0.0.0.0 without token"
"$EMQLITE" --db "$db" ui --listen localhost >/dev/null 2>"$dir/err"
[ $? -eq 1 ] && grep -q "ADDR:PORT" "$dir/err" && ok "a malformed --listen names the rule" || no "malformed --listen"
"$EMQLITE" --db "$db" enqueue mail hello >/dev/null || exit 1
# serve read-only with a token on a free port
"$EMQLITE" --db "$db" --json ui --listen 127.0.0.1:0 --read-only --token s3cret >"$dir/out" 2>"$dir/err" &
pid=$!
i=0
while [ ! -s "$dir/out" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
python3 - "$dir/out" <<'PY' >"$dir/py" 2>&1
import json, sys, urllib.request, urllib.error
info = json.load(open(sys.argv[1]))
base = info["url"]
assert info["read_only"] is True and info["listen"].startswith("127.0.0.1:")
def req(path, method="GET", headers=None):
    r = urllib.request.Request(base.rstrip("/") + path, method=method,
                               headers=headers or {})
    try:
        with urllib.request.urlopen(r, timeout=10) as f:
            return f.status, dict(f.headers), f.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()
auth = {"Authorization": "Bearer s3cret"}
print("unauth", req("/api/overview")[0])
st, h, body = req("/api/overview", headers=auth)
print("overview", st, json.loads(body)["queues"][0]["name"], h.get("X-Frame-Options"))
csrf = json.loads(req("/api/session", headers=auth)[2])["csrf"]
print("action", req("/api/queues/mail/pause", "POST", dict(auth, **{"X-CSRF-Token": csrf}))[0])
print("page", req("/", headers=auth)[0])
PY
cat "$dir/py"
grep -q "^unauth 401$" "$dir/py" && ok "401 without the token" || no "401 without the token"
grep -q "^overview 200 mail DENY$" "$dir/py" && ok "the API over a socket, with its headers" || no "API over a socket"
grep -q "^action 403$" "$dir/py" && ok "--read-only refuses an action" || no "read-only action"
grep -q "^page 200$" "$dir/py" && ok "the page over a socket" || no "page"
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc -eq 0 ] && ok "SIGTERM ends it with 0" || no "SIGTERM exit $rc"
"$EMQLITE" --db "$db" stats mail | grep -q "mail  *1 " && ok "nothing changed (read-only)" || no "file changed"
"$EMQLITE" --db "$db" --json stats mail | grep -q '"paused":false' && ok "the queue is not paused" || no "paused"
echo "cli_ui_test: $pass passed, $fail failed"
[ $fail -eq 0 ]
