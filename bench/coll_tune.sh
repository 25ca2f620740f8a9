#!/usr/bin/env bash
# bench/coll_tune.sh [OPTIONS]: which of Open MPI's collective algorithms is fastest over
# tbrdma on a full mesh of Macs, per size, and the coll/tuned dynamic rules file that picks it.
#
#   1. measure  for each Open MPI version, number of Macs (one rank each, btl self,tbrdma) and
#               collective (allreduce, bcast, allgather, alltoall, reduce_scatter): Open MPI's
#               default and every algorithm of coll/tuned (ompi_info's list, plus segmented
#               variants, SEGMENTED below), 8 B to 64 MiB, side by side in one job
#               (bench/coll_tune.c: each result checked, best of ROUNDS)
#   2. rules    bench/coll_rules.awk: per size, the default unless an algorithm beats it by
#               MARGIN, a draft; then Open MPI's default against the draft in effect, in other
#               jobs (as in 3), and the rules keep only the changes confirmed there (a busy
#               machine makes flukes): OUT/VERSION/ompi-VERSION.rules
#   3. check    Open MPI's default against the rules file in effect (mpirun --tune with the
#               file's MCA settings, as users turn it on), alternating jobs, best of both
#   4. table    per collective, ranks and size: what the default ran and its time, what the
#               rules ran and theirs, default/rules (> 1: the rules are faster); then, per
#               collective and ranks, whether the rules beat the default at every size they
#               change
#   5. side     for the collectives of --side (default allreduce), one job per cluster size:
#               Open MPI's default (twice: the noise) and, forced, what the rules name at each
#               size (the call coll/tuned makes with the rules in effect), taking turns at every
#               size: default and rules side by side in one job, as ratios
#
# Options:
#   --flavours "4.1 5.0"  Open MPI versions (the simulated cluster; 5.0 is test/ompi5's chroot)
#   --macs "2 4"          cluster sizes
#   --ranks-per-mac N     ranks on each Mac (default 1; more: btl self,sm|vader,tbrdma); the
#                         rules are for one (coll/tuned only sees the communicator's size)
#   --colls LIST          collectives, comma-separated (default all five)
#   --max BYTES           largest size (default 67108864)
#   --min BYTES           smallest size (default 8); from 16 up the rules below MIN/sqrt(2)
#                         (halfway, geometrically, to the MIN/2 a run to MIN/2 ends at) are the
#                         ones of --base (the rest of a run cut short)
#   --base DIR            with --min: the earlier rules, DIR/ompi-VERSION.rules (default
#                         share/coll, the shipped ones)
#   --rounds N            rounds per job, best kept (default 5); --big-rounds N from 1 MiB up
#                         (default 3); --checks N check job pairs (default 2)
#   --ms MS               time of one timing (default 20)
#   --side LIST           collectives of step 5, comma-separated ('' for none; default allreduce)
#   --side-rounds N       rounds of step 5 below 1 MiB (default 7; from 1 MiB up: --big-rounds)
#   --margin F            a rule changes the default only when faster by F (default 0.10)
#   --rules DIR           check the rules files DIR/ompi-VERSION.rules instead of measuring
#                         (e.g. share/coll, the shipped ones)
#   --install             copy the new rules files to share/coll/ (the shipped ones)
#   --out DIR             results (default build/bench/coll_tune): CSVs, rules, table.txt
#   --hostfile FILE       real Macs: mpirun with FILE, btl self,tbrdma, the installed Open MPI
#                         and mpicc (one version: --flavours names it), no simulator; the
#                         repository at the same path on every Mac
#   --cluster-args ARGS   extra `tbcluster up` arguments (the link model's rate and latency)
#   --resume              keep the measurements already in OUT (a run that was stopped)
#   --tables              only print the tables of the results in OUT (no job)
#   -q                    a quick look: to 1 MiB, 2 rounds, 5 ms
# Timing never decides a test: the numbers describe this machine at this load. Needs root and
# network namespaces for the simulated cluster, ./build.sh and test/ompi5/build.sh done. On the
# simulated cluster a peer is declared lost after 120 s of silence, not 5 (a busy shared machine
# can starve a rank that long).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
flavours="4.1 5.0" macs="2 4" colls=allreduce,bcast,allgather,alltoall,reduce_scatter
min=8 max=67108864 rounds=5 big_rounds=3 checks=2 ms=20 margin=0.10 rules_dir='' install=0 hostfile=
out=$repo/build/bench/coll_tune cluster_args=() resume=0 per_mac=1 tables_only=0 side=allreduce
side_rounds=7 base_dir=$repo/share/coll
# Segmented variants timed besides every algorithm unsegmented: COLL:ALG:SEG.
SEGMENTED=${SEGMENTED:-"bcast:2:131072 bcast:3:131072 bcast:6:131072 allreduce:5:131072"}
# Collectives written for the mesh at the MPI level (bench/coll_mesh.h), timed beside Open MPI's
# to see what a coll component of tbrdma's could gain; never in the rules: COLL:CHOICE.
MESH=${MESH:-"allreduce:mesh allreduce:mesh2 allgather:mesh reduce_scatter:mesh"}
# Algorithms never chosen, VERSION:COLL:ALG: Open MPI 5.0.7's sparbit allgather gives wrong
# results with MPI_IN_PLACE and with a strided vector type (test/mpi/tb_coll, with btl self,sm
# alone too: Open MPI's bug, not tbrdma's).
BROKEN=${BROKEN:-"5.0:allgather:7"}
while [ $# -gt 0 ]; do
    case $1 in
    --flavours) flavours=$2; shift 2 ;;
    --macs) macs=$2; shift 2 ;;
    --ranks-per-mac) per_mac=$2; shift 2 ;;
    --colls) colls=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --min) min=$2; shift 2 ;;
    --base) base_dir=$(realpath "$2"); shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --big-rounds) big_rounds=$2; shift 2 ;;
    --checks) checks=$2; shift 2 ;;
    --side) side=$2; shift 2 ;;
    --side-rounds) side_rounds=$2; shift 2 ;;
    --ms) ms=$2; shift 2 ;;
    --margin) margin=$2; shift 2 ;;
    --rules) rules_dir=$(realpath "$2"); shift 2 ;;
    --install) install=1; shift ;;
    --resume) resume=1; shift ;;
    --tables) tables_only=1; shift ;;
    --out) out=$2; shift 2 ;;
    --hostfile) hostfile=$(realpath "$2"); shift 2 ;;
    --cluster-args) read -r -a cluster_args <<<"$2"; shift 2 ;;
    -q) max=1048576 rounds=2 big_rounds=2 ms=5; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "coll_tune: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
