#!/bin/sh
# transfer_cli.sh — the transfer commands that need no server: export
# (stdout, --out, --queue, --by-slot, --json, summary), import (file, stdin,
# every refusal with its byte offset and exit status, nothing applied on a
# refusal), check (clean, notes, violations, --json), and how push, pull and
# verify fail without a server (or, in a build without hiredis, say so with
# exit 10). Run from the build directory by `make check`. Prints
# "N passed, N failed" last.
LC_ALL=C
export LC_ALL
unset EMQLITE_DB EMQLITE_NOW_MS EMQLITE_BUSY_TIMEOUT EMQLITE_PROGRESS

bin=${EMQLITE:-$(pwd)/emqlite}
if [ ! -x "$bin" ]; then
    echo "transfer_cli: $bin not found (run from the build directory)" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
# Under the CI's valgrind run every emqlite runs under memcheck.
E=$bin
if [ -n "${EMQ_VALGRIND:-}" ]; then
    E="valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible $bin"
fi
w=$(mktemp -d "${TMPDIR:-/tmp}/emqlite-transfer.XXXXXX") || exit 1
trap 'rm -rf "$w"' EXIT
passed=0
failed=0

pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; cat "$w/out" "$w/err" 2>/dev/null | head -20 | sed 's/^/    /'; }

# rc_is NAME WANT CMD...: CMD's exit status is WANT (stdout in out, stderr in err).
rc_is() {
    name=$1 want=$2
    shift 2
    "$@" >"$w/out" 2>"$w/err"
    rc=$?
    if [ "$rc" -eq "$want" ]; then pass; else fail "$name: exit $rc, want $want"; fi
}
has() { # has NAME FILE REGEX
    if grep -Eq -- "$3" "$2"; then pass; else fail "$1 (no /$3/ in $2)"; fi
}
hasnt() {
    if grep -Eaq -- "$3" "$2"; then fail "$1 (/$3/ found)"; else pass; fi
}
same() { # same NAME A B
    if cmp -s "$2" "$3"; then pass; else fail "$1: $2 and $3 differ"; fi
}

at() { # at MS ARGS...: emqlite on db with the clock pinned
    ms=$1
    shift
    env EMQLITE_NOW_MS="$ms" $E --db "$db" "$@"
}

# ------------------------------------------------------------- a file

db=$w/a.db
at 1000 enqueue mail "first" >/dev/null
printf 'bin\000ary\r\n\377' | at 1000 enqueue mail >/dev/null
at 1000 enqueue mail third >/dev/null
at 1000 enqueue-many other <<EOF >/dev/null
x
y
EOF
at 1000 enqueue mail later --at 90000 >/dev/null
at 2000 claim mail --lease 5000 >"$w/claim"
set -- $(head -n 1 "$w/claim")
at 2000 retry mail "$1" "$2" --max 1 --error "gave up" >/dev/null
at 2000 claim mail --lease 5000 >"$w/claim"
set -- $(head -n 1 "$w/claim")
at 2000 complete mail "$1" "$2" >/dev/null
at 2000 claim mail --lease 5000 >/dev/null
at 2000 pause other >/dev/null

# --------------------------------------------------------------- export

