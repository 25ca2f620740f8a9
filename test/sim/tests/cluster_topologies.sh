#!/bin/bash
# cluster_topologies.sh: tbcluster up topologies and addressing modes other than the p2p mesh.
# Checks: missing:A-B leaves that cable out; double:A-B adds a second one (ports numbered in
# order of peers); crossed:A-B joins A and B by two cables with their ports crossed; linklocal gives every port its own unique 169.254/16 address; none gives no
# IPv4 but keeps IPv6 link-local; bridged enslaves every port to bridge0, which holds the IPv4;
# bad arguments and a non-root caller are refused and leave nothing behind.
set -uo pipefail
. "$(dirname "$0")/cluster_lib.sh"
cl_init cluster_topologies

# Usage: up_or_fail DESCRIPTION ARGS... ; returns 1 (after recording a failure) if up fails.
up_or_fail()
{
    local desc=$1
    shift
    if cl_up "$@" >/dev/null 2>&1; then
        pass "up $desc"
        return 0
    fi
    fail "up $desc"
    return 1
}

down_and_check()
{
    "$TBCLUSTER" down
    cl_check_nothing_left "$1: down"
}

cables_line()
{
    awk '$1 == "cable" {printf "%s%s:%s-%s:%s", sep, $3, $4, $5, $6; sep = " "}' \
        "$TBSIM_DIR/topology"
}

check_missing()
{
    up_or_fail "3 hosts, missing:a-b" --hosts 3 --topology missing:a-b || return
    expect "missing:a-b cables" "mac-a:en2-mac-c:en2 mac-b:en2-mac-c:en3" "$(cables_line)"
    expect "missing:a-b mac-a ports" "en2" "$(cl_tb_ports mac-a | xargs)"
    expect "missing:a-b mac-b ports" "en2" "$(cl_tb_ports mac-b | xargs)"
    expect "missing:a-b mac-c ports" "en2 en3" "$(cl_tb_ports mac-c | xargs)"
    down_and_check missing
    up_or_fail "4 hosts, missing:0-3,mac-b-mac-c" --hosts 4 --topology missing:0-3,mac-b-mac-c ||
        return
    expect "missing:0-3,mac-b-mac-c cables" \
        "mac-a:en2-mac-b:en2 mac-a:en3-mac-c:en2 mac-b:en3-mac-d:en2 mac-c:en3-mac-d:en3" \
        "$(cables_line)"
    down_and_check "missing list"
}

check_double()
{
    up_or_fail "3 hosts, double:0-1" --hosts 3 --topology double:0-1 || return
    expect "double:0-1 cables" \
        "mac-a:en2-mac-b:en2 mac-a:en3-mac-b:en3 mac-a:en4-mac-c:en2 mac-b:en4-mac-c:en3" \
        "$(cables_line)"
    expect "double:0-1 cable ids" "c1 c2 c3 c4" "$(cl_cables 2 | xargs)"
    expect "double:0-1 mac-a ports" "en2 en3 en4" "$(cl_tb_ports mac-a | xargs)"
    expect "double:0-1 mac-c ports" "en2 en3" "$(cl_tb_ports mac-c | xargs)"
    check "double:0-1 second cable carries traffic" cl_ping mac-a 192.168.0.6
    down_and_check double
}

# crossed:A-B: A's first port to B's second, A's second to B's first; the other ports as usual.
check_crossed()
{
    up_or_fail "3 hosts, crossed:a-b" --hosts 3 --topology crossed:a-b || return
    expect "crossed:a-b cables" \
        "mac-a:en2-mac-b:en3 mac-a:en3-mac-b:en2 mac-a:en4-mac-c:en2 mac-b:en4-mac-c:en3" \
        "$(cables_line)"
    check "crossed:a-b first cable carries traffic (mac-a en2 to mac-b en3)" cl_ping mac-a 192.168.0.2
    check "crossed:a-b second cable carries traffic (mac-a en3 to mac-b en2)" cl_ping mac-a 192.168.0.6
    expect "crossed:a-b mac-b en3 holds the first cable's address" "192.168.0.2/30" \
        "$(ip -n "${TC_PREFIX}mac-b" -4 -o addr show dev en3 | awk '{print $4}')"
    down_and_check crossed
}

# Prints "host:port address" for every Thunderbolt port.
all_port_addresses()
{
    local host port
    for host in "$@"; do
        for port in $(cl_tb_ports "$host"); do
            echo "$host:$port $(cl_ipv4 "$host" "$port")"
        done
    done
}

