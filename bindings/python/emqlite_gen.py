"""emqlite_gen.py — write emqlite/_verbs.py, the typed methods of every
verb of the library's registry, from the registry itself (verbs.def, found
under engine/ wherever the tree keeps it).

Run at build time (setup.py's build_py, tests/python.sh):

    python3 emqlite_gen.py SRCDIR OUT.py

Each row of verbs.def (its columns in the order the file's header comment
declares, EMQ_VERB(ID, NAME, FAMILY, TIER, KIND, FN, ARGS, REPLY, KEYS,
SUMMARY) today) becomes a method of `DatabaseVerbs` (every verb,
its queue the first argument) and, when its first argument is the queue,
of `QueueVerbs` (the queue bound) unless the Queue class writes that
method by hand (HAND_WRITTEN). Arguments are typed by their gate: queue,
id, group and name as str; bytes as bytes or str; integers as int; words
as Literal; a *_ms duration as float seconds or a timedelta (the Python
name drops "_ms"); run_at_ms as a datetime. A repeated tail takes a
sequence (of tuples when it has several fields). The reply is typed by the
row's REPLY. The table REGISTRY carries each row's argument specs, which
the runtime checks against the compiled library (tests).
"""
import keyword
import os
import re
import sys

#: Queue methods written by hand in emqlite/__init__.py (friendlier
#: signatures and replies); the raw verb stays a method of the Database.
#: run_due is the inline mode's Queue.run_due (run every due job through a
#: function); the operator verb of that name is Database.run_due.
HAND_WRITTEN = {
    "enqueue", "enqueue_many", "claim", "complete", "retry", "promote",
    "reap", "browse", "pending_size", "job_info", "lanes", "counts",
    "run_due",
}

KIND_TYPE = {
    "QUEUE": "str", "ID": "str", "GROUP": "str", "BYTES": "Bytes",
    "INT": "int", "POS": "int", "NNEG": "int", "BOOL": "bool",
    "DID": "str", "NAME": "str",
}
REPLY_TYPE = {
    "INT": "int", "BOOL": "bool", "BULK": "Optional[bytes]",
    "STATUS": "bytes", "ARRAY": "List[Any]", "MAP": "Dict[str, Any]",
    "NIL": "None",
}
INSTANTS = {"run_at_ms"}


def find_def(top):
    for root, dirs, files in os.walk(os.path.join(top, "engine")):
        dirs.sort()
        if "verbs.def" in files:
            return os.path.join(root, "verbs.def")
    raise SystemExit("emqlite_gen: no verbs.def under %s/engine" % top)


def split_top(s):
    """Split `s` at its top-level commas (outside parentheses and
    strings)."""
    out, depth, cur, i, instr = [], 0, [], 0, False
    while i < len(s):
        c = s[i]
        if instr:
            cur.append(c)
            if c == "\\":
                cur.append(s[i + 1])
                i += 1
            elif c == '"':
                instr = False
        elif c == '"':
            instr = True
            cur.append(c)
        elif c == "(":
            depth += 1
            cur.append(c)
        elif c == ")":
            depth -= 1
            cur.append(c)
        elif c == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    out.append("".join(cur).strip())
    return out


def cstring(s):
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', s)).replace(
        '\\"', '"').replace("\\\\", "\\")


