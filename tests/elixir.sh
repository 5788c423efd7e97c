#!/bin/sh
# elixir.sh — the Elixir package's suite (bindings/elixir): copy the Mix
# project into the build directory, build its NIF (`mix compile` runs its
# Makefile) linked to the libemqlite this build made (EMQLITE_LIBDIR, when
# tests/binding_lib.sh finds one; else from this tree's sources), and run
# `mix test`: the API, the worker,
# the testing kit's example, the byte-identical export against the C tool
# (EMQLITE_CLI) and the multi-process soak. Offline: Mix and Hex homes in
# the build directory, no dependencies. SKIP (77) without elixir and mix
# (Debian: elixir, erlang-dev, erlang-nox).
srcdir=${srcdir:-.}
top=$(cd "$srcdir" && pwd)
pkg=$top/bindings/elixir
for tool in elixir mix erl; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "elixir: no $tool (Debian: elixir erlang-dev erlang-nox): skipped"
        exit 77
    fi
done
erts=$(erl -noshell -eval 'io:format("~ts/erts-~ts/include", [code:root_dir(), erlang:system_info(version)]), halt().' 2>/dev/null)
if [ ! -f "$erts/erl_nif.h" ]; then
    echo "elixir: no erl_nif.h under $erts (Debian: erlang-dev): skipped"
    exit 77
fi
out=$PWD/tests/elixir-build
mkdir -p "$out" || exit 1
# The sources are copied fresh; _build (the objects, kept between runs so a
# rebuild is incremental) stays.
rm -rf "$out/lib" "$out/c_src" "$out/test" "$out/examples" "$out/priv"
cp -R "$pkg/lib" "$pkg/c_src" "$pkg/test" "$pkg/examples" "$pkg/mix.exs" \
    "$pkg/Makefile" "$out/" || exit 1
chmod -R u+w "$out"
mkdir -p "$out/home/mix" "$out/home/hex"
. "$top/tests/binding_lib.sh"
echo "elixir: the NIF is $emq_libhow"
cd "$out" || exit 1
EMQLITE_LIBDIR=$emq_libdir MIX_HOME=$out/home/mix HEX_HOME=$out/home/hex HEX_OFFLINE=1 MIX_ENV=test \
    EMQLITE_SRCDIR=$top EMQLITE_CLI=${EMQLITE:-$OLDPWD/emqlite} \
    mix test --color=false >"$out/mix-test.log" 2>&1
rc=$?
cat "$out/mix-test.log"
line=$(grep -E '^[0-9]+ tests?, [0-9]+ failures?' "$out/mix-test.log" | tail -1)
total=$(echo "$line" | sed -n 's/^\([0-9]*\) test.*/\1/p')
failed=$(echo "$line" | sed -n 's/.* \([0-9]*\) failure.*/\1/p')
passed=$(( ${total:-0} - ${failed:-0} ))
echo "elixir: ${passed} passed, ${failed:-0} failed"
echo "${passed} passed, ${failed:-0} failed"
[ -n "$line" ] || rc=1
exit $rc
