#!/usr/bin/env bash
# tbrdma-doctor on 4 simulated Macs where mac-c has another Open MPI: its login profile puts
# first in PATH an ompi_info that runs the real Open MPI 5.0.7 ompi_info of the Debian 13
# chroot (test/ompi5), while the other Macs have Debian 12's 4.1.4. The doctor names mac-c and
# the version the others have, in one line, and passes again once mac-c's PATH is back. Then
# mac-b's login shell has no Open MPI in its PATH at all (as a Mac whose Homebrew PATH is set
# only for login shells), also named in one line.
# Builds the chroot when it is missing (test/ompi5/make-chroot.sh, cached); skips when that
# cannot be done here (no network to the Debian mirror).
source "$(dirname "$0")/lib.sh"
require_env
# shellcheck source=../../ompi5/lib.sh
chroot_stamp=$(. "$top/test/ompi5/lib.sh" && echo "$(realpath -m "$(ompi5_chroot_dir)")/$TBRDMA_CHROOT_STAMP")
if [ ! -f "$chroot_stamp" ]; then
    echo "building the Open MPI 5.0 chroot (test/ompi5/make-chroot.sh)"
    "$top/test/ompi5/make-chroot.sh" >"$build/ompi5-chroot-for-tools.log" 2>&1 \
        || skip "no Open MPI 5.0 chroot and make-chroot.sh failed (log: $build/ompi5-chroot-for-tools.log)"
fi
tools_cluster_up 4 --addressing p2p

bin="$TC_TMP/ompi5-bin"
mkdir -p "$bin"
printf '#!/bin/sh\nexec %s/test/ompi5/in-chroot.sh ompi_info "$@"\n' "$top" >"$bin/ompi_info"
chmod +x "$bin/ompi_info"
profile_add mac-c "export PATH='$bin':\$PATH"
check "mac-c's login shell finds Open MPI 5.0.7" \
    bash -c "'$agent' mac-c ompi_info --version | grep -q 'v5\\.0\\.7'"

run_doctor
expect_problem "another Open MPI on mac-c" \
    "^host mac-c: Open MPI 5\\.0\\.7 \\($bin/ompi_info\\), but mac-a, mac-b, mac-d have 4\\.1\\.4" \
    'install Open MPI 4\.1\.4 on mac-c'
profile_reset mac-c
run_doctor
expect_ready "the same Open MPI everywhere again"

# mac-b's non-interactive shell has every program of /usr/bin and /usr/sbin but Open MPI's.
nompi="$TC_TMP/no-ompi-bin"
mkdir -p "$nompi"
for f in /usr/bin/* /usr/sbin/*; do
    case ${f##*/} in ompi_info | mpirun | mpiexec | orterun | ompi-* | orte*) continue ;; esac
    ln -sf "$f" "$nompi/"
done
profile_add mac-b "export PATH='$nompi'"
run_doctor
expect_problem "no Open MPI in mac-b's PATH" '^host mac-b: Open MPI is not found \(no ompi_info in the PATH of a non-interactive shell' \
    'install Open MPI 4\.1\.4 on mac-b' 'PATH in ~/\.zshenv'
profile_reset mac-b
run_doctor
expect_ready "Open MPI found again"
finish
