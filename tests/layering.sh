#!/bin/sh
# layering.sh — the engine writes no SQL (issue 26 item 1): no file of
# engine/, remote/ or cli/ calls SQLite's statement or execution functions
# or holds an SQL statement in a string; storage/ alone speaks SQL. Prints
# each offending line and "N passed, N failed" last.
top=${srcdir:-$(dirname "$0")/..}
api='sqlite3_(prepare|exec|step|bind|column|finalize|get_table)'
sql='"(PRAGMA [a-z_]|SELECT [^"]* FROM |INSERT (OR [A-Z]+ )?INTO |UPDATE [a-z_]+ SET |DELETE FROM |(CREATE|DROP|ALTER) (TABLE|INDEX|TRIGGER|VIEW) |BEGIN (IMMEDIATE|DEFERRED|EXCLUSIVE)|SAVEPOINT |VACUUM|ATTACH )'
passed=0
failed=0
for dir in engine remote cli; do
    hits=$(grep -rnE "$api|$sql" "$top/$dir" --include='*.c' --include='*.h' 2>/dev/null)
    if [ -z "$hits" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: $dir/ speaks SQL (storage/ alone does):"
        printf '%s\n' "$hits" | sed 's/^/    /'
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
