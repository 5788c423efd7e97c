#!/usr/bin/env python3
"""Write the emqlite amalgamation: one emqlite.c holding the whole library
and the installed headers beside it (emqlite.h, emqlite_protocol.h,
emqlite_remote.h), as SQLite ships sqlite3.c.

    amalgamate.py --srcdir DIR --out DIR [--version V] SOURCE...

SOURCEs are the library's sources relative to DIR (the Makefile passes
libemqlite_core_la_SOURCES); the .c ones are concatenated in that order.
Each quoted #include of a project header is replaced by the header's text
the first time and dropped after (the headers are guarded anyway); a .def
(an X-macro table) is inlined at every #include, as it is meant to be
included many times. config.h is dropped: the options it carried are the
amalgamation's build options, documented at the top of emqlite.c. A macro
a .c file defines is #undef'd after that file, so one file's private
macros never reach the next. The output is byte-for-byte a function of the
sources, so two runs over one tree give the same file."""
import argparse
import os
import re
import sys

INCLUDE_DIRS = ["api", "storage", "cli", "remote", "engine/core",
                "engine/queue", "engine/ops", "engine/lane", "engine/flow",
                "engine/sched", "engine/stream", "engine/transfer",
                "engine/check", "web"]
PUBLIC = ["emqlite.h", "emqlite_protocol.h", "emqlite_remote.h"]

HEADER = """\
/*
 * emqlite.c: the emqlite library as one C file (the amalgamation), made by
 * amalg/amalgamate.py from emqlite {version}. Do not edit: edit the sources
 * and run `make amalgamation`.
 *
 * Build (Linux, C11):
 *
 *     cc -O2 -c emqlite.c                        # then link with
 *     cc app.c emqlite.o -lsqlite3 -lpthread -lm
 *
 * It needs the system SQLite (>= 3.37; Debian: libsqlite3-dev) and the
 * xxHash header (Debian: libxxhash-dev): xxHash's functions are compiled
 * into emqlite.o from xxhash.h (XXH_INLINE_ALL, as the library's own
 * sources do), so there is no -lxxhash. Both are found on the compiler's
 * default paths (elsewhere add `pkg-config --cflags --libs sqlite3` and
 * `pkg-config --cflags libxxhash`).
 *
 * Build options (-D on the cc line):
 *
 *   EMQ_WITH_HIREDIS    build the hiredis transport for live transfers
 *                       (emq_remote_push/pull/verify); link -lhiredis.
 *                       Without it emq_remote_available() is 0 and
 *                       emq_remote_connect answers EMQ_ENOTSUP ("built
 *                       without hiredis"), as a --without-hiredis build of
 *                       the library does.
 *   NDEBUG              drops assert(), as in any C build.
 *
 * Besides the public calls, emqlite.o defines the library's internal
 * functions as external symbols, every one named emq_* or rm_* (the
 * library's own build hides them with an export list, emqlite.sym; a
 * shared object made from this file can use a linker version script).
 *
 * It holds the platform layer the tree it was made from was configured
 * with: storage/platform_linux.c (futexes and open file description locks,
 * Linux only) by default on Linux, storage/platform_posix.c (POSIX alone)
 * from a build configured with --enable-portable (doc/ARCHITECTURE.md,
 * "Platform").
 *
 * The public interface is emqlite.h (with emqlite_protocol.h for the verb
 * registry and emqlite_remote.h for live transfers): programs include those,
 * shipped beside this file; their text is also inlined below, so this file
 * compiles alone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64 /* 32-bit systems: files past 2 GiB */
#endif
#if defined(EMQ_WITH_HIREDIS) && !defined(HAVE_HIREDIS)
#define HAVE_HIREDIS 1
#endif
#define EMQ_AMALGAMATION 1
/* One translation unit lets gcc follow a bounded message buffer across
 * files and warn that a snprintf into it may truncate: the library's
 * messages are bounded by design (EMQ_ERRMSG_MAX), and the separate-file
 * build, checked with -Werror, has no such warning. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif
"""