def parse(path):
    text = open(path, encoding="utf-8").read()
    # the column order, as the file's own header comment declares it
    m = re.search(r"EMQ_VERB\(((?:[A-Z]+, *)+[A-Z]+)\)", text)
    cols = [c.strip() for c in m.group(1).split(",")] if m else [
        "ID", "NAME", "TIER", "KIND", "FN", "ARGS", "REPLY", "KEYS",
        "SUMMARY"]
    col = {c: i for i, c in enumerate(cols)}
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    rows = []
    pos = 0
    while True:
        i = text.find("EMQ_VERB(", pos)
        if i < 0:
            break
        j, depth = i + len("EMQ_VERB("), 1
        while depth:
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
            elif text[j] == '"':
                j += 1
                while text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
            j += 1
        body = text[i + len("EMQ_VERB("):j - 1]
        pos = j
        f = split_top(body)
        if len(f) != len(cols):
            raise SystemExit("emqlite_gen: a row of %d fields, not %d: %s"
                             % (len(f), len(cols), body[:60]))
        args = []
        for m in re.finditer(r"\b(A|AO|AR|AR1|AW|AWO|AWR)\(([^()]*)\)",
                             f[col["ARGS"]]):
            mac, a = m.group(1), split_top(m.group(2))
            if mac.startswith("AW"):
                kind, name, words = "WORD", a[0], cstring(a[1])
            else:
                kind, name, words = a[0], a[1], ""
            opt = mac in ("AO", "AWO")
            rest = mac in ("AR", "AR1", "AWR")
            args.append((name, kind, opt, rest, words))
        rows.append({"name": cstring(f[col["NAME"]]),
                     "tier": int(f[col["TIER"]]),
                     "kind": f[col["KIND"]].strip(), "args": args,
                     "reply": f[col["REPLY"]].strip(),
                     "summary": cstring(f[col["SUMMARY"]])})
    return rows


def pyname(name):
    if name in INSTANTS:
        name = name[:-3]
    elif name.endswith("_ms"):
        name = name[:-3]
    name = name.replace(".", "_")
    if keyword.iskeyword(name):
        name += "_"
    return name


def argtype(name, kind, words):
    if kind == "WORD":
        return "Literal[%s]" % ", ".join(repr(w) for w in words.split("|"))
    if name in INSTANTS:
        return "datetime.datetime"
    if name.endswith("_ms"):
        return "Duration"
    return KIND_TYPE[kind]


def method(row, bound):
    args = row["args"][1:] if bound else row["args"]
    params, conv, rest = [], [], None
    seen_opt = False
    for name, kind, opt, rep, words in args:
        if rep:
            rest = rest or []
            rest.append((name, kind, words))
            continue
        t = argtype(name, kind, words)
        p = pyname(name)
        if opt or seen_opt:
            seen_opt = True
            params.append("%s: Optional[%s] = None" % (p, t))
        else:
            params.append("%s: %s" % (p, t))
        conv.append(p)
    tail = "None"
    if rest:
        base = rest[0][0].partition(".")[0]
        p = pyname(base)
        ts = [argtype(n, k, w) for n, k, w in rest]
        t = ts[0] if len(ts) == 1 else "Tuple[%s]" % ", ".join(ts)
        params.append("%s: Sequence[%s] = ()" % (p, t))
        tail = p
    ret = REPLY_TYPE.get(row["reply"], "Any")
    lines = ["    def %s(self%s) -> %s:" % (
        row["name"], "".join(", " + x for x in params), ret)]
    lines.append('        """%s"""' % row["summary"].replace('"', "'"))
    first = "self._bound_queue(), " if bound else ""
    lines.append("        return self._run_verb(%r, [%s%s], %s)  "
                 "# type: ignore[no-any-return]" % (
                     row["name"], first, "".join(c + ", " for c in conv),
                     tail))
    return "\n".join(lines)


