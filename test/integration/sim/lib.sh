# shellcheck shell=bash
# Shared helpers for tbrdma's tests on the simulated cluster of Macs (sourced, not run).
# Each test brings up its own cluster under a unique prefix and state directory and tears it
# down on exit, whatever happens. The verdict helpers come from test/lib/check.sh: these tests
# stop at the first failed expectation (fatal), count each one met (pass) and end with finish.

# shellcheck source=../../lib/check.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/check.sh"
# shellcheck source=../../lib/cluster.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/cluster.sh"

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
build="$top/build"
tbc="$top/test/sim/tbcluster"
simlib="$build/test/sim/.libs/libtbsim.so"
info="$build/tools/tbrdma-info"
plugin_dir="$build/plugin/.libs"
export TBSIMCTL="$build/test/sim/tbsimctl"

# require_env: root, network namespaces, and the build's artifacts.
require_env()
{
    [ "$(id -u)" -eq 0 ] || skip "needs root for network namespaces"
    ip netns list >/dev/null 2>&1 || skip "ip netns is not available"
    local f
    for f in "$tbc" "$simlib" "$info" "$plugin_dir/mca_btl_tbrdma.so" "$TBSIMCTL"; do
        [ -e "$f" ] || fatal "missing $f (build first: ./build.sh)"
    done
}

# cluster_up ARGS...: brings up a cluster private to this test (test/lib/cluster.sh); down on
# exit.
cluster_up()
{
    tc_init i 10.96
    tc_up "$@" || fatal "tbcluster up $* failed"
    # the ranks' slot ledger records in the cluster's own directory, not the host's /tmp
    export OMPI_MCA_btl_tbrdma_ledger_dir="$TBSIM_DIR/ledger"
}

# on HOST CMD...: runs CMD on a simulated Mac.
on()
{
    local host=$1
    shift
    "$tbc" exec "$host" -- "$@"
}

# info_on HOST [ARGS...]: tbrdma-info on a simulated Mac, against the simulator.
info_on()
{
    local host=$1
    shift
    on "$host" "$info" --verbs-lib "$simlib" "$@"
}

# cables: "id hostA ifA hostB ifB" lines of the cluster's topology.
cables()
{
    sed -n 's/^cable //p' "$TBSIM_DIR/topology"
}

# hello_bin: a small MPI program (data-checked send/recv and allreduce), built once per test.
hello_bin()
{
    local out="$build/test/integration/sim/hello"
    if [ ! -x "$out" ] || [ "$top/test/integration/ompi/hello.c" -nt "$out" ]; then
        mkdir -p "$(dirname "$out")"
        mpicc -O2 -o "$out" "$top/test/integration/ompi/hello.c" || fatal "mpicc hello.c failed"
    fi
    echo "$out"
}

# tb_mpirun NP [MPIRUN-ARGS...] -- PROGRAM...: mpirun across the simulated Macs with tbrdma
# loaded against the simulator, reporting at verbosity 1.
tb_mpirun()
{
    local np=$1
    shift
    "$tbc" mpirun --np "$np" -- \
        --mca pml ob1 --mca btl self,tcp,tbrdma \
        --mca opal_mca_base_component_path "SYS_DEFAULT:$plugin_dir" \
        --mca btl_tbrdma_verbs_lib "$simlib" --mca btl_tbrdma_verbose 1 "$@"
}

# check_hello OUTPUT NP: every rank of the MPI program reported its data checks OK (lines may
# carry mpirun --tag-output's "[job,rank]<stdout>:" prefix).
check_hello()
{
    local n
    n=$(echo "$1" | grep -c "^\(\[[0-9]*,[0-9]*\]<stdout>:\)\{0,1\}hello: rank [0-9]* of $2 OK")
    [ "$n" -eq "$2" ] || fatal "$n of $2 ranks reported OK"
}

# mesh_want [LINE...]: the "tbrdma mesh: " lines a process prints for this cluster: one per
# cable ("tbrdma mesh: hostA rdma_ifA <-> hostB rdma_ifB", from the topology), then each LINE
# given (e.g. "tbrdma mesh: mac-b -/- mac-d: no cable"), sorted.
mesh_want()
{
    {
        cables | while read -r _ ha ia hb ib; do echo "tbrdma mesh: $ha rdma_$ia <-> $hb rdma_$ib"; done
        for line in "$@"; do echo "$line"; done
    } | sort
}

# check_mesh_by_rank OUTPUT NP [LINE...]: OUTPUT is from mpirun --tag-output; stops the test
# unless each of the NP ranks printed exactly the lines of mesh_want (every cable named by its
# devices, each once, nothing else): a rank that printed nothing, or another mesh, fails.
check_mesh_by_rank()
{
    local out=$1 np=$2 want got r
    shift 2
    want=$(mesh_want "$@")
    for ((r = 0; r < np; r++)); do
        got=$(echo "$out" | sed -n "s/^\[[0-9]*,$r\]<std[a-z]*>:\(tbrdma mesh: .*\)$/\1/p" | sort)
        [ "$got" = "$want" ] || fatal "rank $r printed the mesh '${got//$'\n'/; }', expected '${want//$'\n'/; }'"
        pass "rank $r printed the mesh: $(echo "$want" | grep -c '<->') pairs, each to its devices"
    done
}

# info_expect HOST WANT [WHY]: tbrdma-info --parsable on HOST, shown and kept in $out; stops the
# test unless it exits WANT (WHY, if given, says what that exit code means).
info_expect()
{
    local host=$1 want=$2 rc
    out=$(info_on "$host" --parsable)
    rc=$?
    echo "$out"
    [ "$rc" -eq "$want" ] || fatal "tbrdma-info on $host: exit $rc, expected $want${3:+ ($3)}"
}

# mpirun_hello NP [MPIRUN-ARGS...]: the MPI hello program on NP simulated Macs (tb_mpirun),
# output shown and kept in $out; stops the test unless mpirun exits 0 and every rank reports OK.
mpirun_hello()
{
    local np=$1 hello rc
    shift
    hello=$(hello_bin) || exit 1
    out=$(tb_mpirun "$np" "$@" -- "$hello" 2>&1)
    rc=$?
    echo "$out"
    [ "$rc" -eq 0 ] || fatal "mpirun on $np Macs${*:+ with $*}: exit $rc"
    check_hello "$out" "$np"
}
