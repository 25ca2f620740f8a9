# Guest-side helpers of the VM tier (sourced by init2.sh and by tests inside a guest): network
# and Soft-RoCE setup from this VM's conf (idempotent, so tests restore state with it), and
# lookups in the run plan $TBVM_RUN/plan, whose lines read
#   cable <link> <vmA> <ifA> <rxeA> <addrA/30> <vmB> <ifB> <rxeB> <addrB/30>
# $TBVM_RUN/env holds the host's TBRDMA_* variables (tbvm passes them through).

# shellcheck source=/dev/null
[ -n "${TBVM_RUN:-}" ] && [ -f "$TBVM_RUN/env" ] && . "$TBVM_RUN/env"
# In an ssh session the plan variables come from this VM's conf.
# shellcheck source=/dev/null
[ -n "${TBVM_RUN:-}" ] && [ -z "${TBVM_VMS:-}" ] && . "$TBVM_RUN/$(hostname).conf"

tbvm_ifname_of_mac()
{
    local dev
    for dev in /sys/class/net/*; do
        if [ "$(cat "$dev/address" 2>/dev/null)" = "$1" ]; then
            basename "$dev"
            return 0
        fi
    done
    return 1
}

# Addresses, links and /32 routes of this VM; `ip ... replace` makes a second call a repair.
tbvm_net_up()
{
    local k route
    ip link set eth0 up || return 1
    ip addr replace "$TBVM_MGMT_IP" dev eth0 || return 1
    for k in $TBVM_CABLES; do
        ip link set "${TBVM_CABLE_IF[$k]}" up || return 1
        ip addr replace "${TBVM_CABLE_ADDR[$k]}" dev "${TBVM_CABLE_IF[$k]}" || return 1
    done
    # Open MPI's TCP BTL pairs every local NIC with every peer address: without these host
    # routes a peer's address on another /30 is "Network is unreachable".
    for route in "${TBVM_ROUTES[@]}"; do
        # shellcheck disable=SC2086 # "dest via dev", split on purpose
        set -- $route
        ip route replace "$1/32" via "$2" dev "$3" || return 1
    done
}

tbvm_rxe_up()
{
    local k
    for k in $TBVM_CABLES; do
        [ -e "/sys/class/infiniband/${TBVM_CABLE_RXE[$k]}" ] && continue
        rdma link add "${TBVM_CABLE_RXE[$k]}" type rxe netdev "${TBVM_CABLE_IF[$k]}" || return 1
    done
}

# Fields of the cable between two VMs, as seen from the first: "<if> <rxe> <addr/30> <link>".
tbvm_cable()
{
    awk -v a="$1" -v b="$2" '
        $1 == "cable" && $3 == a && $7 == b { print $4, $5, $6, $2; found = 1 }
        $1 == "cable" && $7 == a && $3 == b { print $8, $9, $10, $2; found = 1 }
        END { exit !found }' "$TBVM_RUN/plan"
}

# Runs a command on VM $1 (this VM runs it directly).
tbvm_on()
{
    local vm=$1
    shift
    if [ "$vm" = "$(hostname)" ]; then
        bash -c "$*"
    else
        ssh -o ConnectTimeout=10 "$vm" "export TBVM_RUN=$TBVM_RUN TBVM_REPO=$TBVM_REPO" \
            "TBVM_BUILD=$TBVM_BUILD; $*"
    fi
}

# Puts VM $1's network and rxe devices back as the plan says (after a test changed them).
tbvm_restore()
{
    tbvm_on "$1" ". $TBVM_RUN/$1.conf && . $TBVM_REPO/test/vm/guest/lib.sh && tbvm_net_up && tbvm_rxe_up"
}

# The project's build directory (configure's): $TBRDMA_BUILDDIR or <repo>/build.
tbvm_project_build()
{
    echo "${TBRDMA_BUILDDIR:-$TBVM_REPO/build}"
}

# Path of tbrdma-info ($TBRDMA_INFO overrides); fails if it has not been built.
tbvm_tbrdma_info()
{
    local bin=${TBRDMA_INFO:-$(tbvm_project_build)/tools/tbrdma-info}
    [ -x "$bin" ] || return 1
    echo "$bin"
}

# The value of key $1 in a "kind key=value ..." line on stdin.
tbvm_field()
{
    awk -v k="$1" '{ for (i = 2; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2) }'
}

# Checks that "$2" equals "$3"; prints "ok: $1 = $2" or "FAIL: $1: got $2, expected $3" and
# counts failures in TBVM_FAILS.
TBVM_FAILS=0
tbvm_expect()
{
    if [ "$2" = "$3" ]; then
        echo "ok: $1 = $2"
    else
        echo "FAIL: $1: got '$2', expected '$3'"
        TBVM_FAILS=$((TBVM_FAILS + 1))
    fi
}

# Runs the mesh tests' MPI job (one rank per VM) over ob1 with tcp and tbrdma, tbrdma verbose
# at level 1, loading the plugin from the project's build; output in file $1, status returned.
# TCP stays on the management network so a cable taken down does not break the fallback path.
tbvm_mesh_mpirun()
{
    local out=$1 libs
    libs="$(tbvm_project_build)/plugin/.libs"
    timeout -k 5 240 mpirun --hostfile "$TBVM_HOSTFILE" -np "$TBVM_VMS" --map-by node \
        --mca pml ob1 --mca btl self,tcp,tbrdma --mca btl_tbrdma_verbose 1 \
        --mca btl_tcp_if_include "$TBVM_MGMT_NET.0/24" \
        --mca mca_base_component_path "SYS_DEFAULT:$libs" \
        --mca mca_base_component_show_load_errors 1 \
        "$TBVM_BUILD/bin/tbvm_mpi_ring" >"$out" 2>&1
}

# The cables a mesh job should name, from the plan: "vmA rxeA vmB rxeB" with A < B, sorted.
tbvm_mesh_expected()
{
    awk '$1 == "cable" { print $3, $5, $7, $9 }' "$TBVM_RUN/plan" | sort -u
}

# The cables named by "tbrdma mesh: vmA rxeX <-> vmB rxeY" lines in file $1, normalised to
# A < B, sorted, without repeats (each rank may print every pair).
tbvm_mesh_named()
{
    grep -o 'tbrdma mesh: vm[0-9]* [^ ]* <-> vm[0-9]* [^ ]*' "$1" |
        awk '{ if ($3 < $6) print $3, $4, $6, $7; else print $6, $7, $3, $4 }' | sort -u
}

# Sum of a rxe hw counter over this VM's devices, "dev=value" per device.
tbvm_rxe_counters()
{
    local dev
    for dev in /sys/class/infiniband/*; do
        printf '%s=%s ' "${dev##*/}" "$(cat "$dev/ports/1/hw_counters/$1" 2>/dev/null)"
    done
}

