#!/bin/sh
# python_package.sh — the Python package as a user gets it (issue 29):
#  1. an sdist made by the PEP 517 hook (setuptools.build_meta.build_sdist)
#     must hold pyproject.toml, the build scripts, the package, the header
#     and every .c/.h/.def of storage/ and engine/ (under csrc/);
#  2. a wheel is built from the unpacked sdist, outside the tree, in an
#     isolated build environment: pip --no-index, the build requirements
#     (setuptools, wheel, cffi, pycparser) from a local wheelhouse —
#     $EMQLITE_WHEELHOUSE, else one tests/python_wheelhouse.py repacks from
#     the interpreter's installed distributions (PyPI is not reachable
#     here); only when that fails, --no-build-isolation;
#  3. the wheel is installed into a fresh venv (--no-index; cffi from the
#     wheelhouse, no system site-packages), its version is the library's,
#     and the example worker app from the installed package processes jobs
#     the C tool enqueued (`emqlite enqueue`), then stops.
# Runs for Debian's python3 and, when present, each of $EMQLITE_PYTHONS
# (e.g. a Python built from source) that has cffi and setuptools.
# SKIP (77) without python3 + cffi + setuptools + venv.
srcdir=${srcdir:-.}
top=$(cd "$srcdir" && pwd)
pkg=$top/bindings/python
cli=${EMQLITE:-$PWD/emqlite}
out=$PWD/tests/python-package
[ -x "$cli" ] || { echo "python_package: no built emqlite tool"; exit 77; }
if [ "${EMQ_TEST_QUICK:-}" = 1 ]; then
    echo "python_package: quick mode (the sanitizer suite): skipped; the"
    echo "plain suite builds the sdist and the wheel"
    exit 77
fi
rm -rf "$out" && mkdir -p "$out" || exit 1
ver=$(sed -n 's/^#define EMQLITE_VERSION "\([^"]*\)".*/\1/p' \
    "$top/api/emqlite.h")