rc_is "export to stdout" 0 $E --db "$db" export
cp "$w/out" "$w/a.resp"
has "the summary goes to stderr" "$w/err" '^exported [0-9]+ keys, [0-9]+ commands, [0-9]+ bytes, digest [0-9a-f]{16}$'
summary=$(cat "$w/err")
bytes=$(wc -c <"$w/a.resp" | tr -d ' ')
has "the summary counts the bytes written" "$w/err" " $bytes bytes,"
has "the stream starts with the version SET" "$w/a.resp" '^\*3'
rc_is "export --out" 0 $E --db "$db" export --out "$w/b.resp"
same "stdout and --out give the same bytes" "$w/a.resp" "$w/b.resp"
if [ "$summary" = "$(cat "$w/err")" ]; then pass; else fail "two exports, two summaries"; fi
rc_is "export --queue mail" 0 $E --db "$db" export --queue mail --out "$w/m.resp"
has "--queue keeps mail" "$w/m.resp" 'emq:\{mail\}:dead'
hasnt "--queue drops other" "$w/m.resp" 'emq:\{other\}'
rc_is "export --queue mail --queue other" 0 $E --db "$db" export --queue other --queue=mail --out "$w/mo.resp"
same "both queues are the whole file" "$w/a.resp" "$w/mo.resp"
rc_is "export --by-slot" 0 $E --db "$db" export --by-slot --out "$w/s.resp"
has "--by-slot wraps slots in MULTI" "$w/s.resp" 'MULTI'
rc_is "export --queue with a bad name" 1 $E --db "$db" export --queue 'no{pe'
rc_is "export --json without --out" 1 $E --db "$db" --json export
rc_is "export --json --out" 0 $E --db "$db" --json export --out "$w/j.resp"
has "export --json shape" "$w/out" '^\{"out":"[^"]*j\.resp","keys":[0-9]+,"commands":[0-9]+,"bytes":'"$bytes"',"digest":"[0-9a-f]{16}","unheld":\[\],"other_queues":\[\]\}$'
rc_is "export of a missing file" 9 $E --db "$w/none.db" export
if [ -e "$w/none.db" ]; then fail "export created the missing file"; else pass; fi
rc_is "export into an unwritable path" 9 $E --db "$db" export --out "$w/no/such/dir/x"
EMQLITE_PROGRESS=1 $E --db "$db" export --out "$w/p.resp" 2>"$w/err" >"$w/out"
has "a progress line when asked" "$w/err" 'export: [0-9]+ MiB written'

# --------------------------------------------------------------- import

rc_is "import a file" 0 $E --db "$w/b.db" import "$w/a.resp"
has "import summary" "$w/out" '^imported [0-9]+ commands \('"$bytes"' bytes\); the file holds [0-9]+ keys, digest [0-9a-f]{16}$'
digest=$(sed -n 's/.*digest \([0-9a-f]*\)$/\1/p' "$w/out")
has "the imported digest is the exported one" "$w/out" "digest $(printf '%s' "$summary" | sed 's/.*digest //')"
rc_is "export the imported file" 0 $E --db "$w/b.db" export --out "$w/b2.resp"
same "export -> import -> export is byte-identical" "$w/a.resp" "$w/b2.resp"
rc_is "import from stdin" 0 sh -c "$E --db '$w/c.db' import <'$w/s.resp'"
rc_is "export after a by-slot import" 0 $E --db "$w/c.db" export --out "$w/c.resp"
same "a by-slot stream imports to the same keyspace" "$w/a.resp" "$w/c.resp"
rc_is "import --json" 0 $E --db "$w/d.db" --json import - <"$w/a.resp"
has "import --json shape" "$w/out" '^\{"in":"-","commands":[0-9]+,"bytes":'"$bytes"',"keys":[0-9]+,"digest":"'"$digest"'"\}$'

version='*3\r\n$3\r\nSET\r\n$13\r\n{emq}:version\r\n$12\r\necho'"mq:4.0.0"'\r\n'
printf "$version"'*1\r\n$4\r\nPING\r\n' >"$w/ping.resp"
rc_is "import of an unknown command" 1 $E --db "$w/b.db" import "$w/ping.resp"
has "the refusal names the byte offset" "$w/err" "^emqlite: malformed: import refused at byte 52: unknown command 'PING'$"
printf "$version"'*3\r\n$3\r\nSET\r\n$9\r\nnot:a:key\r\n$1\r\nx\r\n' >"$w/key.resp"
rc_is "import of a key outside the grammar" 1 $E --db "$w/b.db" import "$w/key.resp"
has "... names its offset and key" "$w/err" "import refused at byte 52: key outside the EchoMQ grammar 'not:a:key'"
head -c $((bytes - 3)) "$w/a.resp" >"$w/trunc.resp"
rc_is "import of a truncated stream" 1 $E --db "$w/b.db" import "$w/trunc.resp"
has "... says truncated" "$w/err" 'import refused at byte [0-9]+: truncated frame'
printf '*3\r\n$3\r\nSET\r\n$13\r\n{emq}:version\r\n$12\r\nechomq:2.0.0\r\n' >"$w/v3.resp"
rc_is "import of another wire" 7 $E --db "$w/b.db" import "$w/v3.resp"
printf '*2\r\n$3\r\nGET\r\n$1\r\nx\r\n' | tail -c 0 >"$w/empty.resp"
rc_is "import of an empty stream (no version)" 7 $E --db "$w/b.db" import "$w/empty.resp"
rc_is "import of a missing file" 9 $E --db "$w/b.db" import "$w/none.resp"
# Issue 27 item 7: an export cut at a command boundary (its end record
# gone) is refused, naming where it ends; --raw takes a bare stream.
end_at=$(grep -abo 'ECHO' "$w/a.resp" | tail -n 1 | cut -d: -f1)
cut_at=$((end_at - 8)) # "*2\r\n$4\r\n" before the ECHO
head -c "$cut_at" "$w/a.resp" >"$w/cut.resp"
has "an export ends with its end record" "$w/a.resp" 'emqlite-export-end 1 commands=[0-9]+ bytes='"$cut_at"' xxh3=[0-9a-f]{16}'
rc_is "import of an export cut at a command boundary" 1 $E --db "$w/b.db" import "$w/cut.resp"
has "... names where it ends" "$w/err" "^emqlite: malformed: import refused at byte $cut_at: the stream ends after [0-9]+ commands without the export's end record"
rc_is "import --raw of a bare stream" 0 $E --db "$w/raw.db" import --raw "$w/cut.resp"
rc_is "the refused imports changed nothing" 0 $E --db "$w/b.db" export --out "$w/b3.resp"
same "... byte for byte" "$w/a.resp" "$w/b3.resp"

