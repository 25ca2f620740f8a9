#!/bin/bash
#
# make-chroot.sh [DIR]: build a Debian 13 (trixie) chroot holding Open MPI 5.0 with its devel
# headers, the compiler and libibverbs-dev, so the plugin can be built and tested against 5.0
# on a Debian 12 host (see /work/shared/research/openmpi5-chroot.md).
#
# Steps: debootstrap minbase (which leaves some packages unconfigured), `apt-get install -f`,
# the headers Debian's libopenmpi-dev 5.0.7 lacks (from the source package, see
# complete_devel_headers), a compile of opal/mca/btl/btl.h, `ompi_info --version`, the stamp.
# DIR defaults to <repo>/build/ompi5/chroot (or $TBRDMA_OMPI5_CHROOT). The chroot is cached:
# once the checks passed a stamp file is written, and later runs do nothing. A half-made DIR
# (interrupted run) is resumed at the apt step or rebuilt. Packages come from the Debian
# mirror the host's apt sources use ($TBRDMA_DEBIAN_MIRROR overrides). Runs as root; all
# mounts live in a private mount namespace and are undone on exit.
#
# Host packages: debootstrap, debian-archive-keyring (trixie keys), util-linux (unshare),
# tar and xz-utils (the source package).

set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Where libopenmpi-dev puts opal_config.h inside the chroot.
OMPI5_INCLUDE=/usr/lib/x86_64-linux-gnu/openmpi/include/openmpi

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

# Print the packages of TBRDMA_CHROOT_PACKAGES not installed in the chroot $1.
missing_packages()
{
    local root=$1 pkg
    for pkg in $(echo "$TBRDMA_CHROOT_PACKAGES" | tr , ' '); do
        dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Status}' "$pkg" 2>/dev/null \
            | grep -q 'install ok installed' || echo "$pkg"
    done
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

# Print the headers opal_config.h (under include dir $1) names as component implementation
# headers (MCA_threads_*_HEADER, MCA_timer_IMPLEMENTATION_HEADER, ...) that do not exist.
missing_opal_headers()
{
    local inc=$1 h
    for h in $(grep -o '"opal/[^"]*\.h"' "$inc/opal_config.h" | tr -d '"' | sort -u); do
        [ -f "$inc/$h" ] || echo "$h"
    done
}

# Debian's libopenmpi-dev 5.0.7 installs opal_config.h, which includes the headers of the
# statically built threads/pthreads and timer/linux components, but not those headers, so
# nothing including opal/mca/btl/btl.h compiles. Take them (every header of each such component
# directory) from the Debian source package of the same version, fetched with apt-get source
# from the chroot's own mirror; Debian's patches do not touch them.
complete_devel_headers()
{
    local root=$1 inc missing version srcdir mirror tmp h dir
    inc=$root$OMPI5_INCLUDE
    missing=$(missing_opal_headers "$inc")
    [ -n "$missing" ] || return 0
    echo "make-chroot: libopenmpi-dev lacks ${missing//$'\n'/ };" \
        "taking them from the source package"
    # shellcheck disable=SC2016
    version=$(in_root "$root" dpkg-query -W -f='${Version}' libopenmpi-dev)
    mirror=$(awk '$1 == "deb" { print $2; exit }' "$root/etc/apt/sources.list")
    echo "deb-src $mirror $TBRDMA_CHROOT_SUITE main" >"$root/etc/apt/sources.list.d/tbrdma-src.list"
    srcdir=/var/tmp/tbrdma-openmpi-src
    rm -rf "${root:?}$srcdir"
    mkdir -p "$root$srcdir"
    in_root "$root" apt-get update -qq || ompi5_die "apt-get update (deb-src) in the chroot failed"
    in_root "$root" sh -c "cd $srcdir && apt-get source --download-only -qq openmpi=$version" \
        || ompi5_die "apt-get source openmpi=$version in the chroot failed"
    tmp=$(mktemp -d)
    for dir in $(for h in $missing; do dirname "$h"; done | sort -u); do
        tar -xf "$root$srcdir"/openmpi_*.orig.tar.* -C "$tmp" --strip-components=1 \
            --wildcards "*/$dir/*.h" \
            || ompi5_die "$dir/*.h not found in the openmpi $version source"
        mkdir -p "$inc/$dir"
        cp "$tmp/$dir"/*.h "$inc/$dir/"
        echo "make-chroot: installed $(cd "$tmp/$dir" && echo *.h) into $inc/$dir"
    done
    # Keep the source package for test/ompi5/source-tree.sh (it configures an Open MPI tree).
    mkdir -p "$TBRDMA_REPO/build/ompi5/openmpi-src-pkg"
    cp "$root$srcdir"/openmpi_* "$TBRDMA_REPO/build/ompi5/openmpi-src-pkg/" 2>/dev/null || true
    rm -rf "$tmp" "${root:?}$srcdir" "$root/etc/apt/sources.list.d/tbrdma-src.list"
    in_root "$root" apt-get update -qq
    in_root "$root" apt-get clean
    missing=$(missing_opal_headers "$inc")
    [ -z "$missing" ] || ompi5_die "still missing after the repair: $missing"
}

# A BTL's first includes must compile with the chroot's Open MPI headers.
check_btl_header()
{
    local root=$1
    # shellcheck disable=SC2016
    in_root "$root" sh -c 'printf "#include \"opal_config.h\"\n#include \"opal/mca/btl/btl.h\"\n" \
        | gcc -fsyntax-only -x c $(mpicc --showme:incdirs | sed "s/[^ ]*/-I&/g") \
          $(pkg-config --cflags pmix) -' \
        || ompi5_die "opal/mca/btl/btl.h does not compile in the chroot"
    echo "make-chroot: opal_config.h + opal/mca/btl/btl.h compile"
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
    complete_devel_headers "$root"
    check_btl_header "$root"
    check_and_stamp "$root"
    ompi5_umount_all
    t2=$(date +%s)
    echo "make-chroot: ready in $((t2 - t0)) s (debootstrap $((t1 - t0)) s," \
        "apt fix-up, headers and checks $((t2 - t1)) s);" \
        "$(du -sh "$root" 2>/dev/null | cut -f1) on disk"
}

main()
{
    local root
    root=$(realpath -m "${1:-$(ompi5_chroot_dir)}")
    if [ -f "$root/$TBRDMA_CHROOT_STAMP" ]; then
        # A chroot stamped by an older make-chroot.sh may lack the header repair or packages
        # added to TBRDMA_CHROOT_PACKAGES since; without the stamp, the build resumes at apt.
        if [ -z "$(missing_opal_headers "$root$OMPI5_INCLUDE")" ] \
            && [ -z "$(missing_packages "$root")" ]; then
            echo "make-chroot: $root is ready ($(cat "$root/$TBRDMA_CHROOT_STAMP")), nothing to do"
            exit 0
        fi
        echo "make-chroot: $root lacks:" $(missing_packages "$root") "(completing it)"
        rm -f "$root/$TBRDMA_CHROOT_STAMP"
    fi
    ompi5_require_root
    if ! command -v debootstrap >/dev/null; then
        ompi5_die "debootstrap not found (apt-get install debootstrap)"
    fi
    if [ "${TBRDMA_OMPI5_IN_NS:-}" != make-chroot ]; then
        TBRDMA_OMPI5_IN_NS=make-chroot exec unshare --mount --propagation private -- \
            "$TBRDMA_OMPI5_LIB_DIR/make-chroot.sh" "$root"
    fi
    build_chroot "$root"
}

main "$@"
