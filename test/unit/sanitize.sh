#!/usr/bin/env bash
# sanitize.sh: the unit tests (the programs `make check` runs in test/unit) built once more with
# AddressSanitizer and UndefinedBehaviorSanitizer, every report fatal, and run: a read past a
# buffer, a use after free, a leak or undefined behaviour fails the test that triggers it.
# The build is the project's own (configure and test/unit/Makefile.am, so every test program
# with its own flags and libraries), with clang and the sanitizers, in build/sanitize/unit/tree
# (the normal build untouched). 77 when clang or its sanitizer runtimes are missing.
set -uo pipefail
# shellcheck source=../lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
# shellcheck source=../lib/sanitize.sh
. "$(dirname "$0")/../lib/sanitize.sh"

san_init unit
tree=$SAN_DIR/tree
sans="-fsanitize=address,undefined -fno-sanitize-recover=all"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# Usage: step NAME CMD... : runs a build step into $SAN_DIR/NAME.log; its last lines on failure.
step()
{
    local name=$1
    shift
    if ! "$@" >"$SAN_DIR/$name.log" 2>&1; then
        tail -n 25 "$SAN_DIR/$name.log" | sed "s/^/  $name| /"
        fatal "$name failed (log $SAN_DIR/$name.log)"
    fi
}

mkdir -p "$tree" || fatal "cannot create $tree"
cd "$tree" || fatal "cannot enter $tree"
if [ ! -f config.status ] || [ "$SAN_TOP/configure" -nt config.status ]; then
    step configure "$SAN_TOP/configure" CC="$SAN_CC" \
        CFLAGS="-g -O1 -fno-omit-frame-pointer $sans" LDFLAGS="$sans"
fi
# What test/unit links (plugin/core's libraries, plugin's libtbrdma_sys, tools'
# libtbrdma_doctor), then the tests.
step build-libs sh -c 'make -C plugin/core -j2 && make -C plugin -j2 libtbrdma_sys.la \
    && make -C tools -j2 libtbrdma_doctor.la'
rm -f test/unit/*.trs test/unit/test_*.log
make -C test/unit -j2 check >"$SAN_DIR/check.log" 2>&1
check_rc=$?

n=0
for trs in test/unit/*.trs; do
    [ -f "$trs" ] || continue
    name=$(basename "$trs" .trs)
    log=${trs%.trs}.log
    n=$((n + 1))
    grep -E 'Run Summary|asserts|tests  |ERROR|runtime error|SUMMARY' "$log" | sed "s/^/  $name| /"
    expect "$name passes under ASan and UBSan" PASS "$(sed -n 's/^:test-result: //p' "$trs")"
    check_nogrep "$name: no sanitizer report" "$log" \
        'ERROR: (Address|Leak)Sanitizer|runtime error:'
done
if [ "$n" = 0 ]; then
    tail -n 25 "$SAN_DIR/check.log" | sed 's/^/  check| /'
fi
check "make check ran the unit tests under the sanitizers ($n programs)" test "$n" -gt 0
expect "make check under the sanitizers (exit status)" 0 "$check_rc"
finish
