# shellcheck shell=bash
# Guest-side helpers of the VM tier's MPI tests (sourced by tests/mpi_*.sh inside vm1):
# the project's MPI test programs of test/mpi (built on the host by run-tier.sh into
# $TBVM_BUILD/bin) run with one rank per VM across every VM of the boot over the rxe devices;
# every rank's "tbtest NAME: rank R of N OK" line is required, and the rxe packet counters of
# every device of every VM must move.

# shellcheck source=lib.sh
. "$TBVM_REPO/test/vm/guest/lib.sh"

# Sizes are cut for TCG speed (about 1000x slower than Apple's cables, see README.md), in the
# tests' argument lists: tb_pingpong up to 4 MiB (not 64 MiB; every frame and fragment boundary
# +-48 B is still crossed), tb_ring for 5 s of 64 KiB rounds; the others at their own sizes (up
# to 40000 elements, 192 KiB messages).
TBVM_MPI_JOB_TIMEOUT=${TBVM_MPI_JOB_TIMEOUT:-150}

# tbvm_mpi_require_programs "PROGRAM ARGS" ...: exits 77 (skip) when one was not built.
tbvm_mpi_require_programs()
{
    local line
    for line in "$@"; do
        if [ ! -x "$TBVM_BUILD/bin/${line%% *}" ]; then
            echo "SKIP: $TBVM_BUILD/bin/${line%% *} not built (run-tier.sh builds test/mpi with mpicc)"
            exit 77
        fi
    done
}

# "vmI rxeK sent rcvd" for every rxe device of every VM of the boot (rxe's hw counters).
tbvm_mpi_rxe_snapshot()
{
    local i
    for ((i = 1; i <= TBVM_VMS; i++)); do
        # shellcheck disable=SC2016 # expanded on the VM
        tbvm_on "vm$i" 'for d in /sys/class/infiniband/*; do c=$d/ports/1/hw_counters;
            echo "$(hostname) ${d##*/} $(cat $c/sent_pkts) $(cat $c/rcvd_pkts)"; done'
    done
}

# tbvm_mpi_rxe_moved WHAT BEFORE AFTER MIN: every rxe device of every VM sent and received at
# least MIN packets between the two snapshots (files), i.e. every cable carried the job both
# ways over rxe. Prints the deltas.
tbvm_mpi_rxe_moved()
{
    local what=$1 deltas idle
    deltas=$(join <(awk '{ print $1 "/" $2, $3, $4 }' "$2" | sort) \
        <(awk '{ print $1 "/" $2, $3, $4 }' "$3" | sort) |
        awk '{ print $1, "sent", $4 - $2, "rcvd", $5 - $3 }')
    echo "$what: rxe packets per device: $(tr '\n' ';' <<<"$deltas")"
    idle=$(awk -v min="$4" '$3 < min || $5 < min { print $1 }' <<<"$deltas" | tr '\n' ' ')
    tbvm_expect "$what: rxe devices that carried fewer than $4 packets each way" "$idle" ""
    tbvm_expect "$what: rxe devices counted" "$(grep -c . <<<"$deltas")" \
        "$(grep -c '^cable ' "$TBVM_RUN/plan" | awk '{ print 2 * $1 }')"
}

# tbvm_mpi_job OUT "PROGRAM ARGS" MPIRUN-ARGS...: one rank per VM; output in OUT, the status
# returned, the wall time printed.
tbvm_mpi_job()
{
    local out=$1 prog rc t0=$EPOCHREALTIME
    read -r -a prog <<<"$2"
    shift 2
    timeout -k 5 "$TBVM_MPI_JOB_TIMEOUT" mpirun --hostfile "$TBVM_HOSTFILE" -np "$TBVM_VMS" \
        --map-by node "$@" "$TBVM_BUILD/bin/${prog[0]}" "${prog[@]:1}" >"$out" 2>&1 </dev/null
    rc=$?
    echo "vm: job ${prog[*]}: status $rc in $(awk -v a="$t0" -v b="$EPOCHREALTIME" \
        'BEGIN { printf "%.1f", b - a }') s"
    return "$rc"
}

