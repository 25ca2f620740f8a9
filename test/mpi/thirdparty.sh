#!/usr/bin/env bash
# thirdparty.sh FLAVOUR: unmodified third-party MPI codes from Debian's packages over tbrdma on
# 4 simulated Macs (pml ob1, btl self,tbrdma), each judged by its own checks:
#   NetPIPE (netpipe-openmpi, NPopenmpi -i): integrity mode between mac-a and mac-b, every size
#           up to 4 MiB with NetPIPE's +-3 B perturbations: "Integrity check passed" at every
#           size, never "failed".
#   HPCC (hpcc): the HPC Challenge suite on a 2 x 2 grid, N = 1000 (test/mpi/data/hpccinf.txt):
#           HPL's residual check passed and none failed, STREAM validated, RandomAccess without
#           errors, the FFTs' and PTRANS's checks passed, and the summary says Success=1.
# The simulator's counters prove tbrdma carried both, and nothing is left held.
set -uo pipefail
MT_VARIANT="NetPIPE, HPCC"
. "$(dirname "$0")/lib.sh"
mt_flavour "${1:?usage: thirdparty.sh 4.1|5.0}"
mt_require
mt_cluster p2p

# The programs' working directory: inside the cluster's state, which the 5.0 chroot sees too.
work=$TBSIM_DIR/work
mkdir -p "$work"

# tp_run NAME NP PROGRAM [ARGS...]: PROGRAM over tbrdma in $work, output in $MT_OUT.
tp_run()
{
    local name=$1 np=$2 t0=$SECONDS
    shift 2
    MT_OUT=$TC_TMP/$name.out
    (cd "$work" && mt_launch "$np" 1 --wdir "$work" --map-by node --mca pml ob1 --mca btl self,tbrdma \
        --mca opal_mca_base_component_path "SYS_DEFAULT:$MT_PLUGIN" \
        --mca btl_tbrdma_verbs_lib "$MT_SIMLIB" --mca btl_tbrdma_stats 1 "$@") >"$MT_OUT" 2>&1
    check "$name: mpirun exit status 0 ($((SECONDS - t0)) s)" test $? -eq 0 || tail -20 "$MT_OUT" | sed 's/^/    | /'
    mt_frames_back "$name" "$np" && pass "$name: tbrdma ran in all $np ranks and got every frame back"
}

mt_counters "$TC_TMP/before"
tp_run netpipe 2 NPopenmpi -i -n 5 -u 4194304 -o "$work/np.out"
ok=$(grep -c "Integrity check passed" "$MT_OUT")
top=$(sed -n 's/^ *[0-9]*: *\([0-9]*\) bytes .*Integrity check passed/\1/p' "$MT_OUT" | sort -n | tail -1)
check "netpipe: integrity passed at $ok sizes, up to ${top:-0} B (at least 35, up to 3 MiB)" \
    test "$ok" -ge 35 -a "${top:-0}" -ge 3145728
check_nogrep "netpipe: no size failed its integrity check" "$MT_OUT" "Integrity check failed"

cp "$MT_DIR/data/hpccinf.txt" "$work/"
tp_run hpcc 4 hpcc
out=$work/hpccoutf.txt
if [ -f "$out" ]; then
    check_grep "hpcc: HPL passed its residual check" "$out" "^\|\|Ax-b\|\|.* PASSED"
    check_grep "hpcc: no HPL run failed its residual check" "$out" "^ +0 tests completed and failed residual checks"
    check_nogrep "hpcc: no check FAILED" "$out" "FAILED"
    check_grep "hpcc: STREAM validated" "$out" "^Solution Validates"
    expect "hpcc: RandomAccess errors" "MPIRandomAccess_Errors=0" "$(grep '^MPIRandomAccess_Errors=' "$out")"
    check_grep "hpcc: PTRANS passed" "$out" "^WALL .* PASSED"
    expect "hpcc: the summary's verdict" "Success=1" "$(grep '^Success=' "$out")"
else
    fail "hpcc: no hpccoutf.txt was written"
fi
mt_counters "$TC_TMP/after"
sed 's/^/    /' "$TC_TMP/after"
mt_counters_moved "netpipe and hpcc" "$TC_TMP/before" "$TC_TMP/after" 1
mt_nothing_held "after netpipe and hpcc"
finish
