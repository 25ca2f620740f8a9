#!/bin/bash
#
# make-chroot.sh [DIR]: build a Debian 13 (trixie) chroot holding Open MPI 5.0 with its devel
# headers, the compiler and libibverbs-dev, so the plugin can be built and tested against 5.0
# on a Debian 12 host (see /work/shared/research/openmpi5-chroot.md).
#
# DIR defaults to <repo>/build/ompi5/chroot (or $TBRDMA_OMPI5_CHROOT). The chroot is cached:
# once `ompi_info --version` worked inside it a stamp file is written, and later runs do
# nothing. A half-made DIR (interrupted run) is resumed at the apt step or rebuilt.
# Packages come from the Debian mirror the host's apt sources use ($TBRDMA_DEBIAN_MIRROR
# overrides). Runs as root; all mounts live in a private mount namespace and are undone on exit.
#
# Host packages: debootstrap, debian-archive-keyring (trixie keys), util-linux (unshare).

set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Remove a partial chroot that debootstrap did not get far enough in to resume.
discard_partial()
{
    local root=$1
    if [ -x "$root/usr/bin/apt-get" ] && [ -s "$root/var/lib/dpkg/status" ]; then
        return 0
    fi
    if [ -d "$root" ] && [ -n "$(ls -A "$root")" ]; then
        if ompi5_has_mounts_below "$root"; then
            ompi5_die "$root: something is mounted below it; refusing to remove it"
        fi
        echo "make-chroot: removing the partial chroot $root"
        rm -rf "$root"
    fi
}

# debootstrap minbase trixie into $1. It may stop with packages unpacked but unconfigured
# (libltdl-dev wants automake, ...); that is repaired by fix_packages, so a failure only counts
# when it left no usable apt behind.
run_debootstrap()
{
    local root=$1 mirror rc
    if [ -x "$root/usr/bin/apt-get" ] && [ -s "$root/var/lib/dpkg/status" ]; then
        echo "make-chroot: $root already bootstrapped, resuming at the apt step"
        return 0
    fi
    # shellcheck disable=SC2119
    mirror=$(ompi5_host_mirror) || true
    if [ -z "$mirror" ]; then
        ompi5_die "no Debian mirror found in the host's apt sources (set TBRDMA_DEBIAN_MIRROR)"
    fi
    echo "make-chroot: debootstrap $TBRDMA_CHROOT_SUITE from $mirror into $root"
    mkdir -p "$root"
    ompi5_mount_dev "$root" || ompi5_die "$root/dev: mounting the device files failed"
    # container=lxc: debootstrap then skips its mknod probes, which this container forbids; the
    # device files already exist on the tmpfs mounted above.
    container=lxc debootstrap --variant=minbase --include="$TBRDMA_CHROOT_PACKAGES" \
        "$TBRDMA_CHROOT_SUITE" "$root" "$mirror"
    rc=$?
    ompi5_umount_all
    if [ "$rc" != 0 ]; then
        if [ ! -x "$root/usr/bin/apt-get" ]; then
            ompi5_die "debootstrap failed (exit $rc) before apt was installed"
        fi
        echo "make-chroot: debootstrap exit $rc; repairing the package state with apt-get -f"
    fi
}

# Run a command inside the chroot $1 with a clean environment.
in_root()
{
    local root=$1
    shift
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C \
        DEBIAN_FRONTEND=noninteractive "$@"
}

# Configure what debootstrap left half-done, then make sure every wanted package is installed.
fix_packages()
{
    local root=$1
    ompi5_mount_system "$root" || ompi5_die "$root: mounting /proc, /sys, /dev failed"
    if ! in_root "$root" apt-get install -y -f; then
        in_root "$root" apt-get update || ompi5_die "apt-get update in the chroot failed"
        in_root "$root" apt-get install -y -f || ompi5_die "apt-get install -f in the chroot failed"
    fi
    # shellcheck disable=SC2046
    in_root "$root" apt-get install -y --no-install-recommends \
        $(echo "$TBRDMA_CHROOT_PACKAGES" | tr , ' ') \
        || ompi5_die "installing $TBRDMA_CHROOT_PACKAGES in the chroot failed"
    in_root "$root" apt-get clean
}

# Check Open MPI 5 runs in the chroot and write the stamp.
check_and_stamp()
{
    local root=$1 version
    version=$(in_root "$root" ompi_info --version 2>&1 | head -n 1)
    case "$version" in
    *"Open MPI v5."*) ;;
    *) ompi5_die "ompi_info --version in the chroot printed '$version', not Open MPI v5.x" ;;
    esac
    echo "$version" >"$root/$TBRDMA_CHROOT_STAMP"
    echo "make-chroot: $version"
}

# The part that runs inside the private mount namespace.
build_chroot()
{
    local root=$1 t0 t1 t2
    t0=$(date +%s)
    trap ompi5_umount_all EXIT
    trap "exit 130" INT TERM
    discard_partial "$root"
    run_debootstrap "$root"
    t1=$(date +%s)
    fix_packages "$root"
    check_and_stamp "$root"
    ompi5_umount_all
    t2=$(date +%s)
    echo "make-chroot: ready in $((t2 - t0)) s (debootstrap $((t1 - t0)) s," \
        "apt fix-up and check $((t2 - t1)) s); $(du -sh "$root" 2>/dev/null | cut -f1) on disk"
}

main()
{
    local root
    root=$(realpath -m "${1:-$(ompi5_chroot_dir)}")
    if [ -f "$root/$TBRDMA_CHROOT_STAMP" ]; then
        echo "make-chroot: $root is ready ($(cat "$root/$TBRDMA_CHROOT_STAMP")), nothing to do"
        exit 0
    fi
    ompi5_require_root
    command -v debootstrap >/dev/null || ompi5_die "debootstrap not found (apt-get install debootstrap)"
    if [ "${TBRDMA_OMPI5_IN_NS:-}" != make-chroot ]; then
        TBRDMA_OMPI5_IN_NS=make-chroot exec unshare --mount --propagation private -- \
            "$TBRDMA_OMPI5_LIB_DIR/make-chroot.sh" "$root"
    fi
    build_chroot "$root"
}

main "$@"
