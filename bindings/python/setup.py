"""Build and install the emqlite Python package (cffi, API mode).

    python3 -m pip install --no-build-isolation bindings/python
    python3 -m pip wheel --no-build-isolation -w dist bindings/python

The version is the C library's (EMQLITE_VERSION in api/emqlite.h).
"""
import os
import re

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.environ.get("EMQLITE_SRCDIR") or os.path.normpath(
    os.path.join(HERE, "..", ".."))
with open(os.path.join(TOP, "api", "emqlite.h"), encoding="utf-8") as f:
    VERSION = re.search(r'#define EMQLITE_VERSION "([^"]+)"', f.read()).group(1)

setup(
    name="emqlite",
    version=VERSION,
    description="The EchoMQ job-queue protocol as an embedded engine over "
                "one SQLite file",
    license="MIT",
    packages=["emqlite"],
    package_data={"emqlite": ["py.typed"]},
    python_requires=">=3.9",
    setup_requires=["cffi>=1.15"],
    install_requires=["cffi>=1.15"],
    cffi_modules=["emqlite_build.py:ffibuilder"],
    entry_points={"pytest11": ["emqlite = emqlite.testing"]},
    zip_safe=False,
)
