#!/usr/bin/env bash
# fuzz.sh TARGET [SECONDS]: builds the libFuzzer target test/fuzz/TARGET.c with AddressSanitizer
# and UndefinedBehaviorSanitizer (clang, in build/sanitize/TARGET) and runs it for SECONDS
# (default 20) from its corpus: the committed seeds in test/fuzz/seeds/TARGET plus what earlier
# runs of this build kept. A crash, a sanitizer report, a leak or a timeout of one input fails the
# test and keeps the input (crash-* in build/sanitize/TARGET): turn it into a unit test before the
# fix. Only a failure decides the verdict, never the number of executions. 77 when clang or its
# fuzzer runtime is missing.
set -uo pipefail
# shellcheck source=../lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
# shellcheck source=../lib/sanitize.sh
. "$(dirname "$0")/../lib/sanitize.sh"

target=${1:?usage: fuzz.sh TARGET [SECONDS]}
secs=${2:-20}
# shellcheck disable=SC2034 # the name check.sh's finish reports
CHECK_NAME=$target
san_init "$target"
src=$SAN_TOP/test/fuzz/$target.c
[ -f "$src" ] || fatal "no fuzz target $src"
corpus=$SAN_DIR/corpus
mkdir -p "$corpus"
if ! san_cc "$SAN_DIR/$target" fuzzer,address,undefined "$src" >"$SAN_DIR/build.log" 2>&1; then
    sed 's/^/  build| /' "$SAN_DIR/build.log"
    fatal "$target does not build with libFuzzer, ASan and UBSan"
fi
seeds=()
[ -d "$SAN_TOP/test/fuzz/seeds/$target" ] && seeds=("$SAN_TOP/test/fuzz/seeds/$target")
echo "== $target for $secs s (corpus $corpus ${seeds[*]})"
(cd "$SAN_DIR" && ASAN_OPTIONS=detect_leaks=1 "./$target" -max_total_time="$secs" \
    -max_len=4096 -timeout=10 -print_final_stats=1 "$corpus" "${seeds[@]}") >"$SAN_DIR/run.log" 2>&1
rc=$?
grep -E '^#[0-9]+ +(INITED|DONE)|^Done |^stat::number_of_executed_units|ERROR|runtime error|SUMMARY|^artifact_prefix|Test unit written' \
    "$SAN_DIR/run.log" | sed 's/^/  | /'
expect "$target ran $secs s without a crash, a sanitizer report or a leak (exit status)" 0 "$rc"
check_grep "$target ran inputs to the end" "$SAN_DIR/run.log" '^Done [0-9]+ runs in '
check_nogrep "$target: no sanitizer report" "$SAN_DIR/run.log" \
    'ERROR: (Address|Leak)Sanitizer|ERROR: libFuzzer|runtime error:'
finish
