#!/usr/bin/env bash
# bench/vm_uc_pingpong.sh: raw UC verbs over Soft-RoCE between two qemu VMs of the VM tier
# (test/vm/tbvm): round-trip latency of small messages and bandwidth of 64 KiB ones with the
# project's plain-verbs uc_pingpong (test/sim/examples), server on vm2, client on vm1, over their
# rxe0 <-> rxe0 cable. Prints a table labelled with the accelerator. No pass/fail on timing: under
# TCG (software CPU emulation) the numbers describe qemu, not RDMA and not Thunderbolt.
# If uc_pingpong is not built, ibv_uc_pingpong (ibverbs-utils) stands in, labelled as such.
# Options: -q fewer iterations. Needs what test/vm/tbvm needs (root, qemu); exit 77 if the VMs
# cannot run here.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$HERE")

scale=1
[ "${1:-}" = -q ] && { scale=4; shift; }

# Inside vm1: one measurement with the project's uc_pingpong; prints a table row.
measure()
{
    local mode=$1 size=$2 iters=$(($3 / scale)) bin line try
    bin=$(tbvm_uc_pingpong)
    # A run that fails (e.g. "no completion within 20 s": TCG can starve a VM for seconds) is
    # repeated once and marked with "*", so the table still has numbers. (Stalls from a
    # uc_pingpong bug that dropped early receive completions are fixed.)
    for try in 1 2; do
        tbvm_pp_pair vm2 vm1 "$bin -d rxe0 -g auto" "$bin -d rxe0 -g auto -m $mode -s $size -n $iters vm2"
        line=$(grep -E '^uc_pingpong: .*(iters of .* us|MB/s sent$)' /tmp/tbvm-pp.client.out | tail -n 1)
        [ -n "$line" ] && break
    done
    [ "$try" = 2 ] && mode="$mode*"
    if [ "${mode%\*}" = pingpong ]; then
        line=$(sed -n 's/.*rtt \([0-9.]*\) us, latency \([0-9.]*\) us, bandwidth \([0-9.]*\) MB\/s/\1 \2 \3/p' <<<"$line")
    else
        line=$(sed -n 's/.*; \([0-9.]*\) MB\/s sent$/- - \1/p' <<<"$line")
    fi
    if [ -z "$line" ]; then
        printf '%-9s %9s %7s  failed: %s\n' "$mode" "$size" "$iters" \
            "$(tr '\n' ' ' </tmp/tbvm-pp.client.out | cut -c1-80)"
        return 0
    fi
    read -r rtt lat bw <<<"$line"
    printf '%-9s %9s %7s %10s %10s %10s\n' "$mode" "$size" "$iters" "$rtt" "$lat" "$bw"
}

# Inside vm1: the same with ibv_uc_pingpong (rdma-core's example) as a stand-in.
measure_standin()
{
    local size=$1 iters=$(($2 / scale)) usec mbit
    tbvm_pp_pair vm2 vm1 "ibv_uc_pingpong -d rxe0 -g 1 -s $size -n $iters" \
        "ibv_uc_pingpong -d rxe0 -g 1 -s $size -n $iters vm2"
    usec=$(sed -n 's/.* = \([0-9.]*\) usec\/iter$/\1/p' /tmp/tbvm-pp.client.out)
    mbit=$(sed -n 's/.* = \([0-9.]*\) Mbit\/sec$/\1/p' /tmp/tbvm-pp.client.out)
    if [ -z "$usec" ]; then
        printf '%-9s %9s %7s  failed: %s\n' pingpong "$size" "$iters" \
            "$(tr '\n' ' ' </tmp/tbvm-pp.client.out | cut -c1-80)"
        return 0
    fi
    printf '%-9s %9s %7s %10s %10s %10s\n' pingpong "$size" "$iters" "$usec" \
        "$(awk -v u="$usec" 'BEGIN { printf "%.2f", u / 2 }')" \
        "$(awk -v m="$mbit" 'BEGIN { printf "%.2f", m / 8 }')"
}

in_guest()
{
    # shellcheck source=../test/vm/guest/lib.sh
    . "$TBVM_REPO/test/vm/guest/lib.sh"
    local accel=$1 load=$2
    if tbvm_uc_pingpong >/dev/null; then
        echo "uc_pingpong (project, plain verbs) over rxe, vm1 <-> vm2, $accel, host load $load"
        printf '%-9s %9s %7s %10s %10s %10s\n' mode bytes iters rtt_us lat_us MB/s
        measure pingpong 8 400
        measure pingpong 64 400
        measure pingpong 4096 200
        measure pingpong 65536 100
        measure stream 65536 200
    else
        echo "STAND-IN ibv_uc_pingpong (project uc_pingpong not built) over rxe, vm1 <-> vm2, $accel, host load $load"
        printf '%-9s %9s %7s %10s %10s %10s\n' mode bytes iters rtt_us lat_us MB/s
        measure_standin 8 400
        measure_standin 64 400
        measure_standin 4096 200
        measure_standin 65536 100
    fi
    echo "(ping-pong: lat = rtt/2, MB/s = 2*bytes*iters/time; stream: one-way; * = the first run" \
        "stalled and was repeated; accelerator $accel: timings say nothing" \
        "about Thunderbolt)"
}

if [ "${1:-}" = --in-guest ]; then
    in_guest "$2" "$3"
    exit 0
fi
accel=$("$REPO/test/vm/tbvm" accel 2>/dev/null) || { echo "vm_uc_pingpong: VMs cannot run here"; exit 77; }
q=""
[ "$scale" = 4 ] && q=-q
"$REPO/test/vm/tbvm" run --vms 2 --timeout 900 -- bench/vm_uc_pingpong.sh $q --in-guest "${accel^^}" \
    "$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' /)"
rc=$?
[ "$rc" -ge 124 ] && exit 77
exit "$rc"
