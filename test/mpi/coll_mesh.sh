#!/usr/bin/env bash
# coll_mesh.sh FLAVOUR: coll/tbrdma, tbrdma's coll component (MPI_Allreduce, MPI_Allgather,
# MPI_Reduce_scatter(_block) over the mesh: docs/collectives.md, "The coll component"), on 4
# simulated Macs (one rank each, btl self,tbrdma), running tb_meshcoll (every result checked):
#   - on by default: it takes the communicators of 4, 3 and 2 ranks; a pair's all-reduce goes
#     by its own one-step exchange up to coll_tbrdma_allreduce_pair_max (1 MiB), then by
#     reduce-scatter + all-gather; with its priority 0 it takes none
#   - 2 ranks per Mac (8 ranks, btl self,vader,tbrdma): it leaves every communicator to Open
#     MPI's own components (coll/han in 5.0 builds communicators of one rank per Mac of its
#     own), saying why
#   - turned on as users do (mpirun --tune with the installed coll-tuned.conf): it takes the
#     communicators of 4, 3 and 2 ranks, in them each collective went its way above its size
#     limit and to the component below under it
#   - every size taken (the limits at 1 byte, the one-step all-reduce on up to 2 KiB): blocks of
#     0 items, and what it cannot cut (a non-commutative op, a datatype with gaps) deferred
#   - every cable carried traffic: tbrdma, not another transport, moved the data
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mt_flavour "$1"
mt_require
mt_build tb_meshcoll
[ -e "$MT_BUILD/plugin/coll/.libs/mca_coll_tbrdma.so" ] \
    || fatal "missing $MT_BUILD/plugin/coll/.libs/mca_coll_tbrdma.so (build first)"

# The installed coll-tuned.conf (make install into a DESTDIR the 5.0 chroot sees), its rules'
# path moved under the DESTDIR.
dest=$MT_BUILD/share/destdir-coll-mesh
make=(make)
[ 5.0 = "$MT_FLAVOUR" ] && make=("$MT_REPO/test/ompi5/in-chroot.sh" make)
rm -rf "$dest"
"${make[@]}" -s -C "$MT_BUILD/share" install DESTDIR="$dest" >&2 || fatal "make install failed"
conf=$(find "$dest" -name coll-tuned.conf)
[ -n "$conf" ] || fatal "make install put no coll-tuned.conf under $dest"
check "coll-tuned.conf turns coll/tbrdma on" grep -qx 'coll_tbrdma_priority=90' "$conf"
sed "s|^coll_tuned_dynamic_rules_filename=|&$dest|" "$conf" >"$dest/tune.conf"

# lines PATTERN: how many lines of the last run's output match.
lines()
{
    grep -c -- "$1" "$MT_OUT"
}

mt_cluster p2p
verbose=(--mca coll_tbrdma_verbose 10)
mt_run default 4 1 "${verbose[@]}" -- tb_meshcoll
for np in 4 3 2; do
    check "default: it took the communicators of $np ranks ($(lines "($np processes): MPI_Allreduce, MPI_Allgather") of $np)" \
        test "$(lines "($np processes): MPI_Allreduce, MPI_Allgather")" -eq "$np"
done
check "default: a pair's 8 B went by its one-step exchange" \
    grep -q "allreduce of 8 bytes on 2 processes: one-step exchange of a pair" "$MT_OUT"
check "default: a pair's 65,537 floats went by its one-step exchange" \
    grep -q "allreduce of 262148 bytes on 2 processes: one-step exchange of a pair" "$MT_OUT"
check "default: a pair's MPI_MAX (not swappable) went by the one-step exchange" \
    grep -q "allreduce of [0-9]* bytes on 2 processes: one-step exchange$" "$MT_OUT"
check "default: a pair's 2 MiB (above coll_tbrdma_allreduce_pair_max) went by reduce-scatter + all-gather" \
    grep -q "allreduce of 2097176 bytes on 2 processes: reduce-scatter + all-gather" "$MT_OUT"
mt_run off 4 1 "${verbose[@]}" --mca coll_tbrdma_priority 0 -- tb_meshcoll
check "priority 0: coll/tbrdma took no communicator and no call ($(lines 'coll tbrdma') lines)" \
    test "$(lines 'coll tbrdma')" -eq 0

# Open MPI 5.0.7's coll/han gets tb_meshcoll's all-gather into a receive type with gaps wrong
# at 2 ranks per Mac, whatever coll/tbrdma does (seen 2026-12-06 with coll/tbrdma taking no
# communicator: wrong with han, right with coll ^han): han is left out here, and the finding
# is written down in docs/collectives.md.
nohan=()
[ 5.0 = "$MT_FLAVOUR" ] && nohan=(--mca coll ^han)
mt_run two-per-mac 8 2 "${verbose[@]}" "${nohan[@]}" -- tb_meshcoll
for np in 8 7 6 5 4 3 2; do
    check "2 per Mac: the communicator of $np ranks left to Open MPI, saying why" \
        test "$(lines "($np processes): not taken, the job has more than one process on a Mac")" -ge "$np"
