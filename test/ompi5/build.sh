#!/bin/bash
#
# build.sh [CONFIGURE_ARG...]: configure and build the plugin against Open MPI 5.0 inside the
# chroot (make-chroot.sh), from the same sources as the host's 4.1 build, in the VPATH build
# directory <repo>/build/ompi5/obj ($TBRDMA_OMPI5_BUILD_DIR overrides; it must lie inside the
# repository so the chroot sees it). The result is <dir>/plugin/.libs/mca_btl_tbrdma.so.
#
# The host must have run ./autogen.sh: configure and the Makefile.in files come from the host's
# autotools (the chroot's, pulled in by libltdl-dev, are other versions and are not used).
# configure runs when the build directory has no config.status, when configure is newer, or
# when arguments are given (they go to configure); then `make -j2`.

set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OMPI5_PREFIX=/usr/lib/x86_64-linux-gnu/openmpi

main()
{
    local obj t0 t1 configure_cmd
    obj=$(realpath -m "${TBRDMA_OMPI5_BUILD_DIR:-$TBRDMA_REPO/build/ompi5/obj}")
    case "$obj" in
    "$TBRDMA_REPO"/*) ;;
    *) ompi5_die "build directory $obj is outside $TBRDMA_REPO: the chroot cannot see it" ;;
    esac
    if [ ! -x "$TBRDMA_REPO/configure" ]; then
        ompi5_die "$TBRDMA_REPO/configure missing: run ./autogen.sh on the host first"
    fi
    mkdir -p "$obj"
    t0=$(date +%s)
    configure_cmd=":"
    if [ ! -f "$obj/config.status" ] || [ "$TBRDMA_REPO/configure" -nt "$obj/config.status" ] \
        || [ $# -gt 0 ]; then
        # shellcheck disable=SC2016
        configure_cmd='"$0" --with-ompi="$1" "${@:2}"'
    fi
    # The command string is run by bash in the chroot: $0 = configure, $1 = prefix, rest = args.
    (cd "$obj" && "$TBRDMA_OMPI5_LIB_DIR/in-chroot.sh" /bin/bash -c \
        "set -e; $configure_cmd; make -j2" \
        "$TBRDMA_REPO/configure" "$OMPI5_PREFIX" "$@") || ompi5_die "build in the chroot failed"
    t1=$(date +%s)
    if [ ! -f "$obj/plugin/.libs/mca_btl_tbrdma.so" ]; then
        ompi5_die "make succeeded but $obj/plugin/.libs/mca_btl_tbrdma.so is missing"
    fi
    echo "build: $obj/plugin/.libs/mca_btl_tbrdma.so built against Open MPI 5 in $((t1 - t0)) s"
}

main "$@"
