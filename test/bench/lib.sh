# shellcheck shell=bash
# Shared part of the tests of bench/compare-jaccl (sourced). Built on the tools tests' helpers
# (test/integration/tools/lib.sh: simulated Macs with a login profile each, the launch agent
# ./agent, `on`) and the MPI tests' proofs (test/mpi/lib.sh: the simulator's per-cable
# counters, nothing left held).
#
# compare-jaccl runs on mac-a, as a user runs it on one Mac of the cluster; it reaches the
# others through the tools tests' agent (as ssh would) and starts MPI through the simulated
# cluster's mpirun, `tbcluster mpirun` (4.1) or test/ompi5/cluster-mpirun.sh (5.0): --mpirun is
# the only difference from a run on real Macs. MLX cannot run here, so every run is --mpi-only
# unless a test checks a refusal about MLX. The tests without a cluster (no root) use only
# bench_tmp, need and the paths.

# shellcheck source=../integration/tools/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../integration/tools/lib.sh"
# shellcheck source=../mpi/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../mpi/lib.sh"

compare="$top/bench/compare-jaccl"
samples="$top/test/samples/compare-jaccl"
CJ_FLAVOUR=4.1
CJ_ENV=() # extra environment of compare-jaccl (a fake on mac-a, the doctor's MCA values)

# bench_tmp: $tmp, a temporary directory removed on exit (for a test without a cluster).
bench_tmp()
{
    tmp=$(mktemp -d "/tmp/$(basename "$0" .sh).XXXXXX") || fatal "mktemp -d failed"
    trap 'rm -rf "$tmp"' EXIT
}

# need PROGRAM...: stops the test unless each program is installed.
need()
{
    local p
    for p in "$@"; do
        command -v "$p" >/dev/null || fatal "$p is needed (test/install-deps.sh)"
    done
}

# cj_flavour 4.1|5.0: the Open MPI compare-jaccl's MPI runs use on the simulated Macs.
cj_flavour()
{
    CJ_FLAVOUR=$1
    mt_flavour "$1"
    mt_require
}

# cj_mpirun: the --mpirun of the flavour: its cluster mpirun, then what mt_launch adds (no
# binding, idle ranks yield) and where the flavour's plugin and simulator are.
cj_mpirun()
{
    local launcher="$tbc mpirun"
    if [ 5.0 = "$CJ_FLAVOUR" ]; then
        launcher="$top/test/ompi5/cluster-mpirun.sh"
    fi
    echo "$launcher --np {np} -- --bind-to none --mca mpi_yield_when_idle 1" \
        "--mca opal_mca_base_component_path SYS_DEFAULT:$MT_PLUGIN" \
        "--mca btl_tbrdma_verbs_lib $MT_SIMLIB"
}

# cj_hostfile FILE: MLX's hostfile of the cluster's cables, as tbrdma-doctor writes it.
cj_hostfile()
{
    run_doctor --write-mlx-hostfile "$1" >/dev/null
    [ "$rc" -eq 0 ] && [ -s "$1" ] || fatal "tbrdma-doctor did not write MLX's hostfile ($rc)"
}

# run_compare [ARGS...]: compare-jaccl on mac-a (quick sizes; the host build's tbrdma for the
# doctor, the flavour's for mpirun), output shown and kept in $out, exit status in $rc.
run_compare()
{
    out=$(on mac-a env HOME="$TC_TMP/home/mac-a" \
        OMPI_MCA_opal_mca_base_component_path="SYS_DEFAULT:$plugin_dir" \
        OMPI_MCA_btl_tbrdma_verbs_lib="$simlib" "${CJ_ENV[@]}" \
        "$compare" --launch-agent "$agent" --mpirun "$(cj_mpirun)" \
        --mpicc "${MT_MPICC[*]}" --rounds 1 --reps 2 --warmup 1 --max-bytes 64K \
        --scale 0.002 "$@" 2>&1)
    rc=$?
    echo "$out" | sed 's/^/    | /'
}

# expect_refused WHAT ERE...: compare-jaccl exited 1 with "refused, N problem(s)" and a line
# matching each extended regular expression, each also naming its fix.
expect_refused()
{
    local what=$1 re line
    shift
    if [ "$rc" -ne 1 ] || ! echo "$out" | grep -q '^compare-jaccl: refused, [0-9]* problem'; then
        fail "$what: expected a refusal (exit 1), got exit $rc"
        return 1
    fi
    for re in "$@"; do
        line=$(echo "$out" | grep -E -- "$re" | head -1)
        if [ -z "$line" ]; then
            fail "$what: no line matching '$re'"
            return 1
        fi
        if ! echo "$line" | grep -q 'fix: '; then
            fail "$what: the line matching '$re' gives no fix"
            return 1
        fi
    done
    pass "$what: refused, $(echo "$out" | sed -n 's/^compare-jaccl: refused, \([0-9]*\) .*/\1/p') problem line(s) naming it with the fix"
}

# expect_ready WHAT: compare-jaccl --check-only passed.
expect_checks_pass()
{
    if [ "$rc" -eq 0 ] && echo "$out" | grep -q '^compare-jaccl: the cluster is ready:'; then
        pass "$1: the checks pass"
        return 0
    fi
    fail "$1: the checks do not pass (exit $rc)"
    return 1
}
