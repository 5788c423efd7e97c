# binding_lib.sh — sourced by tests/python.sh, tests/node.sh and
# tests/elixir.sh (run from the build directory). It sets emq_libdir to the
# folder holding the libemqlite shared library this build made (.libs/),
# which the bindings' in-tree builds then link (EMQLITE_LIBDIR) instead of
# compiling every C source of the library a third, fourth and fifth time.
# emq_libdir stays empty, and the binding compiles the sources itself as its
# packages do, when the build made no shared library (configure
# --disable-shared: the sanitizer and valgrind stages of .ci/run), when the
# library calls a sanitizer's runtime (a binding's host process does not
# load one), or when EMQ_BINDING_FROM_SOURCE is set (by hand). The packaging
# tests (tests/python_package.sh, node.sh's packed tarball) always build
# from the sources: that is what they prove.
emq_libdir=
emq_libhow="compiled from the C sources"
if [ -z "${EMQ_BINDING_FROM_SOURCE:-}" ]; then
    for f in "$PWD/.libs/libemqlite.so" "$PWD/.libs/libemqlite.dylib"; do
        [ -f "$f" ] || continue
        command -v nm >/dev/null 2>&1 || break
        nm -D -u "$f" 2>/dev/null | grep -q '__[a-z]*san_' && break
        emq_libdir=$PWD/.libs
        emq_libhow="linked to $f"
        break
    done
fi
