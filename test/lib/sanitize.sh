# shellcheck shell=bash
# sanitize.sh: the sanitizer set-up of test/unit/sanitize.sh (san_init) and test/fuzz/fuzz.sh
# (san_init, san_cc), sourced after check.sh. Not a test: run directly, it says so and exits 77.
#
#   san_init NAME   sets SAN_TOP (the repository), SAN_DIR (build/sanitize/NAME, or under
#                   $TBRDMA_BUILD) and SAN_CC (clang); skips (77) when clang or its sanitizer
#                   runtimes (Debian: clang, libclang-rt-14-dev) are missing
#   san_cc OUT SANITIZERS SOURCES... [LIBS...]
#                   compiles SOURCES with plugin/core into OUT with -fsanitize=SANITIZERS, every
#                   report fatal (-fno-sanitize-recover=all)

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    echo "sanitize.sh is sourced by the sanitizer tests; it is not a test itself"
    exit 77
fi

SAN_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Usage: san_init NAME
san_init()
{
    SAN_DIR=${TBRDMA_BUILD:-$SAN_TOP/build}/sanitize/$1
    SAN_CC=${SAN_CC:-clang}
    command -v "$SAN_CC" >/dev/null || skip "$SAN_CC is not installed (Debian: clang)"
    mkdir -p "$SAN_DIR" || fatal "cannot create $SAN_DIR"
    echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return (int) (d && n); }' \
        >"$SAN_DIR/probe.c"
    "$SAN_CC" -fsanitize=fuzzer,address,undefined -o "$SAN_DIR/probe" "$SAN_DIR/probe.c" \
        >"$SAN_DIR/probe.log" 2>&1 ||
        skip "$SAN_CC cannot link the fuzzer and sanitizer runtimes (Debian: libclang-rt-14-dev):" \
            "$(grep -m1 -i 'error' "$SAN_DIR/probe.log")"
}

# Usage: san_cc OUT SANITIZERS SOURCE... [-lLIB...]
san_cc()
{
    local out=$1 sans=$2
    shift 2
    "$SAN_CC" -std=gnu99 -g -O1 -fno-omit-frame-pointer -fsanitize="$sans" \
        -fno-sanitize-recover=all -Wall -Wextra -I"$SAN_TOP/plugin/core" -o "$out" "$@" \
        "$SAN_TOP"/plugin/core/tbrdma_*.c
}
