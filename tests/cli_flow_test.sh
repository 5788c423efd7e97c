#!/bin/sh
# cli_flow_test.sh — the emqlite tool's flow commands end to end: flow add
# from a JSON tree on stdin (minted and given ids, a bulk, every refusal),
# flow show (text and --json) as the flow completes, flow sweep, flow
# recover, the registry's `call flow_add`, and their exit statuses.
#
# Run by `make check` from the build directory (./emqlite), or by hand:
# EMQLITE=/path/to/emqlite sh cli_flow_test.sh. Uses a temporary directory
# and --db; nothing sleeps. Prints "N passed, N failed" last.

. "$(dirname "$0")/cli_harness.sh"
cli_setup cli_flow_test flow f.db

# e ARGS... [< input]: run emqlite on the test file; stdout in $out, $rc.
e() {
    "$EMQLITE" --db "$db" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    out=$(cat "$tmp/out")
}
pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $1"
    echo "  exit $rc; stdout: $(head -c 600 "$tmp/out")"
    echo "  stderr: $(head -c 300 "$tmp/err")"
}
rc_is() { if [ "$rc" -eq "$2" ]; then pass; else fail "$1 (exit $rc, want $2)"; fi; }
out_is() { if [ "$out" = "$2" ]; then pass; else fail "$1 (stdout != '$2')"; fi; }
out_has() { if grep -Eq -- "$2" "$tmp/out"; then pass; else fail "$1 (stdout !~ $2)"; fi; }
err_has() { if grep -Eq -- "$2" "$tmp/err"; then pass; else fail "$1 (stderr !~ $2)"; fi; }

P=JOB00000000001 C1=JOB00000000002 C2=JOB00000000003 S=JOB00000000004
G=JOB00000000005

# ------------------------------------------------------------------ help

e flow --help
rc_is "flow --help exits 0" 0
out_has "flow --help: usage" '^usage: emqlite .*flow add QUEUE'
e flow
rc_is "flow without a command: usage" 1
e flow bogus
rc_is "an unknown flow command: usage" 1

# ------------------------------------------------------------------- add

cat >"$tmp/tree.json" <<JSON
{"parent": {"id": "$P", "payload": "the pdf"},
 "children": [
   {"id": "$C1", "payload": "page 1"},
   {"id": "$C2", "payload": {"b64": "AAE="}, "queue": "render",
    "ignore_dependency_on_failure": true},
   {"id": "$S", "payload": "appendix",
    "children": [{"id": "$G", "payload": "figure"}]}]}
JSON
e flow add docs <"$tmp/tree.json"
rc_is "flow add exits 0" 0
out_is "flow add prints the tree" "$P docs
  $C1 docs
  $C2 render (ignored on failure)
  $S docs
    $G docs"

e flow show docs $P
rc_is "flow show exits 0" 0
out_is "flow show: every node held or pending" "$P docs awaiting_children dependencies=3
  $C1 docs pending
  $C2 render pending
  $S docs awaiting_children dependencies=1
    $G docs pending"

e --json flow show docs $P
rc_is "flow show --json exits 0" 0
out_has "--json: the root" "^\{\"id\":\"$P\",\"queue\":\"docs\",\"state\":\"awaiting_children\",\"dependencies\":3,"
out_has "--json: a grandchild nested under its parent" "\"id\":\"$S\".*\"children\":\[\{\"id\":\"$G\""
check_lines() { [ "$(wc -l <"$tmp/out")" -eq 1 ]; }
if check_lines; then pass; else fail "--json: one line"; fi

e call children_values docs $P
out_is "no child has finished" "(empty)"

# ------------------------------------------------------ the flow completes

e complete render $C2 0
rc_is "complete a pending child with token 0" 0
e flow show docs $P
out_has "completed before it was claimed: removed, no fan-in" "^  $C1 docs pending$"
e claim docs
e complete docs $C1 1
rc_is "complete a same-queue child" 0
e flow show docs $P
out_has "a same-queue child fans in at once" "^  $C1 \? completed processed=$C1$"
out_has "the parent counts down" "^$P docs awaiting_children dependencies=2$"

e claim docs
e complete docs $G 1
e flow show docs $P
out_has "the grandchild released its parent" "^  $S docs pending dependencies=0$"
e claim docs
e complete docs $S 1
e flow show docs $P
out_has "the intermediate node fanned in" "^  $S \? completed processed=$S$"

