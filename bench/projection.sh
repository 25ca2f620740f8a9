#!/usr/bin/env bash
# bench/projection.sh DIR: the "projection to real Macs" section of bench/run's report (printed
# as Markdown) and DIR/projection.csv (quantity,value,unit,kind,source; every field quoted),
# from DIR/results.csv.
# The model (docs/benchmarks.md, "Projection"): what tbrdma adds to the raw verbs path, measured
# on the simulator, added to the raw figures measured between Macs:
#   latency    L_mac = A_lat + max(0, d_msg) x cpu, d_msg = tbrdma's 8 B half round trip minus the
#              raw UC ping-pong's (one message's software cost); an upper bound adds tbrdma's
#              whole simulated one-way time instead
#   bandwidth  e = (tbrdma's usec per 4 MiB message in a stream - raw's) / 4 MiB, the software
#              cost of a byte; B_mac between 1 / (1 / A_bw + e x cpu) (copies and checksum not
#              overlapped with the wire) and min(A_bw, 1 / (e x cpu)) (fully overlapped)
#   allreduce  small, 4 Macs: rounds x L_mac (recursive doubling: 2 rounds; the simulator's
#              4-Mac allreduce, 4 ranks on 2 cores, measures the scheduler, not the rounds);
#              256 MB, 4 Macs: algorithms that exchange with one peer per step (Open MPI's ring,
#              recursive halving) move 2 (n - 1) / n of the data over one cable at a time:
#              algbw <= B_mac x n / (2 (n - 1)); one that uses all n - 1 cables at once (JACCL's
#              mesh reduce-scatter + all-gather, which coll/tbrdma runs) <= B_mac x n / 2;
#              reduction time left out
# Measured inputs come from the rows without the link model. When only rows with it exist they
# serve, with the model's one-way latency (meta.txt) taken off the upper bound, and e is then a
# lower bound: the modelled wire hides a software cost per byte below its own.
set -uo pipefail
dir=${1:?usage: bench/projection.sh DIR}
res=$dir/results.csv
csv=$dir/projection.csv
# Figures published for Macs (a third party's perftest runs) and for JACCL (/work/shared/research/apple-thunderbolt-rdma.md, §6).
A_LAT=4.15  # us, ib_send_lat 64 B Mac to Mac (hellas-ai/thunderbolt-ibverbs #28)
A_BW=9375   # MB/s, 75 Gbit/s ib_send_bw 64 KiB on one UC QP (hellas-ai/thunderbolt-ibverbs #27)
J_SMALL=5-9 # us, 4-Mac small all-sum (mlx#2808's plot as read by secondary pages)
J_BIG=12200 # MB/s, 256 MB bf16 all-reduce algorithm bandwidth, 4 Macs (mlx#3412)
CPU=1       # assumed: an Apple core runs tbrdma's code no slower than this machine's core
ROUNDS=2    # assumed: recursive doubling for a small allreduce on 4 ranks (log2 4)

link=off link_us=0
if ! grep -q '^off,2,1,' "$res"; then
    link=on
    link_us=$(sed -n 's/^link_2=.* latency_us=\([0-9.]*\).*/\1/p' "$dir/meta.txt" 2>/dev/null | tail -1)
fi
value()
{
    awk -F, -v k="$link,$1,1,$2,$3,$4" '$1 "," $2 "," $3 "," $4 "," $5 "," $6 == k { print $7 }' "$res"
}
raw_lat=$(value 2 raw latency 8)
tb_lat=$(value 2 tbrdma latency 8)
raw_bw=$(value 2 raw bandwidth 4194304)
tb_bw=$(value 2 tbrdma bandwidth 4194304)
if [ -z "$raw_lat" ] || [ -z "$tb_lat" ] || [ -z "$raw_bw" ] || [ -z "$tb_bw" ]; then
    echo "## Projection to real Macs"
    echo
    echo "Not computed: it needs raw and tbrdma latency at 8 B and bandwidth at 4 MiB between 2 Macs."
    exit 1
fi

awk -v rl="$raw_lat" -v tl="$tb_lat" -v rb="$raw_bw" -v tb="$tb_bw" -v lk="${link_us:-0}" \
    -v al="$A_LAT" -v ab="$A_BW" -v js="$J_SMALL" -v jb="$J_BIG" -v cpu="$CPU" \
    -v rounds="$ROUNDS" -v link="$link" -v csv="$csv" '
