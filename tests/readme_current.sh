#!/bin/sh
# readme_current.sh — tests/README.md (where each verb is tested) is what
# tests/gen_readme.py makes from the registry and the tests today.
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
exec python3 "${srcdir:-$(dirname "$0")/..}/tests/gen_readme.py" --check
