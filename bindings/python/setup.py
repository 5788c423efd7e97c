"""Build the emqlite Python package (cffi, API mode); metadata in
pyproject.toml. From a clone:

    python3 -m pip wheel --no-build-isolation -w dist bindings/python
    python3 -m pip install --no-build-isolation bindings/python

The version is the C library's (EMQLITE_VERSION in api/emqlite.h). An sdist
carries the C tree it builds from under csrc/ (the header, every .c/.h/.def
of storage/ and engine/), so it builds anywhere with a C compiler and the
SQLite and xxHash headers. build_py writes emqlite/_verbs.py, the typed
methods of every verb, from the registry (emqlite_gen.py).
"""
import os
import re
import shutil
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import emqlite_build  # noqa: E402
import emqlite_gen  # noqa: E402

TOP = emqlite_build.TOP
with open(os.path.join(TOP, "api", "emqlite.h"), encoding="utf-8") as f:
    VERSION = re.search(r'#define EMQLITE_VERSION "([^"]+)"',
                        f.read()).group(1)


class BuildPy(build_py):
    """build_py, and emqlite/_verbs.py and _errors.py generated from the
    registry and the result table."""

    def run(self):
        super().run()
        out = os.path.join(self.build_lib, "emqlite", "_verbs.py")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w", encoding="utf-8") as f:
            f.write(emqlite_gen.generate(TOP))
        with open(os.path.join(os.path.dirname(out), "_errors.py"), "w",
                  encoding="utf-8") as f:
            f.write(emqlite_gen.generate_errors(TOP))


def copy_c_tree(top, dst):
    """The header and every .c/.h/.def of storage/ and engine/ of `top`,
    copied under `dst` (an sdist's csrc/)."""
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(os.path.join(dst, "api"))
    for h in ("emqlite.h", "emqlite_protocol.h", "emqlite_web.h"):
        shutil.copy2(os.path.join(top, "api", h), os.path.join(dst, "api"))
    shutil.copytree(os.path.join(top, "web", "assets"),
                    os.path.join(dst, "web", "assets"))
    shutil.copy2(os.path.join(top, "web", "gen_assets.sh"),
                 os.path.join(dst, "web"))
    for sub in ("storage", "engine", "web"):
        for root, dirs, names in os.walk(os.path.join(top, sub)):
            rel = os.path.relpath(root, top)
            for n in names:
                if n.endswith((".c", ".h", ".def")):
                    os.makedirs(os.path.join(dst, rel), exist_ok=True)
                    shutil.copy2(os.path.join(root, n),
                                 os.path.join(dst, rel, n))


class Sdist(sdist):
    """sdist, with the C tree (copied to csrc/ before setup() ran) and the
    licence."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        lic = os.path.join(ORIGIN, "LICENSE")
        if os.path.exists(lic):
            shutil.copy2(lic, base_dir)


# An sdist from a clone: copy the C tree to csrc/ first, so the extension's
# sources are the sdist's own (relative paths, listed in its manifest);
# csrc/ is removed again afterwards.
ORIGIN = TOP
CSRC = os.path.join(HERE, "csrc")
made_csrc = False
if "sdist" in sys.argv and os.path.abspath(TOP) != CSRC:
    copy_c_tree(TOP, CSRC)
    made_csrc = True
    os.environ.pop("EMQLITE_SRCDIR", None)
    import importlib
    os.chdir(HERE)
    emqlite_build = importlib.reload(emqlite_build)
    TOP = emqlite_build.TOP

setup(
    version=VERSION,
    packages=["emqlite"],
    package_data={"emqlite": ["py.typed", "*.pyi"]},
    cffi_modules=["emqlite_build.py:ffibuilder"],
    cmdclass={"build_py": BuildPy, "sdist": Sdist},
    zip_safe=False,
)
if made_csrc:
    shutil.rmtree(CSRC, ignore_errors=True)