def generate(top):
    path = find_def(top)
    rows = parse(path)
    out = ['"""emqlite._verbs — GENERATED by emqlite_gen.py from %s at '
           'build time;\ndo not edit. Every verb of the registry as a typed '
           'method."""' % os.path.relpath(path, top).replace(os.sep, "/"),
           "import datetime",
           "from typing import (Any, Dict, List, Literal, Optional, "
           "Sequence, Tuple, Union)",
           "",
           "Bytes = Union[bytes, bytearray, memoryview, str]",
           "Duration = Union[float, datetime.timedelta]",
           "",
           "#: (name, tier, kind, ((arg, gate, optional, repeated, words), "
           "...), reply, summary)",
           "REGISTRY = ("]
    for r in rows:
        out.append("    (%r, %d, %r, %r, %r, %r)," % (
            r["name"], r["tier"], r["kind"], tuple(r["args"]), r["reply"],
            r["summary"]))
    out += [")", "", "",
            "class DatabaseVerbs:",
            '    """Every registry verb, by its wire name."""', "",
            "    def _run_verb(self, name: str, argv: List[Any],",
            "                  tail: Optional[Sequence[Any]]) -> Any:",
            "        raise NotImplementedError", ""]
    for r in rows:
        out.append(method(r, False))
        out.append("")
    out += ["", "class QueueVerbs:",
            '    """Every registry verb whose first argument is the queue, '
            'bound to it."""', "",
            "    def _run_verb(self, name: str, argv: List[Any],",
            "                  tail: Optional[Sequence[Any]]) -> Any:",
            "        raise NotImplementedError", "",
            "    def _bound_queue(self) -> str:",
            "        raise NotImplementedError", ""]
    for r in rows:
        a = r["args"]
        if a and a[0][0] == "q" and a[0][1] == "QUEUE" \
                and r["name"] not in HAND_WRITTEN:
            out.append(method(r, True))
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def parse_results(top):
    """The rows of EMQ_RESULT_MAP in api/emqlite.h: (name, code, wire,
    cls, exit, exception, kind, text) — the one table of result codes."""
    text = open(os.path.join(top, "api", "emqlite.h"), encoding="utf-8").read()
    start = text.index("#define EMQ_RESULT_MAP(X)")
    end = text.index("\n\n", start)
    body = re.sub(r"/\*.*?\*/", "", text[start:end], flags=re.S)
    body = body.replace("\\\n", " ")
    rows = []
    for m in re.finditer(r'X\((\w+),\s*(-?\d+),\s*"([^"]*)",\s*"([^"]*)",'
                         r'\s*(\d+),\s*"([^"]*)",\s*"([^"]*)",\s*'
                         r'((?:"(?:[^"\\]|\\.)*"\s*)+)\)', body):
        text_ = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(8)))
        rows.append((m.group(1), int(m.group(2)), m.group(3), m.group(4),
                     int(m.group(5)), m.group(6), m.group(7), text_))
    if not rows:
        raise SystemExit("emqlite_gen: no EMQ_RESULT_MAP rows in emqlite.h")
    return rows


def generate_errors(top):
    """emqlite/_errors.py: one exception class per failure row of the
    result table, with the extra base its KIND names, and the map from
    codes to classes."""
    bases = {"value": "ValueError", "os": "OSError", "memory": "MemoryError"}
    out = ['"""emqlite._errors — GENERATED by emqlite_gen.py from api/emqlite.h\'s',
           'EMQ_RESULT_MAP at build time; do not edit. One exception class per',
           'failure code of the library\'s one table of result codes."""',
           "from typing import Dict, Type", "", "",
           "class EmqError(Exception):",
           '    """A failure of an emqlite call. `str(e)` is the library\'s message '
           '—',
           "    for wire errors the exact wire string (\"EMQSTALE complete token",
           '    mismatch"); `code` is the C result code (a negative EMQ_E* '
           'value)."""', "",
           "    def __init__(self, code: int, message: str) -> None:",
           "        super().__init__(message)",
           "        self.code = code",
           "        self.message = message", ""]
    codes = []
    for name, code, wire, cls, _exit, exc, kind, text in parse_results(top):
        if code >= 0:
            continue
        extra = bases.get(kind)
        out += ["", "class %s(EmqError%s):" % (exc, ", " + extra if extra else ""),
                '    """EMQ_%s (%s): %s."""' % (name, wire or cls,
                                                text.replace('"', "'")),
                "    code_name = %r" % ("EMQ_" + name), ""]
        codes.append((code, exc))
    out += ["", "#: result code -> exception class, every failure of the table",
            "BY_CODE: Dict[int, Type[EmqError]] = {"]
    out += ["    %d: %s," % c for c in codes]
    out += ["}"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    # emqlite_gen.py TOP OUT/_verbs.py [OUT/_errors.py]
    src = generate(sys.argv[1])
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(src)
    if len(sys.argv) > 3:
        with open(sys.argv[3], "w", encoding="utf-8") as f:
            f.write(generate_errors(sys.argv[1]))