export CHECK_NAME=coll_tune
export MT_TIMEOUT=${MT_TIMEOUT:-7200} # one job measures a collective at every size
# shellcheck source=../test/mpi/lib.sh
. "$repo/test/mpi/lib.sh"
mkdir -p "$out"
out=$(realpath "$out")
log=$out/jobs.log
[ "$resume" = 1 ] || : >"$log"

# broken FLAVOUR: "COLL:ALG ..." of BROKEN for that Open MPI version.
broken()
{
    local b
    for b in $BROKEN; do
        [ "${b%%:*}" = "$1" ] && echo "${b#*:}"
    done
}

# enumerators FLAVOUR COLL: "NUMBER NAME" of every algorithm of COLL in coll/tuned (ompi_info).
enumerators()
{
    local info=(ompi_info)
    [ 5.0 = "$1" ] && [ -z "$hostfile" ] && info=("$repo/test/ompi5/in-chroot.sh" ompi_info)
    "${info[@]}" --param coll tuned --level 9 --parsable 2>/dev/null \
        | sed -n "s/^mca:coll:tuned:param:coll_tuned_$2_algorithm:enumerator:value:\([1-9][0-9]*\):\(.*\)/\1 \2/p"
}

# candidates FLAVOUR COLL: "ALG ALG:SEG ...": every algorithm of ompi_info but the broken ones,
# the segmented variants, and the mesh ones.
candidates()
{
    local s
    enumerators "$1" "$2" | cut -d' ' -f1 \
        | grep -v -x -F -f <(broken "$1" | sed -n "s/^$2://p"; echo x)
    for s in $SEGMENTED $MESH; do
        [ "${s%%:*}" = "$2" ] && echo "${s#*:}"
    done
}

