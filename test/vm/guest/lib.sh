# Guest-side helpers of the VM tier (sourced by init2.sh and by tests inside a guest): network
# and Soft-RoCE setup from this VM's conf (idempotent, so tests restore state with it), and
# lookups in the run plan $TBVM_RUN/plan, whose lines read
#   cable <link> <vmA> <ifA> <rxeA> <addrA/30> <vmB> <ifB> <rxeB> <addrB/30>

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
        ssh -o ConnectTimeout=10 "$vm" "$*"
    fi
}

# Puts VM $1's network and rxe devices back as the plan says (after a test changed them).
tbvm_restore()
{
    tbvm_on "$1" ". $TBVM_RUN/$1.conf && . $TBVM_REPO/test/vm/guest/lib.sh && tbvm_net_up && tbvm_rxe_up"
}
