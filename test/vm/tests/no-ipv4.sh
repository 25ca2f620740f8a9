#!/bin/bash
# tbvm-vms: 2
# VM tier: the field's "RTR errno 22". With the IPv4 address removed from vm1's interface on the
# cable to vm2:
#   1. tbrdma-info --parsable reports diag=no-ipv4 for that port (not a raw errno);
#   2. a raw UC ping-pong over that cable fails at the RTR transition with EINVAL (22).
# The ping-pong is the project's plain-verbs test/sim/examples/uc_pingpong when built, else
# ibv_uc_pingpong from ibverbs-utils under strace (labelled "stand-in"). Prints
# "vm: rtr-without-ipv4 ... errno=N" for comparison with the simulator. The address is restored
# on exit. Exit 77 if neither tbrdma-info nor a ping-pong could be run.
. "$TBVM_REPO/test/vm/guest/lib.sh"

read -r if1 dev1 addr1 _ < <(tbvm_cable vm1 vm2)
read -r _ dev2 addr2 _ < <(tbvm_cable vm2 vm1)
ran=0
missing=""

cleanup()
{
    ip addr replace "$addr1" dev "$if1" 2>/dev/null
}
trap cleanup EXIT

ip addr del "$addr1" dev "$if1" || { echo "FAIL: cannot remove $addr1 from $if1"; exit 1; }
echo "vm1: removed $addr1 from $if1 (device $dev1); vm2 keeps $addr2 on $dev2"
sleep 0.5 # rxe drops the IPv4-mapped GID on the address notifier; let it settle
echo "vm1 $dev1 GID table (ibv_devinfo -v):"
ibv_devinfo -v -d "$dev1" | grep 'GID\[' | sed 's/^[ \t]*/  /'

check_diag()
{
    local bin info line
    bin=$(tbvm_tbrdma_info) || { missing="$missing tbrdma-info"; return 0; }
    ran=1
    info=$("$bin" --parsable)
    sed 's/^/  /' <<<"$info"
    line=$(grep "^port .* device=$dev1 " <<<"$info")
    tbvm_expect "$dev1: diag" "$(tbvm_field diag <<<"$line")" no-ipv4
    tbvm_expect "$dev1: ipv4" "$(tbvm_field ipv4 <<<"$line")" -
    tbvm_expect "$dev1: gid_index" "$(tbvm_field gid_index <<<"$line")" -1
    tbvm_expect "$dev1: diag record name" "$(grep "^diag .* device=$dev1 " <<<"$info" |
        tbvm_field name)" no-ipv4
    echo "vm: no-ipv4 diag=$(tbvm_field diag <<<"$line")"
}

# errno number of the last failed syscall in an strace log ("= -1 EINVAL (...)").
last_errno()
{
    local name
    name=$(grep -o '= -1 E[A-Z0-9]*' "$1" | tail -n 1 | awk '{ print $3 }')
    [ -n "$name" ] || return 1
    python3 -c "import errno; print(errno.$name)" 2>/dev/null || echo "$name"
}

# Stand-in: ibv_uc_pingpong, server on vm2 (with IPv4), client on vm1 (without), both asking
# for GID index 1 (where rxe puts the IPv4-mapped GID), each under strace to see the errno.
pingpong_standin()
{
    local srv=/tmp/tbvm-uc-server cli=/tmp/tbvm-uc-client side log e failed=0 done=0
    command -v ibv_uc_pingpong >/dev/null || { missing="$missing ibv_uc_pingpong"; return 0; }
    ran=1
    echo "ping-pong: stand-in ibv_uc_pingpong (project uc_pingpong not built)"
    ssh vm2 "timeout 60 strace -f -qq -e trace=ioctl -o $srv.strace ibv_uc_pingpong -d $dev2 -g 1 -n 10 >$srv.out 2>&1" &
    local spid=$!
    # The client gives up at once if the server is not listening yet: retry for up to 60 s.
    for ((i = 0; i < 60; i++)); do
        timeout 60 strace -f -qq -e trace=ioctl -o "$cli.strace" \
            ibv_uc_pingpong -d "$dev1" -g 1 -n 10 vm2 >"$cli.out" 2>&1
        grep -q "Couldn't connect to vm2" "$cli.out" || break
        sleep 1
    done
    wait "$spid"
    ssh vm2 "cat $srv.out" >"$srv.out"
    ssh vm2 "cat $srv.strace" >"$srv.strace"
    for side in server:vm2:"$srv" client:vm1:"$cli"; do
        log=${side##*:}
        echo "${side%:*} output:"
        sed 's/^/  /' "$log.out"
        grep -q 'iters in' "$log.out" && done=1
        if grep -q 'Failed to modify QP to RTR' "$log.out"; then
            e=$(last_errno "$log.strace")
            echo "vm: rtr-without-ipv4 side=${side%:*} tool=ibv_uc_pingpong(stand-in) errno=$e"
            [ "$e" = 22 ] && failed=1
        fi
    done
    tbvm_expect "ping-pong completed although vm1 has no IPv4" "$done" 0
    tbvm_expect "a side failed at RTR with EINVAL (22)" "$failed" 1
}

check_diag
pingpong_standin
if [ "$TBVM_FAILS" != 0 ]; then
    exit 1
fi
if [ "$ran" = 0 ] || [ -n "$missing" ]; then
    echo "SKIP (partly): not available:$missing"
    exit 77
fi
exit 0
