#!/usr/bin/env bash
# private_checkout: the tests do not depend on where the checkout lives. The working tree is
# copied into a folder that only root can enter (mode 0700, like /root or a `mktemp -d` folder)
# and the tests that run a program as another user are run from that copy: the simulated
# cluster's tests (test/sim/tests/cluster_*.sh: cluster_topologies runs tbcluster as an
# unprivileged user to see it refuse). They must pass there as they pass in a world-readable
# checkout. The copy has no build: tbcluster is a script, and the tests that need tbsimctl
# use a fake one or none.
set -uo pipefail
# shellcheck source=../lib/check.sh
. "$(dirname "$0")/../lib/check.sh"

top=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || skip "private_checkout needs root (the cluster tests do)"
command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"

priv=$(mktemp -d "${TMPDIR:-/tmp}/tbrdma-private.XXXXXX") || fatal "mktemp -d failed"
trap 'rm -rf "$priv"' EXIT
copy=$priv/tbrdma

# Copies the working tree (tracked and untracked files, not ignored ones such as build/).
copy_tree()
{
    mkdir -p "$copy" || return 1
    if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        (cd "$top" && git ls-files -z -co --exclude-standard | tar --null -T - -cf -) |
            tar -C "$copy" -xf -
    else
        (cd "$top" && tar --exclude=./build -cf - .) | tar -C "$copy" -xf -
    fi
}

copy_tree || fatal "cannot copy $top into $copy"
expect "the copy's folder is private to root (mode)" 700 "$(stat -c %a "$priv")"
check_not "an unprivileged user cannot enter it" \
    setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$copy"

for t in "$copy"/test/sim/tests/cluster_*.sh; do
    case "$t" in *lib.sh) continue ;; esac
    name=$(basename "$t" .sh)
    "$t" >"$priv/$name.log" 2>&1
    rc=$?
    sed "s/^/  $name| /" "$priv/$name.log"
    expect "$name passes from a checkout in a private folder" 0 "$rc"
done
finish