# job FLAVOUR MACS CSV MPIRUN-ARGS... -- COLL_TUNE-ARGS...: one coll_tune job, rows into CSV.
# coll/tbrdma stays off: these are coll/tuned's algorithms, measured for its rules.
job()
{
    local fl=$1 n=$2 csv=$3 args=()
    shift 3
    while [ "$1" != -- ]; do args+=("$1"); shift; done
    shift
    if [ "$resume" = 1 ] && [ -s "$csv" ]; then
        echo "== $fl, $n Macs: kept $csv" >>"$log"
        return 0
    fi
    echo "== $fl, $n Macs: ${args[*]} coll_tune $* ($(date +%T), load $(cut -d' ' -f1 /proc/loadavg))" >>"$log"
    if [ -n "$hostfile" ]; then
        mpirun --hostfile "$hostfile" --map-by node -np "$((n * per_mac))" --mca pml ob1 \
            --mca btl "$(mt_btl "$per_mac")" --mca coll_tbrdma_priority 0 \
            "${args[@]}" "$bin" "$@" >"$csv.tmp" 2>>"$log"
    else
        mt_launch "$((n * per_mac))" "$per_mac" --map-by node --mca pml ob1 \
            --mca btl "$(mt_btl "$per_mac")" --mca btl_tbrdma_peer_timeout_ms 120000 \
            --mca coll_tbrdma_priority 0 \
            --mca opal_mca_base_component_path "$MT_COMPONENTS" \
            --mca btl_tbrdma_verbs_lib "$MT_SIMLIB" "${args[@]}" "$bin" "$@" >"$csv.tmp" 2>>"$log"
    fi
    local rc=$?
    grep -v -E '^[a-z_]+,[0-9]+,|^coll,' "$csv.tmp" >>"$log"
    if [ "$rc" -eq 0 ]; then
        grep -E '^[a-z_]+,[0-9]+,' "$csv.tmp" >"$csv"
        rm -f "$csv.tmp"
        return 0
    fi
    echo "coll_tune: job failed ($fl, $n Macs, coll_tune $*; exit $rc): see $log" >&2
    tail -5 "$log" >&2
    exit 1
}

