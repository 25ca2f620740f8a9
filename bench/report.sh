#!/usr/bin/env bash
# bench/report.sh DIR: bench/run's results from DIR/samples.csv and DIR/meta.txt (it can be run
# again on its own):
#   results.csv   the best (least usec) of every sample of a setting and size, with MB/s and,
#                 for msgrate, messages per second
#   TEST.png      one log-log plot per test that has rows (gnuplot): usec, MB/s or messages/s
#                 by size, a line per transport, number of Macs and link setting
#   report.md     the setting, the three goal ratios, a ratio table per test (tbrdma/raw and
#                 tcp/tbrdma, in time: above 1 the first is slower), the two-cable rows and the
#                 projection to real Macs (bench/projection.sh, which also writes projection.csv)
# Prints the three ratios and the path of the report. Exit 1 when DIR has no samples.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: bench/report.sh DIR}
[ -s "$dir/samples.csv" ] || { echo "report: no $dir/samples.csv" >&2; exit 1; }
meta()
{
    sed -n "s/^$1=//p" "$dir/meta.txt" 2>/dev/null | tail -1
}

# The best of every sample: link,macs,cables,transport,test,bytes,usec,MBps,msgs_per_s,runs.
awk -F, -v OFS=, 'NR > 1 {
        k = $1 OFS $2 OFS $3 OFS $4 OFS $5 OFS $6
        if (!(k in u) || $8 + 0 < u[k] + 0) { u[k] = $8; m[k] = $9 }
        n[k]++
    } END {
        for (k in u) print k, u[k], m[k], sprintf("%.0f", 1e6 / u[k]), n[k]
    }' "$dir/samples.csv" | sort -t, -k1,1 -k2,2n -k3,3n -k4,4 -k5,5 -k6,6n \
    | sed '1i link,macs,cables,transport,test,bytes,usec,MBps,msgs_per_s,runs' >"$dir/results.csv"

# value LINK MACS CABLES TRANSPORT TEST BYTES FIELD: one number of results.csv (empty if none).
value()
{
    awk -F, -v k="$1,$2,$3,$4,$5,$6" -v f="$7" '$1 "," $2 "," $3 "," $4 "," $5 "," $6 == k {
        print $f }' "$dir/results.csv"
}

# ratio A B FORMAT: A / B, or "-" when either is missing.
ratio()
{
    awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }'
}

# goal LINK VALUE OP LIMIT: the goal, and on the link model "met" or "not met".
goal()
{
    local link=$1
    shift
    printf '%s %s' "$2" "$3"
    [ "$1" = - ] || [ "$link" != on ] && return
    printf ' '
    awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN {
        ok = (op == "<=") ? v <= l : v >= l; printf ok ? "met" : "not met" }'
}

# The three goal ratios (8 B latency and 4 MiB bandwidth against raw UC, two cables against one):
# on the link model when it was measured, else without it.
issue_ratios()
{
    local link=off lat bw two raw2
    grep -q '^on,2,' "$dir/results.csv" && link=on
    grep -q '^\(on\|off\),2,' "$dir/results.csv" || link=apple # only Apple's rate measured
    lat=$(ratio "$(value $link 2 1 tbrdma latency 8 7)" "$(value $link 2 1 raw latency 8 7)")
    bw=$(ratio "$(value $link 2 1 tbrdma bandwidth 4194304 8)" "$(value $link 2 1 raw bandwidth 4194304 8)")
    two=$(ratio "$(value $link 2 2 tbrdma bandwidth 16777216 8)" "$(value $link 2 1 tbrdma bandwidth 16777216 8)")
    raw2=$(ratio "$(value $link 2 2 raw bandwidth 16777216 8)" "$(value $link 2 1 raw bandwidth 16777216 8)")
    echo "## The three goal ratios (link model $link, 2 Macs)"
    echo
    if [ "$link" = apple ]; then
        echo "Only Apple's rate (75 Gbit/s) was measured: the goals were set for the 8 Gbit/s link model."
        echo
    elif [ "$link" = off ]; then
        echo "The goals are set on the link model; $(meta link_on | sed 's/^$/it was not asked for/'): these are without it."
        echo
    fi
    echo "| ratio | value | goal |"
    echo "|---|---|---|"
    echo "| 8 B latency, tbrdma / raw UC ping-pong (time) | $lat | $(goal $link "$lat" '<=' 1.3) |"
    echo "| 4 MiB bandwidth, tbrdma / raw UC stream | $bw | $(goal $link "$bw" '>=' 0.9) |"
    echo "| 16 MiB bandwidth, tbrdma on two cables / on one | $two | $(goal $link "$two" '>=' 1.8) |"
    echo "| the same for raw UC streams (what the fabric allows) | $raw2 | - |"
    echo
    echo "What tbrdma sent from mac-a on each cable during its two-cable runs (simulator counters):"
    sed -n "s/^cables_${link}_tbrdma_\([0-9]*\)=/- round \1: /p" "$dir/meta.txt"
    echo
    echo "Striping: tbrdma spreads the fragments of messages of btl_tbrdma_stripe_min_size and up"
    echo "over every cable of a pair (docs/design.md, \"Multi-cable striping\"); the counters show it."
}

