#!/bin/sh
# cli_files.sh — the emqlite tool and its file (issue 12, items 6-8):
#   - `--db ""` and `--db :memory:` (and EMQLITE_DB=:memory:) are refused
#     with a message: the library's in-memory database would vanish with
#     the command, and the job with it;
#   - the commands that only read (stats, job, browse, check, export,
#     verify, push) open the file read-only: a missing file is reported
#     with its path and nothing is created, an existing one gets no side
#     file, and check works on a read-only mount and on a file the user may
#     not write;
#   - every numeric argument follows one strict rule: an optional '-' and
#     digits, nothing else (no leading space, tab, newline or VT, no '+').
# Run by `make check` from the build directory. Prints "N passed, N failed".

LC_ALL=C
export LC_ALL
unset EMQLITE_DB EMQLITE_NOW_MS EMQLITE_BUSY_TIMEOUT

EMQLITE=${EMQLITE:-$(pwd)/emqlite}
if [ ! -x "$EMQLITE" ]; then
    echo "cli_files: $EMQLITE not found"
    echo "0 passed, 1 failed"
    exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/emqlite-files.XXXXXX") || exit 1
mnt=
cleanup() {
    [ -n "$mnt" ] && umount -l "$mnt" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
passed=0
failed=0

# em ARGS...: run emqlite in $tmp/work; $rc, stderr in $tmp/err.
mkdir "$tmp/work"
em() {
    (cd "$tmp/work" && "$EMQLITE" "$@") >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
}
ok() { passed=$((passed + 1)); }
bad() {
    failed=$((failed + 1))
    echo "FAIL: $1 (exit $rc)"
    echo "  stderr: $(head -c 300 "$tmp/err")"
}
# expect NAME STATUS [ERE]: the exit status, and stderr matching ERE
expect() {
    if [ "$rc" -ne "$2" ]; then bad "$1: want exit $2"; return; fi
    if [ -n "${3:-}" ] && ! grep -Eq -- "$3" "$tmp/err"; then
        bad "$1: stderr !~ $3"
        return
    fi
    ok
}
# listing: what the work directory holds
listing() { (cd "$tmp/work" && ls -A); }
# nothing_new NAME BEFORE: the work directory still holds BEFORE
nothing_new() {
    if [ "$(listing)" = "$2" ]; then ok; else
        rc=0
        bad "$1: created $(listing | tr '\n' ' ')"
    fi
}

# ------------------------------------------------------------- item 6

before=$(listing)
em --db "" enqueue q hello
expect 'enqueue --db ""' 1 'empty'
em --db :memory: enqueue q hello
expect 'enqueue --db :memory:' 1 'in-memory'
em --db= stats
expect 'stats --db=' 1 'empty'
(cd "$tmp/work" && EMQLITE_DB=:memory: "$EMQLITE" enqueue q hello) \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
expect 'EMQLITE_DB=:memory: enqueue' 1 'in-memory'
em enqueue q hello --db ""
expect 'enqueue ... --db ""' 1 'empty'
nothing_new 'refused --db' "$before"

# ------------------------------------------------------------- item 7

before=$(listing)
for cmd in "stats" "job q JOB00000000001" "browse q" "check" "export" \
    "verify --against 127.0.0.1:9"; do
    # shellcheck disable=SC2086
    em --db typo.db $cmd
    case $cmd:$rc in verify*:10) ok; continue ;; esac # built without hiredis
    expect "$cmd on a missing file" 9 'typo\.db'
done
nothing_new 'read commands on a missing file' "$before"

em --db real.db enqueue q hello
expect 'enqueue creates the file' 0
rm -f "$tmp/work/real.db-emqnode" "$tmp/work/real.db-emqlock"
before=$(listing)
for cmd in "stats" "job q JOB00000000001" "browse q" "check"; do
    # shellcheck disable=SC2086
    em --db real.db $cmd
    case $cmd in job*) want=6 ;; *) want=0 ;; esac
    expect "$cmd on an existing file" $want
done
em --db real.db export --out "$tmp/dump.resp"
expect 'export on an existing file' 0
case $(listing | tr '\n' ' ') in
*emqnode* | *emqlock*)
    rc=0
    bad "read commands created a side file: $(listing | tr '\n' ' ')"
    ;;
*) ok ;;
esac