# ---------------------------------------------------------------- check

rc_is "check a clean file" 0 $E --db "$db" check
has "check prints the counts" "$w/out" '^0 violations, [0-9]+ notes?$'
rc_is "check --json" 0 $E --db "$db" --json check
has "check --json shape" "$w/out" '^\{"ok":true,"violations":0,"notes":[0-9]+,"findings":\[.*\]\}$'
rc_is "check of a missing file" 9 $E --db "$w/none.db" check
# A pending member with a non-zero score: no transition writes that.
printf "$version"'*4\r\n$4\r\nZADD\r\n$17\r\nemq:{bad}:pending\r\n$1\r\n5\r\n$14\r\nJOB00000000001\r\n' >"$w/bad.resp"
rc_is "import refuses what check rejects" 1 $E --db "$w/bad.db" import --raw "$w/bad.resp"
has "... naming the rule, the key and the offset" "$w/err" "^emqlite: malformed: import refused at byte 52: score violation on emq:\{bad\}:pending: member JOB00000000001 has score 5 \(expected 0\)$"
rc_is "... and applies nothing" 0 $E --db "$w/bad.db" check
rc_is "import --unchecked takes it (a forensic copy)" 0 $E --db "$w/bad.db" import --raw --unchecked "$w/bad.resp"
rc_is "check finds a violation" 11 $E --db "$w/bad.db" check
has "each finding on a line" "$w/out" '^violation +[a-z-]+ +emq:\{bad\}:pending +'
has "the count of violations" "$w/out" '^[1-9][0-9]* violations?, [0-9]+ notes?$'
has "and a line on stderr" "$w/err" '^emqlite: check: [1-9][0-9]* invariant violations? in '
rc_is "check --json with a violation" 11 $E --db "$w/bad.db" --json check
has "check --json lists it" "$w/out" '^\{"ok":false,"violations":[1-9][0-9]*,"notes":[0-9]+,"findings":\[\{"severity":"violation","code":"[a-z-]+","key":"emq:\{bad\}:pending","message":'

# ------------------------------------------- push, pull, verify: no server

for cmd in "push --to" "pull --from" "verify --against"; do
    set -- $cmd
    rc_is "$1 --help" 0 $E "$1" --help
    $E --db "$db" $cmd 127.0.0.1:1 >"$w/out" 2>"$w/err"
    rc=$?
    if grep -q 'built without hiredis' "$w/err"; then
        if [ $rc -eq 10 ]; then pass; else fail "$1 without hiredis: exit $rc, want 10"; fi
    elif [ $rc -eq 9 ] && grep -q 'emqlite: io: 127.0.0.1:1: cannot connect' "$w/err"; then
        pass
    else
        fail "$1 to a closed port: exit $rc, want 9"
    fi
done
if ! grep -q 'built without hiredis' "$w/err"; then
    rc_is "push without --to" 1 $E --db "$db" push
    rc_is "verify --against a bad spec" 1 $E --db "$db" verify --against host:99999
    rc_is "push of a missing file touches no server" 9 $E --db "$w/none.db" push --to 127.0.0.1:1
    has "... and names the file" "$w/err" 'none\.db: No such file'
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
