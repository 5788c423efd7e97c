#!/bin/sh
# web_e2e.sh — the dashboard in headless Chromium (tests/web_e2e.py):
# `emqlite ui` on a loopback port, every page loaded, a retry clicked and
# its result read, screenshots saved in web-shots/ of the build folder.
# Skipped (77) without python3, chromium or libmicrohttpd. Run by
# `make check` from the build directory, or by hand:
# EMQLITE=/path/to/emqlite sh web_e2e.sh
top=$(pwd)
EMQLITE=${EMQLITE:-$top/emqlite}
export EMQLITE
unset EMQLITE_DB EMQLITE_NOW_MS EMQLITE_UI_TOKEN
if ! command -v python3 >/dev/null 2>&1; then
    echo "web_e2e: python3 is not installed: skipped"
    exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/web_e2e.py" "$top/web-shots"
