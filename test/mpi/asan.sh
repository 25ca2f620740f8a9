#!/usr/bin/env bash
# asan.sh [4.1|5.0]: tbrdma and the simulator built with AddressSanitizer (a VPATH build of this
# tree: build/asan for Open MPI 4.1 on the host, build/ompi5/asan in the Open MPI 5.0 chroot) run
# the MPI test programs on 4 simulated Macs (tbrdma alone between Macs; mac-a and mac-b joined by
# two cables, so large messages between them are striped): every program passes its own checks
# and no rank reports an AddressSanitizer error (ASan's runtime is preloaded into the ranks only;
# leak detection is off because Open MPI's own allocations are never freed at exit), and none of
# tbrdma's own invariant checks (-DTBRDMA_DEBUG, e.g. a frame released more often than taken,
# which under MPI_THREAD_MULTIPLE hands one buffer to two descriptors) failed; then one rank gets
# SIGTERM mid-traffic: its handler touches no frame, pool or ob1 callback, and nothing stays held.
set -uo pipefail
MT_VARIANT="AddressSanitizer"
. "$(dirname "$0")/lib.sh"
flavour=${1:-4.1}
# -DTBRDMA_DEBUG: tbrdma's own checks of its invariants (a frame released twice, ...) abort too
asan_flags=(CFLAGS="-g -O1 -fsanitize=address -fno-omit-frame-pointer -DTBRDMA_DEBUG" LDFLAGS="-fsanitize=address")

# asan_flags_same DIR: DIR was configured with today's flags (else it is configured again).
asan_flags_same()
{
    [ "$(cat "$1/asan-flags" 2>/dev/null)" = "${asan_flags[*]}" ]
}

# asan_build_41 DIR: the host's configure and make into DIR; prints the runtime's path.
asan_build_41()
{
    local dir=$1
    mkdir -p "$dir"
    if [ ! -f "$dir/Makefile" ] || [ "$MT_REPO/configure" -nt "$dir/config.status" ] \
        || ! asan_flags_same "$dir"; then
        (cd "$dir" && "$MT_REPO/configure" "${asan_flags[@]}") >"$dir/configure.out" 2>&1 \
            || fatal "configure of the AddressSanitizer build failed (see $dir/configure.out)"
        echo "${asan_flags[*]}" >"$dir/asan-flags"
    fi
    make -C "$dir" -j2 >"$dir/make.out" 2>&1 \
        || fatal "the AddressSanitizer build failed (see $dir/make.out)"
    gcc -print-file-name=libasan.so
}

# asan_build_50 DIR: the same in the Open MPI 5.0 chroot (test/ompi5/build.sh); prints the
# chroot's runtime path.
asan_build_50()
{
    local dir=$1 args=()
    if [ ! -f "$dir/config.status" ] || [ "$MT_REPO/configure" -nt "$dir/config.status" ] \
        || ! asan_flags_same "$dir"; then
        args=("${asan_flags[@]}")
    fi
    mkdir -p "$dir"
    TBRDMA_OMPI5_BUILD_DIR=$dir "$MT_REPO/test/ompi5/build.sh" "${args[@]}" >"$dir/build.out" 2>&1 \
        || fatal "the AddressSanitizer build in the Open MPI 5.0 chroot failed (see $dir/build.out)"
    echo "${asan_flags[*]}" >"$dir/asan-flags"
    "$MT_REPO/test/ompi5/in-chroot.sh" gcc -print-file-name=libasan.so
}

case "$flavour" in
4.1) asan_dir=$MT_REPO/build/asan; libasan=$(asan_build_41 "$asan_dir") ;;
5.0) asan_dir=$MT_REPO/build/ompi5/asan; libasan=$(asan_build_50 "$asan_dir") ;;
*) fatal "unknown Open MPI flavour '$flavour' (4.1 or 5.0)" ;;
esac
[ "$(nm -D "$asan_dir/plugin/.libs/mca_btl_tbrdma.so" | grep -c __asan_init)" -gt 0 ] \
    || fatal "the plugin of $asan_dir is not instrumented"
case "$libasan" in
/*.so) ;;
*) fatal "no libasan.so for the $flavour compiler (gcc's libasan package)" ;;
esac
MT_BUILD_DIR=$asan_dir
mt_flavour "$flavour"
mt_require
mt_build
mt_cluster p2p --topology double:a-b
asan=(-x "LD_PRELOAD=$libasan" -x "ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=86")
# Open MPI 5.0's memory patcher rewrites the code of mprotect & co., which under ASan are ASan's
# interceptors: the rank dies of an illegal instruction when tbrdma opens the registration cache.
# So 5.0 runs without the patcher, and tbrdma, seeing no memory hooks, copies large messages
# (zero-copy under ASan is checked on 4.1).
[ 5.0 = "$flavour" ] && asan+=(--mca memory ^patcher --mca btl_tbrdma_verbose 1)
for prog in "tb_pingpong 16777216" tb_coll tb_p2p tb_rma tb_thread "tb_ring 2"; do
    set -- $prog
    mt_run "${1#tb_}" 4 1 "${asan[@]}" -- "$@"
    check_nogrep "${1#tb_}: no AddressSanitizer report" "$MT_OUT" "AddressSanitizer"
    check_nogrep "${1#tb_}: every tbrdma invariant held (TBRDMA_DEBUG)" "$MT_OUT" \
        "tbrdma: internal check failed"
    if [ tb_pingpong = "$1" ]; then
        check "pingpong: striped over both cables of mac-a and mac-b ($(mt_stat "on striped cables") frames)" \
            test "$(mt_stat "on striped cables")" -gt 0
    fi
done
# SIGTERM mid-traffic: the handler releases only verbs objects (TBRDMA_DEBUG checks it returns no
# frame to a pool and runs no ob1 callback, which another thread may be inside), then the rank ends.
if mt_job_start sigterm 4 1 "tbtest ring: running" "${asan[@]}" -- tb_ring 60; then
    sleep 1
    for p in $(pgrep -f "$MT_BIN/tb_ring"); do
        [ "$(ip netns identify "$p" 2>/dev/null)" = "${TC_PREFIX}mac-b" ] && kill -TERM "$p"
    done
    for _ in $(seq 200); do
        kill -0 "$MT_JOB_PID" 2>/dev/null || break
        sleep 0.1
    done
    check_not "sigterm: the job ended within 20 s of the signal" kill -0 "$MT_JOB_PID"
    mt_job_stop
    check_nogrep "sigterm: every tbrdma invariant held in the signal handler" "$MT_OUT" \
        "tbrdma: internal check failed"
    check_nogrep "sigterm: no AddressSanitizer report" "$MT_OUT" "AddressSanitizer"
    sleep 1
fi
mt_nothing_held "after the AddressSanitizer runs"
finish