# measure FLAVOUR: step 1, into $out/FLAVOUR/measure-MACS-COLL.csv.
measure()
{
    local fl=$1 n c cands
    for n in $macs; do
        for c in ${colls//,/ }; do
            read -r -a cands <<<"$(candidates "$fl" "$c" | tr '\n' ' ')"
            job "$fl" "$n" "$out/$fl/measure-$n-$c.csv" --mca coll_tuned_use_dynamic_rules 1 -- \
                -n "$min" -m "$max" -r "$rounds" -R "$big_rounds" -t "$ms" "$c" default "${cands[@]}"
        done
    done
}

# rules FLAVOUR FILE [CONFIRMATIONS...]: step 2, the rules from the measurements.
rules()
{
    local fl=$1 file=$2
    shift 2
    local merge=()
    [ "$min" -gt 8 ] && merge=(-v base="$base_dir/ompi-$fl.rules" -v from="$(awk -v m="$min" 'BEGIN { printf "%d", m / sqrt(2) }')")
    awk -F, -v margin="$margin" -v skip="$(broken "$fl" | tr '\n' ' ')" "${merge[@]}" \
        -v title="tbrdma: Open MPI $fl coll/tuned rules for a Thunderbolt full mesh, one rank per Mac ($(date +%F), $(uname -n), load $(cut -d' ' -f1-3 /proc/loadavg)${cluster_args[*]:+, tbcluster ${cluster_args[*]}})" \
        -f "$here/coll_rules.awk" "$out/$fl"/measure-*.csv "$@" >"$file"
}

# check FLAVOUR RULES LABEL: step 3, rows in $out/FLAVOUR/LABEL-{default,rules}-MACS.N.csv.
check()
{
    local fl=$1 rules=$2 label=$3 n i tune=$out/$1/$3.conf
    printf 'coll_tuned_use_dynamic_rules=1\ncoll_tuned_dynamic_rules_filename=%s\n' "$rules" >"$tune"
    for n in $macs; do
        for i in $(seq "$checks"); do
            job "$fl" "$n" "$out/$fl/$label-default-$n.$i.csv" -- \
                -n "$min" -m "$max" -r "$rounds" -R "$big_rounds" -t "$ms" "$colls" default
            job "$fl" "$n" "$out/$fl/$label-rules-$n.$i.csv" --tune "$tune" -- \
                -n "$min" -m "$max" -r "$rounds" -R "$big_rounds" -t "$ms" "$colls" default
        done
    done
}

# rule_at RULES COLL RANKS [SIZES]: "BYTES ALG:SEG" for every size of SIZES (default: those
# coll_tune times, 8 B up in powers of 4, then MAX), the rule coll/tuned takes there from RULES for a communicator of RANKS (the
# communicator size's rules at or below RANKS, else the first; the last message rule at or below
# BYTES); "0:0": Open MPI's default.
rule_at()
{
    awk -v coll="$2" -v p="$3" -v min="$min" -v max="$max" -v sizes="${4:-}" '
        { sub(/#.*/, ""); for (i = 1; i <= NF; i++) tok[++n] = $i }
        END {
            id["allgather"] = 0; id["allreduce"] = 2; id["alltoall"] = 3; id["bcast"] = 7
            id["reduce_scatter"] = 12
            k = 1; ncoll = tok[k++]
            for (c = 0; c < ncoll; c++) {
                cid = tok[k++]; ncomm = tok[k++]
                for (j = 0; j < ncomm; j++) {
                    size = tok[k++]; nmsg = tok[k++]
                    use = cid == id[coll] && (j == 0 || size <= p)
                    if (use) m = 0
                    for (r = 0; r < nmsg; r++) {
                        if (use) { m++; lo[m] = tok[k]; alg[m] = tok[k + 1] ":" tok[k + 3] }
                        k += 4
                    }
                }
            }
            if (sizes == "")
                for (b = 8; b <= max; b = (b * 4 > max && b < max) ? max : b * 4) if (b >= min + 0) sizes = sizes " " b
            ns = split(sizes, sz, " ")
            for (i = 1; i <= ns; i++) {
                a = "0:0"
                for (r = 1; r <= m; r++) if (lo[r] <= sz[i] + 0) a = alg[r]
                print sz[i], a
            }
        }' "$1"
}

# side FLAVOUR RULES: step 5, for the collectives of --side: Open MPI's default and the rules
# side by side in one job per collective and cluster size. The job runs without the rules file
# (coll/tuned 4.1 lets a rules file override a forced algorithm); its choices are Open MPI's
# default, twice (the two tell the noise), and each ALG:SEG the rules name for that collective
# and communicator size, forced: the call coll/tuned makes when the rules are in effect (the same
# algorithm, segment size and fan-out; test/mpi/coll_rules.sh shows they are). All take turns at
# every size, so a busy machine slows them alike. Rows in $out/FLAVOUR/side-MACS-COLL.csv.
side()
{
    local fl=$1 rules=$2 n c algs
    for n in $macs; do
        for c in ${side//,/ }; do
            algs=$(rule_at "$rules" "$c" "$((n * per_mac))" | awk '$2 != "0:0" {print $2}' | sort -u)
            # shellcheck disable=SC2086 # one word per algorithm
            job "$fl" "$n" "$out/$fl/side-$n-$c.csv" --mca coll_tuned_use_dynamic_rules 1 -- \
                -n "$min" -m "$max" -r "$side_rounds" -R "$big_rounds" -t "$ms" "$c" default default $algs
        done
    done
}

# side_table FLAVOUR RULES: step 5's table: per collective, ranks and size, what Open MPI's default
# ran and its time, what the rules' choice ran and its time, in the same job; default/rules > 1:
# the rules are faster. Where the rules keep the default, the default's second communicator
# stands in for them: that ratio is the noise.
side_table()
{
    local fl=$1 rules=$2 f n c
    [ -n "$(ls "$out/$fl"/side-*.csv 2>/dev/null)" ] || return 0
    echo "Open MPI $fl: Open MPI's default and the rules side by side in one job (the rules' choice forced)"
    for f in "$out/$fl"/side-*.csv; do
        n=$(basename "$f" .csv | cut -d- -f2)
        c=$(basename "$f" .csv | cut -d- -f3)
        rule_at "$rules" "$c" "$((n * per_mac))" "$(cut -d, -f3 "$f" | sort -nu | tr '\n' ' ')" \
            | sed "s/^/rule /"
        cat "$f"
    done | awk -F'[, ]' '
        $1 == "rule" { want[$2] = $3; next }
        $2 !~ /^[0-9]+$/ || $7 !~ /^[0-9.]+$/ { next }
        {
            k = $1 SUBSEP $2 SUBSEP $3; keys[k] = 1; w = want[$3]
            if ($4 == "default" && !(k in d)) { d[k] = $7; dran[k] = $5 }
            else if ($4 == "default") { d2[k] = $7; d2ran[k] = $5 }
            else if ($4 == w) { r[k] = $7; rran[k] = $5 }
            if (w == "0:0") rule[k] = "-"; else rule[k] = w
        }
        END {
            n = 0
            for (k in keys) sk[++n] = k
            for (i = 2; i <= n; i++) for (j = i; j > 1 && less(sk[j], sk[j - 1]); j--) { t = sk[j]; sk[j] = sk[j - 1]; sk[j - 1] = t }
            printf "%-15s %5s %10s  %-22s %10s  %-9s %-22s %10s %7s\n", "coll", "ranks", "bytes", "default ran", "us", "rule", "rules ran", "us", "ratio"
            for (i = 1; i <= n; i++) {
                k = sk[i]; split(k, f, SUBSEP); g = f[1] " at " f[2] " ranks"
                changed = rule[k] != "-"
                if (!changed) { r[k] = d2[k]; rran[k] = d2ran[k] }
                if (!(k in r) || r[k] <= 0) continue
                ratio = d[k] / r[k]
                printf "%-15s %5s %10s  %-22s %10.2f  %-9s %-22s %10.2f %7.2f%s\n", f[1], f[2], f[3], dran[k], d[k], rule[k], rran[k], r[k], ratio, changed ? " *" : ""
                if (changed) { nch[g]++; if (ratio > 1) nbetter[g]++; if (!(g in worst) || ratio < worst[g]) worst[g] = ratio }
                else { same[g]++; if (!(g in lo) || ratio < lo[g]) lo[g] = ratio; if (ratio > hi[g]) hi[g] = ratio }
            }
            print "(* the rules name an algorithm there (ALG:SEG); rule -: they keep the default, and the ratio is the default against itself on another communicator: the noise; ratio > 1: the rules are faster)"
            for (g in same) printf "%s: the default against itself (%d sizes): %.2f to %.2f\n", g, same[g], lo[g], hi[g]
            for (g in nch) printf "%s: the rules change %d sizes, faster at %d (worst ratio %.2f)%s\n", g, nch[g], nbetter[g], worst[g], nbetter[g] == nch[g] ? ": faster at every size they change" : ""
        }
        function less(a, b,   x, y) { split(a, x, SUBSEP); split(b, y, SUBSEP)
            if (x[1] != y[1]) return x[1] < y[1]; if (x[2] != y[2]) return x[2] + 0 < y[2] + 0; return x[3] + 0 < y[3] + 0 }
    '
}

# table FLAVOUR: step 4 from the check rows.
table()
{
    local fl=$1
    echo "Open MPI $fl: default vs the rules file, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
    awk -F, '
        FNR == 1 { rules = FILENAME ~ /check-rules-/ }
        $2 ~ /^[0-9]+$/ {
            k = $1 SUBSEP $2 SUBSEP $3; keys[k] = 1
            if ($7 > 0) noise[++nn] = $8 / $7
            if (rules) { if (!(k in r) || $7 + 0 < r[k]) { r[k] = $7; rran[k] = $5 } }
            else if (!(k in d) || $7 + 0 < d[k]) { d[k] = $7; dran[k] = $5 }
        }
        END {
            printf "%-15s %5s %10s  %-22s %10s  %-22s %10s %7s\n", "coll", "ranks", "bytes", "default ran", "us", "rules ran", "us", "ratio"
            n = 0
            for (k in keys) sk[++n] = k
            for (i = 2; i <= n; i++) for (j = i; j > 1 && less(sk[j], sk[j - 1]); j--) { t = sk[j]; sk[j] = sk[j - 1]; sk[j - 1] = t }
            for (i = 1; i <= n; i++) {
                k = sk[i]; split(k, f, SUBSEP)
                ratio = (r[k] > 0) ? d[k] / r[k] : 0
                changed = (rran[k] != dran[k])
                printf "%-15s %5s %10s  %-22s %10.2f  %-22s %10.2f %7.2f%s\n", f[1], f[2], f[3], dran[k], d[k], rran[k], r[k], ratio, changed ? " *" : ""
                g = f[1] " at " f[2] " ranks"
                if (changed) { nch[g]++; if (ratio > 1) nbetter[g]++; if (!(g in worst) || ratio < worst[g]) worst[g] = ratio }
                else seen[g] = 1
            }
            print "(* the rules run another algorithm than the default; ratio > 1: the rules are faster)"
            for (i = 2; i <= nn; i++) for (j = i; j > 1 && noise[j - 1] > noise[j]; j--) { t = noise[j]; noise[j] = noise[j - 1]; noise[j - 1] = t }
            p90 = int(nn * 0.9); if (p90 < 1) p90 = 1
            if (nn) printf "noise: median/best time over the rounds of a row: %.2f at the median row, %.2f at the 90th percentile\n", noise[int((nn + 1) / 2)], noise[p90]
            for (g in nch) printf "%s: the rules change %d sizes, faster at %d (worst ratio %.2f)%s\n", g, nch[g], nbetter[g], worst[g], nbetter[g] == nch[g] ? ": faster at every size they change" : ""
            for (g in seen) if (!(g in nch)) printf "%s: the rules change nothing\n", g
        }
        function less(a, b,   x, y) { split(a, x, SUBSEP); split(b, y, SUBSEP)
            if (x[1] != y[1]) return x[1] < y[1]; if (x[2] != y[2]) return x[2] + 0 < y[2] + 0; return x[3] + 0 < y[3] + 0 }
    ' "$out/$fl"/check-default-*.csv "$out/$fl"/check-rules-*.csv
}

# rules_md RULES: the changes of a rules file as a Markdown table (docs/collectives.md): per
# collective and communicator size, each size range whose rule is not Open MPI's default, with
# the rule's comment (what was measured there).
rules_md()
{
    awk '
        function human(b) {
            if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) " MiB"
            if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
            if (b >= 1048576) return sprintf("%.1f MiB", b / 1048576)
            if (b >= 1024) return sprintf("%.1f KiB", b / 1024)
            return b " B"
        }
        function flush(   i, hi) {
            for (i = 1; i <= n; i++) {
                if (alg[i] == 0) continue
                hi = (i < n) ? "to " human(lo[i + 1]) : "and up"
                printf "| %s | %d | %s %s | %s |\n", coll, ranks, human(lo[i]), hi, note[i]
            }
            n = 0
        }
        BEGIN { print "| collective | Macs | message size (from, to: not included) | rule: what was measured there (best of the rounds, and in the confirmation jobs) |"
                print "|---|---|---|---|" }
        / # [a-z_]+: [0-9]+ communicator sizes/ { flush(); split($0, h, "# "); split(h[2], c, ":"); coll = c[1]; ranks = 0; next }
        /^[0-9]+ [0-9]+ +# [0-9]+ ranks$/ { flush(); ranks = $1; next }
        /ranks \(not measured\)/ { flush(); ranks = 0; next }
        ranks && /^[0-9]+ [0-9]+ [0-9]+ [0-9]+ / {
            lo[++n] = $1; alg[n] = $2; t = $0; sub(/^[^#]*# from [^;]*; /, "", t); note[n] = t
        }
        END { flush() }
    ' "$1"
}

# mesh_table FLAVOUR: from the measurements, per collective, ranks and size: the default, the
# fastest of Open MPI's algorithms and the mesh ones of the same job (bench/coll_mesh.h);
# best_ompi/mesh > 1: a mesh algorithm is faster than anything coll/tuned can pick.
mesh_table()
{
    awk -F, '
        $2 ~ /^[0-9]+$/ && $7 ~ /^[0-9.]+$/ {
            k = $1 SUBSEP $2 SUBSEP $3
            if ($4 ~ /^mesh/) { if (!(k in m) || $7 + 0 < m[k]) { m[k] = $7 + 0; mname[k] = $4 } }
            else {
                if ($4 == "default") d[k] = $7 + 0
                if (!(k in o) || $7 + 0 < o[k]) { o[k] = $7 + 0; oname[k] = $5 }
            }
        }
        END {
            n = 0
            for (k in m) sk[++n] = k
            if (!n) exit
            for (i = 2; i <= n; i++) for (j = i; j > 1 && less(sk[j], sk[j - 1]); j--) { t = sk[j]; sk[j] = sk[j - 1]; sk[j - 1] = t }
            printf "%-15s %5s %10s %10s  %-22s %10s  %-6s %10s %7s\n", "coll", "ranks", "bytes", "default", "best of Open MPI", "us", "mesh", "us", "ratio"
            for (i = 1; i <= n; i++) {
                k = sk[i]; split(k, f, SUBSEP); r = o[k] / m[k]
                printf "%-15s %5s %10s %10.2f  %-22s %10.2f  %-6s %10.2f %7.2f\n", f[1], f[2], f[3], d[k], oname[k], o[k], mname[k], m[k], r
                g = f[1] " at " f[2] " ranks"; tot[g]++; if (r > 1) { won[g]++; if (r > most[g]) most[g] = r }
            }
            print "(ratio: the best of Open MPI / the best mesh algorithm, > 1: the mesh one is faster)"
            for (g in tot) printf "%s: a mesh algorithm beats all of Open MPI'"'"'s at %d of %d sizes%s\n", g, won[g] + 0, tot[g], won[g] ? sprintf(" (by up to %.2fx)", most[g]) : ""
        }
        function less(a, b,   x, y) { split(a, x, SUBSEP); split(b, y, SUBSEP)
            if (x[1] != y[1]) return x[1] < y[1]; if (x[2] != y[2]) return x[2] + 0 < y[2] + 0; return x[3] + 0 < y[3] + 0 }
    ' "$out/$1"/measure-*.csv 2>/dev/null
}

if [ "$tables_only" = 1 ]; then
    for fl in $flavours; do
        table "$fl"
        [ -r "$out/$fl/ompi-$fl.rules" ] && side_table "$fl" "$out/$fl/ompi-$fl.rules"
        mesh_table "$fl"
        [ -r "$out/$fl/ompi-$fl.rules" ] && rules_md "$out/$fl/ompi-$fl.rules"
    done
    exit 0
fi
if [ -z "$hostfile" ]; then
    for fl in $flavours; do
        mt_flavour "$fl"
        mt_require
    done
    mt_cluster p2p "${cluster_args[@]}"
fi
for fl in $flavours; do
    mt_flavour "$fl"
    mkdir -p "$out/$fl"
    bin=$repo/build/bench/$fl/coll_tune
    mkdir -p "$(dirname "$bin")"
    [ -n "$hostfile" ] && MT_MPICC=(mpicc)
    "${MT_MPICC[@]}" -O2 -Wall -rdynamic -o "$bin" "$here/coll_tune.c" -ldl \
        || fatal "coll_tune.c does not build with the $fl mpicc"
    if [ -n "$rules_dir" ]; then
        rules=$rules_dir/ompi-$fl.rules
        [ -r "$rules" ] || fatal "no rules file $rules"
    else
        measure "$fl"
        rules "$fl" "$out/$fl/draft.rules"
        check "$fl" "$out/$fl/draft.rules" confirm
        rules=$out/$fl/ompi-$fl.rules
        rules "$fl" "$rules" "$out/$fl"/confirm-*.csv
    fi
    check "$fl" "$rules" check
    side "$fl" "$rules"
    { table "$fl"; side_table "$fl" "$rules"; mesh_table "$fl"; } | tee "$out/$fl/table.txt"
    rules_md "$rules" >"$out/$fl/rules.md"
    if [ "$install" = 1 ] && [ -z "$rules_dir" ]; then
        cp "$rules" "$repo/share/coll/ompi-$fl.rules"
        echo "installed $repo/share/coll/ompi-$fl.rules"
    fi
done
echo "results: $out (jobs.log: every job with its time and load)"
