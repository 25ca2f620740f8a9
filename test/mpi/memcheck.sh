#!/usr/bin/env bash
# memcheck.sh [4.1|5.0]: tbrdma under valgrind's memcheck on simulated Macs: a 2-rank ping-pong
# (0 B to 1 MiB, every frame boundary, between mac-a and mac-b joined by two cables: its large
# messages are striped) and the collectives program on 4 ranks (its large messages between
# Macs joined by one cable go zero-copy), every rank under valgrind, over tbrdma alone. Each
# program must pass its own checks and every rank's valgrind log must report no error at all:
# tbrdma's code, the simulator's and Open MPI's, but for Open MPI's own noise: in its
# registration cache's address tree, met since zero-copy registers user memory through it
# (valgrind-rcache.supp says why it is harmless), and on 5.0 one PMIx report per rank
# (valgrind-ompi5.supp). The peer timeout is raised: valgrind slows ranks down about 50 times.
set -uo pipefail
MT_VARIANT="valgrind"
# zero-copy from 256 KiB on: the default switch point is above the largest message here
ZC_ARGS=(--mca btl_tbrdma_zcopy_min 262144)
. "$(dirname "$0")/lib.sh"
mt_flavour "${1:-4.1}"
mt_require
supp=()
if [ 5.0 = "$MT_FLAVOUR" ]; then
    supp=(--suppressions="$MT_DIR/valgrind-ompi5.supp")
    "$MT_REPO/test/ompi5/in-chroot.sh" valgrind --version >/dev/null 2>&1 \
        || fatal "valgrind is not installed in the Open MPI 5.0 chroot (test/ompi5/make-chroot.sh installs it)"
else
    command -v valgrind >/dev/null || fatal "valgrind is not installed (test/install-deps.sh installs it)"
fi
mt_build
mt_cluster p2p --topology double:a-b

# vg_run NAME NP PROGRAM [ARGS...]: PROGRAM under memcheck over tbrdma; checks the logs.
vg_run()
{
    local name=$1 np=$2 logs=$TBSIM_DIR/vg-$1 n errs
    shift 2
    mkdir -p "$logs"
    MT_WRAP=(valgrind --error-limit=no --num-callers=40 --track-origins=yes "${supp[@]}"
        --suppressions="$MT_DIR/valgrind-rcache.supp" --log-file="$logs/%p.log")
    mt_run "$name" "$np" 1 --mca btl_tbrdma_peer_timeout_ms 120000 "${ZC_ARGS[@]}" -- "$@"
    MT_WRAP=()
    n=$(grep -l "ERROR SUMMARY" "$logs"/*.log 2>/dev/null | wc -l)
    errs=$(grep -h "ERROR SUMMARY" "$logs"/*.log 2>/dev/null | awk '{s += $4} END {print s + 0}')
    check "$name: $n of $np ranks ran under memcheck, $errs errors" test "$n" -eq "$np" -a "$errs" -eq 0 \
        || grep -h -A12 -E "^==[0-9]+== (Invalid|Conditional|Use of|Syscall|Mismatched|Source and)" \
            "$logs"/*.log | head -60 | sed 's/^/    | /'
}

vg_run pingpong 2 tb_pingpong 1048576
check "pingpong: striped over both cables of mac-a and mac-b ($(mt_stat "on striped cables") frames)" \
    test "$(mt_stat "on striped cables")" -gt 0
vg_run coll 4 tb_coll
mt_nothing_held "after the memcheck runs"
finish
