# The cabling plan of a run (sourced by tbvm; needs common.sh). N VMs as a full mesh: every pair
# a<b gets its own cable, numbered in order (1-2, 1-3, ..., 2-3, ...), with 10.10.<link>.1/30 on
# the lower VM and .2/30 on the higher, MAC 52:54:00:0a:<link>:<vm>. On each VM the cables are
# eth1, eth2, ... in link order and rxe0, rxe1, ... on them; eth0 is the management network
# 192.168.100.<vm>/24 (MAC 52:54:00:00:00:<vm>). Writes $run/plan and $run/vm<i>.conf.

TBVM_MGMT_NET=192.168.100

# Prints "link a b" for every cable of an N-VM mesh.
tbvm_plan_links()
{
    local n=$1 a b link=0
    for ((a = 1; a <= n; a++)); do
        for ((b = a + 1; b <= n; b++)); do
            link=$((link + 1))
            echo "$link $a $b"
        done
    done
}

tbvm_cable_addr()
{
    echo "10.10.$1.$2"
}

tbvm_cable_mac()
{
    printf '52:54:00:0a:%02x:%02x' "$1" "$2"
}

# Writes $run/plan: one line per cable, both ends (VM, interface, rxe device, address).
tbvm_plan_write()
{
    local n=$1 run=$2 link a b
    local -A next_if
    for ((a = 1; a <= n; a++)); do
        next_if[$a]=1
    done
    : >"$run/plan"
    while read -r link a b; do
        echo "cable $link vm$a eth${next_if[$a]} rxe$((next_if[$a] - 1))" \
            "$(tbvm_cable_addr "$link" 1)/30 vm$b eth${next_if[$b]} rxe$((next_if[$b] - 1))" \
            "$(tbvm_cable_addr "$link" 2)/30" >>"$run/plan"
        next_if[$a]=$((next_if[$a] + 1))
        next_if[$b]=$((next_if[$b] + 1))
    done < <(tbvm_plan_links "$n")
}

# Writes $run/vm<id>.conf (bash, sourced by the guest's init2.sh) from $run/plan.
tbvm_conf_write()
{
    local n=$1 run=$2 id=$3
    local out="$run/vm$id.conf" k=0 macs
    local -a routes=()
    local _c link va ia ra aa vb ib rb ab my_if my_rxe my_addr peer peer_addr
    macs="[eth0]=$(printf '52:54:00:00:00:%02x' "$id")"
    {
        echo "TBVM_VMS=$n"
        echo "TBVM_MGMT_NET=$TBVM_MGMT_NET"
        echo "TBVM_MGMT_IP=$TBVM_MGMT_NET.$id/24"
        echo "declare -gA TBVM_CABLE_IF TBVM_CABLE_RXE TBVM_CABLE_ADDR TBVM_CABLE_PEER TBVM_CABLE_LINK"
    } >"$out"
    while read -r _c link va ia ra aa vb ib rb ab; do
        if [ "$va" = "vm$id" ]; then
            my_if=$ia my_rxe=$ra my_addr=$aa peer=$vb peer_addr=${ab%/*}
        elif [ "$vb" = "vm$id" ]; then
            my_if=$ib my_rxe=$rb my_addr=$ab peer=$va peer_addr=${aa%/*}
        else
            continue
        fi
        k=$((k + 1))
        macs="$macs [$my_if]=$(tbvm_cable_mac "$link" "$id")"
        echo "TBVM_CABLE_IF[$k]=$my_if TBVM_CABLE_RXE[$k]=$my_rxe TBVM_CABLE_ADDR[$k]=$my_addr" \
            "TBVM_CABLE_PEER[$k]=$peer TBVM_CABLE_LINK[$k]=$link" >>"$out"
        # Every other address of that peer is reached over this direct cable.
        while read -r _c _ va _ _ aa vb _ _ ab; do
            [ "$va" = "$peer" ] && [ "$vb" != "vm$id" ] && routes+=("${aa%/*} $peer_addr $my_if")
            [ "$vb" = "$peer" ] && [ "$va" != "vm$id" ] && routes+=("${ab%/*} $peer_addr $my_if")
        done <"$run/plan"
    done <"$run/plan"
    {
        echo "TBVM_CABLES=\"$(seq -s ' ' 1 "$k")\""
        echo "declare -gA TBVM_NIC_MAC=($macs)"
        printf 'TBVM_ROUTES=('
        if [ ${#routes[@]} -gt 0 ]; then
            printf '"%s" ' "${routes[@]}"
        fi
        echo ')'
    } >>"$out"
}

# qemu options for VM <id>'s cables: one AF_UNIX datagram socket pair per cable (lossless and
# without Nagle delays, unlike qemu's UDP and TCP socket netdevs), sockets in $sockdir.
tbvm_qemu_cable_opts()
{
    local n=$1 sockdir=$2 id=$3 link a b peer
    while read -r link a b; do
        if [ "$a" = "$id" ]; then
            peer=$b
        elif [ "$b" = "$id" ]; then
            peer=$a
        else
            continue
        fi
        echo " -netdev dgram,id=l$link,local.type=unix,local.path=$sockdir/l$link-$id.sock"
        echo ",remote.type=unix,remote.path=$sockdir/l$link-$peer.sock"
        echo " -device virtio-net-pci,netdev=l$link,mac=$(tbvm_cable_mac "$link" "$id")"
    done < <(tbvm_plan_links "$n") | tr -d '\n'
}