function row(q, v, u, kind, src) {
    printf "\"%s\",\"%s\",\"%s\",\"%s\",\"%s\"\n", q, v, u, kind, src > csv
    printf "| %s | %s %s | %s | %s |\n", q, v, u, kind, src
}
BEGIN {
    printf "quantity,value,unit,kind,source\n" > csv
    d = tl - rl; dm = d > 0 ? d : 0
    e = (tb - rb) / 4194304; em = e > 0 ? e : 0
    lmac = al + dm * cpu; lup = al + (tl - lk > 0 ? tl - lk : 0) * cpu
    bser = 1 / (1 / ab + em * cpu); bpipe = em > 0 ? 1 / (em * cpu) : ab; bpipe = bpipe < ab ? bpipe : ab
    print "## Projection to real Macs"
    print ""
    print "What tbrdma adds to the raw verbs path, measured here on the simulator (link model " link "),"
    print "added to the raw figures measured between Macs. Method and caveats: docs/benchmarks.md."
    print ""
    print "| input or result | value | kind | source |"
    print "|---|---|---|---|"
    row("raw UC half round trip at 8 B, simulator", rl, "us", "measured", "uc_pingpong, this run")
    row("tbrdma half round trip at 8 B, simulator", tl, "us", "measured", "tb_bench latency, this run")
    row("d_msg: tbrdma minus raw per message", sprintf("%.3f", d), "us", "measured", "difference of the two")
    row("raw UC stream, usec per 4 MiB message", rb, "us", "measured", "uc_stream, this run")
    row("tbrdma stream, usec per 4 MiB message", tb, "us", "measured", "tb_bench bandwidth, this run")
    row("e: tbrdma minus raw per byte", sprintf("%.3f", e * 1024 * 1000), "ns/KiB", "measured", "difference / 4 MiB")
    row("A_lat: Apple raw UC latency, 64 B", al, "us", "published", "ib_send_lat, hellas-ai/thunderbolt-ibverbs #28")
    row("A_bw: Apple raw UC bandwidth, one QP, 64 KiB", ab, "MB/s", "published", "75 Gbit/s ib_send_bw, hellas-ai/thunderbolt-ibverbs #27")
    row("cpu: Apple core time / this core time for tbrdma code", cpu, "", "assumed", "conservative (an M-series core is not slower)")
    row("rounds of a small 4-rank allreduce", rounds, "", "assumed", "recursive doubling (log2 4)")
    row("tbrdma 8 B latency on Macs", sprintf("%.2f", lmac), "us", "projected", "A_lat + max(0, d_msg) x cpu")
    row("  upper bound", sprintf("%.2f", lup), "us", "projected", "A_lat + tbrdma simulated one-way time" (lk > 0 ? " less the link model'"'"'s " lk " us" : ""))
    row("  tbrdma / raw on Macs", sprintf("%.2f", lmac / al), "", "projected", "goal <= 1.3")
    row("tbrdma 4 MiB bandwidth on Macs, one cable", sprintf("%.0f-%.0f", bser, bpipe), "MB/s", "projected", "1/(1/A_bw + e x cpu) .. min(A_bw, 1/(e x cpu))")
    row("  tbrdma / raw on Macs", sprintf("%.2f-%.2f", bser / ab, bpipe / ab), "", "projected", "goal >= 0.9")
    row("4-Mac 8 B allreduce", sprintf("%.1f", rounds * lmac), "us", "projected", "rounds x tbrdma latency on Macs")
    row("JACCL 4-Mac small all-sum", js, "us", "published", "mlx#2808 plot, secondary reading")
    row("4-Mac 256 MB allreduce, one peer per step", sprintf("%.0f", bser * 4 / 6), "MB/s", "projected", "<= B_mac x n/(2(n-1)), Open MPI ring / recursive halving, no reduction time")
    row("4-Mac 256 MB allreduce, every cable at once", sprintf("%.0f", bser * 4 / 2), "MB/s", "projected", "<= B_mac x n/2, a mesh reduce-scatter + all-gather (JACCL'"'"'s; coll/tbrdma'"'"'s), no reduction time")
    row("JACCL 4-Mac 256 MB bf16 all-reduce", jb, "MB/s", "published", "algorithm bandwidth, mlx#3412")
    print ""
    if (d < 0)
        print "d_msg is negative: tbrdma'"'"'s one-way time on the simulator is below the raw ping-pong'"'"'s (uc_pingpong waits for each send'"'"'s completion before it polls for the answer; tbrdma does not), so the projection takes 0: tbrdma at Apple'"'"'s raw latency. The upper bound counts all of tbrdma'"'"'s simulated time as software."
    if (e < 0)
        print "e is negative: tbrdma streamed 4 MiB faster than the raw program here, so the projection takes no per-byte cost."
    if (link == "on")
        print "Only rows on the link model were measured: its wire hides any per-byte cost below its rate, so e is a lower bound and the bandwidth projection an upper one; rows without the link model (--link off or both) give e."
    print "The large allreduce bounds use the serial (lower) bandwidth and leave out the reduction; JACCL'"'"'s figure includes its bf16 reduction. Open MPI'"'"'s default collectives exchange with one peer per step, so on 4 Macs they use one of the three cables at a time: that, not the transport, bounds them below JACCL'"'"'s mesh. tbrdma'"'"'s coll/tbrdma (on with share/tbrdma/coll-tuned.conf) runs the mesh reduce-scatter + all-gather from 16 KiB (docs/collectives.md)."
}'
