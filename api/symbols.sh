#!/bin/sh
# symbols.sh HEADER... — the names of the functions the public headers
# declare, one a line, sorted: libemqlite exports exactly these
# (-export-symbols emqlite.sym). Comments and preprocessor lines are
# dropped; a declaration is a top-level line (not indented) whose first
# identifier followed by '(' is emq_*.
for h in "$@"; do
    awk '{
        line = $0; out = "";
        while (line != "") {
            if (incomment) {
                i = index(line, "*/");
                if (i == 0) { line = ""; break }
                line = substr(line, i + 2); incomment = 0;
            } else {
                i = index(line, "/*");
                if (i == 0) { out = out line; line = ""; break }
                out = out substr(line, 1, i - 1);
                line = substr(line, i + 2); incomment = 1;
            }
        }
        if (out ~ /^#/ || out ~ /^[ \t]/) next;
        if (match(out, /[a-z0-9_]+\(/)) {
            name = substr(out, RSTART, RLENGTH - 1);
            if (name ~ /^emq_/ && out !~ /^typedef/) print name;
        }
    }' "$h"
done | sort -u
