# shellcheck shell=bash
# cluster_lib.sh: helpers sourced by the cluster_*.sh tests of test/sim/tbcluster. Not a test:
# run directly, it says so and exits 77.
#
# cl_init gives each test its own cluster prefix, management /24 and TBSIM_DIR (so tests can run
# next to another cluster), skips (77) without root or namespace support, and installs an EXIT
# trap that takes the cluster down. The verdict helpers (check, expect, finish, ...) come from
# test/lib/check.sh.

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    echo "cluster_lib.sh is sourced by the cluster_*.sh tests; it is not a test itself"
    exit 77
fi

# shellcheck source=../../lib/check.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/check.sh"
# shellcheck source=../../lib/cluster.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/cluster.sh"

CL_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TBCLUSTER=$CL_TESTS_DIR/../tbcluster

# Usage: cl_init TESTNAME. Sets CL_NAME, CHECK_NAME (the name finish reports) and the private
# cluster's TC_PREFIX, TC_MGMT, TC_TMP and TBSIM_DIR (test/lib/cluster.sh).
cl_init()
{
    CL_NAME=$1
    CHECK_NAME=$CL_NAME
    skip_unless_netns
    tc_init t 10.97
}

# Usage: cl_up ARGS... : tbcluster up with this test's prefix and management network.
cl_up()
{
    tc_up "$@"
}

# Runs on host $1: tbcluster exec.
cl_on()
{
    local host=$1
    shift
    "$TBCLUSTER" exec "$host" -- "$@"
}

# Thunderbolt port names of host $1, one line each, in order.
cl_tb_ports()
{
    cl_on "$1" ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep '^en' | sort -V
}

# IPv4 addresses (with prefix length) of port $2 on host $1, space-separated.
cl_ipv4()
{
    cl_on "$1" ip -4 -o addr show dev "$2" | awk '{print $4}' | xargs
}

# Field $1 (1-based: 1 "cable", 2 id, 3 hostA, 4 ifA, 5 hostB, 6 ifB) of cable lines.
cl_cables()
{
    awk -v f="$1" '$1 == "cable" {print $f}' "$TBSIM_DIR/topology"
}

# One ping from host $1 to address $2; up to 3 attempts, so a link just brought up has time
# to pass its first packet (no timing decides the verdict: only whether an echo came back).
cl_ping()
{
    local ping=(ping) _try
    if ! command -v ping >/dev/null; then
        ping=(busybox ping)
    fi
    for _try in 1 2 3; do
        if cl_on "$1" "${ping[@]}" -c1 -W1 "$2" >/dev/null 2>&1; then
            return 0
        fi
    done
    return 1
}

# True if port $2 of host $1 has carrier (LOWER_UP).
cl_carrier()
{
    local flags
    flags=$(cl_on "$1" ip -o link show dev "$2") || return 1
    [[ "$flags" == *LOWER_UP* ]]
}

# Checks that nothing named from TC_PREFIX and no state dir is left.
cl_check_nothing_left()
{
    local left
    left=$(
        ip netns list | grep "^$TC_PREFIX"
        ip -o link show | awk -F': ' '{print $2}' | grep "^$TC_PREFIX"
        findmnt -rn -o TARGET | grep "^$TC_TMP"
        ls -d /etc/netns/"$TC_PREFIX"* 2>/dev/null
        ls -d "$TBSIM_DIR" 2>/dev/null
    )
    if [ -z "$left" ]; then
        pass "$1: no namespace, link, mount, /etc/netns entry or state dir left"
    else
        fail "$1: left behind: ${left//$'\n'/ }"
    fi
}
