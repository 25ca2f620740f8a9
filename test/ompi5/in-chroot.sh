#!/bin/bash
#
# in-chroot.sh CMD [ARG...]: run CMD inside the Open MPI 5.0 chroot made by make-chroot.sh,
# with the repository bind-mounted at its own path (so paths are the same inside and out),
# /proc, /sys (read-only), /dev, /dev/pts and /dev/shm mounted, in the current directory when
# it lies inside the repository (else /). Exits with CMD's status.
#
# The mounts live in a private mount namespace and are unmounted on exit; the chroot is
# $TBRDMA_OMPI5_CHROOT or <repo>/build/ompi5/chroot. The environment is passed through except
# PATH (the chroot's), HOME (/root), LD_LIBRARY_PATH, LD_PRELOAD and TMPDIR (host paths).
#
# For the simulated cluster (test/ompi5/cluster-mpirun.sh), three optional extras:
#   TBRDMA_OMPI5_RBIND="DIR..."  directories bound recursively at their own path (the state
#                                directory with its namespace files, /run/netns)
#   TBRDMA_OMPI5_HOSTS=FILE      bound over the chroot's /etc/hosts (the cluster's names)
#   TBRDMA_OMPI5_HOST_SHM=1      the host's /dev/shm instead of a private one (the simulator's
#                                queue pair files are shared by every simulated host)

set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Run the command in the background and wait for it, so that a SIGINT or SIGTERM sent to this
# script (e.g. by timeout) is forwarded to it instead of waiting for it to end; <&0 keeps stdin
# (a background command would otherwise read /dev/null).
run_forwarding_signals()
{
    local child rc
    "$@" <&0 &
    child=$!
    trap 'kill -TERM "$child" 2>/dev/null' INT TERM
    wait "$child"
    rc=$?
    while kill -0 "$child" 2>/dev/null; do
        wait "$child"
        rc=$?
    done
    trap - INT TERM
    return "$rc"
}

# The extras of the simulated cluster (see the header).
mount_cluster_extras()
{
    local root=$1 dir
    for dir in ${TBRDMA_OMPI5_RBIND:-}; do
        mkdir -p "$root$dir"
        ompi5_mount_at --rbind "$dir" "$root$dir" || ompi5_die "$root: binding $dir failed"
    done
    if [ -n "${TBRDMA_OMPI5_HOSTS:-}" ]; then
        ompi5_mount_at --bind "$TBRDMA_OMPI5_HOSTS" "$root/etc/hosts" ||
            ompi5_die "$root: binding $TBRDMA_OMPI5_HOSTS over /etc/hosts failed"
    fi
    if [ -n "${TBRDMA_OMPI5_HOST_SHM:-}" ]; then
        ompi5_mount_at --bind /dev/shm "$root/dev/shm" || ompi5_die "$root: binding /dev/shm failed"
    fi
    unset TBRDMA_OMPI5_RBIND TBRDMA_OMPI5_HOSTS TBRDMA_OMPI5_HOST_SHM
}

# The part that runs inside the private mount namespace.
run_in_chroot()
{
    local root=$1 cwd=$PWD rc
    shift
    trap ompi5_umount_all EXIT
    ompi5_mount_system "$root" || ompi5_die "$root: mounting /proc, /sys, /dev failed"
    ompi5_mount_same_path "$root" "$TBRDMA_REPO" || ompi5_die "$root: binding $TBRDMA_REPO failed"
    mount_cluster_extras "$root"
    case "$cwd" in
    "$TBRDMA_REPO" | "$TBRDMA_REPO"/*) ;;
    *) cwd=/ ;;
    esac
    unset TBRDMA_OMPI5_IN_NS LD_LIBRARY_PATH LD_PRELOAD TMPDIR
    # shellcheck disable=SC2016
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        run_forwarding_signals chroot "$root" /bin/sh -c 'cd "$1" && shift && exec "$@"' \
        in-chroot "$cwd" "$@"
    rc=$?
    ompi5_umount_all
    return "$rc"
}

main()
{
    local root
    if [ $# = 0 ]; then
        echo "usage: $(basename "$0") CMD [ARG...]" >&2
        exit 2
    fi
    root=$(realpath -m "$(ompi5_chroot_dir)")
    if [ ! -f "$root/$TBRDMA_CHROOT_STAMP" ]; then
        ompi5_die "no Open MPI 5 chroot at $root: run test/ompi5/make-chroot.sh first"
    fi
    ompi5_require_root
    if [ "${TBRDMA_OMPI5_IN_NS:-}" != in-chroot ]; then
        TBRDMA_OMPI5_IN_NS=in-chroot exec unshare --mount --propagation private -- \
            "$TBRDMA_OMPI5_LIB_DIR/in-chroot.sh" "$@"
    fi
    run_in_chroot "$root" "$@"
}

main "$@"
