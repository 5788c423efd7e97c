#!/bin/sh
# registry_layout.sh — the source layout the registry promises
# (doc/ARCHITECTURE.md): every verb's body is defined once, in the engine
# folder its FAMILY column in engine/core/verbs.def names; no C file sits
# in engine/ outside a family folder; and no two source files in the tree
# share a name (a reader who knows a name finds one file).
# Prints "N passed, N failed"; exits 1 on any failure.
top=${srcdir:-$(dirname "$0")/..}
def=$top/engine/core/verbs.def
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "registry_layout: $*" >&2; }

[ -f "$def" ] || { echo "registry_layout: $def not found" >&2; exit 1; }
# Each row: EMQ_VERB(ID, "name", family, tier, KIND, body, ...
rows=$(tr '\n' ' ' <"$def" | grep -o 'EMQ_VERB([A-Z_0-9]*, "[a-z_0-9?]*", [a-z]*, [0-9], [A-Z]*, *[a-z_0-9]*' |
    sed 's/EMQ_VERB(\([A-Z_0-9]*\), "\([^"]*\)", \([a-z]*\), [0-9], [A-Z]*, *\([a-z_0-9]*\)/\2 \3 \4/')
[ -n "$rows" ] || { echo "registry_layout: no rows read from $def" >&2; exit 1; }
echo "$rows" | {
    while read -r name family body; do
        [ -d "$top/engine/$family" ] ||
            { bad "$name: family '$family' has no folder engine/$family"; continue; }
        where=$(grep -l "^int $body(emq_vctx \*c)" "$top"/engine/*/*.c)
        n=$(printf '%s\n' "$where" | grep -c .)
        if [ "$n" -ne 1 ]; then
            bad "$name: body $body defined $n times (${where:-nowhere})"
        elif [ "$(basename "$(dirname "$where")")" != "$family" ]; then
            bad "$name: body $body is in ${where#"$top"/}, not in engine/$family/ (verbs.def's FAMILY column)"
        else
            ok
        fi
    done
    stray=$(ls "$top"/engine/*.c "$top"/engine/*.h 2>/dev/null)
    if [ -n "$stray" ]; then bad "files outside a family folder: $stray"; else ok; fi
    dups=$(cd "$top" && git ls-files 2>/dev/null |
        grep -E '\.(c|h|def|sh|py|ex|exs)$' | grep -vE '^(fuzz/corpus|tests/lua)/' |
        sed 's#.*/##' | sort | uniq -d |
        grep -vxE '__init__\.py|run\.sh|setup\.py|index\.js|mix\.exs|test_helper\.exs')
    if [ -n "$dups" ]; then bad "file names used twice: $dups"; else ok; fi
    # Storage knows nothing of jobs: no job row word in its sources (the
    # engine hands its dictionary over at open, engine/core/jobrow.c).
    jobwords=$(grep -lE '"(state|attempts|payload|last_error|awaiting_children|parent_queue)"' \
        "$top"/storage/*.c "$top"/storage/*.h 2>/dev/null)
    if [ -n "$jobwords" ]; then bad "job row words in storage/: $jobwords"; else ok; fi
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