# Preconditions of the mesh tests: the plugin and the MPI program are built. Exits 77 if not.
tbvm_mesh_require()
{
    local libs
    libs="$(tbvm_project_build)/plugin/.libs"
    if ! ls "$libs"/mca_btl_tbrdma.so >/dev/null 2>&1; then
        echo "SKIP: plugin not built ($libs/mca_btl_tbrdma.so missing)"
        exit 77
    fi
    if [ ! -x "$TBVM_BUILD/bin/tbvm_mpi_ring" ]; then
        echo "SKIP: $TBVM_BUILD/bin/tbvm_mpi_ring not built (run-tier.sh builds it with mpicc)"
        exit 77
    fi
}

# The project's raw-verbs UC ping-pong ($TBRDMA_UC_PINGPONG overrides), or nothing.
tbvm_uc_pingpong()
{
    local bin=${TBRDMA_UC_PINGPONG:-$(tbvm_project_build)/test/sim/uc_pingpong}
    [ -x "$bin" ] || return 1
    echo "$bin"
}

# Runs a client/server pair: tbvm_pp_pair SERVER_VM CLIENT_VM "server command" "client
# command SERVER_VM". Outputs in /tmp/tbvm-pp.server.out and /tmp/tbvm-pp.client.out on this
# VM, statuses in PP_SRV_RC and PP_CLI_RC. The client is retried while the server is not
# listening yet (ssh and process start take seconds under TCG).
tbvm_pp_pair()
{
    local srv_vm=$1 cli_vm=$2 srv_cmd=$3 cli_cmd=$4 out=/tmp/tbvm-pp spid i
    tbvm_on "$srv_vm" "timeout -k 5 120 $srv_cmd >$out.server.out 2>&1" &
    spid=$!
    for ((i = 0; i < 60; i++)); do
        tbvm_on "$cli_vm" "timeout -k 5 120 $cli_cmd" >"$out.client.out" 2>&1
        PP_CLI_RC=$?
        grep -qiE "cannot connect to|couldn't connect to" "$out.client.out" || break
        kill -0 "$spid" 2>/dev/null || break
        sleep 1
    done
    wait "$spid"
    PP_SRV_RC=$?
    if [ "$srv_vm" != "$(hostname)" ]; then
        tbvm_on "$srv_vm" "cat $out.server.out" >"$out.server.out.tmp" && mv "$out.server.out.tmp" "$out.server.out"
    fi
}