# The ratio table of one test in one setting.
test_table()
{
    local link=$1 macs=$2 test=$3 unit=$4
    echo "| bytes | raw $unit | tbrdma $unit | tcp $unit | tbrdma/raw | tcp/tbrdma |$(grep -q ",nocsum,$test," "$dir/results.csv" && echo " nocsum $unit | checksum cost |")"
    echo "|---|---|---|---|---|---|$(grep -q ",nocsum,$test," "$dir/results.csv" && echo "---|---|")"
    awk -F, -v l="$link" -v m="$macs" -v t="$test" '$1 == l && $2 == m && $3 == 1 && $5 == t {
            u[$4, $6] = $7; b[$6] = 1; if ($4 == "nocsum") nc = 1
        } function r(a, b) { return (a > 0 && b > 0) ? sprintf("%.2f", a / b) : "-" }
        function v(x) { return x == "" ? "-" : x }
        END {
            for (s in b) {
                line = sprintf("| %s | %s | %s | %s | %s | %s |", s, v(u["raw", s]), v(u["tbrdma", s]),
                    v(u["tcp", s]), r(u["tbrdma", s], u["raw", s]), r(u["tcp", s], u["tbrdma", s]))
                if (nc) line = line sprintf(" %s | %s |", v(u["nocsum", s]), r(u["tbrdma", s], u["nocsum", s]))
                print s + 0, line
            }
        }' "$dir/results.csv" | sort -n | cut -d' ' -f2-
    echo
}

ratio_tables()
{
    local link macs test
    echo "## Ratio tables"
    echo
    echo "Times in usec (latency: half round trip; bandwidth, msgrate: per message; bibw: per message"
    echo "of one direction; collectives: per call). Ratios are of times: above 1 the first is slower."
    echo
    for link in off on apple; do
        for macs in 2 4; do
            grep -q "^$link,$macs,1," "$dir/results.csv" || continue
            echo "### Link model $link, $macs Macs"
            echo
            if [ "$link" != off ]; then
                echo "The link model is libtbsim's: it shapes RDMA (raw and tbrdma), not the cables' IP"
                echo "interfaces, so tcp runs at this machine's speed here (the kernel has no netem or tbf"
                echo "to give the veth cables the same rate and latency): compare tcp on the rows without it."
                echo
            fi
            for test in latency bandwidth bibw msgrate allreduce allgather alltoall; do
                grep -q "^$link,$macs,1,[a-z]*,$test," "$dir/results.csv" || continue
                echo "#### $test"
                echo
                test_table "$link" "$macs" "$test" us
            done
        done
    done
}

