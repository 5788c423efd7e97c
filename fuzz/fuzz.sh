#!/bin/sh
# Run each libFuzzer target for SECONDS (default 60), from the build
# directory after `make fuzz`:
#     make fuzz && sh <srcdir>/fuzz/fuzz.sh 60
# New inputs go to $FUZZ_WORK (./fuzz/work) — the committed corpus in
# <srcdir>/fuzz/corpus/<target> is only read. A crash is saved as
# $FUZZ_WORK/artifacts/<target>-crash-*; copy it into
# <srcdir>/fuzz/regress/<target>/ so the Check suite "fuzz" replays it.
# Prints one line per target (executions, coverage) and exits non-zero if
# any target found a crash.
set -u
secs=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
bin=${FUZZ_BIN:-./fuzz}
work=${FUZZ_WORK:-./fuzz/work}
status=0
for t in brandedid keys resp verbs streams; do
    if [ ! -x "$bin/fuzz_$t" ]; then
        echo "fuzz/fuzz.sh: $bin/fuzz_$t not found: run 'make fuzz' first" >&2
        exit 2
    fi
    mkdir -p "$work/$t" "$work/artifacts"
    log=$work/$t.log
    "$bin/fuzz_$t" -max_total_time="$secs" -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/$t-" "$work/$t" "$here/corpus/$t" \
        >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    corp=$(ls "$work/$t" | wc -l)
    echo "$t: ${execs:-?} executions in ${secs}s, ${cov:-cov: ?}," \
        "$corp new corpus inputs, exit $rc"
    if [ "$rc" -ne 0 ]; then
        status=1
        tail -40 "$log"
    fi
done
exit $status
