# shellcheck shell=bash
# check.sh: the verdict helpers every shell test of tbrdma shares, sourced by the domain
# libraries (test/sim/tests/cluster_lib.sh and sim_lib.sh, test/integration/sim/lib.sh and
# test/integration/ompi/lib.sh). Not a test: run directly, it says so and exits 77.
#
# Each check prints one line, "ok: WHAT" or "FAIL: WHAT", and is counted; `finish` prints
# "NAME: N checks, M failed" and exits 0 only when at least one check was made and none failed.
# `skip` exits 77 and `fatal` exits 1 at once (automake's convention: 0 pass, 1 fail, 77 skip).
# NAME is $CHECK_NAME, which a domain library may set, else the test script's name.

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    echo "check.sh is sourced by the shell tests' libraries; it is not a test itself"
    exit 77
fi

CHECK_COUNT=0
CHECK_FAILED=0

# skip WHY: the test cannot run here; exit 77.
skip()
{
    echo "SKIP: $*"
    exit 77
}

# skip_unless_netns: skips unless run as root where network and UTS namespaces work (what
# tbcluster's simulated hosts are made of).
skip_unless_netns()
{
    local name=${CHECK_NAME:-$(basename "$0" .sh)}
    if [ "$(id -u)" != 0 ]; then
        skip "$name needs root"
    fi
    if ! unshare --net --uts true 2>/dev/null || ! ip netns list >/dev/null 2>&1; then
        skip "$name: network/UTS namespaces are not available here"
    fi
}

# fatal WHAT: a failure after which the test cannot go on; exit 1.
fatal()
{
    echo "FAIL: $*"
    exit 1
}

# pass WHAT: one check passed.
pass()
{
    CHECK_COUNT=$((CHECK_COUNT + 1))
    echo "ok: $*"
}

# fail WHAT: one check failed; the test goes on, unless WHAT starts with $CHECK_STOP_AT (set by
# test/sim/mutate.sh to the check a mutant must fail: once it has, what follows cannot change the
# mutant's verdict, so the test ends there, failed, through its EXIT trap's cleanup).
fail()
{
    CHECK_COUNT=$((CHECK_COUNT + 1))
    CHECK_FAILED=$((CHECK_FAILED + 1))
    echo "FAIL: $*"
    if [ -n "${CHECK_STOP_AT:-}" ] && [[ "$*" == "$CHECK_STOP_AT"* ]]; then
        echo "stopped: this is the check CHECK_STOP_AT names"
        exit 1
    fi
}

# check WHAT COMMAND...: passes if COMMAND succeeds. Returns 1 on failure.
check()
{
    local what=$1
    shift
    if "$@"; then
        pass "$what"
        return 0
    fi
    fail "$what"
    return 1
}

# check_not WHAT COMMAND...: passes if COMMAND fails. Returns 1 on failure.
check_not()
{
    local what=$1
    shift
    if "$@"; then
        fail "$what"
        return 1
    fi
    pass "$what"
}

# expect WHAT WANT GOT: passes if the strings are equal. Returns 1 on failure.
expect()
{
    if [ "$2" = "$3" ]; then
        pass "$1 ($3)"
        return 0
    fi
    fail "$1: expected '$2', got '$3'"
    return 1
}

# check_grep WHAT FILE EXTENDED-REGEX: passes if a line of FILE matches. Returns 1 on failure.
check_grep()
{
    if grep -Eq -- "$3" "$2"; then
        pass "$1"
        return 0
    fi
    fail "$1: no line matching '$3' in $(basename "$2")"
    return 1
}

# check_nogrep WHAT FILE EXTENDED-REGEX: passes if no line of FILE matches. Returns 1 on failure.
check_nogrep()
{
    if grep -Eq -- "$3" "$2"; then
        fail "$1: unexpected line matching '$3' in $(basename "$2")"
        return 1
    fi
    pass "$1"
}

# finish: prints the count and exits with the verdict; no check at all is a failure.
finish()
{
    local name=${CHECK_NAME:-$(basename "$0" .sh)}
    echo "$name: $CHECK_COUNT checks, $CHECK_FAILED failed"
    if [ "$CHECK_COUNT" -eq 0 ]; then
        fatal "nothing was checked"
    fi
    if [ "$CHECK_FAILED" -ne 0 ]; then
        exit 1
    fi
    exit 0
}