two_cables()
{
    echo "## Two cables between 2 Macs, one-way bandwidth at 16 MiB (MB/s)"
    echo
    echo "| link | transport | one cable | two cables | two / one |"
    echo "|---|---|---|---|---|"
    awk -F, '$2 == 2 && $5 == "bandwidth" && $6 == 16777216 { v[$1 "|" $4, $3] = $8; k[$1 "|" $4] = 1 }
        END { for (x in k) { split(x, p, "|"); a = v[x, 1]; b = v[x, 2]; if (b == "") continue
            printf "| %s | %s | %s | %s | %s |\n", p[1], p[2], a == "" ? "-" : a, b,
                (a > 0 && b > 0) ? sprintf("%.2f", b / a) : "-" } }' "$dir/results.csv" | sort
    echo
    echo "Raw: uc_stream on one cable and on both at once (16,773,120 B messages, Apple's largest)."
    echo
}

header()
{
    echo "# tbrdma benchmarks ($(meta mode) mode)"
    echo
    echo "$(meta date), commit $(meta commit), Open MPI $(meta ompi), $(meta cpus) CPUs ($(meta cpu));"
    echo "load average $(meta load_start) at the start, $(meta load_end) at the end. Sizes $(meta sizes);"
    echo "$(meta rounds) round(s) of alternating transports, tb_bench $(meta repeats) run(s) per size"
    echo "and round, time scale $(meta scale); each row the best of them."
    echo "2 Macs: $(meta policy2); 4 Macs: $(meta policy4)."
    [ -n "$(meta link_2)" ] && echo "Link model: $(meta link_2)."
    [ -n "$(meta link_apple_2)" ] && echo "Apple's rate (apple): $(meta link_apple_2)."
    echo
    echo "Every number describes this shared machine and the simulator, not Thunderbolt: compare"
    echo "ratios within this run. Method: docs/benchmarks.md."
    echo
    if [ "$(meta failures)" != 0 ] && [ -n "$(meta failures)" ]; then
        echo "**$(meta failures) run(s) failed** (their rows are missing): see the output of bench/run."
        echo
    fi
}

plots()
{
    command -v gnuplot >/dev/null || { echo "report: gnuplot is not installed: no plots" >&2; return 1; }
    local test
    for test in latency bandwidth bibw msgrate allreduce allgather alltoall; do
        grep -q "^[a-z]*,[0-9]*,1,[a-z]*,$test," "$dir/results.csv" || continue
        "$here/plot.sh" "$dir" "$test" || return 1
    done
}

rc=0
plots || rc=1
# Whether the run measured between 2 Macs (a --macs 4 run has neither the goal ratios, the
# two-cable rows nor the projection's inputs, and that is no failure).
two_macs=0
# jaccl_table: bench/jaccl_sim.sh's last table (JACCL itself on the same simulated cable), when
# one was made on this machine: it needs an MLX checkout, which bench/run never fetches.
jaccl_table()
{
    local t=$here/../build/bench/jaccl_sim/table.md
    [ -f "$t" ] || return 0
    echo
    echo "## Against JACCL itself (bench/jaccl_sim.sh, its last run: $(date -r "$t" '+%F %R'))"
    echo
    cat "$t"
    [ ! -f "$(dirname "$t")/plot.png" ] || echo "Plot: $(cd "$(dirname "$t")" && pwd)/plot.png."
}

grep -q '^[a-z]*,2,' "$dir/results.csv" && two_macs=1
{
    header
    if [ "$two_macs" = 1 ]; then
        issue_ratios
        echo
        two_cables
    else
        echo "## The three goal ratios"
        echo
        echo "Not measured: they are taken between 2 Macs, and this run had none (--macs 4)."
        echo
    fi
    ratio_tables
    # the projection starts from this machine's costs, without the link model or with "on"
    "$here/projection.sh" "$dir" || ! grep -q '^\(on\|off\),2,' "$dir/results.csv" || rc=1
    jaccl_table
    echo
    echo "## Files"
    echo
    echo "samples.csv (every run), results.csv (the best), projection.csv, $(cd "$dir" && ls ./*.png 2>/dev/null | sed 's|^\./||' | paste -sd' ')."
} >"$dir/report.md"
sed -n '/^## The issue/,/^\(Striping\|Not measured\):/p' "$dir/report.md" | grep '^|' | grep -v '^|---' | sed 's/^/  /'
echo "report: $dir/report.md"
exit "$rc"
