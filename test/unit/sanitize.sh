#!/usr/bin/env bash
# sanitize.sh: the unit tests of plugin/core (test/unit/test_*.c, the programs `make check` runs)
# built once more with AddressSanitizer and UndefinedBehaviorSanitizer, every report fatal, and
# run: a read past a buffer, a use after free, a leak or undefined behaviour fails the test
# that triggers it. Built with clang in build/sanitize/unit (the normal build untouched); 77 when
# clang or its sanitizer runtimes are missing.
set -uo pipefail
# shellcheck source=../lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
# shellcheck source=../lib/sanitize.sh
. "$(dirname "$0")/../lib/sanitize.sh"

san_init unit
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for src in "$SAN_TOP"/test/unit/test_*.c; do
    name=$(basename "$src" .c)
    if ! san_cc "$SAN_DIR/$name" address,undefined "$src" "$SAN_TOP/test/unit/ut_run.c" \
        -lcunit >"$SAN_DIR/$name.build.log" 2>&1; then
        sed "s/^/  $name build| /" "$SAN_DIR/$name.build.log"
        fail "$name builds with ASan and UBSan"
        continue
    fi
    "$SAN_DIR/$name" >"$SAN_DIR/$name.log" 2>&1
    rc=$?
    grep -E 'Run Summary|asserts|tests  |ERROR|runtime error|SUMMARY' "$SAN_DIR/$name.log" |
        sed "s/^/  $name| /"
    expect "$name passes under ASan and UBSan (exit status)" 0 "$rc"
    check_nogrep "$name: no sanitizer report" "$SAN_DIR/$name.log" \
        'ERROR: (Address|Leak)Sanitizer|runtime error:'
done
finish
