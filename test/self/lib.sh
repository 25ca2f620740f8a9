# shellcheck shell=bash
# lib.sh: what the tests of test/self share; sourced, not a test (run_dir skips lib.sh).
# self_init NAME: the verdict helpers (test/lib/check.sh) named NAME, a skip unless root (these
# tests run ./run-tests.sh, which installs and builds), top (the checkout) and tmp (a temporary
# folder, removed on exit).

# shellcheck source=../lib/check.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/check.sh"

# shellcheck disable=SC2034 # CHECK_NAME is finish's, top and tmp the tests'
self_init()
{
    CHECK_NAME=$1
    top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    [ "$(id -u)" = 0 ] || skip "$1 needs root (./run-tests.sh installs and builds)"
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/tbrdma-$1.XXXXXX") || fatal "mktemp -d failed"
    trap 'rm -rf "$tmp"' EXIT
}
