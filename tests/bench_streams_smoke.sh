#!/bin/sh
# bench_streams_smoke.sh — emqlite-bench-streams --smoke: every stream
# workload briefly on every system, every reply checked; no timing asserted.
exec bench/emqlite-bench-streams --smoke --sync both >/dev/null
