"""emqlite_build.py — the cffi (API mode) builder of emqlite's Python
extension, emqlite._native.

The C declarations come from api/emqlite.h and api/emqlite_protocol.h
themselves, so the binding never copies a constant or a struct by hand: comments and the C++ guards are
dropped, integer #defines become cffi's `#define NAME ...` (their values are
taken from the compiler), string #defines are left to emq_version(). The
library's sources — every .c under storage/ and engine/, found by walking
them (whatever family folders the tree keeps), with one of the two
platform files (platform() below) — are compiled into the
extension (no installed libemqlite needed); it links the system SQLite and
includes the system xxHash header.

The C tree is found at $EMQLITE_SRCDIR, else at csrc/ beside this file (an
sdist carries it there), else two folders up (a clone).

With $EMQLITE_LIBDIR set to a folder holding a libemqlite shared library
built from the same tree (a build's .libs/), the extension links that
library instead of compiling the sources (prebuilt_libdir() below).
"""
import os
import re
import sys

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))


def source_top():
    env = os.environ.get("EMQLITE_SRCDIR")
    if env:
        return env
    csrc = os.path.join(HERE, "csrc")
    if os.path.isfile(os.path.join(csrc, "api", "emqlite.h")):
        return csrc
    return os.path.normpath(os.path.join(HERE, "..", ".."))


def platform():
    """The platform layer compiled in, one of storage/platform_linux.c and
    storage/platform_posix.c, as the library's configure picks it:
    $EMQLITE_PLATFORM ("linux" or "posix"; tests/python.sh passes the
    build's), else "linux" on Linux and "posix" elsewhere."""
    name = os.environ.get("EMQLITE_PLATFORM") or \
        ("linux" if sys.platform.startswith("linux") else "posix")
    if name not in ("linux", "posix"):
        raise ValueError("EMQLITE_PLATFORM=%r: must be linux or posix "
                         "(storage/platform_<name>.c)" % name)
    return name


def c_tree(top):
    """The library's C sources and the folders holding its headers:
    every .c and .h under storage/ and engine/, recursively, but of the
    platform files (storage/platform_*.c) only platform()'s."""
    sources, incdirs = [], [os.path.join(top, "api")]
    keep = "platform_%s.c" % platform()
    for sub in ("storage", "engine", "web"):
        for root, dirs, files in os.walk(os.path.join(top, sub)):
            dirs.sort()
            # web_assets.c is generated (web_assets() below); a copy left
            # by an in-tree build of the library is not taken twice
            sources += [os.path.join(root, f) for f in sorted(files)
                        if f.endswith(".c") and f != "web_assets.c" and
                        (not f.startswith("platform_") or f == keep)]
            if any(f.endswith((".h", ".def")) for f in files):
                incdirs.append(root)
    # setuptools refuses absolute paths inside the project (an sdist's
    # csrc/): those are given relative to it (the build's working folder)
    if os.path.abspath(top).startswith(HERE + os.sep) and \
            os.path.abspath(os.getcwd()) == HERE:
        sources = [os.path.relpath(p, HERE) for p in sources]
        incdirs = [os.path.relpath(p, HERE) for p in incdirs]
    return sources, incdirs


TOP = source_top()
HEADERS = [os.path.join(TOP, "api", h)
           for h in ("emqlite.h", "emqlite_protocol.h", "emqlite_web.h")]


def web_assets(top):
    """The dashboard's page compiled into a C source (web/gen_assets.sh,
    as the library's build does), in a folder of its own; its path."""
    import subprocess
    import tempfile
    assets = [os.path.join(top, "web", "assets", n)
              for n in ("index.html", "app.js", "app.css")]
    if os.path.abspath(os.getcwd()) == HERE:
        # setuptools' own build (a wheel, an sdist's csrc/): a path
        # relative to the project, as it requires
        os.makedirs(os.path.join(HERE, "_web"), exist_ok=True)
        out = os.path.join("_web", "web_assets.c")
    else:
        out = os.path.join(tempfile.mkdtemp(prefix="emqlite-web-"),
                           "web_assets.c")
    subprocess.check_call(["sh", os.path.join(top, "web", "gen_assets.sh"),
                           out] + assets)
    return out


def header_cdef(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"\\\n", " ", text)  # a macro's continued lines
    out, skip, rows = [], 0, []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#define EMQ_RESULT_MAP(X)"):
            # the result table (an X-macro, which cffi cannot expand): its
            # rows become the enum's members, each with its value
            rows = re.findall(r"X\((\w+),\s*(-?\d+),", s)
            continue
        if s == "EMQ_RESULT_MAP(EMQ_RESULT_ENUM_)":
            out.extend("    EMQ_%s = %s," % r for r in rows)
            continue
        if s.startswith("#"):
            if s.startswith("#ifdef __cplusplus"):
                skip = 1
            elif s.startswith("#endif") and skip:
                skip = 0
            m = re.match(r"#define\s+(EMQ\w*)\s+(.+)$", s)
            if m and not skip and '"' not in m.group(2) \
                    and "(" not in m.group(1):
                out.append("#define %s ..." % m.group(1))
            continue
        if skip or not s:
            continue
        # array sizes cffi must see as numbers (in API mode the compiled
        # module checks the struct layouts against the header itself)
        line = line.replace("EMQ_XID_SIZE", "42")
        line = line.replace("EMQ_ID_SIZE", "15").replace("EMQ_ID_LEN", "14")
        out.append(line)
    return "\n".join(out)


CALLBACKS = """
extern "Python" int64_t _emq_py_clock(void *ctx);
extern "Python" void _emq_py_event(void *ctx, const emq_event *ev);
extern "Python" void _emq_py_handler(void *ctx, const char *q,
                                     const emq_job *job, emq_outcome *out);
"""

ffibuilder = FFI()
ffibuilder.cdef("\n".join(header_cdef(h) for h in HEADERS) + CALLBACKS)



def prebuilt_libdir():
    """$EMQLITE_LIBDIR: a folder holding a libemqlite shared library already
    built from this tree (a build's .libs/). When set, the extension links
    it (with that folder as its run path) instead of compiling the C
    sources into itself. tests/python.sh sets it so `make check` does not
    compile the library a second time; the sdist and the wheel
    (tests/python_package.sh) always build from the sources."""
    d = os.environ.get("EMQLITE_LIBDIR")
    if not d:
        return None
    d = os.path.abspath(d)
    if not any(os.path.exists(os.path.join(d, n))
               for n in ("libemqlite.so", "libemqlite.dylib")):
        raise ValueError("EMQLITE_LIBDIR=%r: no libemqlite.so (nor .dylib) "
                         "there (a build's .libs/ folder)" % d)
    return d


LIBDIR = prebuilt_libdir()
if LIBDIR:
    sources, include_dirs = [], [os.path.join(TOP, "api")]
    link = dict(libraries=["emqlite"], library_dirs=[LIBDIR],
                runtime_library_dirs=[LIBDIR])
else:
    sources, include_dirs = c_tree(TOP)
    sources.append(web_assets(TOP))
    link = dict(libraries=["sqlite3", "pthread"])
ffibuilder.set_source(
    "emqlite._native",
    '#include "emqlite.h"\n#include "emqlite_protocol.h"\n'
    '#include "emqlite_web.h"\n',
    sources=sources,
    include_dirs=include_dirs,
    extra_compile_args=["-std=c11", "-D_GNU_SOURCE", "-D_FILE_OFFSET_BITS=64",
                        "-fvisibility=hidden"],
    **link
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
