# shellcheck shell=bash
# Shared helpers of the tools tests (tbrdma-doctor, tbrdma-setup) on simulated Macs, sourced.
# Built on the plugin tests' helpers (../sim/lib.sh: the private cluster, `on`, tb_mpirun).
#
# Every simulated Mac gets a login profile (see ./agent) and a HOME of its own whose
# ~/.openmpi/mca-params.conf names the plugin's directory: tbrdma is "installed" the way
# docs/quickstart-macos.md installs it. The doctor runs on mac-a, as a user would run it on the
# first Mac, and reaches the others through ./agent, as mpirun would.

# shellcheck source=../sim/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../sim/lib.sh"

doctor="$build/tools/tbrdma-doctor"
agent="$top/test/integration/tools/agent"
HOSTS=()

# tools_cluster_up N ARGS...: a private cluster of N Macs, each with its profile and HOME.
tools_cluster_up()
{
    local n=$1 i h
    shift
    [ -x "$doctor" ] || fatal "missing $doctor (build first: ./build.sh)"
    cluster_up --hosts "$n" "$@"
    HOSTS=()
    export TBRDMA_TEST_PROFILES="$TC_TMP/profiles"
    mkdir -p "$TBRDMA_TEST_PROFILES"
    for ((i = 0; i < n; i++)); do
        h=mac-$(printf "\\x$(printf %x $((97 + i)))")
        HOSTS+=("$h")
        profile_reset "$h"
    done
}

# profile_reset HOST: the host's profile back to its HOME alone (tbrdma installed, no fault).
profile_reset()
{
    local home="$TC_TMP/home/$1"
    mkdir -p "$home/.openmpi"
    echo "opal_mca_base_component_path = SYS_DEFAULT:$plugin_dir" >"$home/.openmpi/mca-params.conf"
    echo "export HOME='$home'" >"$TBRDMA_TEST_PROFILES/$1"
}

# profile_add HOST LINE: appends a shell line to the host's profile (a per-host fault).
profile_add()
{
    echo "$2" >>"$TBRDMA_TEST_PROFILES/$1"
}

# nproc_stub HOST [N]: the probe on HOST finds first in its PATH an nproc that prints N, or
# without N one that fails (the probe then prints no "cores" line). Set through HOST's profile,
# so not for mac-a, which the doctor probes directly.
nproc_stub()
{
    local dir="$TC_TMP/stubs/$1"
    mkdir -p "$dir"
    if [ $# -gt 1 ]; then
        printf '#!/bin/sh\necho %s\n' "$2" >"$dir/nproc"
    else
        printf '#!/bin/sh\nexit 1\n' >"$dir/nproc"
    fi
    chmod +x "$dir/nproc"
    profile_add "$1" "export PATH='$dir':\"\$PATH\""
}

# run_doctor [ARGS...]: tbrdma-doctor on mac-a for every host of the cluster (unless ARGS end
# with hosts of their own after --), output shown and kept in $out, exit status in $rc.
run_doctor()
{
    local hosts=("${HOSTS[@]}")
    local args=()
    while [ $# -gt 0 ]; do
        if [ "$1" = -- ]; then
            shift
            hosts=("$@")
            break
        fi
        args+=("$1")
        shift
    done
    out=$(on mac-a env HOME="$TC_TMP/home/mac-a" "$doctor" --launch-agent "$agent" \
        --mca btl_tbrdma_verbs_lib "$simlib" "${args[@]}" "${hosts[@]}" 2>&1)
    rc=$?
    echo "$out" | sed 's/^/    | /'
}

# problems: the doctor's lines other than notes and the summary.
problems()
{
    echo "$out" | grep -v -e '^tbrdma-doctor: ' -e '^note: '
}

# expect_ready WHAT: the doctor exits 0 with its one summary line (and notes only).
expect_ready()
{
    local n
    n=$(problems | grep -c .)
    if [ "$rc" -eq 0 ] && [ "$n" -eq 0 ] \
        && echo "$out" | grep -q '^tbrdma-doctor: ready: .*full mesh'; then
        pass "$1: the doctor passes (exit 0, one summary line)"
        return 0
    fi
    fail "$1: the doctor does not pass (exit $rc, $n problem lines)"
    return 1
}

# expect_problem WHAT ERE...: the doctor exits 1 with exactly one problem line, which matches
# every extended regular expression given, names the fix and is counted in the summary.
expect_problem()
{
    local what=$1 line re
    shift
    line=$(problems)
    if [ "$rc" -ne 1 ] || [ "$(echo "$line" | grep -c .)" -ne 1 ]; then
        fail "$what: expected exit 1 and one problem line, got exit $rc and $(echo "$line" | grep -c .)"
        return 1
    fi
    for re in "$@" '; fix: '; do
        if ! echo "$line" | grep -Eq -- "$re"; then
            fail "$what: the line does not match '$re'"
            return 1
        fi
    done
    if ! echo "$out" | grep -q '^tbrdma-doctor: 1 problem on'; then
        fail "$what: no summary line counting 1 problem"
        return 1
    fi
    pass "$what: named in one line with its fix"
}
