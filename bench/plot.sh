#!/usr/bin/env bash
# bench/plot.sh DIR TEST: DIR/TEST.png from DIR/results.csv (bench/report.sh runs it): a log-log
# plot by message size of the test's usec (latency, collectives), MB/s (bandwidth, bibw) or
# messages per second (msgrate); a line per transport (colour), number of Macs (point) and link
# setting (solid: without the link model, dashed: with it). Needs gnuplot.
set -uo pipefail
dir=${1:?usage: bench/plot.sh DIR TEST}
test=${2:?usage: bench/plot.sh DIR TEST}
case $test in
bandwidth | bibw) col=8 ylabel="MB/s (higher is better)" ;;
msgrate) col=9 ylabel="messages per second (higher is better)" ;;
*) col=7 ylabel="usec (lower is better)" ;;
esac
case $test in
latency) what="latency, half round trip, 2 Macs" ;;
bandwidth) what="one-way bandwidth, 2 Macs, one cable" ;;
bibw) what="bidirectional bandwidth (both ways together), 2 Macs" ;;
msgrate) what="message rate, every pair of Macs at once" ;;
*) what="MPI_$(tr '[:lower:]' '[:upper:]' <<<"${test:0:1}")${test:1}, one rank per Mac" ;;
esac
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT

# One data file per series (cables = 1 only), named link.macs.transport.
awk -F, -v t="$test" -v c="$col" -v d="$data" 'NR > 1 && $3 == 1 && $5 == t {
        print $6, $c >> (d "/" $1 "." $2 "." $4) }' "$dir/results.csv"
plot=()
for f in "$data"/*; do
    [ -e "$f" ] || continue
    IFS=. read -r link macs transport <<<"$(basename "$f")"
    sort -n "$f" -o "$f"
    case $transport in
    raw) lc=black ;;
    tbrdma) lc="#0060c0" ;;
    tcp) lc="#c03020" ;;
    *) lc="#209040" ;;
    esac
    dt=1 pt=7
    [ "$link" = on ] && dt=2
    [ "$macs" = 4 ] && pt=9
    plot+=("'$f' using 1:2 with linespoints lw 2 lc rgb '$lc' dt $dt pt $pt ps 1.2 title '$transport, $macs Macs, link model $link'")
done
[ ${#plot[@]} -gt 0 ] || { echo "plot: no rows for $test" >&2; exit 1; }
gnuplot <<EOF
set terminal pngcairo size 1000,650 font "sans,11" noenhanced
set output "$dir/$test.png"
set title "$what\n(simulated Macs on $(nproc) shared CPUs: compare ratios, not absolute numbers)"
set logscale xy
set format y "%g"
set xrange [5:100000000]
set xtics ("8" 8, "64" 64, "256" 256, "1K" 1024, "4K" 4096, "16K" 16384, "64K" 65536, \\
    "256K" 262144, "1M" 1048576, "4M" 4194304, "16M" 16777216, "64M" 67108864)
set xlabel "message size (bytes)"
set ylabel "$ylabel"
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key outside right top box
plot $(IFS=,; echo "${plot[*]}")
EOF
