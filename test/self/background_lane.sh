#!/usr/bin/env bash
# background_lane: run-tests.sh runs the ompi-5.0 chroot and builds in the background and joins
# them before ompi-4.1; their verdicts must count as if they had run in the foreground. Run with
# `--only ompi-5.0` and CI=true where the chroot cannot be made (a chroot directory of its own,
# a Debian mirror that refuses connections), its logs in a temporary folder: all three
# background tests fail, and so does run-all, which needs them. The run must be red, its last
# line must count the four, the summary must name the background ones, and their verdicts must
# come under the background stage's heading, before run-all's.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
self_init background_lane

CI=true TBRDMA_LOGS=$tmp/logs TBRDMA_OMPI5_CHROOT=$tmp/no-chroot \
    TBRDMA_DEBIAN_MIRROR=http://127.0.0.1:9/debian "$top/run-tests.sh" --full --only ompi-5.0 \
    >"$tmp/out" 2>&1 </dev/null
rc=$?
sed 's/^/  | /' "$tmp/out"
expect "exit status" 1 "$rc"
expect "last line" "tests: 0 passed, 4 failed, 0 skipped" "$(tail -n 1 "$tmp/out")"
for t in make-chroot build source-tree; do
    check_grep "the summary names ompi-5.0/$t" "$tmp/out" "^  failed: ompi-5.0/$t( |$)"
done
order=$(grep -o -E '^== ompi-5.0: build in a Debian 13 chroot[^(]* \(in the background|FAIL  ompi-5.0/(make-chroot|source-tree|run-all)' \
    "$tmp/out" | sed -e 's/^== .*/heading/' -e 's|^FAIL  ompi-5.0/||' | xargs)
expect "the background heading, then make-chroot, source-tree and run-all, in that order" \
    "heading make-chroot source-tree run-all" "$order"
finish