INC_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
DEF_RE = re.compile(r'^\s*#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)')
UNDEF_RE = re.compile(r'^\s*#\s*undef\s+([A-Za-z_][A-Za-z0-9_]*)')

# File-scope names a .c file keeps to itself (static functions and
# variables, typedefs, tags, enum constants): the sources are written one
# translation unit per file, and two files may each have a static find().
STATIC_RE = re.compile(r'^static\b[^=;(]*?\b([A-Za-z_]\w*)\s*(?:\(|\[|=|;)')
STATIC_FP_RE = re.compile(r'^static\b[^(]*\(\s*\*\s*([A-Za-z_]\w*)\s*\)')
TYPEDEF_RE = re.compile(r'^typedef\b.*?\b([A-Za-z_]\w*)\s*(?:\[[^]]*\])?\s*;')
TYPEDEF_FP_RE = re.compile(r'^typedef\b[^(]*\(\s*\*\s*([A-Za-z_]\w*)\s*\)')
CLOSE_RE = re.compile(r'^}\s*([A-Za-z_]\w*)\s*(?:\[[^]]*\])?\s*;')
TAG_RE = re.compile(r'^(?:typedef\s+)?(?:static\s+)?(?:const\s+)?(?:struct|union|enum)\s+([A-Za-z_]\w*)')
ENUM_OPEN_RE = re.compile(r'^(?:typedef\s+)?enum\b[^;]*\{\s*$')
ENUM_ITEM_RE = re.compile(r'^\s*([A-Z_a-z]\w*)\s*(?:=|$)')
WORD_RE = re.compile(r'[A-Za-z_]\w*')


def strip_comments(text):
    """text without its comments and string and character literals."""
    return re.sub(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\""
                  r"|'(?:\\.|[^'\\\n])*'", " ", text, flags=re.S)


def file_names(path):
    """The file-scope names a .c file defines for itself."""
    names = set()
    in_enum = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if in_enum:
                if line.startswith("}"):
                    in_enum = False
                    m = CLOSE_RE.match(line)
                    if m:
                        names.add(m.group(1))
                    continue
                code = re.sub(r"/\*.*?\*/|//.*", "", line)
                for item in code.split(","):
                    m = ENUM_ITEM_RE.match(item)
                    if m:
                        names.add(m.group(1))
                continue
            if ENUM_OPEN_RE.match(line):
                in_enum = True
            for rx in (STATIC_FP_RE, STATIC_RE, TYPEDEF_FP_RE, TYPEDEF_RE,
                       CLOSE_RE, TAG_RE):
                m = rx.match(line)
                if m:
                    names.add(m.group(1))
                    break
    return names


