#!/bin/sh
# newcomer.sh — the small things a newcomer tripped on (issue 34 item 9):
#  - the man page renders (groff -man) without a warning and without lines
#    run together by an alternating-font macro (.BR 30s ). Prints, ...);
#  - `pkg-config --cflags emqlite` adds no hiredis include path;
#  - the side files of a file and emqlite.sym are ignored by git;
#  - a bare number below 1000 as a duration warns; claim says why it is
#    empty; progress prints ok when it sets; counts says "scheduled".
# Run by `make check` from the build directory (srcdir set), or by hand:
# srcdir=.. EMQLITE=./emqlite sh newcomer.sh. MAN=FILE renders FILE instead
# of doc/emqlite.1. Prints "N passed, N failed".

LC_ALL=C
export LC_ALL
unset EMQLITE_DB EMQLITE_NOW_MS EMQLITE_BUSY_TIMEOUT

top=$(pwd)
src=${srcdir:-$(dirname "$0")/..}
EMQLITE=${EMQLITE:-$top/emqlite}
MAN=${MAN:-$src/doc/emqlite.1}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/emqlite-newcomer.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
db=$tmp/n.db
: >"$tmp/out"
: >"$tmp/err"
passed=0
failed=0

. "$src/tests/cli_harness.sh"

# ------------------------------------------------------------ the man page

if command -v groff >/dev/null 2>&1; then
    # Wide lines, no adjustment: words joined by the source stay joined,
    # and nothing is hyphenated apart.
    groff -man -Tascii -ww -rLL=250n -P-c -P-b -P-u "$MAN" \
        >"$tmp/man.txt" 2>"$tmp/man.err"
    rc=$?
    rc_is "groff renders the man page" 0
    if [ -s "$tmp/man.err" ]; then
        failed=$((failed + 1))
        echo "FAIL: groff warns:"; sed 's/^/  /' "$tmp/man.err" | head -20
    else
        pass
    fi
    # Run-together lines: punctuation glued to the next sentence
    # ("30s).Prints"), words glued at a comma ("Prints,perjob"), two
    # numbers glued ("17961408000002026": a 13-digit ms and a year).
    if grep -nE '[a-z0-9][).,;:]+[A-Z][a-z]+|[A-Za-z],[a-z]|[0-9]{14,}' \
        "$tmp/man.txt" >"$tmp/glued"; then
        failed=$((failed + 1))
        echo "FAIL: the man page renders lines run together:"
        sed 's/^/  /' "$tmp/glued" | cut -c1-200
    else
        pass
    fi
    grep -q 'a DURATION is a number of milliseconds' "$tmp/man.txt" &&
        fail "the operator section still says a DURATION is milliseconds" ||
        pass
else
    echo "newcomer: groff not found: the man page is not rendered (SKIP)"
fi

# ------------------------------------------------------------- pkg-config

if command -v pkg-config >/dev/null 2>&1 && [ -f "$top/emqlite.pc" ]; then
    cf=$(PKG_CONFIG_PATH="$top" pkg-config --cflags emqlite 2>"$tmp/err")
    rc=$?
    rc_is "pkg-config --cflags emqlite" 0
    case "$cf" in
        *hiredis*) fail "pkg-config --cflags emqlite adds hiredis ($cf)" ;;
        *) pass ;;
    esac
    if grep -q '^Requires.*hiredis' "$top/emqlite.pc"; then
        fail "emqlite.pc requires hiredis (its Cflags reach every user)"
    else
        pass
    fi
fi

# --------------------------------------------------------------- .gitignore

if command -v git >/dev/null 2>&1 &&
    git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    for f in emqlite.db emqlite.db-emqlock emqlite.db-emqwake \
             emqlite.db-emqnode emqlite.db-shm emqlite.db-wal emqlite.sym; do
        if git -C "$src" check-ignore -q "$f"; then pass; else
            fail "git ignores $f (the demo's side files)"; fi
    done
fi

# --------------------------------------------------------- the tool's words

if [ -x "$EMQLITE" ]; then
    e enqueue q x --in 90
    rc_is "a bare 90 is still accepted" 0
    err_is "with a warning that says what to write" \
        "emqlite: enqueue: warning: --in 90 is 90 milliseconds; write 90ms to mean that, or 90s for seconds"
    e enqueue q x --in 90s
    err_is "90s: no warning" ""
    e enqueue q x --in 30000
    err_is "a bare 30000 (clearly ms): no warning" ""
    e claim q --lease 500
    err_has "lease 500 warns too" 'warning: --lease 500 is 500 milliseconds'
    e claim q
    err_is "empty: says there is no pending job" \
        "emqlite: empty: nothing to claim: no pending job"
    e pause q
    e claim q
    rc_is "claim on a paused queue" 2
    err_is "says the queue is paused" \
        "emqlite: empty: nothing to claim: the queue is paused (emqlite resume QUEUE)"
    e resume q
    e enqueue q y --id JOB00000000001
    e progress q JOB00000000001 40%
    out_is "progress prints ok when it sets" "ok"
    e counts q
    out_has "counts says scheduled" '^scheduled +[0-9]+$'
    e --json counts q
    out_has "counts --json says scheduled, as stats does" '"scheduled":[0-9]+'
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
