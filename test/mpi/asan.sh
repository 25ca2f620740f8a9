#!/usr/bin/env bash
# asan.sh: tbrdma and the simulator built with AddressSanitizer (build/asan, a VPATH build of
# this tree) run the MPI test programs on 4 simulated Macs (Open MPI 4.1, tbrdma alone between
# Macs; mac-a and mac-b joined by two cables, so large messages between them are striped): every
# program passes its own checks and no rank reports an AddressSanitizer error
# (ASan's runtime is preloaded into the ranks only; leak detection is off because Open MPI's
# own allocations are never freed at exit).
set -uo pipefail
MT_VARIANT="AddressSanitizer"
. "$(dirname "$0")/lib.sh"
asan_dir=$MT_REPO/build/asan
libasan=$(gcc -print-file-name=libasan.so)
[ -f "$libasan" ] || fatal "no libasan.so for gcc (package libasan8)"
mkdir -p "$asan_dir"
if [ ! -f "$asan_dir/Makefile" ] || [ "$MT_REPO/configure" -nt "$asan_dir/config.status" ]; then
    (cd "$asan_dir" && "$MT_REPO/configure" CFLAGS="-g -O1 -fsanitize=address -fno-omit-frame-pointer" \
        LDFLAGS="-fsanitize=address") >"$asan_dir/configure.out" 2>&1 \
        || fatal "configure of the AddressSanitizer build failed (see $asan_dir/configure.out)"
fi
make -C "$asan_dir" -j2 >"$asan_dir/make.out" 2>&1 || fatal "the AddressSanitizer build failed (see $asan_dir/make.out)"
[ "$(nm -D "$asan_dir/plugin/.libs/mca_btl_tbrdma.so" | grep -c __asan_init)" -gt 0 ] \
    || fatal "the plugin of build/asan is not instrumented"
MT_BUILD_DIR=$asan_dir
mt_flavour 4.1
mt_require
mt_build
mt_cluster p2p --topology double:a-b
asan=(-x "LD_PRELOAD=$libasan" -x "ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=86")
for prog in "tb_pingpong 16777216" tb_coll tb_p2p tb_rma tb_thread "tb_ring 2"; do
    set -- $prog
    mt_run "${1#tb_}" 4 1 "${asan[@]}" -- "$@"
    check_nogrep "${1#tb_}: no AddressSanitizer report" "$MT_OUT" "AddressSanitizer"
    if [ tb_pingpong = "$1" ]; then
        check "pingpong: striped over both cables of mac-a and mac-b ($(mt_stat "on striped cables") frames)" \
            test "$(mt_stat "on striped cables")" -gt 0
    fi
done
mt_nothing_held "after the AddressSanitizer runs"
finish
