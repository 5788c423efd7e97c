#!/bin/sh
# node.sh — the Node package (bindings/node): build its addon from this tree
# with npm's node-gyp against the headers installed with Node (offline;
# linked to the libemqlite this build made, EMQLITE_LIBDIR, when
# tests/binding_lib.sh finds one, else compiled from the sources),
# run its node:test suite (with the emqlite tool for the export
# cross-check), then `npm pack` it, install the tarball into a fresh
# scratch project with the network cut off (it builds from the C sources it
# carries), and run its example worker on jobs the emqlite tool enqueued.
# SKIP (77) without node and npm, and in the quick runs (sanitizers,
# valgrind): the addon is built by node-gyp, not with their flags.
srcdir=${srcdir:-.}
top=$(cd "$srcdir" && pwd)
pkg=$top/bindings/node
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "node: no node and npm on PATH (Debian 12: see README, Node.js): skipped"
    exit 77
fi
if [ -n "${EMQ_TEST_QUICK:-}" ]; then
    echo "node: the quick runs skip the Node package (its addon is not built with their flags): skipped"
    exit 77
fi
cli=${EMQLITE:-$PWD/emqlite}
out=$PWD/tests/node-build
rm -rf "$out" && mkdir -p "$out/pkg" || exit 1
(cd "$pkg" && tar cf - --exclude=./build --exclude=./node_modules \
    --exclude=./csrc --exclude='./*.tgz' .) | (cd "$out/pkg" && tar xf -) || exit 1
# TypeScript for the type check, when `npm ci` put it beside the sources.
[ -d "$pkg/node_modules" ] && ln -s "$pkg/node_modules" "$out/pkg/node_modules"
export EMQLITE_SRCDIR="$top"
. "$top/tests/binding_lib.sh"
echo "node: the in-tree addon is $emq_libhow"
cd "$out/pkg" || exit 1
EMQLITE_LIBDIR=$emq_libdir node scripts/build.js >"$out/build.log" 2>&1 ||
    { cat "$out/build.log"; exit 1; }
if grep -q 'http' "$out/build.log"; then
    echo "node: the build reached for the network:"; grep http "$out/build.log"; exit 1
fi
EMQLITE_CLI=$cli npm test >"$out/test.log" 2>&1
rc=$?
grep -E '^(not )?ok |^# (tests|pass|fail|skipped)' "$out/test.log"
[ $rc -ne 0 ] && cat "$out/test.log"
passed=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$out/test.log")
failed=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$out/test.log")
passed=${passed:-0}
failed=${failed:-1}

# The packed tarball in a scratch project, offline.
pack() {
    npm pack --pack-destination "$out" >"$out/pack.log" 2>&1 || return 1
    tgz=$(ls "$out"/emqlite-*.tgz | head -1)
    tar tzf "$tgz" | grep -q 'package/csrc/api/emqlite.h' || return 1
    mkdir -p "$out/scratch" && cd "$out/scratch" || return 1
    echo '{"name":"scratch","version":"1.0.0","private":true}' >package.json
    offline=""
    unshare -n true 2>/dev/null && offline="unshare -n"
    # A Debug build (-O0) unless EMQLITE_PKG_DEBUG= asks for Release
    # (-O3): what this proves is the packaging, and the optimiser is most
    # of the build's time (the library: -O3 24 s of CPU, -O0 2.4 s).
    EMQLITE_DEBUG=${EMQLITE_PKG_DEBUG-1} \
        $offline npm install --offline --no-audit --no-fund "$tgz" \
        >"$out/install.log" 2>&1 || return 1
    [ -f node_modules/emqlite/build/Release/emqlite.node ] ||
        [ -f node_modules/emqlite/build/Debug/emqlite.node ] || return 1
}
example() {
    cd "$out/scratch" || return 1
    rm -f jobs.db*
    for p in one two fail; do
        "$cli" --db jobs.db enqueue mail "$p" >/dev/null || return 1
    done
    timeout 120 node node_modules/emqlite/examples/worker.js jobs.db mail \
        >"$out/example.log" 2>&1 || return 1
    grep -q 'counts {"pending":0,"active":0,"schedule":0,"dead":1,"completed":2,"failed":1}' \
        "$out/example.log"
}
if (pack); then
    echo "ok - npm pack installs into a fresh project offline and builds from source"
    passed=$((passed + 1))
    if (example); then
        echo "ok - the packed package's example worker runs the jobs the emqlite tool enqueued"
        passed=$((passed + 1))
    else
        echo "not ok - the example worker"; cat "$out/example.log"; failed=$((failed + 1))
    fi
else
    echo "not ok - npm pack / offline install"
    tail -30 "$out/pack.log" "$out/install.log" 2>/dev/null
    failed=$((failed + 1))
fi
cat "$out/example.log" 2>/dev/null
echo "node: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
