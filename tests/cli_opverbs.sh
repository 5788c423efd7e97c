#!/bin/sh
# cli_opverbs.sh — issue 34's operator commands, end to end: run-now (by
# id, due before an instant, all), requeue by count, by age and with an
# edited payload (item 5); mint, tenant names, lane enqueue by name,
# lane enqueue-many and work --lanes (item 7); work keeping the command's
# stderr as last_error (item 3). `emqlite check` is clean after each
# operator verb. Time is pinned with EMQLITE_NOW_MS; nothing sleeps.
# Run by `make check` from the build directory, or by hand:
# EMQLITE=/path/to/emqlite sh cli_opverbs.sh. Prints "N passed, N failed".

. "$(dirname "$0")/cli_harness.sh"
cli_setup cli_opverbs opv opv.db


T0=1767225600000            # 2026-01-01T00:00:00.000Z
J1=JOB00000000001
J2=JOB00000000002
J3=JOB00000000003
J4=JOB00000000004
J5=JOB00000000005

# clean NAME: `emqlite check` finds no violation
clean() {
    at $T0 check
    rc_is "$1: check is clean" 0
}

# dead Q ID: enqueue ID and dead-letter it with error "boom"
dead() {
    at $T0 enqueue "$1" p --id "$2"
    at $T0 claim "$1"
    at $T0 retry "$1" "$2" 1 --max 1 --error boom
}

# --------------------------------------------------------------- help

helps run-now mint tenant requeue

# ------------------------------------------------------------ run-now

at $T0 enqueue s a --id $J1 --in 1h
at $T0 enqueue s b --id $J2 --at $((T0 + 86400000))
at $T0 enqueue s c --id $J3 --in 1m
at $T0 enqueue s d --id $J4
at $T0 run-now s $J2 $J4 $J1
rc_is "run-now by id" 0
out_is "run-now says which moved" "$J2 moved
$J4 not_scheduled
$J1 moved"
at $T0 list s --state scheduled
out_has "the third stays scheduled" "^$J3 "
clean "run-now by id"
at $T0 --json run-now s $J3 $J5
json "run-now --json"
out_has "run-now --json names each" '"id":"JOB00000000003","result":"moved"'
out_has "run-now --json counts" '"moved":1,'
at $T0 enqueue s e --id $J5 --in 2h
at $T0 enqueue s f --id JOB00000000006 --in 3h
at $T0 run-now s --due-before now+150m
out_is "run-now --due-before moves what is due by then" "moved 1"
at $T0 --json run-now s --all --batch 1
json "run-now --all --json"
out_has "run-now --all takes the rest, batch by batch" '"moved":1}'
clean "run-now --due-before and --all"
at $T0 run-now s
rc_is "run-now without ids or --all is a usage error" 1
at $T0 run-now s nope
rc_is "run-now refuses an invalid id" 1
err_has "naming the argument" 'ID'

# ------------------------------------------------ requeue by count, age

for j in $J1 $J2 $J3; do dead d $j; done
young=$(EMQLITE_NOW_MS= "$EMQLITE" --db "$db" mint)
dead d "$young"
at $T0 requeue d --dead --count 2
out_is "requeue --count requeues the oldest N in one transaction" \
    "requeued 2 skipped 0"
clean "requeue --count"
at $T0 --json requeue d --dead --all --older-than 1d
json "requeue --older-than --json"
out_has "--older-than takes the ids minted before now - 1d" \
    '"requeued":1,"skipped":0'
at $T0 list d --state dead
out_has "the young dead job stays" "^$young "
check "only it" "$(wc -l <"$tmp/out")" -eq 1
at $T0 requeue d --dead --count 5 --minted-before 2024-01-01T00:00:00Z
out_is "--minted-before the epoch: none" "requeued 0 skipped 0"
clean "requeue --older-than"
at $T0 requeue d --dead
rc_is "--dead needs --all or --count" 1
at $T0 requeue d --dead --count 0
rc_is "--count 0 is refused" 1

# ---------------------------------------------- requeue --payload (edit)

at $T0 requeue d "$young" --payload fixed
rc_is "requeue --payload of a dead job" 0
out_is "says the payload was replaced" "requeued $young (payload replaced)"
at $T0 job d "$young"
out_has "the payload is the new one" '^payload +fixed$'
# The row's fields come before the kept record (which keeps the error the
# job died with, and its history).
if sed -n '/^-- kept/q;p' "$tmp/out" | grep -q '^last_error'; then
    fail "last_error was cleared"; else pass; fi
clean "requeue --payload"
at $T0 requeue d "$young" --payload again
rc_is "requeue --payload of a pending job: EMQSTATE" 12
err_has "the refusal says which states" 'not dead or scheduled'
at $T0 enqueue r x --id $J1
at $T0 claim r
at $T0 retry r $J1 1 --delay 1h --error flaky
echo 'from stdin' | env EMQLITE_NOW_MS=$T0 "$EMQLITE" --db "$db" --json \
    requeue r $J1 --payload - >"$tmp/out" 2>"$tmp/err"
rc=$?
out=$(cat "$tmp/out")
rc_is "requeue --payload - of a failed (scheduled) job" 0
json "requeue --payload --json"
at $T0 claim r
out_has "it runs now with the payload from stdin" '^from stdin$'
at $T0 requeue r JOB00000000009 --payload x
rc_is "requeue --payload of no job: gone" 6

