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
    """build_py, and emqlite/_verbs.py generated from the registry."""

    def run(self):
        super().run()
        out = os.path.join(self.build_lib, "emqlite", "_verbs.py")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w", encoding="utf-8") as f:
            f.write(emqlite_gen.generate(TOP))


class Sdist(sdist):
    """sdist, with the C tree copied in under csrc/."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        dst = os.path.join(base_dir, "csrc")
        shutil.rmtree(dst, ignore_errors=True)
        os.makedirs(os.path.join(dst, "api"))
        shutil.copy2(os.path.join(TOP, "api", "emqlite.h"),
                     os.path.join(dst, "api"))
        for sub in ("storage", "engine"):
            for root, dirs, names in os.walk(os.path.join(TOP, sub)):
                rel = os.path.relpath(root, TOP)
                for n in names:
                    if n.endswith((".c", ".h", ".def")):
                        os.makedirs(os.path.join(dst, rel), exist_ok=True)
                        shutil.copy2(os.path.join(root, n),
                                     os.path.join(dst, rel, n))
        for n in ("LICENSE",):
            if os.path.exists(os.path.join(TOP, n)):
                shutil.copy2(os.path.join(TOP, n), base_dir)


setup(
    version=VERSION,
    packages=["emqlite"],
    package_data={"emqlite": ["py.typed", "*.pyi"]},
    cffi_modules=["emqlite_build.py:ffibuilder"],
    cmdclass={"build_py": BuildPy, "sdist": Sdist},
    zip_safe=False,
)
