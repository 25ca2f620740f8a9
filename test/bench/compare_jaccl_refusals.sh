#!/usr/bin/env bash
# bench/compare-jaccl's refusals on 3 simulated Macs, each seen to fire (exit 1, one line per
# problem, each with its fix) and to go away once the fault is undone (--check-only passes):
#   - MLX missing (on every host, and no mlx.launch here);
#   - a host without RDMA (tbcluster rdma mac-c off: tbrdma-doctor's line);
#   - MLX's hostfile disagreeing with the cables found: two devices of mac-a swapped (both pairs
#     named), then a null for a cabled pair (JACCL needs a device for every pair);
#   - versions that differ between hosts: macOS (a fake sw_vers first in PATH), MLX (the test's
#     stand-in module, test/bench/fake-mlx, with another version on mac-c; then without JACCL
#     on mac-b), Open MPI (mac-c's ompi_info is the 5.0.7 of the Debian 13 chroot: the doctor's
#     line, passed on).
# The fakes exist only in this test: each host gets them through its login profile (what ssh
# runs before a command), mac-a, where compare-jaccl runs, through its environment.
source "$(dirname "$0")/lib.sh"
require_env
cj_flavour 4.1
tools_cluster_up 3 --addressing p2p
hostfile=$TC_TMP/mlx-hostfile.json
cj_hostfile "$hostfile"

run_compare --mpi-only --check-only "$hostfile"
expect_checks_pass "as built (--mpi-only)"
check "the checks list the 3 cables" grep -qE '^  mac-b rdma_en3 <-> mac-c rdma_en3 \(found by link-local\)$' <<<"$out"

# MLX missing: nowhere importable, and no mlx.launch on this Mac.
run_compare --check-only "$hostfile"
expect_refused "MLX missing" '^MLX is not installed for python3 on mac-a, mac-b, mac-c ' \
    '^no mlx.launch here: fix: pip install mlx'

# A host without RDMA.
"$tbc" rdma mac-c off
run_compare --mpi-only --check-only "$hostfile"
expect_refused "RDMA off on mac-c" '^host mac-c: no RDMA device: RDMA is disabled'
expect "RDMA off: one line (the pairs of mac-c without a cable found are its consequence)" 1 \
    "$(sed -n 's/^compare-jaccl: refused, \([0-9]*\) .*/\1/p' <<<"$out")"
"$tbc" rdma mac-c on
run_compare --mpi-only --check-only "$hostfile"
expect_checks_pass "RDMA on again"

# MLX's hostfile against the cables found: mac-a's devices for mac-b and mac-c swapped.
edit()
{
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(d, open(sys.argv[3], "w"))' "$hostfile" "$1" "$2"
}
edit 'r = d["hosts"][0]["rdma"]; r[1], r[2] = r[2], r[1]' "$TC_TMP/swapped.json"
run_compare --mpi-only --check-only "$TC_TMP/swapped.json"
expect_refused "two devices swapped in the hostfile" \
    "^hosts mac-a and mac-b: $TC_TMP/swapped.json names mac-a rdma_en3 <-> mac-b rdma_en2, but tbrdma finds mac-a rdma_en2 <-> mac-b rdma_en2" \
    "^hosts mac-a and mac-c: $TC_TMP/swapped.json names mac-a rdma_en2 <-> mac-c rdma_en2, but tbrdma finds mac-a rdma_en3 <-> mac-c rdma_en2"
expect "two devices swapped: one line per pair, nothing else" "2 2" \
    "$(grep -c '^hosts mac-' <<<"$out") $(sed -n 's/^compare-jaccl: refused, \([0-9]*\) .*/\1/p' <<<"$out")"
edit 'd["hosts"][1]["rdma"][2] = None; d["hosts"][2]["rdma"][1] = None' "$TC_TMP/null.json"
run_compare --mpi-only --check-only "$TC_TMP/null.json"
expect_refused "a null in the rdma matrix for a cabled pair" \
    "^hosts mac-b and mac-c: cabled \\(mac-b rdma_en3 <-> mac-c rdma_en3\\), but the rdma matrix of $TC_TMP/null.json has null for this pair: JACCL needs a device for every pair"