# tbvm_mpi_ranks_ok WHAT PROGRAM OUT STATUS: the job ended with status 0 and every rank printed
# its OK line ("tbtest NAME: rank R of N OK", NAME = PROGRAM without tb_); on failure the
# relevant lines of the output are shown.
tbvm_mpi_ranks_ok()
{
    local what=$1 name=${2#tb_} out=$3 fails=$TBVM_FAILS
    tbvm_expect "$what: mpirun status" "$4" 0
    tbvm_expect "$what: ranks OK" \
        "$(grep -c "^tbtest $name: rank [0-9]* of $TBVM_VMS OK" "$out")" "$TBVM_VMS"
    grep -h "^tbtest $name: rank 0 of" "$out" | sed "s/^/vm: $what: /"
    [ "$TBVM_FAILS" = "$fails" ] && return 0
    grep -v '^tbtest .* OK ' "$out" | tail -n 60 | sed 's/^/    | /'
    return 1
}

# tbvm_mpi_suite WHAT CHECK "PROGRAM ARGS"... -- MPIRUN-ARGS...: each program over one
# transport, checked by tbvm_mpi_ranks_ok and by the function CHECK WHAT OUT ("" for none);
# the rxe counters of every device must move over the whole suite.
tbvm_mpi_suite()
{
    local what=$1 check=$2 line rc out dir=/tmp/tbvm-mpi-$1 progs=()
    shift 2
    while [ "$1" != -- ]; do
        progs+=("$1")
        shift
    done
    shift
    mkdir -p "$dir"
    tbvm_mpi_rxe_snapshot >"$dir/rxe.before"
    for line in "${progs[@]}"; do
        out=$dir/${line%% *}.out
        tbvm_mpi_job "$out" "$line" "$@"
        rc=$?
        tbvm_mpi_ranks_ok "$what ${line%% *}" "${line%% *}" "$out" "$rc"
        [ -z "$check" ] || "$check" "$what ${line%% *}" "$out"
    done
    tbvm_mpi_rxe_snapshot >"$dir/rxe.after"
    tbvm_mpi_rxe_moved "$what" "$dir/rxe.before" "$dir/rxe.after" 100
}

# Every rank printed its tbrdma counters at finalize (tbrdma ran in it) and returned every send
# frame to its pools.
tbvm_mpi_tbrdma_check()
{
    tbvm_expect "$1: ranks with tbrdma stats" "$(grep -c '^tbrdma stats: ' "$2")" "$TBVM_VMS"
    tbvm_expect "$1: frames not returned" \
        "$(grep '^tbrdma stats: ' "$2" | grep -o '[0-9]* frames not returned' |
            awk '{ s += $1 } END { print s + 0 }')" 0
    grep -h '^tbrdma stats: ' "$2" | sed "s/^/vm: $1: /"
}

# tbvm_mpi_tbrdma_args: mpirun's arguments for tbrdma alone between VMs (no argument has a space).
tbvm_mpi_tbrdma_args()
{
    echo "--mca pml ob1 --mca btl self,tbrdma --mca btl_tbrdma_stats 1" \
        "--mca btl_tbrdma_stats_interval_s 20 --mca osc pt2pt" \
        "--mca mca_base_component_path SYS_DEFAULT:$(tbvm_project_build)/plugin/.libs" \
        "--mca mca_base_component_show_load_errors 1"
}

