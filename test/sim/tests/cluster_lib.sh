# shellcheck shell=bash
# cluster_lib.sh: helpers sourced by the cluster_*.sh tests of test/sim/tbcluster. Not a test:
# run directly, it says so and exits 77.
#
# cl_init gives each test its own cluster prefix, management /24 and TBSIM_DIR (so tests can run
# next to another cluster), skips (77) without root or namespace support, and installs an EXIT
# trap that takes the cluster down. cl_check records failures; cl_finish turns them into the
# exit status (0 pass, 1 fail).

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    echo "cluster_lib.sh is sourced by the cluster_*.sh tests; it is not a test itself"
    exit 77
fi

CL_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TBCLUSTER=$CL_TESTS_DIR/../tbcluster
CL_FAILED=0
CL_CHECKS=0
CL_TMP=

cl_skip()
{
    echo "SKIP: $*"
    exit 77
}

# Usage: cl_init TESTNAME. Sets PREFIX, MGMT_NET, TBSIM_DIR (exported), CL_TMP, CL_NAME.
cl_init()
{
    CL_NAME=$1
    if [ "$(id -u)" != 0 ]; then
        cl_skip "$CL_NAME needs root"
    fi
    if ! unshare --net --uts true 2>/dev/null || ! ip netns list >/dev/null 2>&1; then
        cl_skip "$CL_NAME: network/UTS namespaces are not supported here"
    fi
    PREFIX=t$$-
    MGMT_NET=10.97.$(($$ % 250))
    CL_TMP=$(mktemp -d "/tmp/$CL_NAME.XXXXXX")
    TBSIM_DIR=$CL_TMP/state
    export TBSIM_DIR
    trap cl_cleanup EXIT
    trap 'exit 1' INT TERM
}

cl_cleanup()
{
    "$TBCLUSTER" down --prefix "$PREFIX" >/dev/null 2>&1 || true
    rm -rf "$CL_TMP"
}

# Usage: cl_up ARGS... : tbcluster up with this test's prefix and management network.
cl_up()
{
    "$TBCLUSTER" up --prefix "$PREFIX" --mgmt-net "$MGMT_NET" "$@"
}

cl_pass()
{
    CL_CHECKS=$((CL_CHECKS + 1))
    echo "ok: $*"
}

cl_fail()
{
    CL_CHECKS=$((CL_CHECKS + 1))
    CL_FAILED=$((CL_FAILED + 1))
    echo "FAIL: $*"
}

# Usage: cl_check DESCRIPTION COMMAND... : passes if COMMAND succeeds.
cl_check()
{
    local desc=$1
    shift
    if "$@"; then
        cl_pass "$desc"
    else
        cl_fail "$desc"
    fi
}

# Usage: cl_check_not DESCRIPTION COMMAND... : passes if COMMAND fails.
cl_check_not()
{
    local desc=$1
    shift
    if "$@"; then
        cl_fail "$desc"
    else
        cl_pass "$desc"
    fi
}

# Usage: cl_expect DESCRIPTION EXPECTED ACTUAL
cl_expect()
{
    if [ "$2" = "$3" ]; then
        cl_pass "$1 ($3)"
    else
        cl_fail "$1: expected '$2', got '$3'"
    fi
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

# Checks that nothing named from PREFIX and no state dir is left.
cl_check_nothing_left()
{
    local left
    left=$(
        ip netns list | grep "^$PREFIX"
        ip -o link show | awk -F': ' '{print $2}' | grep "^$PREFIX"
        findmnt -rn -o TARGET | grep "^$CL_TMP"
        ls -d /etc/netns/"$PREFIX"* 2>/dev/null
        ls -d "$TBSIM_DIR" 2>/dev/null
    )
    if [ -z "$left" ]; then
        cl_pass "$1: no namespace, link, mount, /etc/netns entry or state dir left"
    else
        cl_fail "$1: left behind: ${left//$'\n'/ }"
    fi
}

cl_finish()
{
    if [ "$CL_CHECKS" = 0 ]; then
        echo "FAIL: $CL_NAME made no checks"
        exit 1
    fi
    if [ "$CL_FAILED" != 0 ]; then
        echo "$CL_NAME: $CL_FAILED of $CL_CHECKS checks failed"
        exit 1
    fi
    echo "$CL_NAME: all $CL_CHECKS checks passed"
    exit 0
}
