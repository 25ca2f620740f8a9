#!/usr/bin/env bash
# troubleshooting.sh: docs/troubleshooting.md covers every message the plugin can end a job or
# refuse a setup with, so that none is missing from the user's guide:
#   - every topic of plugin/help-mpi-btl-tbrdma.txt has its "### [topic]" section;
#   - every reason a peer is declared lost (each `snprintf(why, ...)` format of plugin/, the
#     text that follows "lost ...:" in the [peer-lost] message) appears, its first six words
#     with each printf conversion standing for any word.
set -uo pipefail
# shellcheck source=../lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
CHECK_NAME=troubleshooting-doc
top=$(cd "$(dirname "$0")/../.." && pwd)
doc=$top/docs/troubleshooting.md
help=$top/plugin/help-mpi-btl-tbrdma.txt
[ -f "$doc" ] || fatal "no $doc"

mapfile -t topics < <(sed -n 's/^\[\(.*\)\]$/\1/p' "$help")
check "the help file has topics (${#topics[@]})" test "${#topics[@]}" -ge 10
for t in "${topics[@]}"; do
    check "help topic [$t] has its section" grep -qxF "### [$t]" "$doc"
done

# The formats: the string literals that follow `snprintf(why, sizeof(why),`, joined.
mapfile -t formats < <(find "$top/plugin" -name '*.c' -not -path '*/core/*' -print0 | xargs -0 awk '
    /snprintf\(why, sizeof\(why\),/ { on = 1; s = "" }
    on {
        line = $0
        while (match(line, /"([^"\\]|\\.)*"/)) {
            s = s substr(line, RSTART + 1, RLENGTH - 2)
            line = substr(line, RSTART + RLENGTH)
        }
        if ($0 ~ /\);[[:space:]]*$/) { print s; on = 0 }
    }')
check "the plugin's reasons for a lost peer are found (${#formats[@]})" test "${#formats[@]}" -ge 8
for f in "${formats[@]}"; do
    # the first six words, each conversion (%s, %u, %.1f, 0x%x...) any word, as an ERE
    # (of the head of the reason: what comes before its first ": ")
    re=$(printf '%s\n' "${f%%: *}" | awk '{
        n = (NF < 6) ? NF : 6; out = ""
        for (i = 1; i <= n; i++) {
            w = $i
            if (i == n) sub(/[:;,.]+$/, "", w)
            gsub(/%[-0-9.]*[a-z]+/, "\001", w)
            gsub(/[][(){}.*+?^$|\\]/, "\\\\&", w)
            gsub(/\001/, "[^ ]+", w)
            out = out (i > 1 ? " " : "") w
        }
        print out }')
    check "the reason \"${f:0:50}...\" is in the guide" grep -qE "$re" "$doc"
done
finish
