#!/bin/bash
# cluster_p2p.sh: tbcluster up with 4 hosts, full mesh, p2p (/30 per cable) addressing.
# Checks: 3 Thunderbolt ports per host; both ends of every cable in one /30 and pinging each
# other; IPv6 link-local on every port; distinct hostnames; names resolving to management
# addresses; exec passing stdin, stdout, exit status and TBSIM_DIR; status; down leaving nothing.
set -uo pipefail
. "$(dirname "$0")/cluster_lib.sh"
cl_init cluster_p2p

# 32-bit integer of dotted quad $1.
ip_int()
{
    local a b c d
    IFS=. read -r a b c d <<<"$1"
    echo $(((a << 24) | (b << 16) | (c << 8) | d))
}

same_slash30()
{
    [ $(($(ip_int "$1") >> 2)) = $(($(ip_int "$2") >> 2)) ]
}

check_cable()
{
    local id=$1 ha=$2 ia=$3 hb=$4 ib=$5 aa ab
    aa=$(cl_ipv4 "$ha" "$ia")
    ab=$(cl_ipv4 "$hb" "$ib")
    if [[ "$aa" == */30 ]] && [[ "$ab" == */30 ]] && same_slash30 "${aa%/*}" "${ab%/*}" &&
        [ "$aa" != "$ab" ]; then
        pass "$id: $ha:$ia $aa and $hb:$ib $ab share one /30"
    else
        fail "$id: $ha:$ia '$aa' and $hb:$ib '$ab' are not one /30"
    fi
    check "$id: $ha pings $hb at ${ab%/*}" cl_ping "$ha" "${ab%/*}"
    check "$id: $hb pings $ha at ${aa%/*}" cl_ping "$hb" "${aa%/*}"
}

check_host()
{
    local host=$1 idx=$2 port ll
    expect "$host: Thunderbolt ports" "en2 en3 en4" "$(cl_tb_ports "$host" | xargs)"
    expect "$host: hostname" "$host" "$(cl_on "$host" hostname)"
    expect "$host: mac-c resolves to its mgmt0 address" "$TC_MGMT.3" \
        "$(cl_on "$host" getent hosts mac-c | awk '{print $1}')"
    expect "$host: mgmt0 address" "$TC_MGMT.$((idx + 1))/24" "$(cl_ipv4 "$host" mgmt0)"
    for port in $(cl_tb_ports "$host"); do
        ll=$(cl_on "$host" ip -6 -o addr show dev "$port" scope link | awk '{print $4}')
        check "$host:$port: IPv6 link-local ${ll:-missing}" [ "${ll#fe80:}" != "$ll" ]
    done
}

if ! cl_up --hosts 4; then
    fail "tbcluster up --hosts 4"
    finish
fi
pass "tbcluster up --hosts 4"

expect "topology hosts" "mac-a mac-b mac-c mac-d" \
    "$(awk '$1 == "host" {print $2}' "$TBSIM_DIR/topology" | xargs)"
expect "topology cable ids" "c1 c2 c3 c4 c5 c6" "$(cl_cables 2 | xargs)"
i=0
for host in mac-a mac-b mac-c mac-d; do
    check_host "$host" "$i"
    i=$((i + 1))
done
while read -r tag id ha ia hb ib; do
    [ "$tag" = cable ] && check_cable "$id" "$ha" "$ia" "$hb" "$ib"
done <"$TBSIM_DIR/topology"

expect "exec passes stdin and stdout" "hello" "$(echo hello | cl_on mac-b cat)"
cl_on mac-c sh -c 'exit 7'
expect "exec passes the exit status" 7 "$?"
expect "exec exports TBSIM_DIR" "$TBSIM_DIR" "$(cl_on mac-d printenv TBSIM_DIR)"
expect "exec runs in the host's netns (mgmt0 address)" "$TC_MGMT.2/24" \
    "$(cl_on b ip -4 -o addr show dev mgmt0 | awk '{print $4}')"
expect "status lists 4 hosts and 6 cables" "4 6" \
    "$("$TBCLUSTER" status | awk '$1 == "host" {h++} $1 == "cable" {c++} END {print h, c}')"

check "tbcluster down" "$TBCLUSTER" down
cl_check_nothing_left "after down"
finish
