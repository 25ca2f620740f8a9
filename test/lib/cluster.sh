# shellcheck shell=bash
# cluster.sh: a simulated cluster of Macs private to one test (sourced after check.sh). Each
# test gets its own tbcluster prefix, management /24, temporary directory and TBSIM_DIR, so it
# can run next to another cluster, and the cluster is taken down on exit whatever happens.
#
#   tc_init TAG NET  sets TC_PREFIX (TAG + pid + "-"), TC_MGMT (NET.<pid % 250>), TC_TMP (a
#                    temporary directory, kept when SIM_KEEP is set) and TBSIM_DIR (exported,
#                    inside TC_TMP), and installs the EXIT trap. TC_BEFORE_DOWN may name a
#                    function the trap runs first (e.g. to stop background programs).
#   tc_up ARGS...    tbcluster up with this test's prefix and management network.

TC_TBCLUSTER=$(cd "$(dirname "${BASH_SOURCE[0]}")/../sim" && pwd)/tbcluster
TC_TMP=

tc_init()
{
    TC_PREFIX=$1$(($$ % 100000))-
    TC_MGMT=$2.$(($$ % 250))
    local tag=${CHECK_NAME:-tbcluster}
    TC_TMP=$(mktemp -d "/tmp/${tag//[^A-Za-z0-9_.-]/_}.XXXXXX")
    TBSIM_DIR=$TC_TMP/state
    export TBSIM_DIR
    trap tc_cleanup EXIT
    trap 'exit 1' INT TERM
}

tc_up()
{
    "$TC_TBCLUSTER" up --prefix "$TC_PREFIX" --mgmt-net "$TC_MGMT" "$@"
}

tc_cleanup()
{
    if [ -n "${TC_BEFORE_DOWN:-}" ]; then
        "$TC_BEFORE_DOWN"
    fi
    "$TC_TBCLUSTER" down --prefix "$TC_PREFIX" >/dev/null 2>&1 || true
    [ -n "${SIM_KEEP:-}" ] || rm -rf "$TC_TMP"
}