# a cross-queue child: through the outbox and a sweep
printf '%s' "{\"parent\":{\"id\":\"JOB00000000011\",\"payload\":\"P2\"},\"children\":[{\"id\":\"JOB00000000012\",\"payload\":\"x\",\"queue\":\"render\"}]}" >"$tmp/cross.json"
e --json flow add docs <"$tmp/cross.json"
rc_is "flow add --json exits 0" 0
out_is "flow add --json" '{"queue":"docs","flows":[{"result":"ok","flow":{"id":"JOB00000000011","queue":"docs","policy":"fp","children":[{"id":"JOB00000000012","queue":"render","policy":"fp","children":[]}]}}]}'
e claim render
e complete render JOB00000000012 1
e flow show docs JOB00000000011
out_has "completed, waiting in the outbox" "^  JOB00000000012 render \(no row\) in_outbox=JOB00000000012$"
e flow sweep render
rc_is "flow sweep exits 0" 0
out_is "one entry delivered" "1"
e --json flow sweep render
out_is "flow sweep --json" '{"queue":"render","delivered":0}'
e flow show docs JOB00000000011
out_has "the parent is released" "^JOB00000000011 docs pending dependencies=0$"
e flow sweep render --batch 0
rc_is "a batch of 0 is refused" 1

# ------------------------------------------------------------- refusals

echo "{\"parent\":{\"id\":\"JOB00000000021\"},\"children\":[{\"id\":\"ORD0KHTOWnGLuC\"}]}" >"$tmp/kind.json"
e flow add docs <"$tmp/kind.json"
rc_is "an ORD child: exit 4" 4
err_has "EMQKIND on stderr" "EMQKIND job id must be JOB-namespaced"
e flow show docs JOB00000000021
out_is "a refused flat flow wrote nothing" "JOB00000000021 docs (no row)"

deep='{"payload":"leaf"}'
for i in 1 2 3 4 5 6 7 8; do deep="{\"payload\":\"n$i\",\"children\":[$deep]}"; done
echo "{\"parent\":{\"payload\":\"root\"},\"children\":[$deep]}" >"$tmp/deep.json"
e flow add docs <"$tmp/deep.json"
rc_is "ten levels: refused" 1
err_has "flow_too_deep(8)" "flow_too_deep\(8\)"
echo "{\"parent\":{\"id\":\"$P\"},\"children\":[{\"id\":\"JOB00000000031\",\"children\":[{\"id\":\"$P\"}]}]}" >"$tmp/cycle.json"
e flow add docs <"$tmp/cycle.json"
rc_is "an id twice: refused" 1
err_has "flow_cycle(id)" "flow_cycle\($P\)"
echo '{"parent": {"id": "JOB00000000041"}' >"$tmp/bad.json"
e flow add docs <"$tmp/bad.json"
rc_is "malformed JSON: exit 1" 1
err_has "says where" "at byte"
echo '{"parent": {"id": "JOB0000000004"}}' >"$tmp/badid.json"
e flow add docs <"$tmp/badid.json"
rc_is "an ill-formed id: exit 1" 1

# a bulk: the good flow lands, the refused one is reported
cat >"$tmp/bulk.json" <<JSON
[{"parent": {"id": "JOB00000000051", "payload": "a"},
  "children": [{"id": "JOB00000000052", "payload": "b"}]},
 {"parent": {"id": "JOB00000000053", "payload": "c"},
  "children": [{"id": "ORD0NgWEfAEJfs", "queue": "render"}]}]
JSON
e flow add docs <"$tmp/bulk.json"
rc_is "a bulk exits 0" 0
out_has "the refused flow is marked" "^# refused \(EMQKIND\):$"
e flow show docs JOB00000000053
out_is "the refused cross flow holds its parent (fail-closed)" "JOB00000000053 docs awaiting_children dependencies=1"

# minted ids, in spec order
echo '{"parent":{"payload":"p"},"children":[{"payload":"1"},{"payload":"2"}]}' >"$tmp/mint.json"
e flow add docs <"$tmp/mint.json"
rc_is "minted ids: exit 0" 0
ids=$(awk '{print $1}' "$tmp/out" | tr '\n' ' ')
set -- $ids
if [ "$1" \< "$2" ] && [ "$2" \< "$3" ]; then pass; else fail "minted in pre-order ($ids)"; fi

# ------------------------------------------------------- recover, call

e flow recover
rc_is "flow recover exits 0" 0
out_is "nothing to recover" "0"
e --json flow recover
out_is "flow recover --json" '{"finished":0}'
e call flow_add docs 1 JOB00000000061 P docs fp 2 JOB00000000062 c docs id
rc_is "call flow_add" 0
out_has "call flow_add answers the wire reply" "^  JOB00000000061$"
e call dependencies docs JOB00000000061
out_is "call dependencies" "1"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
