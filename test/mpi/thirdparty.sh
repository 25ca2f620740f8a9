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

mt_counters "$TC_TMP/before"
mt_app netpipe 2 1 "$work" -- NPopenmpi -i -n 5 -u 4194304 -o "$work/np.out"
ok=$(grep -c "Integrity check passed" "$MT_OUT")
top=$(sed -n 's/^ *[0-9]*: *\([0-9]*\) bytes .*Integrity check passed/\1/p' "$MT_OUT" | sort -n | tail -1)
check "netpipe: integrity passed at $ok sizes, up to ${top:-0} B (at least 35, up to 3 MiB)" \
    test "$ok" -ge 35 -a "${top:-0}" -ge 3145728
check_nogrep "netpipe: no size failed its integrity check" "$MT_OUT" "Integrity check failed"

cp "$MT_DIR/data/hpccinf.txt" "$work/"
mt_app hpcc 4 1 "$work" -- hpcc
mt_hpcc_verdicts hpcc "$work/hpccoutf.txt"
mt_counters "$TC_TMP/after"
sed 's/^/    /' "$TC_TMP/after"
mt_counters_moved "netpipe and hpcc" "$TC_TMP/before" "$TC_TMP/after" 1
mt_nothing_held "after netpipe and hpcc"
finish