ran=0
for py in /usr/bin/python3 ${EMQLITE_PYTHONS:-}; do
    if ! "$py" -c 'import cffi, setuptools, venv' >/dev/null 2>&1; then
        echo "python_package: $py lacks cffi/setuptools/venv: skipped"
        continue
    fi
    tag=$(basename "$py")-$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
    w=$out/$tag
    mkdir -p "$w/sdist" "$w/dist" || exit 1
    echo "== $py ($tag)"
    # 1. the sdist, from a copy of the package (the hook writes egg-info)
    cp -r "$pkg" "$w/src" || exit 1
    (cd "$w/src" && EMQLITE_SRCDIR=$top "$py" -c '
import sys
from setuptools import build_meta
print(build_meta.build_sdist(sys.argv[1]))' "$w/sdist") >"$w/sdist.log" 2>&1 \
        || { cat "$w/sdist.log"; exit 1; }
    sd=$(ls "$w"/sdist/emqlite-*.tar.gz) || exit 1
    [ "$(basename "$sd")" = "emqlite-$ver.tar.gz" ] || {
        echo "FAIL: sdist $sd is not emqlite-$ver"; exit 1; }
    tar tzf "$sd" >"$w/sdist.list" || exit 1
    for f in pyproject.toml setup.py emqlite_build.py emqlite_gen.py \
            emqlite/__init__.py emqlite/worker.py emqlite/py.typed \
            emqlite/_native.pyi csrc/api/emqlite.h; do
        grep -q "^emqlite-$ver/$f\$" "$w/sdist.list" || {
            echo "FAIL: the sdist lacks $f"; exit 1; }
    done
    want=$(cd "$top" && find storage engine -name '*.c' -o -name '*.h' \
        -o -name '*.def' | wc -l)
    got=$(grep -c "^emqlite-$ver/csrc/\(storage\|engine\)/.*\.\(c\|h\|def\)\$" \
        "$w/sdist.list")
    [ "$want" = "$got" ] || {
        echo "FAIL: the sdist holds $got C files of $want"; exit 1; }
    echo "sdist $(basename "$sd"): $got C sources and headers + the header"
    # 2. the wheel from the unpacked sdist, far from the tree
    mkdir -p "$w/unpacked" && tar xzf "$sd" -C "$w/unpacked" || exit 1
    # the build requirements as local wheels: $EMQLITE_WHEELHOUSE, else
    # repacked from what this interpreter has installed (wheel, pure
    # Python, may come from Debian's python3)
    house=${EMQLITE_WHEELHOUSE:-$w/wheelhouse}
    if [ -z "${EMQLITE_WHEELHOUSE:-}" ]; then
        "$py" "$top/tests/python_wheelhouse.py" "$house" setuptools cffi \
            pycparser >"$w/wheelhouse.log" 2>&1 &&
        { ! "$py" -c 'import ply' 2>/dev/null ||
          "$py" "$top/tests/python_wheelhouse.py" "$house" ply; } \
            >>"$w/wheelhouse.log" 2>&1 &&
        { "$py" "$top/tests/python_wheelhouse.py" "$house" wheel ||
          /usr/bin/python3 "$top/tests/python_wheelhouse.py" "$house" \
              wheel; } >>"$w/wheelhouse.log" 2>&1 || house=
    fi
    if [ -n "$house" ]; then
        mode="in an isolated environment (pip --no-index, build requirements from $house)"
        set -- --no-index --find-links "$house"
        venvopt=
    else
        cat "$w/wheelhouse.log"
        mode="--no-build-isolation (no local wheelhouse could be made)"
        set -- --no-index --no-build-isolation
        venvopt=--system-site-packages
    fi
    # The wheel compiles at -O0 unless EMQLITE_PKG_CFLAGS says otherwise
    # (setuptools adds $CFLAGS after Python's -O2): what this proves is
    # the packaging, and the optimiser is most of a build's time (the
    # library: -O2 -g 15 s of CPU, -O0 2.4 s). EMQLITE_PKG_CFLAGS= keeps
    # Python's own flags.
    (cd "$w" && env -u EMQLITE_SRCDIR CFLAGS="${EMQLITE_PKG_CFLAGS--O0}" \
        "$py" -m pip wheel -q --no-deps "$@" \
        -w "$w/dist" "$w/unpacked/emqlite-$ver") >"$w/wheel.log" 2>&1 \
        || { cat "$w/wheel.log"; exit 1; }
    wh=$(ls "$w"/dist/emqlite-"$ver"-*.whl) || exit 1
    echo "wheel $(basename "$wh"), built $mode"
    # 3. a fresh venv (cffi from the wheelhouse), the wheel, the worker
    "$py" -m venv $venvopt "$w/venv" || exit 1
    "$w/venv/bin/python" -m pip install -q --no-index \
        ${house:+--find-links "$house"} "$wh" \
        >"$w/install.log" 2>&1 || { cat "$w/install.log"; exit 1; }
    (cd "$w" && "$w/venv/bin/python" -c '
import emqlite, sys
assert emqlite.__file__.startswith(sys.prefix), emqlite.__file__
print("installed emqlite", emqlite.__version__, "at", emqlite.__file__)
') || exit 1
    db=$w/jobs.db
    for i in 1 2 3 4 5; do
        "$cli" --db "$db" enqueue mail "{\"to\": \"user$i@example.com\"}" \
            >/dev/null || exit 1
    done
    cp "$pkg/examples/worker_app.py" "$w/" || exit 1
    (cd "$w" && timeout 120 "$w/venv/bin/python" worker_app.py "$db" \
        --idle 1) >"$w/worker.log" 2>&1 || { cat "$w/worker.log"; exit 1; }
    cat "$w/worker.log"
    n=$(grep -c '^sent ' "$w/worker.log")
    [ "$n" = 5 ] || { echo "FAIL: the worker sent $n of 5"; exit 1; }
    "$cli" --db "$db" stats mail | tee "$w/stats.txt"
    ran=$((ran + 1))
done
[ $ran -gt 0 ] || exit 77
echo "python_package: $ran interpreter(s) passed"
