# cli_harness.sh — the shell harness of the emqlite tool's scripted tests
# (tests/cli_*.sh, work_cli.sh, the top tests), sourced first. cli_setup
# makes the common start of a script; the checks below need $EMQLITE (the
# tool), $db (the test file), $tmp (a scratch directory) and passed=0
# failed=0, which cli_setup provides. Each check prints nothing on success
# and a FAIL line with the command's output otherwise; the caller prints
# the counts.

# cli_setup NAME STEM FILE: the C locale; no EMQLITE_* settings from the
# caller's environment; $EMQLITE (default ./emqlite, as `make check` runs
# from the build directory), else "NAME: ... not found" and exit 1; $top,
# the directory the script started in; a scratch directory $tmp
# (emqlite-STEM.XXXXXX) removed on exit (a script with more to stop sets
# its own trap after this); $db=$tmp/FILE; the counts at 0.
cli_setup() {
    LC_ALL=C
    export LC_ALL
    unset EMQLITE_DB EMQLITE_NOW_MS EMQLITE_BUSY_TIMEOUT EMQLITE_WORKER \
        EMQLITE_PROGRESS
    top=$(pwd)
    EMQLITE=${EMQLITE:-$top/emqlite}
    if [ ! -x "$EMQLITE" ]; then
        echo "$1: $EMQLITE not found (run from the build directory)" >&2
        echo "0 passed, 1 failed"
        exit 1
    fi
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/emqlite-$2.XXXXXX") || exit 1
    trap 'rm -rf "$tmp"' EXIT
    db=$tmp/$3
    passed=0
    failed=0
}

# run CMD...: run it, keeping stdout in $tmp/out, stderr in $tmp/err, $rc.
run() {
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    out=$(tr -d '\000' <"$tmp/out")
    err=$(tr -d '\000' <"$tmp/err")
}

# e ARGS...: run emqlite on the test file.
e() {
    run "$EMQLITE" --db "$db" "$@"
}

# at MS ARGS...: the same with the clock pinned at Unix ms MS.
at() {
    ms=$1
    shift
    run env EMQLITE_NOW_MS="$ms" "$EMQLITE" --db "$db" "$@"
}

pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $1"
    echo "  exit $rc; stdout: $(head -c 400 "$tmp/out")"
    echo "  stderr: $(head -c 400 "$tmp/err")"
}

# rc_is NAME WANT
rc_is() { if [ "$rc" -eq "$2" ]; then pass; else fail "$1 (exit $rc, want $2)"; fi; }
# out_is NAME TEXT: stdout equals TEXT exactly
out_is() { if [ "$out" = "$2" ]; then pass; else fail "$1 (stdout != '$2')"; fi; }
# out_has NAME ERE: some stdout line matches
out_has() { if grep -Eq -- "$2" "$tmp/out"; then pass; else fail "$1 (stdout !~ $2)"; fi; }
# err_is NAME TEXT: stderr equals TEXT exactly
err_is() { if [ "$err" = "$2" ]; then pass; else fail "$1 (stderr != '$2')"; fi; }
# err_has NAME ERE
err_has() { if grep -Eq -- "$2" "$tmp/err"; then pass; else fail "$1 (stderr !~ $2)"; fi; }
# check NAME CONDITION...: a test(1) condition
check() {
    name=$1
    shift
    if [ "$@" ]; then pass; else fail "$name ($*)"; fi
}

# json NAME: stdout is exactly one line holding one valid JSON document.
json() {
    if [ "$(wc -l <"$tmp/out")" -eq 1 ] && awk "$json_awk" "$tmp/out"; then
        pass
    else
        fail "$1 (not one JSON document)"
    fi
}

# A JSON validator in portable awk: exits 0 when the input is exactly one
# JSON value (RFC 8259 grammar; bytes >= 0x80 are accepted in strings).
json_awk='
function err(m) { bad = 1; pos = n + 1 }
function ws() { while (pos <= n && index(" \t\r\n", substr(s, pos, 1))) pos++ }
function str(   c) {
    pos++
    while (pos <= n) {
        c = substr(s, pos, 1)
        if (c == "\"") { pos++; return }
        if (c == "\\") {
            c = substr(s, pos + 1, 1)
            if (c == "u") {
                if (substr(s, pos + 2, 4) !~ /^[0-9a-fA-F][0-9a-fA-F][0-9a-fA-F][0-9a-fA-F]$/) { err("u"); return }
                pos += 6
            } else if (index("\"\\/bfnrt", c)) pos += 2
            else { err("esc"); return }
        } else if (c < " ") { err("ctl"); return }
        else pos++
    }
    err("unterminated")
}
function num(   t) {
    t = substr(s, pos)
    if (match(t, /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/)) pos += RLENGTH
    else err("num")
}
function value(depth,   c) {
    if (depth > 100) { err("deep"); return }
    ws()
    c = substr(s, pos, 1)
    if (c == "{") {
        pos++; ws()
        if (substr(s, pos, 1) == "}") { pos++; return }
        while (!bad) {
            ws()
            if (substr(s, pos, 1) != "\"") { err("key"); return }
            str(); ws()
            if (substr(s, pos, 1) != ":") { err("colon"); return }
            pos++
            value(depth + 1); ws()
            c = substr(s, pos, 1)
            if (c == ",") { pos++; continue }
            if (c == "}") { pos++; return }
            err("obj"); return
        }
    } else if (c == "[") {
        pos++; ws()
        if (substr(s, pos, 1) == "]") { pos++; return }
        while (!bad) {
            value(depth + 1); ws()
            c = substr(s, pos, 1)
            if (c == ",") { pos++; continue }
            if (c == "]") { pos++; return }
            err("arr"); return
        }
    } else if (c == "\"") str()
    else if (substr(s, pos, 4) == "true" || substr(s, pos, 4) == "null") pos += 4
    else if (substr(s, pos, 5) == "false") pos += 5
    else if (c == "-" || (c >= "0" && c <= "9")) num()
    else err("value")
}
{ s = s (NR > 1 ? "\n" : "") $0 }
END {
    n = length(s); pos = 1; bad = 0
    value(0); ws()
    if (bad || pos != n + 1) exit 1
    exit 0
}'


# helps CMD...: each command's --help exits 0 and prints its usage line.
helps() {
    for cmd in "$@"; do
        run "$EMQLITE" "$cmd" --help
        if [ "$rc" -eq 0 ] && grep -q "^usage: emqlite .*$cmd" "$tmp/out"; then
            pass
        else
            fail "$cmd --help"
        fi
    done
}
