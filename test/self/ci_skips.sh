#!/usr/bin/env bash
# ci_skips: a test that cannot run is never a pass. ./run-tests.sh is run on one stage at a time
# (its logs in a temporary folder, so this run's logs stay) where that stage cannot run:
#   - no namespaces (an `unshare` that fails, first in PATH): every sim test skips;
#   - the guest kernel of the VM tier cannot be built (a kernel package that does not exist);
#   - agree with a VM tier log an earlier run left (and no vm stage in this run), which it
#     used to read and pass on;
#   - the Open MPI stages' run-all.sh with one of its tests skipped (version-guard without the
#     other flavour's build): run from a copy next to stand-ins of its tests, it must report a
#     skip naming the test and its reason (it used to exit 0, a pass);
#   - the VM tier with one guest test skipped, run from a copy of test/vm whose tbvm is a
#     stand-in (boots that succeed, guest results written as given): a skip naming the test
#     (it used to pass locally).
# Locally each such run succeeds but lists the skipped tests and says so; with CI=true it is red
# and names why the stage could not run.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
self_init ci_skips

# Usage: inner NAME CI-VALUE RUN-TESTS-ARGS... : runs ./run-tests.sh into $tmp/NAME.out; sets RC.
inner()
{
    local name=$1 ci=$2
    shift 2
    CI=$ci TBRDMA_LOGS=$tmp/logs "$top/run-tests.sh" "$@" >"$tmp/$name.out" 2>&1 </dev/null
    RC=$?
    sed "s/^/  $name| /" "$tmp/$name.out" | grep -v '| install-deps\|| == build\|| *built '
}

last_line()
{
    tail -n 1 "$tmp/$1.out"
}

# Usage: expect_skipped NAME N : a local run that could not run N tests: exit 0, N skipped.
expect_skipped()
{
    expect "$1, local: exit status" 0 "$RC"
    expect "$1, local: last line" "tests: 0 passed, 0 failed, $2 skipped" "$(last_line "$1")"
    check_grep "$1, local: the run says the skips are not a pass" "$tmp/$1.out" \
        "^  $2 test\(s\) could not run here: not a pass"
}

# Usage: expect_red NAME N WHY : a CI=true run: exit 1, N failed, each naming WHY.
expect_red()
{
    expect "$1, CI=true: exit status" 1 "$RC"
    expect "$1, CI=true: last line" "tests: 0 passed, $2 failed, 0 skipped" "$(last_line "$1")"
    expect "$1, CI=true: every failure says why it could not run" "$2" \
        "$(grep -c "^  failed: .*(could not run, CI=true: .*$3" "$tmp/$1.out")"
}

mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "unshare: cannot unshare: stand-in of ci_skips.sh" >&2\nexit 1\n' \
    >"$tmp/bin/unshare"
chmod +x "$tmp/bin/unshare"
nsim=0
for t in "$top"/test/sim/tests/*.sh; do
    [[ "$t" == *lib.sh ]] || nsim=$((nsim + 1))
done
PATH=$tmp/bin:$PATH inner sim-no-ns "" --only sim
expect_skipped sim-no-ns "$nsim"
PATH=$tmp/bin:$PATH inner sim-no-ns-ci true --only sim
expect_red sim-no-ns-ci "$nsim" "namespaces are not available"

TBVM_KERNEL_PKG=linux-image-0.0.0-0-none-amd64 inner vm-no-kernel true --only vm
expect_red vm-no-kernel 1 "guest kernel build failed"

# A VM tier log as an earlier run would leave it, with every line agree reads.
mkdir -p "$tmp/logs/vm"
printf '%s\n' "vm tier: passed (5 passed, 0 skipped) in 100.0 s" "vm: no-ipv4 diag=no-ipv4" \
    "vm: rtr-without-ipv4 case=one-end side=server errno=22" \
    "vm: rtr-without-ipv4 case=one-end side=client errno=61" >"$tmp/logs/vm/run-tier.log"
inner agree-stale "" --only agree
expect_skipped agree-stale 1
check_grep "agree-stale, local: the VM tier did not run in this run" "$tmp/agree-stale.out" \
    'SKIP +agree/no_ipv4_rtr .*the VM tier did not run in this run'
inner agree-stale-ci true --only agree
expect_red agree-stale-ci 1 "the VM tier did not run in this run"

# run-all.sh next to stand-ins of its four tests, the last of which cannot run.
mkdir -p "$tmp/ompi"
cp "$top/test/integration/ompi/run-all.sh" "$tmp/ompi/"
for t in ompi-info mpirun component-path; do
    printf '#!/bin/sh\necho "ok: stand-in %s"\n' "$t" >"$tmp/ompi/$t.sh"
done
printf '#!/bin/sh\necho "SKIP: the 5.0 build does not exist (stand-in)"\nexit 77\n' \
    >"$tmp/ompi/version-guard.sh"
chmod +x "$tmp/ompi/"*.sh
"$tmp/ompi/run-all.sh" 4.1 >"$tmp/run-all.out" 2>&1
expect "run-all with a test skipped: exit status 77 (a skip, not a pass)" 77 "$?"
expect "run-all with a test skipped: its last line names the test and its own reason" \
    "ompi integration (4.1): 3 passed, 0 failed, 1 skipped (not a pass: skipped version-guard: the 5.0 build does not exist (stand-in))" \
    "$(tail -n 1 "$tmp/run-all.out")"

# The VM tier from a copy of test/vm with a stand-in tbvm: discovery passes, bridged skips.
mkdir -p "$tmp/vmrepo/test"
cp -r "$top/test/vm" "$tmp/vmrepo/test/"
cat >"$tmp/vmrepo/test/vm/tbvm" <<'TBVM'
#!/bin/bash
# stand-in of tbvm (ci_skips.sh): build and boots succeed; guest test bridged skips, others pass
[ "$1" = accel ] && echo tcg
[ "$1" = run ] || exit 0
rundir=""
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    [ "$1" = --rundir ] && rundir=$2
    shift
done
[ -n "$rundir" ] || exit 0
shift 2
mkdir -p "$rundir"
for t in "$@"; do
    case "$(basename "$t" .sh)" in
    bridged) echo "result bridged skip 77 0.1" ;;
    *) echo "result $(basename "$t" .sh) pass 0 0.1" ;;
    esac
done >"$rundir/results"
TBVM
chmod +x "$tmp/vmrepo/test/vm/tbvm"
mkdir -p "$tmp/vmbuild"
TBVM_BUILD=$tmp/vmbuild "$tmp/vmrepo/test/vm/run-tier.sh" "$tmp/vmrepo/test/vm/tests/discovery.sh" \
    "$tmp/vmrepo/test/vm/tests/bridged.sh" >"$tmp/tier.out" 2>&1
expect "VM tier with a guest test skipped: exit status 77 (a skip, not a pass)" 77 "$?"
sed 's/^/  vm-partial| /' "$tmp/tier.out"
check_grep "VM tier with a guest test skipped: its last line names the test" "$tmp/tier.out" \
    '^vm tier: skipped \(not a pass: 1 passed, 1 skipped: bridged\) in [0-9.]+ s$'
finish