# ------------------------------------------------------ mint and tenants

e mint PRT
rc_is "mint PRT" 0
out_has "prints a PRT branded id" '^PRT[0-9A-Za-z]{11}$'
e --json mint
json "mint --json"
out_has "JOB by default" '"namespace":"JOB"'
e mint abc
rc_is "mint refuses a namespace that is not 3 capitals" 1
err_has "naming the rule and the value" "3 capitals.*'abc'"
e export --out "$tmp/before.exp"
e tenant acme
rc_is "tenant NAME" 0
acme=$out
check "tenant NAME prints a PRT id" "$(echo "$acme" | cut -c1-3)" = PRT
e tenant acme
out_is "the same id every time" "$acme"
e export --out "$tmp/after.exp"
if cmp -s "$tmp/before.exp" "$tmp/after.exp"; then pass; else
    fail "a tenant name changes no byte of the export"; fi
e lane enqueue t acme hello
rc_is "lane enqueue takes a tenant name" 0
e lane depth t "$acme"
out_is "the job is in acme's lane" "1"
printf 'globex g1\nacme a2\n\nglobex g2\n%s a3\n' "$acme" >"$tmp/lines"
e lane enqueue-many t "$tmp/lines"
rc_is "lane enqueue-many" 0
out_is "lane enqueue-many counts" "enqueued 4 duplicate 0"
e tenant --list
out_has "tenant --list shows globex" "^PRT[0-9A-Za-z]{11} globex$"
check "two tenants" "$(wc -l <"$tmp/out")" -eq 2
e --json tenant --list
json "tenant --list --json"
globex=$(sed -n 's/^\(PRT[^ ]*\) globex$/\1/p' "$tmp/out" 2>/dev/null)
e tenant globex
globex=$out
e tenant --id "$globex"
out_is "tenant --id names the group" "globex"
e tenant --id PRT0KHTOWnGLuC
rc_is "tenant --id of an unnamed group: gone" 6
e lane depth t "$acme" "$globex"
out_is "depth per lane" "$acme 3
$globex 2"
printf 'no-payload-line\n' >"$tmp/lines"
e lane enqueue-many t - <"$tmp/lines"
rc_is "a line without a payload is refused" 1
err_has "naming the line" 'line 1'
e lane enqueue t 'a b' x
rc_is "a tenant name with a space is refused" 1
err_has "naming the value and the rule" "'a b'.*1 to 128 characters"
at $T0 check
rc_is "lanes by name: check is clean" 0

# ------------------------------------------------------ work --lanes

e enqueue t flat --id $J1
run env EMQLITE_NOW_MS= timeout 60 "$EMQLITE" --db "$db" work t --lanes \
    --no-pump --timeout 1s -- sh -c 'cat; echo'
rc_is "work --lanes" 0
check "it ran the five lane jobs" "$(grep -c ' 1 done$' "$tmp/out")" -eq 5
# fair: acme and globex alternate while both have work
order=$(grep -v ' done$' "$tmp/out" | tr '\n' ' ')
case "$order" in
    "hello g1 a2 g2 a3 "|"g1 hello g2 a2 a3 ") pass ;;
    *) fail "work --lanes serves the lanes in turn (got: $order)" ;;
esac
e list t --state pending
out_has "the flat job is left to a flat worker" "^$J1 "

# ------------------------------------------- work keeps stderr (item 3)

e enqueue w pay --id $J2
run env EMQLITE_NOW_MS= timeout 60 "$EMQLITE" --db "$db" work w --once \
    --max-attempts 1 -- sh -c 'cat >/dev/null; echo "connecting" >&2;
                               echo "card declined" >&2; exit 3'
rc_is "work with a failing command" 0
err_has "stderr still reaches the terminal" '^card declined$'
e job w $J2
out_has "last_error holds the exit and the stderr tail" \
    '^last_error +exit 3: connecting\\ncard declined$'
e enqueue w pay --id $J3
run env EMQLITE_NOW_MS= timeout 60 "$EMQLITE" --db "$db" work w --once \
    --max-attempts 1 --keep-stderr 16 -- \
    sh -c 'seq 1 1000 >&2; exit 4'
e job w $J3
out_has "--keep-stderr bounds it: the last lines, the cut marked" \
    '^last_error +exit 4: \.\.\.99[0-9]\\n.*\\n1000$'
e enqueue w pay --id $J4
run env EMQLITE_NOW_MS= timeout 60 "$EMQLITE" --db "$db" work w --once \
    --max-attempts 1 --keep-stderr 0 -- sh -c 'echo quiet >&2; exit 5'
e job w $J4
out_has "--keep-stderr 0: the exit status alone" '^last_error +exit 5$'
head -c 200000 /dev/zero | tr '\0' x >"$tmp/big"
e enqueue w - --id $J5 <"$tmp/big"
rc_is "a 200000-byte payload" 0
run env EMQLITE_NOW_MS= timeout 60 "$EMQLITE" --db "$db" work w --once \
    --timeout 10s \
    -- sh -c 'seq 1 20000 >&2; wc -c'
rc_is "a big payload and a chatty stderr do not deadlock" 0
out_has "the payload arrived whole" '^200000$'
e work w --keep-stderr 70000 -- true
rc_is "--keep-stderr above 65536 is refused" 1

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