# macOS versions: a sw_vers first in PATH, 26.3 on mac-c, 26.2 elsewhere.
fake=$TC_TMP/fake-bin
mkdir -p "$fake"
printf '#!/bin/sh\n[ "$1" = -productVersion ] && echo "$FAKE_MACOS"\n' >"$fake/sw_vers"
chmod +x "$fake/sw_vers"
for h in mac-b mac-c; do
    profile_add "$h" "export PATH='$fake':\$PATH FAKE_MACOS=26.2"
done
profile_add mac-c "export FAKE_MACOS=26.3"
CJ_ENV=(PATH="$fake:$PATH" FAKE_MACOS=26.2)
run_compare --mpi-only --check-only "$hostfile"
expect_refused "another macOS on mac-c" '^macOS versions differ: 26\.2 on mac-a, mac-b; 26\.3 on mac-c; fix: install the same macOS'
profile_add mac-c "export FAKE_MACOS=26.2"
run_compare --mpi-only --check-only "$hostfile"
expect_checks_pass "the same macOS everywhere"
check "the checks show macOS 26.2 on every host" test "$(grep -c '^  mac-[a-c]: Linux, macOS 26\.2, ' <<<"$out")" = 3

# MLX versions: the test's stand-in module (test/bench/fake-mlx, not MLX), 0.31.2 on mac-c.
for h in mac-b mac-c; do
    profile_add "$h" "export PYTHONPATH='$top/test/bench/fake-mlx' FAKE_MLX_VERSION=0.32.1"
done
profile_add mac-c "export FAKE_MLX_VERSION=0.31.2"
CJ_ENV+=(PYTHONPATH="$top/test/bench/fake-mlx" FAKE_MLX_VERSION=0.32.1)
run_compare --check-only "$hostfile"
expect_refused "another MLX on mac-c" '^MLX versions differ: 0\.32\.1 on mac-a, mac-b; 0\.31\.2 on mac-c; fix: install the same MLX'
# and with the same MLX everywhere and an mlx.launch here (a stub that only tells its Python)
profile_add mac-c "export FAKE_MLX_VERSION=0.32.1"
printf '#!/bin/sh\n[ "$1" = --print-python ] && command -v python3 && exit 0\nexit 2\n' >"$fake/mlx.launch"
chmod +x "$fake/mlx.launch"
run_compare --check-only "$hostfile"
expect_checks_pass "the same MLX everywhere, mlx.launch here"
check "the checks show MLX 0.32.1 with JACCL on every host" test "$(grep -c '^  mac-[a-c]: .*, MLX 0\.32\.1 (JACCL yes), ' <<<"$out")" = 3
profile_add mac-b "export FAKE_MLX_NO_JACCL=1"
run_compare --check-only "$hostfile"
expect_refused "MLX without JACCL on mac-b" "^MLX on mac-b has no JACCL backend .*fix: MLX 0\\.30\\.1 or later"
profile_reset mac-b
profile_reset mac-c
CJ_ENV=()

# Open MPI versions: mac-c's ompi_info is Open MPI 5.0.7 (the chroot's): the doctor's line.
bin5="$TC_TMP/ompi5-bin"
mkdir -p "$bin5"
printf '#!/bin/sh\nexec %s/test/ompi5/in-chroot.sh ompi_info "$@"\n' "$top" >"$bin5/ompi_info"
chmod +x "$bin5/ompi_info"
profile_add mac-c "export PATH='$bin5':\$PATH"
run_compare --mpi-only --check-only "$hostfile"
expect_refused "another Open MPI on mac-c" '^host mac-c: Open MPI 5\.0\.7 .*, but mac-a, mac-b have 4\.1\.4'
profile_reset mac-c
run_compare --mpi-only --check-only "$hostfile"
expect_checks_pass "the same Open MPI everywhere again"
finish
