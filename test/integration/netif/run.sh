#!/bin/sh
# Checks plugin/base/btl_tbrdma_netif.c against interfaces this script configures in a throwaway
# network namespace: a veth pair en2/en3 (en2 with a /30, en3 enslaved to bridge0), a veth en4
# whose peer is down (up but not running, no IPv4), the name pairing rule rdma_X -> X, the
# hostname of a UTS namespace, and that a process that entered the namespace with nsenter (so
# /sys still shows the root namespace) gets the right bridge answer.
# The probe program (netif_probe.c) is built here with $CC against the netif source only.
# Root only; exit 0 pass, 1 fail, 77 skip.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
ns="tbrdma-netif-$$"
tmp=
failed=0

skip()
{
    echo "SKIP: $*"
    exit 77
}

cleanup()
{
    ip netns del "$ns" 2>/dev/null
    [ -n "$tmp" ] && rm -rf "$tmp"
}

# check WHAT GOT WANT: compares one probe line with the expected one.
check()
{
    if [ "$2" = "$3" ]; then
        echo "ok: $1: $2"
    else
        echo "FAIL: $1: got '$2', expected '$3'"
        failed=1
    fi
}

[ "$(id -u)" -eq 0 ] || skip "needs root for network namespaces"
ip netns list >/dev/null 2>&1 || skip "ip netns is not available"
command -v nsenter >/dev/null 2>&1 || skip "nsenter (util-linux) is not installed"
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || skip "no C compiler ($cc)"

tmp=$(mktemp -d) || exit 1
trap cleanup EXIT
trap 'exit 1' INT TERM
probe="$tmp/netif_probe"
"$cc" -std=gnu99 -Wall -Wextra -Werror -I"$top/plugin" -o "$probe" "$here/netif_probe.c" \
    "$top/plugin/base/btl_tbrdma_netif.c" || { echo "FAIL: building netif_probe"; exit 1; }

ip netns add "$ns" || { echo "FAIL: ip netns add $ns"; exit 1; }
in_ns()
{
    ip netns exec "$ns" "$@"
}
in_ns ip link set lo up &&
    in_ns ip link add en2 type veth peer name en3 &&
    in_ns ip link add bridge0 type bridge &&
    in_ns ip link set en3 master bridge0 &&
    in_ns ip addr add 192.168.0.1/30 dev en2 &&
    in_ns ip addr add 10.9.9.1/24 dev en2 &&
    in_ns ip link set en2 up &&
    in_ns ip link set en3 up &&
    in_ns ip link set bridge0 up &&
    in_ns ip link add en4 type veth peer name en5 &&
    in_ns ip link set en4 up || { echo "FAIL: configuring namespace $ns"; exit 1; }
in_ns ip -br addr

check "en2: first IPv4 and prefix, up, no bridge" "$(in_ns "$probe" if en2)" \
    "if en2 rc=0 up=1 ipv4=192.168.0.1/30 bridge=-"
check "en3: bridged, no IPv4" "$(in_ns "$probe" if en3)" "if en3 rc=0 up=1 ipv4=- bridge=bridge0"
check "en4: up but peer down (not running), no IPv4" "$(in_ns "$probe" if en4)" \
    "if en4 rc=0 up=0 ipv4=- bridge=-"
check "bridge0 itself is no bridge member" "$(in_ns "$probe" if bridge0 | sed 's/up=[01] //')" \
    "if bridge0 rc=0 ipv4=- bridge=-"
check "missing interface" "$(in_ns "$probe" if en9)" "if en9 rc=-19 up=0 ipv4=- bridge=-"
check "pairing rdma_en2" "$(in_ns "$probe" pair rdma_en2)" "pair rdma_en2 rc=0 ifname=en2"
check "pairing rdma_en9 (no en9)" "$(in_ns "$probe" pair rdma_en9)" "pair rdma_en9 rc=-2 ifname=-"

# nsenter keeps the root namespace's /sys mount: sysfs cannot see en3, rtnetlink can.
if nsenter --net="/run/netns/$ns" test -e /sys/class/net/en3; then
    echo "note: /sys shows en3 after nsenter (the root namespace has an en3 too)"
else
    echo "note: after nsenter, /sys/class/net/en3 does not exist (root namespace's sysfs)"
fi
check "en3 after nsenter --net" "$(nsenter --net="/run/netns/$ns" "$probe" if en3)" \
    "if en3 rc=0 up=1 ipv4=- bridge=bridge0"
check "en2 after nsenter --net" "$(nsenter --net="/run/netns/$ns" "$probe" if en2)" \
    "if en2 rc=0 up=1 ipv4=192.168.0.1/30 bridge=-"

if command -v unshare >/dev/null 2>&1; then
    check "hostname of a UTS namespace" \
        "$(in_ns unshare --uts sh -c "hostname mac-netif-t && \"$probe\" hostname")" \
        "hostname rc=0 name=mac-netif-t"
else
    echo "not checked: hostname in a UTS namespace (unshare is not installed)"
fi

if [ "$failed" -ne 0 ]; then
    echo "FAIL: netif"
    exit 1
fi
echo "PASS: netif"
exit 0
