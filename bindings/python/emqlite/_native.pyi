# The cffi extension module emqlite._native (built by emqlite_build.py):
# its `ffi` and `lib` are dynamic; the package's code types what it reads.
from typing import Any

ffi: Any
lib: Any
