"""python_wheelhouse.py — a local wheelhouse for the isolated build test
(tests/python_package.sh), made from distributions already installed for
this interpreter (PyPI is out of reach): each named distribution's files,
as its RECORD (or, for Debian's egg-info packages, its top-level names)
lists them, repacked as a wheel with its metadata.

    python3 tests/python_wheelhouse.py OUTDIR setuptools wheel cffi pycparser

Prints each wheel made; exits 1 when a distribution is not installed.
"""
import base64
import csv
import hashlib
import importlib.metadata as md
import io
import os
import sys
import sysconfig
import zipfile


#: Dependencies Debian's packages have but their egg-info does not declare
#: (Debian unbundles ply from pycparser), added when the module is there.
UNDECLARED = {"pycparser": ["ply"]}


def files_of(dist):
    """(path on disk, path in the wheel) of the distribution's files."""
    base = str(dist.locate_file(""))
    out = []
    if dist.files:
        for f in dist.files:
            p = str(f)
            if p.startswith("..") or "__pycache__" in p or \
                    ".dist-info" in p or ".egg-info" in p:
                continue
            src = str(dist.locate_file(f))
            if os.path.isfile(src):
                out.append((src, p))
        if out:
            return out
    top = (dist.read_text("top_level.txt") or "").split() or [
        dist.metadata["Name"].lower().replace("-", "_")]
    for name in top:
        d = os.path.join(base, name)
        if os.path.isdir(d):
            for root, dirs, names in os.walk(d):
                dirs[:] = [x for x in dirs if x != "__pycache__"]
                for n in names:
                    src = os.path.join(root, n)
                    out.append((src, os.path.relpath(src, base)))
        for n in os.listdir(base):
            if (n == name + ".py" or n.startswith(name + ".")) and \
                    n.endswith((".py", ".so")):
                out.append((os.path.join(base, n), n))
    return out


def _installed(name):
    try:
        md.distribution(name)
        return True
    except md.PackageNotFoundError:
        return False


def tag_of(files):
    if any(w.endswith(".so") for _, w in files):
        v = "cp%d%d" % sys.version_info[:2]
        plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
        return "%s-%s-%s" % (v, v, plat)
    return "py3-none-any"


def repack(name, outdir):
    dist = md.distribution(name)
    meta = dist.metadata
    dname, ver = meta["Name"].replace("-", "_"), dist.version
    files = files_of(dist)
    tag = tag_of(files)
    info = "%s-%s.dist-info" % (dname, ver)
    path = os.path.join(outdir, "%s-%s-%s.whl" % (dname, ver, tag))
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        def put(arc, data):
            z.writestr(arc, data)
            h = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
            record.append((arc, "sha256=" + h.rstrip(b"=").decode(),
                           str(len(data))))
        for src, arc in files:
            with open(src, "rb") as f:
                put(arc, f.read())
        lines = ["Metadata-Version: 2.1", "Name: " + meta["Name"],
                 "Version: " + ver]
        reqs = [r for r in (dist.requires or []) if "extra ==" not in r]
        for dep in UNDECLARED.get(name, []):
            if dep not in " ".join(reqs) and _installed(dep):
                reqs.append(dep)
        lines += ["Requires-Dist: " + r for r in reqs]
        rp = meta.get("Requires-Python")
        if rp:
            lines.append("Requires-Python: " + rp)
        put(info + "/METADATA", ("\n".join(lines) + "\n").encode())
        put(info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: emqlite "
                              "tests\nRoot-Is-Purelib: %s\nTag: %s\n" % (
                                  "true" if tag.startswith("py3") else
                                  "false", tag)).encode())
        ep = dist.read_text("entry_points.txt")
        if ep:
            put(info + "/entry_points.txt", ep.encode())
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerows(record)
        w.writerow((info + "/RECORD", "", ""))
        z.writestr(info + "/RECORD", buf.getvalue())
    return path


def main(argv):
    outdir = argv[1]
    os.makedirs(outdir, exist_ok=True)
    for name in argv[2:]:
        try:
            path = repack(name, outdir)
            with zipfile.ZipFile(path) as z:
                if not any(n.endswith((".py", ".so")) for n in z.namelist()):
                    print("no files found for %s" % name, file=sys.stderr)
                    return 1
            print(path)
        except md.PackageNotFoundError:
            print("not installed: %s" % name, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
