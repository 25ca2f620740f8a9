#!/usr/bin/env bash
# versions.sh: every tool answers --version with one line, "NAME (tbrdma) VERSION+src.ID", and all
# of them name the same build: tbrdma-info (which adds the Open MPI it was built for),
# tbrdma-doctor, tbrdma-fieldtest, tbrdma-setup (a shell script: it reports the doctor it uses)
# and tbrdma-probe (a shell script: it reports the tbrdma-info beside it). That token is what tbrdma-doctor compares across the Macs of a cluster.
set -uo pipefail
# shellcheck source=../../lib/check.sh
. "$(dirname "$0")/../../lib/check.sh"
top=$(cd "$(dirname "$0")/../../.." && pwd)
bin=$top/build/tools
[ -x "$bin/tbrdma-info" ] || skip "tools not built ($bin; ./build.sh first)"

info=$("$bin/tbrdma-info" --version)
token=$(echo "$info" | sed -n 's/^tbrdma-info (tbrdma) \([0-9.]*+src\.[0-9a-f]\{8\}\), built for Open MPI .*/\1/p')
check "tbrdma-info --version names the version and the sources' checksum ($info)" test -n "$token"
for t in tbrdma-doctor tbrdma-fieldtest; do
    out=$("$bin/$t" --version 2>&1)
    rc=$?
    check "$t --version exits 0 ($rc)" test "$rc" -eq 0
    expect "$t --version: the same build as tbrdma-info" "$t (tbrdma) $token" "$out"
done
out=$(TBRDMA_DOCTOR=$bin/tbrdma-doctor "$top/tools/tbrdma-setup" --version 2>&1)
expect "tbrdma-setup --version: the doctor's build, under its own name" "tbrdma-setup (tbrdma) $token" "$out"
out=$(TBRDMA_DOCTOR=/nonexistent PATH=/usr/bin:/bin "$top/tools/tbrdma-setup" --version 2>&1)
rc=$?
check "tbrdma-setup --version without a doctor: exit 1, says why ($out)" \
    bash -c '[ "$1" -eq 1 ] && [[ "$2" == *"version unknown"* ]]' _ "$rc" "$out"
# tbrdma-probe (a POSIX sh script) reports the tbrdma-info installed beside it, as the Makefile
# installs both in bin/.
tmpd=$(mktemp -d)
cp "$top/tools/tbrdma-probe" "$bin/tbrdma-info" "$tmpd/"
out=$(PATH=/usr/bin:/bin sh "$tmpd/tbrdma-probe" --version 2>&1)
expect "tbrdma-probe --version: tbrdma-info's build, under its own name" "tbrdma-probe (tbrdma) $token" "$out"
rm -f "$tmpd/tbrdma-info"
out=$(PATH=/usr/bin:/bin sh "$tmpd/tbrdma-probe" --version 2>&1)
rc=$?
rm -rf "$tmpd"
check "tbrdma-probe --version without tbrdma-info: exit 1, says why ($out)" \
    bash -c '[ "$1" -eq 1 ] && [[ "$2" == *"version unknown"* ]]' _ "$rc" "$out"
finish
