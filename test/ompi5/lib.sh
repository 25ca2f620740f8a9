# shellcheck shell=bash
#
# Shared helpers of the Open MPI 5.0 chroot scripts (make-chroot.sh, in-chroot.sh, build.sh):
# where the chroot lives, which Debian mirror the host uses, and the mounts a chroot needs.
#
# Every mount is made inside a private mount namespace (the callers re-execute themselves under
# `unshare --mount`), so nothing is visible to the host and nothing survives the process, even
# if it is killed; the explicit unmounts on exit are a second line of defence. /dev is never
# bind-mounted whole: it is a tmpfs holding bind-mounts of single device files, so an `rm -rf`
# of the chroot can never reach the host's /dev.

TBRDMA_OMPI5_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TBRDMA_REPO=$(cd "$TBRDMA_OMPI5_LIB_DIR/../.." && pwd)
# These three are read by make-chroot.sh.
# The stamp says: debootstrap and the apt fix-up finished and ompi_info --version worked.
# shellcheck disable=SC2034
TBRDMA_CHROOT_STAMP=.tbrdma-chroot-ok
# shellcheck disable=SC2034
TBRDMA_CHROOT_SUITE=trixie
# shellcheck disable=SC2034
TBRDMA_CHROOT_PACKAGES=libopenmpi-dev,openmpi-bin,gcc,make,libc6-dev,libibverbs-dev,pkgconf
TBRDMA_CHROOT_PACKAGES+=,libcunit1-dev,netpipe-openmpi,hpcc,valgrind
# The HPC codes of test/mpi/hpc.sh (Debian 13's builds link Open MPI 5.0.7).
TBRDMA_CHROOT_PACKAGES+=,lammps,nwchem-openmpi,scalapack-mpi-test

# The chroot directory: $TBRDMA_OMPI5_CHROOT, or <repo>/build/ompi5/chroot.
ompi5_chroot_dir()
{
    echo "${TBRDMA_OMPI5_CHROOT:-$TBRDMA_REPO/build/ompi5/chroot}"
}

ompi5_die()
{
    echo "$(basename "$0"): $*" >&2
    exit 1
}

ompi5_require_root()
{
    if [ "$(id -u)" != 0 ]; then
        ompi5_die "must run as root (debootstrap, chroot and mount need it)"
    fi
    command -v unshare >/dev/null || ompi5_die "unshare not found (package util-linux)"
}

# Print the URI of the host's main Debian archive: the first "deb" source whose suite is the
# host's own codename (so -security and -updates entries and third-party sources are skipped).
# Reads one-line sources.list files and deb822 *.sources files (or the files given as arguments);
# TBRDMA_DEBIAN_MIRROR overrides.
ompi5_host_mirror()
{
    local codename files="$*"
    if [ -n "${TBRDMA_DEBIAN_MIRROR:-}" ]; then
        echo "$TBRDMA_DEBIAN_MIRROR"
        return 0
    fi
    # shellcheck disable=SC1091
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [ -n "$codename" ] || return 1
    [ -n "$files" ] || files=$(ls /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
        /etc/apt/sources.list.d/*.sources 2>/dev/null)
    # shellcheck disable=SC2086
    awk -v codename="$codename" '
        function flush() {
            if (is_deb && uri != "" && (" " suites " ") ~ (" " codename " ")) {
                print uri; found = 1; exit
            }
            is_deb = 0; uri = ""; suites = ""
        }
        FNR == 1 { flush() }
        FILENAME ~ /\.sources$/ {
            if ($0 ~ /^[ \t]*$/) { flush(); next }
            if ($1 == "Types:" && $0 ~ /[ \t]deb([ \t]|$)/) { is_deb = 1 }
            if ($1 == "URIs:") { uri = $2 }
            if ($1 == "Suites:") { suites = $0; sub(/^Suites:/, "", suites) }
            next
        }
        $1 == "deb" {
            i = 2
            if ($i ~ /^\[/) { while ($i !~ /\]$/) { i++ } i++ }
            if ($(i + 1) == codename) { print $i; found = 1; exit }
        }
        END { if (!found) { flush() } }
    ' $files | head -n 1
}

# Run `mount ARGS... TARGET` and record TARGET in OMPI5_MOUNTS for ompi5_umount_all.
ompi5_mount_at()
{
    local target=${*: -1}
    mount "$@" || return 1
    OMPI5_MOUNTS+=("$target")
}
OMPI5_MOUNTS=()

# Mount a tmpfs /dev in the chroot at $1 with single device files bind-mounted from the host
# (mknod is not allowed in this container), a private devpts and a tmpfs /dev/shm.
ompi5_mount_dev()
{
    local root=$1 dev
    mkdir -p "$root/dev"
    ompi5_mount_at -t tmpfs -o mode=755,nosuid tbrdma-dev "$root/dev" || return 1
    for dev in null zero full random urandom tty; do
        touch "$root/dev/$dev"
        ompi5_mount_at --bind "/dev/$dev" "$root/dev/$dev" || return 1
    done
    mkdir -p "$root/dev/pts" "$root/dev/shm"
    ompi5_mount_at -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$root/dev/pts" \
        || return 1
    ompi5_mount_at -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm" || return 1
    ln -sf pts/ptmx "$root/dev/ptmx"
    ln -sf /proc/self/fd "$root/dev/fd"
    ln -sf /proc/self/fd/0 "$root/dev/stdin"
    ln -sf /proc/self/fd/1 "$root/dev/stdout"
    ln -sf /proc/self/fd/2 "$root/dev/stderr"
}

# Mount what a chroot at $1 needs to run programs: /proc, /sys (read-only) and /dev. Call only
# inside a private mount namespace.
ompi5_mount_system()
{
    local root=$1
    mkdir -p "$root/proc" "$root/sys"
    ompi5_mount_at -t proc proc "$root/proc" || return 1
    ompi5_mount_at --bind /sys "$root/sys" || return 1
    mount -o remount,bind,ro "$root/sys" || return 1
    ompi5_mount_dev "$root"
}

# Bind-mount directory $2 at the same path inside the chroot at $1.
ompi5_mount_same_path()
{
    mkdir -p "$1$2"
    ompi5_mount_at --bind "$2" "$1$2"
}

# Unmount everything ompi5_mount_* mounted, newest first. Safe to call twice.
ompi5_umount_all()
{
    local i
    for ((i = ${#OMPI5_MOUNTS[@]} - 1; i >= 0; i--)); do
        umount "${OMPI5_MOUNTS[$i]}" 2>/dev/null || umount -l "${OMPI5_MOUNTS[$i]}" 2>/dev/null
    done
    OMPI5_MOUNTS=()
}

# True when the host mount table has something mounted at or below directory $1.
ompi5_has_mounts_below()
{
    awk -v dir="$1" '$5 == dir || index($5, dir "/") == 1 { found = 1 } END { exit !found }' \
        /proc/self/mountinfo
}
