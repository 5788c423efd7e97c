#!/bin/sh
# python.sh — the Python package's pytest suite (bindings/python): generate
# emqlite/_verbs.py from the registry, build the cffi extension from this
# tree into the build directory (linked to the libemqlite this build made,
# EMQLITE_LIBDIR, when tests/binding_lib.sh finds one; else compiled from
# the sources), run its tests and its example application
# with the emqlite pytest plugin, then `mypy --strict` over the package, its
# tests and the example app (skipped with a message without mypy: Debian
# python3-mypy). SKIP (77) without a Python that has cffi and pytest
# (Debian: python3-cffi, python3-pytest, python3-dev). The packaging test
# (sdist, isolated wheel build, a fresh venv) is tests/python_package.sh.
srcdir=${srcdir:-.}
pkg=$(cd "$srcdir" && pwd)/bindings/python
py=
for p in ${PYTHON:-} python3 /usr/bin/python3; do
    if "$p" -c 'import cffi, pytest' >/dev/null 2>&1; then
        py=$p
        break
    fi
done
if [ -z "$py" ]; then
    echo "python: no python3 with cffi and pytest: skipped"
    exit 77
fi
out=$PWD/tests/python-build
rm -rf "$out" && mkdir -p "$out/emqlite" || exit 1
cp "$pkg"/emqlite/*.py "$pkg"/emqlite/*.pyi "$pkg"/emqlite/py.typed \
    "$out/emqlite/" || exit 1
"$py" "$pkg/emqlite_gen.py" "$(cd "$srcdir" && pwd)" \
    "$out/emqlite/_verbs.py" "$out/emqlite/_errors.py" || exit 1
. "$srcdir/tests/binding_lib.sh"
echo "python: the extension is $emq_libhow"
EMQLITE_LIBDIR=$emq_libdir EMQLITE_SRCDIR=$(cd "$srcdir" && pwd) "$py" -c '
import sys
sys.path.insert(0, sys.argv[1])
import emqlite_build
emqlite_build.ffibuilder.compile(tmpdir=sys.argv[2], verbose=False)
' "$pkg" "$out" >"$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
cd "$out" || exit 1
EMQLITE_CLI=${EMQLITE:-$OLDPWD/emqlite} PYTHONPATH=$out "$py" -m pytest -q \
    -p emqlite.testing -p no:cacheprovider \
    "$pkg/tests" "$pkg/examples" >"$out/pytest.log" 2>&1
rc=$?
cat "$out/pytest.log"
passed=$(tail -1 "$out/pytest.log" | sed -n 's/.* \([0-9]*\) passed.*/\1/p;s/^\([0-9]*\) passed.*/\1/p' | head -1)
failed=$(tail -1 "$out/pytest.log" | sed -n 's/.* \([0-9]*\) failed.*/\1/p;s/^\([0-9]*\) failed.*/\1/p' | head -1)
echo "python: ${passed:-0} passed, ${failed:-0} failed"
echo "${passed:-0} passed, ${failed:-0} failed"
[ $rc -eq 0 ] || exit $rc
# mypy --strict: the package, its tests, the example app
if "$py" -m mypy --version >/dev/null 2>&1; then
    cp -r "$pkg/tests" "$pkg/examples" "$out/" || exit 1
    MYPYPATH=$out "$py" -m mypy --strict --no-incremental \
        --cache-dir=/dev/null "$out/emqlite" "$out/tests" \
        "$out/examples" >"$out/mypy.log" 2>&1
    mrc=$?
    cat "$out/mypy.log"
    echo "python: mypy --strict exit $mrc"
    [ $mrc -eq 0 ] || exit 1
else
    echo "python: mypy not installed (Debian: python3-mypy): type check skipped"
fi
exit 0
