#!/usr/bin/env bash
# sim_devices: libtbsim's devices, ports and GID tables on a 2-host cluster (p2p /30s):
# one rdma_<if> device per Thunderbolt interface, link layer 100, MTU 1024/4096, node GUID
# from the MAC, GIDs derived live from the interface's addresses, and the port state rules
# (RDMA disabled on the peer, enslaved to a bridge: DOWN, and then ibv_alloc_pd fails; RDMA
# disabled on this host: no device at all).
set -uo pipefail
source "$(dirname "$0")/sim_lib.sh"
sim_init sim_devices

sim_up --hosts 2 --addressing p2p
ip_a=$(sim_ipv4 mac-a en2)
out=$TC_TMP/devinfo.out

echo "== device, port and GID table of mac-a (en2 holds $ip_a)"
sim_devinfo mac-a
check_grep "one device listed" "$out" '^1 device\(s\)$'
check_grep "device named rdma_en2" "$out" '^device rdma_en2 '
check_grep "10 QPs, 100 MRs, one port, one SGE advertised" "$out" \
    'phys_port_cnt 1 max_qp 10 max_mr 100 max_qp_wr 4095 max_sge 1'
check_grep "port ACTIVE" "$out" 'state PORT_ACTIVE \(4\)'
check_grep "link layer Thunderbolt (100)" "$out" 'link_layer Thunderbolt \(100\)'
check_grep "active MTU 1024, max MTU 4096, 16 GID entries, 16,773,120 B messages" "$out" \
    'active_mtu 1024 max_mtu 4096 gid_tbl_len 16 max_msg_sz 16773120'
mac=$(sim_sh mac-a ip -o link show en2 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
IFS=: read -r m0 m1 m2 m3 m4 m5 <<<"$mac"
guid=$(printf '%02x%s%sfffe%s%s%s' $((0x$m0 ^ 2)) "$m1" "$m2" "$m3" "$m4" "$m5")
check_grep "node GUID is the EUI-64 of MAC $mac" "$out" "node_guid $guid "
# each group of 16 bits without leading zeros, as inet_ntop prints it (a MAC whose third byte
# is 00 gives the group ff, not 0ff: seen in CI)
eui=$(printf 'fe80::%x:%x:fe%02x:%x' $(((0x$m0 ^ 2) << 8 | 0x$m1)) $((0x$m2 << 8 | 0xff)) \
    $((0x$m3)) $((0x$m4 << 8 | 0x$m5)))
check_grep "GID[0] is fe80 + EUI-64 ($eui)" "$out" "GID\[0\]: $eui\$"
check_grep "GID[1] is the IPv4-mapped address ::ffff:$ip_a" "$out" "GID\[1\]: ::ffff:$ip_a\$"
check_grep "alloc_pd works on an ACTIVE port" "$out" 'alloc_pd: ok'

echo "== the GID table follows the interface's addresses live"
sim_sh mac-a ip -4 addr flush dev en2
sim_devinfo mac-a
check_nogrep "no IPv4-mapped GID once en2 has no IPv4" "$out" '::ffff:'
check_grep "the table is compact: the interface's own fe80 moves up to GID[1]" "$out" \
    'GID\[1\]: fe80::'
sim_sh mac-a ip addr add "$ip_a/30" dev en2
sim_devinfo mac-a
check_grep "GID[1] is back with the address" "$out" "GID\[1\]: ::ffff:$ip_a\$"

echo "== RDMA disabled on the peer host: the port is DOWN and alloc_pd fails"
"$TBSIMCTL" rdma mac-b off
sim_devinfo mac-a
check_grep "port DOWN while mac-b has RDMA off" "$out" 'state PORT_DOWN \(1\)'
check_grep "alloc_pd fails with ENXIO on a DOWN port" "$out" 'alloc_pd: failed: .*\(errno 6\)'
check_grep "open_device and the GID table still work on a DOWN port" "$out" 'GID\[1\]: ::ffff:'
"$TBSIMCTL" rdma mac-b on
sim_devinfo mac-a
check_grep "ACTIVE again once mac-b has RDMA on" "$out" 'state PORT_ACTIVE \(4\)'
"$TBSIMCTL" rdma mac-a off
sim_devinfo mac-a
check_grep "no device at all while this host has RDMA off" "$out" '^0 device\(s\)$'
sim_devinfo mac-b
check_grep "and the peer's port is DOWN" "$out" 'state PORT_DOWN \(1\)'
"$TBSIMCTL" rdma mac-a on

echo "== an interface enslaved to a bridge: DOWN (Apple: 'the bridge is active')"
sim_sh mac-a ip link add tbsimbr0 type bridge
sim_sh mac-a ip link set en2 master tbsimbr0
sim_sh mac-a ip link set tbsimbr0 up
sim_devinfo mac-a
check_grep "port DOWN while en2 is a bridge member" "$out" 'state PORT_DOWN \(1\)'
sim_sh mac-a ip link set en2 nomaster
sim_sh mac-a ip link del tbsimbr0
sim_devinfo mac-a
check_grep "ACTIVE again once en2 left the bridge" "$out" 'state PORT_ACTIVE \(4\)'

echo "== a host outside the fabric lists no device"
sim_sh mac-a env TBSIM_DIR="$TC_TMP/nowhere" LD_PRELOAD="$SIM_LIB" "$SIM_BUILD/tbsim_devinfo" \
    >"$out" 2>&1
check_grep "no fabric state: an empty device list" "$out" '^0 device\(s\)$'

finish