check_linklocal()
{
    local lines bad
    up_or_fail "4 hosts, linklocal" --hosts 4 --addressing linklocal || return
    lines=$(all_port_addresses mac-a mac-b mac-c mac-d)
    expect "linklocal: ports with an address" 12 "$(echo "$lines" | wc -l)"
    bad=$(echo "$lines" | grep -Ev ' 169\.254\.([1-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-4])\.[0-9]+/16$')
    check "linklocal: each port has exactly one 169.254.1-254.x/16 ${bad:+(not: $bad)}" \
        [ -z "$bad" ]
    expect "linklocal: distinct addresses" 12 \
        "$(echo "$lines" | awk '{print $2}' | sort -u | wc -l)"
    down_and_check linklocal
}

check_none()
{
    local lines
    up_or_fail "3 hosts, none" --hosts 3 --addressing none || return
    lines=$(all_port_addresses mac-a mac-b mac-c)
    expect "none: ports without IPv4" 6 "$(echo "$lines" | grep -c ' $')"
    expect "none: ports with IPv6 link-local" 6 \
        "$(for h in mac-a mac-b mac-c; do cl_on $h ip -6 -o addr show scope link; done |
            grep -c ' en[0-9]* ')"
    down_and_check none
}

# shellcheck disable=SC2317 # called through check
is_linklocal16()
{
    [[ "$1" =~ ^169\.254\.[0-9]+\.[0-9]+/16$ ]]
}

check_bridged()
{
    local host members addr
    up_or_fail "3 hosts, bridged" --hosts 3 --addressing bridged || return
    for host in mac-a mac-b mac-c; do
        members=$(cl_on "$host" ip -o link show master bridge0 | awk -F': ' '{print $2}' |
            sed 's/@.*//' | sort -V | xargs)
        expect "bridged: $host bridge0 members" "en2 en3" "$members"
        addr=$(cl_ipv4 "$host" bridge0)
        check "bridged: $host bridge0 has one 169.254/16 ($addr)" is_linklocal16 "$addr"
        expect "bridged: $host en2 en3 without IPv4" "" \
            "$(cl_ipv4 "$host" en2)$(cl_ipv4 "$host" en3)"
    done
    down_and_check bridged
}

# Usage: refused DESCRIPTION ARGS... : up must fail and leave nothing behind.
refused()
{
    local desc=$1
    shift
    if cl_up "$@" >/dev/null 2>&1; then
        fail "up $desc was accepted"
        "$TBCLUSTER" down --prefix "$TC_PREFIX"
    else
        pass "up $desc refused"
    fi
    cl_check_nothing_left "refused $desc"
}

check_refusals()
{
    local msg
    refused "--hosts 1" --hosts 1
    refused "--hosts 9" --hosts 9
    refused "missing:a-a" --hosts 3 --topology missing:a-a
    refused "missing:a-e on 3 hosts" --hosts 3 --topology missing:a-e
    refused "missing and double on one pair" --hosts 3 --topology missing:a-b --topology double:a-b
    refused "double and crossed on one pair" --hosts 3 --topology double:a-b --topology crossed:a-b
    refused "--addressing dhcp" --hosts 2 --addressing dhcp
    refused "--peer-routes with linklocal" --hosts 2 --addressing linklocal --peer-routes
    check_nonroot_refused
}

# An unprivileged caller gets tbcluster's own refusal. That user may not be able to reach the
# checkout (a clone in /root or in a mktemp -d folder is mode 0700), so it runs a byte-identical
# copy of the script from a folder everyone can enter; no other file of the checkout is needed
# before the root check.
check_nonroot_refused()
{
    local pub msg rc
    pub=$(mktemp -d /tmp/tbcluster-nonroot.XXXXXX) || fatal "mktemp -d failed"
    cp "$TBCLUSTER" "$pub/tbcluster" && chmod 755 "$pub" "$pub/tbcluster" ||
        fatal "cannot copy tbcluster to $pub"
    check "the copy run by the unprivileged user is tbcluster itself" cmp -s "$TBCLUSTER" \
        "$pub/tbcluster"
    msg=$(as_nobody "$pub/tbcluster" up --prefix "$TC_PREFIX" --mgmt-net "$TC_MGMT" --hosts 2 2>&1)
    rc=$?
    rm -rf "$pub"
    expect "non-root up exits 1" 1 "$rc"
    expect "non-root up refused with tbcluster's own message" \
        "tbcluster: must run as root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)" \
        "$msg"
    cl_check_nothing_left "refused non-root up"
}

# Usage: as_nobody CMD... : runs CMD as user and group 65534, without supplementary groups.
as_nobody()
{
    setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

check_missing
check_double
check_crossed
check_linklocal
check_none
check_bridged
check_refusals
finish
