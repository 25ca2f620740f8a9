#!/usr/bin/env bash
# troubleshooting.sh: docs/troubleshooting.md covers every message the plugin can end a job or
# refuse a setup with, so that none is missing from the user's guide:
#   - every topic of plugin/help-mpi-btl-tbrdma.txt has its "### [topic]" section;
#   - every reason a peer is declared lost (each `snprintf(why, ...)` format of plugin/, the
#     text that follows "lost ...:" in the [peer-lost] message) appears;
#   - every line that says why tbrdma steps aside (a TBRDMA_VERBOSE_DECLINE line starting with
#     "declining: " or "not used in this job: ") appears;
#   - every line printed whatever the verbosity (each `opal_output(` and `fprintf(stderr,` of
#     plugin/, coll/tbrdma's included: version guards, coll/tbrdma's parameter and fall-back
#     lines, the counters, a checking build's failed invariant) appears.
# "Appears": the first six words of the text (of a reason: of its head, what comes before its
# first ": "), each printf conversion standing for any word, as the guide writes N, D, H...
# The C sources are read as C: adjacent string literals are joined across lines, escapes undone,
# and only the format (the first literal) counts. A format with no words of its own ("declining:
# %s") stands for the texts it is given: literal arguments (a ? "x" : "y"), or the `msg` the same
# function built just before (snprintf(msg, ...), or a tbrdma_diag_*_message of plugin/core,
# whose text is read there). A message the test cannot read that way fails: give it words.
# plugin/base/btl_tbrdma_output.c's "%s" lines relay help text, checked through the topics.
#
# TROUBLESHOOTING_DOC: the guide to check (default docs/troubleshooting.md);
# TROUBLESHOOTING_EXTRA_SOURCES: more C files to read, space-separated (e.g. a copy of a source
# with a new message, to see the check fail without touching plugin/).
set -uo pipefail
# shellcheck source=../lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
CHECK_NAME=troubleshooting-doc
top=$(cd "$(dirname "$0")/../.." && pwd)
doc=${TROUBLESHOOTING_DOC:-$top/docs/troubleshooting.md}
help=$top/plugin/help-mpi-btl-tbrdma.txt
diag=$top/plugin/core/tbrdma_diag.c
[ -f "$doc" ] || fatal "no $doc"
[ -f "$diag" ] || fatal "no $diag"

mapfile -t topics < <(sed -n 's/^\[\(.*\)\]$/\1/p' "$help")
check "the help file has topics (${#topics[@]})" test "${#topics[@]}" -ge 10
for t in "${topics[@]}"; do
    check "help topic [$t] has its section" grep -qxF "### [$t]" "$doc"
done

