#!/usr/bin/env bash
# bench/coll_rules.awk's merge (bench/coll_tune.sh --min): a run that measured only from some
# size up keeps an earlier rules file below that size. On made-up measurements (2 and 4 ranks,
# 2 MiB and 8 MiB) and a made-up base file, checked: below FROM every measured communicator size
# keeps the base's message rules line for line (comments too), the base's rules from FROM up are
# gone, the new ones start at FROM exactly, a communicator size the base lacks gets Open MPI's
# default below FROM, the file's counts agree with its lines (what coll/tuned's parser reads),
# and a malformed base is refused naming its line. No MPI, no root.
source "$(dirname "$0")/lib.sh"
bench_tmp
from=1482910 # 2 MiB / sqrt(2): what coll_tune.sh --min 2097152 passes

cat >"$tmp/base.rules" <<'EOF'
# base: made up for the test
# second comment line
1    # collectives
2 2    # allreduce: 2 communicator sizes
2 3    # 2 ranks
0 0 0 0    # from 0 B; base rule A
65536 3 4 0    # from 64 KiB; base rule B
2097152 0 0 0    # from 2 MiB: not measured, default (must go)
5 1    # 5 ranks (no 4 in the base)
0 6 4 0    # base rule C (never used for 4 ranks)
EOF
cat >"$tmp/measure-2-allreduce.csv" <<'EOF'
allreduce,2,2097152,default,rabenseifner,10,1000,1100
allreduce,2,2097152,4,ring,10,500,550
allreduce,2,8388608,default,rabenseifner,10,4000,4100
allreduce,2,8388608,4,ring,10,3990,4000
EOF
sed 's/^allreduce,2,/allreduce,4,/' "$tmp/measure-2-allreduce.csv" >"$tmp/measure-4-allreduce.csv"

merge()
{
    awk -F, -v margin=0.10 -v title=merged -v base="$1" -v from="$from" \
        -f "$top/bench/coll_rules.awk" "$tmp"/measure-*.csv
}
merge "$tmp/base.rules" >"$tmp/out.rules" 2>"$tmp/err"
expect "the merge exits 0" 0 "$?"
sed 's/^/    | /' "$tmp/out.rules"

# The message rules (without the count lines) of communicator size $1.
rules_of()
{
    awk -v r="$1" '/^[0-9]+ [0-9]+ +# [0-9]+ ranks/ { on = ($1 == r); next } on && NF >= 4 && $1 ~ /^[0-9]+$/' "$tmp/out.rules"
}
expect "2 ranks: the base's two rules below FROM, verbatim, then the new ones from FROM" \
    "$(grep -E 'base rule [AB]$' "$tmp/base.rules" | tr '\n' '|')1482910 4 4 0|4194304 0 0 0|" \
    "$(rules_of 2 | sed -E 's/^(1482910 4 4 0|4194304 0 0 0) .*/\1/' | tr '\n' '|')"
expect "the base's rule from 2 MiB (above FROM) is gone" "" "$(grep 'must go' "$tmp/out.rules")"
expect "4 ranks (not in the base): Open MPI's default below FROM, then the new rules" \
    "0 0 0 0|1482910 4 4 0|4194304 0 0 0|" "$(rules_of 4 | awk '{ print $1, $2, $3, $4 }' | tr '\n' '|')"
check_grep "the default line says why" "$tmp/out.rules" "^0 0 0 0 +# below 1.41 MiB: no rules for 4 ranks in $tmp/base.rules, default$"
check_grep "the header names the base by its first line" "$tmp/out.rules" \
    "^# Below 1482910 B \\(1.41 MiB\\): the rules of the file of this first line, kept with their comments: base: made up for the test$"

# coll/tuned's reading: the counts announce exactly the lines that follow.
awk '
    { sub(/#.*/, "") } NF == 0 { next }
    { line[++n] = NF " " $0 }
    END {
        k = 1; split(line[k++], t, " "); nc = t[2]
        for (c = 0; c < nc; c++) {
            split(line[k++], t, " "); if (t[1] != 2) exit 1; ncomm = t[3]
            for (j = 0; j < ncomm; j++) {
                split(line[k++], t, " "); if (t[1] != 2) exit 1; nm = t[3]
                for (m = 0; m < nm; m++) { split(line[k++], t, " "); if (t[1] != 4) exit 1 }
            }
        }
        exit (k - 1 == n) ? 0 : 1
    }' "$tmp/out.rules"
expect "every count agrees with the lines after it" 0 "$?"

sed 's/^65536 3 4 0 .*/65536 3 4/' "$tmp/base.rules" >"$tmp/bad.rules"
merge "$tmp/bad.rules" >/dev/null 2>"$tmp/err"
expect "a base with a 3-number message rule is refused" 2 "$?"
check_grep "naming the file and its line" "$tmp/err" \
    "^coll_rules.awk: $tmp/bad.rules line 7: expected a message rule \\(4 numbers\\)$"
finish