class Amalgamator:
    def __init__(self, srcdir):
        self.srcdir = srcdir
        self.seen = set()
        self.out = []

    def resolve(self, name, here):
        for d in [here] + [os.path.join(self.srcdir, d) for d in INCLUDE_DIRS]:
            p = os.path.join(d, name)
            if os.path.isfile(p):
                return os.path.normpath(p)
        return None

    def rel(self, path):
        return os.path.relpath(path, self.srcdir)

    def emit_file(self, path, defines):
        """Copy path, inlining project headers; collect the macros a .c
        file (and the .def tables it includes) defines into defines."""
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        here = os.path.dirname(path)
        for line in lines:
            m = INC_RE.match(line)
            if m:
                name = m.group(1)
                if name == "config.h":
                    self.out.append("/* config.h: see the build options above */")
                    continue
                target = self.resolve(name, here)
                if target is None:
                    sys.exit("amalgamate: %s: cannot find \"%s\"" %
                             (self.rel(path), name))
                if target.endswith(".def"):
                    self.emit_file(target, defines)
                    continue
                if target in self.seen:
                    self.out.append("/* #include \"%s\": above */" % name)
                    continue
                self.seen.add(target)
                self.out.append("/******** begin %s ********/" % self.rel(target))
                self.emit_file(target, None)
                self.out.append("/******** end %s ********/" % self.rel(target))
                continue
            if defines is not None:
                m = DEF_RE.match(line)
                if m:
                    defines.append(m.group(1))
                m = UNDEF_RE.match(line)
                if m and m.group(1) in defines:
                    defines.remove(m.group(1))
            self.out.append(line)

    def emit_source(self, path, renames):
        self.out.append("/******** begin %s ********/" % self.rel(path))
        tag = re.sub(r"\W", "_", os.path.splitext(self.rel(path))[0])
        for name in renames:
            self.out.append("#define %s emq__%s__%s" % (name, tag, name))
        defines = []
        self.emit_file(path, defines)
        for name in list(dict.fromkeys(defines)) + renames:
            if name not in ("_GNU_SOURCE", "_FILE_OFFSET_BITS"):
                self.out.append("#undef %s" % name)
        self.out.append("/******** end %s ********/" % self.rel(path))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srcdir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--version", default="(unknown version)")
    ap.add_argument("sources", nargs="+")
    a = ap.parse_args()
    srcdir = os.path.abspath(a.srcdir)
    am = Amalgamator(srcdir)
    am.out.append(HEADER.format(version=a.version).rstrip("\n"))
    # The public headers first, in their dependency order.
    for h in PUBLIC:
        p = os.path.join(srcdir, "api", h)
        am.seen.add(os.path.normpath(p))
        am.out.append("/******** begin api/%s ********/" % h)
        am.emit_file(p, None)
        am.out.append("/******** end api/%s ********/" % h)
    cfiles = list(dict.fromkeys(os.path.join(srcdir, s)
                                for s in a.sources if s.endswith(".c")))
    # A name that two files define privately is renamed by a macro in all
    # but one of them (#define find emq__storage_list__find around
    # storage/list.c's part). The macro renames every use of the word in
    # that file, so a file that also uses the word as a member (.name,
    # ->name) or completes a tag a header declares keeps its name; two such
    # files for one name is an error to fix in the sources.
    header_tags = set()
    for d in INCLUDE_DIRS:
        for h in os.listdir(os.path.join(srcdir, d)):
            if h.endswith((".h", ".def")):
                with open(os.path.join(srcdir, d, h), encoding="utf-8") as f:
                    header_tags.update(re.findall(
                        r"\b(?:struct|union|enum)\s+([A-Za-z_]\w*)",
                        strip_comments(f.read())))
    texts = {}
    for c in cfiles:
        with open(c, encoding="utf-8") as f:
            texts[c] = strip_comments(f.read())

    def unsafe(c, name):
        return name in header_tags or re.search(
            r"(?:\.|->)%s\b" % re.escape(name), texts[c]) is not None

    owners = {}
    for c in cfiles:
        for name in file_names(c):
            owners.setdefault(name, []).append(c)
    renames = {c: [] for c in cfiles}
    for name, files in sorted(owners.items()):
        if len(files) < 2:
            continue
        keep = [c for c in files if unsafe(c, name)]
        if len(keep) > 1:
            sys.exit("amalgamate: %s is defined privately in %s, each of "
                     "which also uses it as a member or a header's tag: "
                     "rename it in the sources" %
                     (name, ", ".join(am.rel(c) for c in keep)))
        if not keep:
            keep = files[:1]
        for c in files:
            if c not in keep:
                renames[c].append(name)
    for c in cfiles:
        am.emit_source(c, renames[c])
    os.makedirs(a.out, exist_ok=True)
    tmp = os.path.join(a.out, "emqlite.c.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(am.out) + "\n")
    os.replace(tmp, os.path.join(a.out, "emqlite.c"))
    for h in PUBLIC:
        with open(os.path.join(srcdir, "api", h), encoding="utf-8") as f:
            text = f.read()
        with open(os.path.join(a.out, h), "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