# The messages of the C sources, one a line: KIND<tab>FILE:LINE<tab>TEXT. KIND is reason,
# declining, not-used or always; TEXT is the format after its prefix ("tbrdma: ", "declining: "...),
# or @opaque / @diag:NAME when the test cannot tell what it prints.
# shellcheck disable=SC2016
extract='
# G[1..n]: the string-literal groups of s, adjacent literals joined, escapes undone, PRIu64 and
# the like as %d; returns n. CLOSED: where the parenthesis opened first closes (0: not yet).
function groups(s,    i, c, n, len, in_str, last_str, depth, opened, id, e) {
    n = 0; in_str = 0; last_str = 0; depth = 0; opened = 0; len = length(s)
    for (i = 1; i <= len; i++) {
        c = substr(s, i, 1)
        if (in_str) {
            if (c == "\\") {
                i++; e = substr(s, i, 1)
                G[n] = G[n] ((e == "n" || e == "t") ? " " : e)
            } else if (c == "\"") {
                in_str = 0; last_str = 1
            } else {
                G[n] = G[n] c
            }
            continue
        }
        if (c == "\"") {
            if (!last_str) { n++; G[n] = "" }
            in_str = 1
            continue
        }
        if (c == "\047") {                      # a character literal: skipped
            i++
            if (substr(s, i, 1) == "\\") i++
            i++
            last_str = 0
            continue
        }
        if (c ~ /[ \t\n]/) continue
        if (c ~ /[A-Za-z_]/) {
            id = c
            while (i < len && substr(s, i + 1, 1) ~ /[A-Za-z0-9_]/) { i++; id = id substr(s, i, 1) }
            if (last_str && id ~ /^PRI[diouxX]/) { G[n] = G[n] "%d"; continue }
            last_str = 0
            continue
        }
        last_str = 0
        if (c == "(") { depth++; opened = 1 }
        else if (c == ")") { depth--; if (opened && 0 == depth) { CLOSED = i; return n } }
    }
    CLOSED = 0
    return n
}
# The statement that starts at column start of this line, read on until its parenthesis closes:
# STMT, its groups G[1..NG].
function collect(start,    s, line) {
    s = substr($0, start)
    for (;;) {
        NG = groups(s)
        if (CLOSED) { STMT = substr(s, 1, CLOSED); return }
        if ((getline line) <= 0) { STMT = s; return }
        s = s "\n" line
    }
}
# 1 when f has words of its own, not only conversions and punctuation.
function has_words(f) {
    gsub(/%[-+ #0-9.*]*(hh|h|ll|l|z|j|t|L)?[diouxXeEfFgGcsp]/, "", f)
    return f ~ /[A-Za-z]/
}
function emit(kind, f,    i) {
    if (has_words(f)) { print kind "\t" WHERE "\t" f; return }
    if (NG > 1) {                               # "%s", a ? "x" : "y": each literal given
        for (i = 2; i <= NG; i++) print kind "\t" WHERE "\t" G[i]
        return
    }
    if (STMT ~ /[(,][ \t\n]*msg[ \t\n]*[,)]/ && "" != msgsrc && (msgsrc ~ /^@/ || has_words(msgsrc))) {
        print kind "\t" WHERE "\t" msgsrc     # the msg its function built just before
        return
    }
    print kind "\t" WHERE "\t@opaque"
}
FNR == 1 { msgsrc = ""; fn = "" }
# plugin/core/tbrdma_diag.c, read first: the text of each tbrdma_diag_NAME_message (its first
# tbrdma_fmt_add; the "host H: " before it is diag_add_host).
FILENAME == diag {
    if ($0 ~ /^size_t tbrdma_diag_[a-z0-9_]+_message\(/) {
        fn = $0; sub(/^size_t tbrdma_diag_/, "", fn); sub(/_message\(.*/, "", fn)
    } else if ($0 ~ /^}/) {
        fn = ""
    } else if ("" != fn && !(fn in diagfmt) && match($0, /tbrdma_fmt_add\(/)) {
        collect(RSTART)
        if (NG > 0) diagfmt[fn] = G[1]
    }
    next
}
/^}/ { msgsrc = "" }
/^[ \t]*(\*|\/\*|\/\/)/ { next }             # comments
{ WHERE = FILENAME ":" FNR }
match($0, /snprintf\(why, sizeof\(why\),/) {
    collect(RSTART)
    if (NG > 0) print "reason\t" WHERE "\t" G[1]
    next
}
match($0, /snprintf\(msg,/) {
    collect(RSTART)
    msgsrc = (NG > 0) ? G[1] : ""
    next
}
match($0, /tbrdma_diag_[a-z0-9_]+_message\(/) {
    name = substr($0, RSTART + 12, RLENGTH - 21)
    collect(RSTART)
    if (STMT ~ /[(,][ \t\n]*msg[ \t\n]*[,)]/) msgsrc = (name in diagfmt) ? diagfmt[name] : "@diag:" name
    next
}
match($0, /TBRDMA_VERBOSE\(/) {
    collect(RSTART)
    if (STMT !~ /^TBRDMA_VERBOSE\([ \t\n]*TBRDMA_VERBOSE_DECLINE[ \t\n]*,/ || NG < 1) next
    f = G[1]
    if (sub(/^declining: /, "", f)) emit("declining", f)
    else if (sub(/^not used in this job: /, "", f)) emit("not-used", f)
    next
}
match($0, /(opal_output|fprintf)\(/) {
    collect(RSTART)
    if (STMT ~ /^fprintf/ && STMT !~ /^fprintf\([ \t\n]*stderr/) next
    if (NG < 1) { print "always\t" WHERE "\t@opaque"; next }
    f = G[1]
    sub(/^(coll )?tbrdma: /, "", f)
    if (FILENAME ~ /\/base\/btl_tbrdma_output\.c$/ && !has_words(f)) next   # help text relayed
    emit("always", f)
    next
}
'
# plugin/agent (tbrdma-agent, a program of its own) is left out: its lines are one relayed
# format ("tbrdma-agent HOST: " and its text), which the guide's "Lines from tbrdma-agent"
# describes; its start-up failures reach users as the [agent-failed] topic's text.
mapfile -t sources < <(find "$top/plugin" \( -name '*.c' -o -name '*.h' \) -not -path '*/core/*' \
    -not -path '*/agent/*' | sort)
# shellcheck disable=SC2206
extra=(${TROUBLESHOOTING_EXTRA_SOURCES:-})
mapfile -t records < <(awk -v diag="$diag" "$extract" "$diag" "${sources[@]}" "${extra[@]}")

# head_re TEXT: its first six words, each conversion (%s, %u, %.1f, 0x%x...) any word, as an ERE.
head_re()
{
    printf '%s\n' "$1" | awk '{
        n = (NF < 6) ? NF : 6; out = ""
        for (i = 1; i <= n; i++) {
            w = $i
            if (i == n) sub(/[:;,.]+$/, "", w)
            gsub(/%[-+#0-9.*]*(hh|h|ll|l|z|j|t|L)?[diouxXeEfFgGcsp]/, "\001", w)
            gsub(/%%/, "%", w)
            gsub(/[][(){}.*+?^$|\\]/, "\\\\&", w)
            gsub(/\001/, "[^ ]*", w)
            out = out (i > 1 ? " " : "") w
        }
        print out }'
}

declare -A what=([reason]="reason for a lost peer" [declining]="declining line"
    [not-used]="\"not used in this job\" line" [always]="unconditional line")
declare -A found=([reason]=0 [declining]=0 [not-used]=0 [always]=0)
for r in "${records[@]}"; do
    IFS=$'\t' read -r kind where text <<<"$r"
    found[$kind]=$((found[$kind] + 1))
done
check "the plugin's reasons for a lost peer are found (${found[reason]})" test "${found[reason]}" -ge 8
check "the plugin's declining lines are found (${found[declining]})" test "${found[declining]}" -ge 8
check "the plugin's \"not used in this job\" lines are found (${found[not-used]})" \
    test "${found[not-used]}" -ge 3
check "the plugin's and coll/tbrdma's unconditional lines are found (${found[always]})" \
    test "${found[always]}" -ge 6

for r in "${records[@]}"; do
    IFS=$'\t' read -r kind where text <<<"$r"
    where=${where#"$top"/}
    if [[ $text == @* ]]; then
        fail "the ${what[$kind]} of $where: its text is built where this test cannot read it ($text)"
        continue
    fi
    head=$text
    [ reason = "$kind" ] && head=${text%%: *}
    check "the ${what[$kind]} \"${text:0:50}...\" ($where) is in the guide" \
        grep -qE -- "$(head_re "$head")" "$doc"
done
finish