# tbvm_mpi_tbrdma "PROGRAM ARGS"...: the programs over pml ob1 with btl self,tbrdma only (the
# plugin from the project's build, osc pt2pt for one-sided), so nothing else can carry the
# traffic between VMs; exits 77 if the plugin or a program is not built. Returns 0 if all passed.
# Every rank prints its counters every 20 s while it runs: a job that overruns its time shows
# whether its data was still moving (the last 60 lines of a failed job are printed).
tbvm_mpi_tbrdma()
{
    local libs
    libs="$(tbvm_project_build)/plugin/.libs"
    if [ ! -e "$libs/mca_btl_tbrdma.so" ]; then
        echo "SKIP: plugin not built ($libs/mca_btl_tbrdma.so missing)"
        exit 77
    fi
    tbvm_mpi_require_programs "$@"
    # shellcheck disable=SC2046 # one word per argument
    tbvm_mpi_suite tbrdma tbvm_mpi_tbrdma_check "$@" -- $(tbvm_mpi_tbrdma_args)
    [ "$TBVM_FAILS" = 0 ]
}

# UCX's lanes (UCX_LOG_LEVEL=info prints "ep_cfg[i]: tag(<transport>/<device> ...)" per endpoint
# configuration): every rank had one on an rxe device, none used tcp.
tbvm_mpi_ucx_check()
{
    tbvm_expect "$1: ranks with a UCX lane on rxe" "$(grep 'ep_cfg\[[0-9]*\]: tag(.*_verbs/rxe' "$2" |
        grep -o '\[vm[0-9]*:' | sort -u | wc -l)" "$TBVM_VMS"
    tbvm_expect "$1: UCX lanes over tcp" "$(grep -c 'ep_cfg.*tcp/' "$2")" 0
    grep -o 'vm[0-9]*:.*ep_cfg\[[0-9]*\]: tag(.*_verbs/rxe.*' "$2" | sed 's/:.*ep_cfg/ ep_cfg/' |
        sort -u | sed "s/^/vm: $1: UCX lanes /"
}

# tbvm_mpi_ucx "PROGRAM ARGS"...: the reference transport on the same rxe links: the programs
# over pml ucx and osc ucx (Debian's UCX 1.13), UCX limited to self, shared memory (the rank's
# own endpoint) and its verbs transports on the rxe devices, so TCP cannot carry the traffic.
# Settings rxe needs, none of them about correctness:
#   ROCE_LOCAL_SUBNET=y   each rxe device reaches only its cable's /30 (by default UCX takes every
#                         RoCE device for reachable from any other and opens the connection to a
#                         peer from the device of another cable, which rxe cannot route back)
#   ETH_DGID_CHECK=n      UCX 1.13's UD drops every packet from rxe otherwise (UD wire-up times out
#                         after 30 s): it reads the RoCE packet type from the completion's sl
#                         field (a ConnectX convention, uct_ud_iface_check_grh), which rxe does not
#                         fill so, and compares the wrong bytes of the GRH with its own GIDs
#   MAX_RNDV_RAILS=1      with sm, keeps the rank's endpoint to itself on self and cma instead of
#                         adding rxe loopback lanes (seen timing out while UD was still broken;
#                         not retested alone)
# Exits 77 if pml ucx or a program is not there. Returns 0 if all passed.
tbvm_mpi_ucx()
{
    local devices
    if [ ! -e /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_pml_ucx.so ]; then
        echo "SKIP: Open MPI's pml ucx is not installed (libopenmpi3 built without UCX)"
        exit 77
    fi
    tbvm_mpi_require_programs "$@"
    devices=$(cd /sys/class/infiniband && printf '%s:1,' rxe*)
    tbvm_mpi_suite ucx tbvm_mpi_ucx_check "$@" -- --mca pml ucx --mca osc ucx --mca btl self \
        -x UCX_TLS=self,sm,rc_verbs,ud_verbs -x UCX_NET_DEVICES="${devices%,}" \
        -x UCX_RC_VERBS_ROCE_LOCAL_SUBNET=y -x UCX_UD_VERBS_ROCE_LOCAL_SUBNET=y \
        -x UCX_UD_VERBS_ETH_DGID_CHECK=n -x UCX_MAX_RNDV_RAILS=1 -x UCX_LOG_LEVEL=info
    [ "$TBVM_FAILS" = 0 ]
}
