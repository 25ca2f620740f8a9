# shellcheck shell=bash
# sim_lib.sh: helpers sourced by the sim_*.sh tests of libtbsim (the simulated Thunderbolt RDMA
# provider). Not a test: run directly, it says so and exits 77.
#
# sim_init gives each test its own tbcluster prefix, management /24 and TBSIM_DIR, skips (77)
# without root or namespaces, fails when the simulator is not built, and takes the cluster down
# on exit. Programs run on a host with LD_PRELOAD=libtbsim.so in front of libibverbs.
# sim_check records a verdict; sim_finish turns the verdicts into the exit status.

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    echo "sim_lib.sh is sourced by the sim_*.sh tests; it is not a test itself"
    exit 77
fi

SIM_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SIM_TOP=$(cd "$SIM_TESTS_DIR/../../.." && pwd)
SIM_BUILD=${TBRDMA_BUILD:-$SIM_TOP/build}/test/sim
SIM_LIB=$SIM_BUILD/.libs/libtbsim.so
TBCLUSTER=$SIM_TESTS_DIR/../tbcluster
TBSIMCTL=$SIM_BUILD/tbsimctl
export TBSIMCTL
SIM_TIMEOUT=120 # hang guard per program: a UC peer that is gone never completes
SIM_FAILED=0
SIM_CHECKS=0
SIM_TMP=
SIM_PIDS=()

sim_skip()
{
    echo "SKIP: $*"
    exit 77
}

# Usage: sim_init NAME
sim_init()
{
    SIM_NAME=$1
    if [ "$(id -u)" != 0 ]; then
        sim_skip "$SIM_NAME needs root"
    fi
    if ! unshare --net --uts true 2>/dev/null || ! ip netns list >/dev/null 2>&1; then
        sim_skip "$SIM_NAME: ip netns / network namespaces are not available here"
    fi
    local f
    for f in "$SIM_LIB" "$TBSIMCTL" "$SIM_BUILD/tbsim_devinfo" "$SIM_BUILD/uc_pingpong" \
        "$SIM_BUILD/tbsim_limits"; do
        if [ ! -e "$f" ]; then
            echo "FAIL: $f is not built (run ./build.sh)"
            exit 1
        fi
    done
    SIM_PREFIX=s$(($$ % 100000))-
    SIM_MGMT=10.98.$(($$ % 250))
    SIM_TMP=$(mktemp -d "/tmp/$SIM_NAME.XXXXXX")
    TBSIM_DIR=$SIM_TMP/state
    export TBSIM_DIR
    trap sim_cleanup EXIT
    trap 'exit 1' INT TERM
}

sim_cleanup()
{
    local pid
    for pid in "${SIM_PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    "$TBCLUSTER" down --prefix "$SIM_PREFIX" >/dev/null 2>&1 || true
    [ -n "${SIM_KEEP:-}" ] || rm -rf "$SIM_TMP"
}

# Usage: sim_up TBCLUSTER-UP-ARGS...
sim_up()
{
    echo "+ tbcluster up $*"
    if ! "$TBCLUSTER" up --prefix "$SIM_PREFIX" --mgmt-net "$SIM_MGMT" "$@"; then
        echo "FAIL: tbcluster up $*"
        exit 1
    fi
}

sim_down()
{
    "$TBCLUSTER" down --prefix "$SIM_PREFIX" >/dev/null 2>&1 || true
}

# Usage: sim_on HOST PROGRAM ARGS... : runs a simulator program (from the build dir) on HOST.
sim_on()
{
    local host=$1 prog=$2
    shift 2
    timeout "$SIM_TIMEOUT" "$TBCLUSTER" exec "$host" -- env LD_PRELOAD="$SIM_LIB" \
        "$SIM_BUILD/$prog" "$@"
}

# Usage: sim_sh HOST COMMAND... : runs a plain command on HOST.
sim_sh()
{
    local host=$1
    shift
    "$TBCLUSTER" exec "$host" -- "$@"
}

# Usage: sim_pair SERVER_HOST CLIENT_HOST PROGRAM "SERVER_ARGS" "CLIENT_ARGS"
# Runs the server in the background and the client in front; output in $SIM_TMP/server.out and
# $SIM_TMP/client.out, exit codes in SIM_SRV_RC and SIM_CLI_RC.
sim_pair()
{
    local srv=$1 cli=$2 prog=$3 sargs=$4 cargs=$5 pid
    # shellcheck disable=SC2086 # the argument strings are word lists
    sim_on "$srv" "$prog" $sargs >"$SIM_TMP/server.out" 2>&1 &
    pid=$!
    # shellcheck disable=SC2086
    sim_on "$cli" "$prog" $cargs "$srv" >"$SIM_TMP/client.out" 2>&1
    SIM_CLI_RC=$?
    wait "$pid"
    SIM_SRV_RC=$?
    sed 's/^/  client| /' "$SIM_TMP/client.out"
    sed 's/^/  server| /' "$SIM_TMP/server.out"
}

sim_pass()
{
    SIM_CHECKS=$((SIM_CHECKS + 1))
    echo "ok: $*"
}

sim_fail()
{
    SIM_CHECKS=$((SIM_CHECKS + 1))
    SIM_FAILED=$((SIM_FAILED + 1))
    echo "FAIL: $*"
}

# Usage: sim_check DESCRIPTION COMMAND... : passes if COMMAND succeeds.
sim_check()
{
    local desc=$1
    shift
    if "$@"; then
        sim_pass "$desc"
    else
        sim_fail "$desc"
    fi
}

# Usage: sim_expect DESCRIPTION EXPECTED ACTUAL
sim_expect()
{
    if [ "$2" = "$3" ]; then
        sim_pass "$1 ($3)"
    else
        sim_fail "$1: expected '$2', got '$3'"
    fi
}

# Usage: sim_grep DESCRIPTION FILE EXTENDED-REGEX
sim_grep()
{
    if grep -Eq -- "$3" "$2"; then
        sim_pass "$1"
    else
        sim_fail "$1: no line matching '$3' in $(basename "$2")"
    fi
}

# Usage: sim_nogrep DESCRIPTION FILE EXTENDED-REGEX
sim_nogrep()
{
    if grep -Eq -- "$3" "$2"; then
        sim_fail "$1: unexpected line matching '$3' in $(basename "$2")"
    else
        sim_pass "$1"
    fi
}

# Usage: sim_devinfo HOST [ARGS...] : tbsim_devinfo output in $SIM_TMP/devinfo.out (also shown).
sim_devinfo()
{
    local host=$1
    shift
    sim_on "$host" tbsim_devinfo "$@" >"$SIM_TMP/devinfo.out" 2>&1
    sed "s/^/  $host| /" "$SIM_TMP/devinfo.out"
}

# First IPv4 (without prefix) of interface $2 on host $1.
sim_ipv4()
{
    sim_sh "$1" ip -4 -o addr show dev "$2" | awk '{print $4}' | head -1 | cut -d/ -f1
}

sim_finish()
{
    echo "$SIM_NAME: $SIM_CHECKS checks, $SIM_FAILED failed"
    if [ "$SIM_CHECKS" -eq 0 ]; then
        echo "FAIL: nothing was checked"
        exit 1
    fi
    [ "$SIM_FAILED" -eq 0 ] && exit 0
    exit 1
}
