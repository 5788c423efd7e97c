#!/bin/sh
# python.sh — the Python package's pytest suite (bindings/python): build the
# cffi extension from this tree into the build directory, then run its tests
# and its example application test with the emqlite pytest plugin. SKIP (77)
# without a Python that has cffi and pytest (Debian: python3-cffi,
# python3-pytest, python3-dev).
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
cp "$pkg"/emqlite/*.py "$pkg"/emqlite/py.typed "$out/emqlite/" || exit 1
EMQLITE_SRCDIR=$(cd "$srcdir" && pwd) "$py" -c '
import sys
sys.path.insert(0, sys.argv[1])
import emqlite_build
emqlite_build.ffibuilder.compile(tmpdir=sys.argv[2], verbose=False)
' "$pkg" "$out" >"$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
cd "$out" || exit 1
EMQLITE_CLI=$OLDPWD/emqlite PYTHONPATH=$out "$py" -m pytest -q \
    -p emqlite.testing -p no:cacheprovider \
    "$pkg/tests" "$pkg/examples" >"$out/pytest.log" 2>&1
rc=$?
cat "$out/pytest.log"
passed=$(tail -1 "$out/pytest.log" | sed -n 's/.* \([0-9]*\) passed.*/\1/p;s/^\([0-9]*\) passed.*/\1/p' | head -1)
failed=$(tail -1 "$out/pytest.log" | sed -n 's/.* \([0-9]*\) failed.*/\1/p;s/^\([0-9]*\) failed.*/\1/p' | head -1)
echo "python: ${passed:-0} passed, ${failed:-0} failed"
echo "${passed:-0} passed, ${failed:-0} failed"
exit $rc
