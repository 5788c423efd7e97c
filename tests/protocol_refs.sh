#!/bin/sh
# protocol_refs.sh — runs tests/protocol_refs.py (every citation of
# doc/PROTOCOL.md resolves to a heading of it); skipped without python3.
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
exec python3 "${srcdir:-$(dirname "$0")/..}/tests/protocol_refs.py"
