#!/bin/sh
# abi.sh — libemqlite exports exactly the functions the public headers
# declare (emqlite.sym): none missing, no internal name leaking out.
# Skipped (77) in a build without a shared library (--disable-shared).
lib=.libs/libemqlite.so
if [ ! -f "$lib" ]; then
    echo "abi: no $lib in this build (static only)"
    exit 77
fi
tmp=${TMPDIR:-/tmp}/emq-abi.$$
trap 'rm -f "$tmp".*' EXIT
nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sort -u \
    >"$tmp.got"
sort -u emqlite.sym >"$tmp.want"
pass=0
fail=0
if diff "$tmp.want" "$tmp.got" >"$tmp.diff"; then
    pass=$((pass + 1))
else
    echo "abi: exported symbols differ from the headers (< header only, > library only):"
    cat "$tmp.diff"
    fail=$((fail + 1))
fi
n=$(wc -l <"$tmp.want")
if [ "$n" -ge 40 ]; then
    pass=$((pass + 1))
else
    echo "abi: only $n symbols found in the headers"
    fail=$((fail + 1))
fi
echo "abi: $n exported functions"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