# check on a read-only mount (root: a bind mount remounted read-only)
if [ "$(id -u)" = 0 ] && mkdir "$tmp/src" "$tmp/ro" &&
    cp "$tmp/work/real.db" "$tmp/src/" &&
    mount --bind "$tmp/src" "$tmp/ro" 2>/dev/null; then
    mnt=$tmp/ro
    if mount -o remount,bind,ro "$tmp/ro" 2>/dev/null; then
        em --db "$tmp/ro/real.db" check
        expect 'check on a read-only mount' 0 ''
        em --db "$tmp/ro/real.db" stats
        expect 'stats on a read-only mount' 0
        em --db "$tmp/ro/real.db" enqueue q x
        expect 'enqueue on a read-only mount' 9 'real\.db'
    else
        echo "cli_files: remount read-only refused; the mount case is skipped"
    fi
    umount -l "$tmp/ro"
    mnt=
else
    echo "cli_files: no read-only mount here (not root, or mount refused);" \
        "skipped"
fi

# check on a file the user may not write, in a directory it may not write
# (as root: as uid 65534, which must be able to run the tool where it was
# built; a build under a private directory such as mktemp -d's is not)
asother() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
root_setpriv=
[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && root_setpriv=1
if [ -n "$root_setpriv" ] && ! asother "$EMQLITE" version >/dev/null 2>&1; then
    echo "cli_files: uid 65534 cannot run $EMQLITE (a private build" \
        "directory); the read-only file case is skipped"
elif [ -n "$root_setpriv" ]; then
    mkdir "$tmp/locked" && cp "$tmp/work/real.db" "$tmp/locked/" &&
        chmod 0444 "$tmp/locked/real.db" && chmod 0755 "$tmp/locked" "$tmp"
    asother "$EMQLITE" --db "$tmp/locked/real.db" check >"$tmp/out" \
        2>"$tmp/err"
    rc=$?
    expect 'check on a read-only file, as another user' 0
elif [ "$(id -u)" != 0 ]; then
    mkdir "$tmp/locked" && cp "$tmp/work/real.db" "$tmp/locked/" &&
        chmod 0444 "$tmp/locked/real.db" && chmod 0555 "$tmp/locked"
    em --db "$tmp/locked/real.db" check
    expect 'check on a read-only file' 0
    chmod 0755 "$tmp/locked"
else
    echo "cli_files: no setpriv; the read-only file case is skipped"
fi

# ------------------------------------------------------------- item 8

tab=$(printf '\t')
nl=$(printf '\nx')
nl=${nl%x}
vt=$(printf '\v')
for bad_num in "${tab}5" "${nl}5" "${vt}5" " 5" "+5" "5 " "5${nl}" "0x5" \
    "5e2" "" "-" "99999999999999999999"; do
    shown=$(printf '%s' "$bad_num" | od -An -c | tr -s ' ')
    em --db n.db claim q --lease "$bad_num"
    expect "claim --lease '$shown'" 1 'must be a duration'
    em --db n.db retry q JOB00000000001 1 --delay "$bad_num"
    expect "retry --delay '$shown'" 1 'must be a duration'
    em --db n.db retry q JOB00000000001 1 --max "$bad_num"
    expect "retry --max '$shown'" 1 'decimal integer'
    em --db n.db complete q JOB00000000001 "$bad_num"
    expect "complete TOKEN '$shown'" 1 'decimal integer'
    em --db n.db extend q JOB00000000001 1 --lease "$bad_num"
    expect "extend --lease '$shown'" 1 'must be a duration'
    em --db n.db enqueue q x --at "$bad_num"
    expect "enqueue --at '$shown'" 1 'must be an instant'
    em --db n.db enqueue q x --in "$bad_num"
    expect "enqueue --in '$shown'" 1 'must be a duration'
    em --db n.db promote q --batch "$bad_num"
    expect "promote --batch '$shown'" 1 'decimal integer'
    em --db n.db browse q -n "$bad_num"
    expect "browse -n '$shown'" 1 'decimal integer'
    [ -z "$bad_num" ] && continue # an empty variable means "unset"
    (cd "$tmp/work" && EMQLITE_BUSY_TIMEOUT=$bad_num "$EMQLITE" --db n.db \
        enqueue q x) >"$tmp/out" 2>"$tmp/err"
    rc=$?
    expect "EMQLITE_BUSY_TIMEOUT='$shown'" 1 'must be a duration'
    (cd "$tmp/work" && EMQLITE_NOW_MS=$bad_num "$EMQLITE" --db n.db \
        enqueue q x) >"$tmp/out" 2>"$tmp/err"
    rc=$?
    expect "EMQLITE_NOW_MS='$shown'" 1 'decimal integer'
done
# the same rule accepts what it should
em --db n.db enqueue q x --in 5
expect 'enqueue --in 5' 0
em --db n.db claim q --lease 05
expect 'claim --lease 05 (empty queue)' 2
em --db n.db promote q --batch -1
expect 'promote --batch -1 (a gate, not the parser)' 1 'invalid'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
