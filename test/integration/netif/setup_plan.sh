#!/bin/sh
# Checks tools/tbrdma-setup's mesh-file mode on a 3-host full mesh: every host gets one address
# per cable, all addresses are distinct, the two ends of each cable share one /30 and route to
# each other, the macOS (networksetup) and Linux (ip) plans agree, and a malformed mesh file is
# refused. (The macOS plan's functions run against recorded networksetup output in
# test/integration/tools/setup_macos.sh.) As root with `ip netns`, it
# also applies mac-a's plan inside a throwaway namespace and reads the result back with ip.
# Exit 0 pass, 1 fail (the apply part is reported as not checked when it cannot run).
set -u

here=$(cd "$(dirname "$0")" && pwd)
setup="$here/../../../tools/tbrdma-setup"
tmp=$(mktemp -d) || exit 1
ns="tbrdma-setup-$$"
failed=0
trap 'ip netns del "$ns" 2>/dev/null; rm -rf "$tmp"' EXIT

fail()
{
    echo "FAIL: $*"
    failed=1
}

cat >"$tmp/mesh" <<'EOF'
# three Macs, one cable per pair
mac-a:rdma_en2 mac-b:rdma_en2
mac-a:rdma_en3 mac-c:rdma_en2   # second cable
mac-b:rdma_en3 mac-c:rdma_en3
EOF

"$setup" --linux "$tmp/mesh" >"$tmp/linux" || fail "tbrdma-setup --linux exited $?"
"$setup" "$tmp/mesh" >"$tmp/mac" || fail "tbrdma-setup exited $?"
cat "$tmp/linux"

# "host ifname address peer" for every port, from the Linux plan.
awk '/^# host / { h = $3; sub(/:$/, "", h) }
     $2 == "ip" && $3 == "addr" { a[$7] = $5 }
     $2 == "ip" && $3 == "route" { sub(/\/30$/, "", a[$7]); p = $5; sub(/\/32$/, "", p)
                                   print h, $7, a[$7], p }' "$tmp/linux" >"$tmp/ports"
[ "$(wc -l <"$tmp/ports")" -eq 6 ] || fail "expected 6 ports (3 cables x 2 ends): $(cat "$tmp/ports")"
for h in mac-a mac-b mac-c; do
    [ "$(grep -c "^$h " "$tmp/ports")" -eq 2 ] || fail "$h does not have 2 addressed ports"
done
dups=$(awk '{ print $3 }' "$tmp/ports" | sort | uniq -d)
[ -z "$dups" ] || fail "addresses used twice: $dups"
# Each port's peer is another host's port in the same /30 whose peer is this port.
bad=$(awk '
    function net(ip,    o) { split(ip, o, "."); return o[1] "." o[2] "." o[3] "." int(o[4] / 4) }
    { host[$3] = $1; peer[$3] = $4 }
    END {
        for (ip in peer) {
            p = peer[ip]
            if (!(p in peer) || peer[p] != ip || net(p) != net(ip) || host[p] == host[ip])
                print ip "->" p
            if (ip !~ /^192\.168\.0\.[0-9]+$/) print ip " outside 192.168.0/24"
        }
    }' "$tmp/ports")
[ -z "$bad" ] || fail "ends not paired in one /30: $bad"
[ "$failed" -ne 0 ] || echo "ok: 6 distinct addresses, each cable's ends share a /30 and route to each other"

awk '/^# host mac-a:/ { h = 1; next } /^# host / { h = 0 } h' "$tmp/mac" >"$tmp/mac-a"
grep -qx 'tb_port en2 192.168.0.1' "$tmp/mac-a" \
    || fail "macOS plan: mac-a en2 is not 192.168.0.1 (tb_port en2 192.168.0.1)"
grep -qx 'tb_bridge_off' "$tmp/mac-a" || fail "macOS plan: mac-a's bridge service is not turned off"
mac_pairs=$(awk '$1 == "tb_port" { print $2, $3 }' "$tmp/mac" | sort)
linux_pairs=$(awk '$3 == "addr" { sub(/\/30$/, "", $5); print $7, $5 }' "$tmp/linux" | sort)
[ "$mac_pairs" = "$linux_pairs" ] || fail "macOS and Linux plans differ"
"$setup" --host mac-b "$tmp/mesh" | grep -q '^# host mac-c' && fail "--host mac-b printed mac-c"
[ "$("$setup" --host mac-b "$tmp/mesh" | grep -c '^tb_port ')" -eq 2 ] \
    || fail "--host mac-b does not print 2 addresses"
[ "$failed" -ne 0 ] || echo "ok: macOS plan matches the Linux plan; --host filters"

printf 'mac-a:rdma_en2 mac-b:rdma_en2\nmac-a:rdma_en2 mac-c:rdma_en2\n' >"$tmp/twice"
"$setup" "$tmp/twice" >/dev/null 2>&1 && fail "a port on two cables was accepted"
printf 'mac-a:en2 mac-b:rdma_en2\n' >"$tmp/noprefix"
"$setup" "$tmp/noprefix" >/dev/null 2>&1 && fail "a device without rdma_ was accepted"
"$setup" --bogus "$tmp/mesh" >/dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown option did not exit 2"
[ "$failed" -ne 0 ] || echo "ok: malformed mesh files and options refused"

if [ "$(id -u)" -eq 0 ] && ip netns add "$ns" 2>/dev/null; then
    ip netns exec "$ns" ip link add en2 type veth peer name en3 &&
        ip netns exec "$ns" ip link add bridge0 type bridge &&
        ip netns exec "$ns" ip link set en3 master bridge0 || fail "configuring namespace $ns"
    ip netns exec "$ns" "$setup" --apply --host mac-a "$tmp/mesh" || fail "--apply exited $?"
    ip netns exec "$ns" ip -4 -o addr show dev en2 | grep -q 'inet 192.168.0.1/30' \
        || fail "--apply: en2 is not 192.168.0.1/30"
    ip netns exec "$ns" ip -4 -o addr show dev en3 | grep -q 'inet 192.168.0.5/30' \
        || fail "--apply: en3 is not 192.168.0.5/30"
    ip netns exec "$ns" ip route show 192.168.0.6 | grep -q 'dev en3' \
        || fail "--apply: no route to 192.168.0.6 via en3"
    ip netns exec "$ns" ip -o link show dev en3 | grep -q ' master ' \
        && fail "--apply: en3 is still in bridge0"
    [ "$failed" -ne 0 ] || echo "ok: --apply --host mac-a configured en2/en3 and detached en3 from bridge0"
else
    echo "not checked: --apply (needs root and ip netns)"
fi

if [ "$failed" -ne 0 ]; then
    echo "FAIL: tbrdma-setup"
    exit 1
fi
echo "PASS: tbrdma-setup"
exit 0