done
check "2 per Mac: coll/tbrdma took no communicator" \
    test "$(lines "processes): MPI_Allreduce, MPI_Allgather")" -eq 0

mt_counters "$TC_TMP/before"
mt_run on 4 1 "${verbose[@]}" --tune "$dest/tune.conf" -- tb_meshcoll
mt_counters "$TC_TMP/after"
mt_counters_moved "on" "$TC_TMP/before" "$TC_TMP/after" 100000
for np in 4 3 2; do
    check "on: it took the communicators of $np ranks ($(lines "($np processes): MPI_Allreduce, MPI_Allgather") of $np)" \
        test "$(lines "($np processes): MPI_Allreduce, MPI_Allgather")" -eq "$np"
done
for way in "reduce-scatter + all-gather" "deferred"; do
    check "on: '$way' ran ($(lines ": $way\$") calls over the ranks)" test "$(lines ": $way\$")" -gt 0
done
check "on: 8 KB (below coll_tbrdma_allreduce_rsag_min) went to the component below" \
    grep -q "allreduce of 8000 bytes on 4 processes: deferred" "$MT_OUT"
check "on: 65,537 floats on 3 ranks (uneven blocks) went by reduce-scatter + all-gather" \
    grep -q "allreduce of 262148 bytes on 3 processes: reduce-scatter + all-gather" "$MT_OUT"
check "on: 2 MiB went by reduce-scatter + all-gather" \
    grep -q "allreduce of 2097176 bytes on 4 processes: reduce-scatter + all-gather" "$MT_OUT"
check "on: 8 B went to the component below (the one-step exchange is off by default)" \
    grep -q "allreduce of 8 bytes on 3 processes: deferred" "$MT_OUT"
check "on: allgather of 40,000 ints a rank went in one step" \
    grep -q "allgather of 640000 bytes on 4 processes: one-step all-gather" "$MT_OUT"
check "on: allgather of 1,000 ints a rank (16,000 B gathered) went to the component below" \
    grep -q "allgather of 16000 bytes on 4 processes: deferred" "$MT_OUT"
check "on: reduce_scatter_block of 1,000 ints a rank went in one step" \
    grep -q "reduce_scatter_block of 16000 bytes on 4 processes: one-step reduce-scatter" "$MT_OUT"
check "on: reduce_scatter_block of 255 ints a rank went to the component below" \
    grep -q "reduce_scatter_block of 4080 bytes on 4 processes: deferred" "$MT_OUT"
check "on: reduce_scatter with uneven counts went in one step on 3 ranks" \
    grep -q "reduce_scatter of [0-9]* bytes on 3 processes: one-step reduce-scatter" "$MT_OUT"

# Every size: the one-step exchange up to 2 KiB (coll_tbrdma_allreduce_onestep_max), the
# other windows from 1 byte.
mt_run everything 4 1 "${verbose[@]}" --tune "$dest/tune.conf" \
    --mca coll_tbrdma_allreduce_onestep_max 2048 --mca coll_tbrdma_allreduce_rsag_min 1 \
    --mca coll_tbrdma_allgather_min 1 --mca coll_tbrdma_reduce_scatter_min 1 -- tb_meshcoll
check "everything: 8 B went by the one-step exchange" \
    grep -q "allreduce of 8 bytes on 3 processes: one-step exchange" "$MT_OUT"
check "everything: 2,040 B (255 doubles) went by the one-step exchange" \
    grep -q "allreduce of 2040 bytes on 4 processes: one-step exchange" "$MT_OUT"
check "everything: 8,000 B (1,000 doubles) went by reduce-scatter + all-gather" \
    grep -q "allreduce of 8000 bytes on 4 processes: reduce-scatter + all-gather" "$MT_OUT"
check "everything: allgather of 1 int a rank went in one step" \
    grep -q "allgather of 16 bytes on 4 processes: one-step all-gather" "$MT_OUT"
check "everything: reduce_scatter_block of 1 int a rank went in one step" \
    grep -q "reduce_scatter_block of 16 bytes on 4 processes: one-step reduce-scatter" "$MT_OUT"
check "everything: reduce_scatter_block with a non-commutative op went to the component below" \
    grep -q "reduce_scatter_block of 128 bytes on 4 processes: deferred" "$MT_OUT"
check "everything: minloc of 40,000 MPI_DOUBLE_INT pairs (gaps) went to the component below" \
    grep -q "allreduce of 480000 bytes on 4 processes: deferred" "$MT_OUT"
mt_nothing_held "after the runs"
finish
