#!/bin/bash
#
# source-tree.sh: proves `configure --with-ompi-source=DIR` (the Homebrew case: an Open MPI
# without devel headers) builds a working plugin, in the Open MPI 5.0 chroot of make-chroot.sh.
#
#   1. DIR = Debian's openmpi orig tarball (the upstream release of the chroot's Open MPI),
#      unpacked into build/ompi5/src and configured (configure only, no make) with the
#      arguments the chroot's Open MPI was built with (`ompi_info -c`), minus the Java
#      bindings. Its opal_config.h is compared with the installed one (build metadata such as
#      dates, users, hosts, compiler paths and flags aside): every difference is printed, and
#      one that an opal header compiled into the plugin (or tbrdma's own source) reads fails.
#   2. tbrdma is configured and built in build/ompi5/obj-src with --with-ompi-source=DIR while
#      the installed opal headers are hidden (an empty tmpfs over them, in the chroot's private
#      mount namespace); the dependency files show every opal header came from DIR.
#   3. The plugin loads into the installed Open MPI: make check's plugin_load_check,
#      ompi_info lists it and its parameters (the same ones as build/ompi5/obj's plugin when
#      that exists), and test/integration/ompi/mpirun.sh 5.0 passes with it.
#
# Cached: the tarball (build/ompi5/openmpi-src-pkg, fetched with `apt-get source
# --download-only` only when absent) and the configured tree (a stamp naming the tarball and
# the arguments), so a second run skips Open MPI's configure. Installs into the chroot, when
# missing, the packages Debian built Open MPI with that change what its configure finds
# (SRC_TREE_PACKAGES). Exits 0 pass, 1 fail, 77 skip (no chroot, no network for a download).
# Wall times are printed, never judged.

set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=../lib/check.sh
. "$TBRDMA_OMPI5_LIB_DIR/../lib/check.sh"

OMPI5_PREFIX=/usr/lib/x86_64-linux-gnu/openmpi
OMPI5_INCLUDE=$OMPI5_PREFIX/include/openmpi
WORK=$TBRDMA_REPO/build/ompi5
PKG_DIR=$WORK/openmpi-src-pkg
SRC=$WORK/src
OBJ=$WORK/obj-src
STAMP=$SRC/.tbrdma-configured
ROOT=$(realpath -m "$(ompi5_chroot_dir)")
IN_CHROOT=$TBRDMA_OMPI5_LIB_DIR/in-chroot.sh
# What Debian's build had that the chroot lacks and Open MPI's configure would notice: the
# Fortran and C++ compilers and the libraries named by --with-ucx/-libfabric/-psm/-psm2.
SRC_TREE_PACKAGES="gfortran g++ libucx-dev libfabric-dev libpsm-infinipath1-dev libpsm2-dev"
SRC_TREE_PACKAGES+=" libnuma-dev zlib1g-dev"
# Dropped from the installed Open MPI's configure line: the Java bindings (ompi/mpi/java) need
# a JDK (130 MB). Dropping them changes two macros, neither read by opal or a BTL:
# OMPI_WANT_JAVA_BINDINGS and HAVE_DL_INFO (checked by configure only for the Java bindings).
DROP_ARGS_RE='^--(enable-mpi-java|with-jdk-dir=.*)$'
# Added last (the last word of a kind wins), as tbrdma-brew-build adds them: PRRTE's and ROMIO's
# own configure scripts are skipped. They were half of Open MPI's configure time (107 and 81 s of
# 364 s, timed line by line here) and write only macros no opal header reads (OMPI_HAVE_PRRTE,
# OMPI_USING_INTERNAL_PRRTE, MCA_io_romio341_*): check_opal_config prints them every run and
# fails if the plugin's inputs read one.
SKIP_ARGS="--with-prrte=no --disable-io-romio"
T_START=$(date +%s)

in_chroot()
{
    "$IN_CHROOT" "$@"
}

# Install the SRC_TREE_PACKAGES the chroot lacks; skip when apt cannot get them.
ensure_packages()
{
    local missing
    # shellcheck disable=SC2016,SC2086
    missing=$(in_chroot sh -c 'for p; do
        dpkg-query -W -f="\${Status}\n" "$p" 2>/dev/null | grep -q "ok installed" || echo "$p"
        done' sh $SRC_TREE_PACKAGES | tr '\n' ' ')
    if [ -z "${missing// /}" ]; then
        echo "packages: $SRC_TREE_PACKAGES already in the chroot"
        return 0
    fi
    echo "packages: installing $missing into the chroot"
    # shellcheck disable=SC2086
    if ! in_chroot env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends $missing; then
        skip "apt-get install $missing in the chroot failed (no network to the Debian mirror?)"
    fi
    in_chroot apt-get clean
}

# Print the path of the openmpi orig tarball of the chroot's libopenmpi-dev version, fetching
# the source package into PKG_DIR (apt lists in a temporary directory, so the chroot's apt
# state is untouched) when it is not there yet.
orig_tarball()
{
    local version upstream mirror tarball
    # shellcheck disable=SC2016
    version=$(in_chroot dpkg-query -W -f='${Version}' libopenmpi-dev) \
        || fatal "libopenmpi-dev is not installed in the chroot"
    upstream=${version#*:}
    upstream=${upstream%-*}
    tarball=$(ls "$PKG_DIR"/openmpi_"$upstream".orig.tar.* 2>/dev/null | head -n 1)
    if [ -n "$tarball" ]; then
        echo "$tarball"
        return 0
    fi
    mirror=$(awk '$1 == "deb" { print $2; exit }' "$ROOT/etc/apt/sources.list")
    [ -n "$mirror" ] || fatal "no deb line in $ROOT/etc/apt/sources.list"
    echo "source package: apt-get source --download-only openmpi=$version from $mirror" >&2
    mkdir -p "$PKG_DIR"
    # shellcheck disable=SC2016
    (cd "$PKG_DIR" && in_chroot sh -c 'set -e; d=$(mktemp -d); mkdir -p "$d/lists/partial"
        echo "deb-src $1 $2 main" >"$d/src.list"
        o="-o Dir::Etc::SourceList=$d/src.list -o Dir::Etc::SourceParts=/nonexistent"
        o="$o -o Dir::State::Lists=$d/lists"
        apt-get -qq $o update
        apt-get -qq $o source --download-only "openmpi=$3"
        rm -rf "$d"' sh "$mirror" "$TBRDMA_CHROOT_SUITE" "$version" >&2) \
        || skip "apt-get source openmpi=$version failed (no network to the Debian mirror?)"
    tarball=$(ls "$PKG_DIR"/openmpi_"$upstream".orig.tar.* 2>/dev/null | head -n 1)
    [ -n "$tarball" ] || fatal "apt-get source left no openmpi_$upstream.orig.tar.* in $PKG_DIR"
    echo "$tarball"
}

# Print the installed Open MPI's configure arguments, one a line, minus DROP_ARGS_RE, then
# SKIP_ARGS.
configure_args()
{
    local line words
    line=$(in_chroot ompi_info -c | sed -n 's/^ *Configure command line: //p')
    [ -n "$line" ] || fatal "ompi_info -c in the chroot shows no 'Configure command line'"
    # The line is a list of single-quoted words ('--prefix=/usr' '--libdir=${prefix}/lib...').
    eval "words=($line)"
    printf '%s\n' "${words[@]}" | grep -E "$DROP_ARGS_RE" \
        | sed 's/^/open mpi configure: dropped /' >&2
    printf '%s\n' "${words[@]}" | grep -Ev "$DROP_ARGS_RE"
    # shellcheck disable=SC2086 # a word list
    printf '%s\n' $SKIP_ARGS
}

# Unpack tarball $1 into SRC and run Open MPI's configure there with the arguments in file $2,
# unless the stamp says exactly that was done already.
configure_tree()
{
    local tarball=$1 args=$2 want t0 t1
    want="$(basename "$tarball") $(md5sum <"$args" | cut -d' ' -f1)"
    if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
        echo "open mpi configure: cached ($SRC, stamp: $want)"
        return 0
    fi
    echo "open mpi configure: unpacking $(basename "$tarball") into $SRC"
    rm -rf "$SRC"
    mkdir -p "$SRC"
    tar -xf "$tarball" -C "$SRC" --strip-components=1 || fatal "unpacking $tarball failed"
    echo "open mpi configure: ./configure $(tr '\n' ' ' <"$args")"
    t0=$(date +%s)
    # shellcheck disable=SC2016
    if ! (cd "$SRC" && in_chroot bash -c 'mapfile -t a <"$1" && ./configure "${a[@]}"' \
        sh "$args" >"$SRC/tbrdma-configure.log" 2>&1); then
        tail -n 20 "$SRC/tbrdma-configure.log" | sed 's/^/    | /'
        fatal "Open MPI's configure in $SRC failed (log: $SRC/tbrdma-configure.log)"
    fi
    t1=$(date +%s)
    echo "open mpi configure: done in $((t1 - t0)) s (log: $SRC/tbrdma-configure.log)"
    echo "$want" >"$STAMP"
}

# Print opal_config.h $1's macros as sorted "NAME VALUE" lines ("NAME (undefined)" for the
# `#undef` comments), leaving out build metadata: names ending in _DATE, _USER, _HOST, _CLI,
# _ABSOLUTE (compiler paths) or FLAGS (e.g. the CFLAGS Debian's build passed to romio).
config_macros()
{
    sed -n -E -e 's|^#define ([A-Za-z_][A-Za-z0-9_]*)[ \t]*(.*)$|\1 \2|p' \
        -e 's|^/\* #undef ([A-Za-z_][A-Za-z0-9_]*) \*/$|\1 (undefined)|p' "$1" \
        | grep -Ev '^[A-Za-z0-9_]*(_DATE|_USER|_HOST|_CLI|_ABSOLUTE|FLAGS) ' \
        | sort -u
}

# The plugin's dependency files, one a line: its objects are in plugin/ and its layers' folders.
plugin_deps()
{
    find "$OBJ/plugin" -path "$OBJ/plugin/core" -prune -o -path "$OBJ/plugin/coll" -prune \
        -o -path '*/.deps/btl_tbrdma_*.Plo' -print | sort
}

# Print the files the plugin's objects were compiled from: the opal headers they included
# (from the dependency files; opal_config.h itself left out) and tbrdma's own sources.
plugin_inputs()
{
    plugin_deps | xargs sed -e 's/\\$//' -e 's/^[^ ]*: //' | tr ' ' '\n' \
        | grep -E "^$SRC/.*\.h$" | grep -v '/opal_config\.h$' | sort -u
    find "$TBRDMA_REPO/plugin" -name '*.[ch]'
}

# Compare the installed opal_config.h with the source tree's. A difference fails when the
# macro is read by an opal header the plugin included or by tbrdma's sources; the others are
# reported (e.g. OMPI_ macros, which only ompi code reads).
check_opal_config()
{
    local inst=$ROOT$OMPI5_INCLUDE/opal_config.h tree=$SRC/opal/include/opal_config.h
    local diffs name users inputs readers=() unread=()
    diffs=$(diff <(config_macros "$inst") <(config_macros "$tree") | grep -E '^[<>]')
    echo "opal_config.h: $(config_macros "$inst" | wc -l) macros compared" \
        "(< installed $inst, > source tree)"
    [ -z "$diffs" ] || sed 's/^/    | /' <<<"$diffs"
    mapfile -t inputs < <(plugin_inputs)
    if [ "${#inputs[@]}" = 0 ]; then
        fail "opal_config.h: no plugin inputs to search (the plugin was not built)"
        return 1
    fi
    for name in $(awk '{ print $2 }' <<<"$diffs" | sort -u); do
        users=$(grep -lw -- "$name" "${inputs[@]}" | head -n 3 | tr '\n' ' ')
        if [ -n "$users" ]; then
            readers+=("$name (read by $users)")
        else
            unread+=("$name")
        fi
    done
    echo "opal_config.h: differing macros no plugin input reads (${#inputs[@]} files" \
        "searched): ${unread[*]:-none}"
    check "no differing opal_config.h macro reaches the plugin: ${readers[*]:-none}" \
        [ "${#readers[@]}" = 0 ]
}

# Configure tbrdma in OBJ against SRC and build it, with the installed opal headers hidden.
build_plugin()
{
    local t0 t1 rc=0
    mkdir -p "$OBJ"
    rm -f "$OBJ/plugin/plugin_load_check.trs"
    t0=$(date +%s)
    # shellcheck disable=SC2016
    (cd "$OBJ" && in_chroot bash -c 'set -e
        mount -t tmpfs -o ro,size=4k tbrdma-hide "$1"
        if [ -e "$1/opal_config.h" ]; then echo "$1 still visible"; exit 1; fi
        echo "hidden: $1 (empty tmpfs; $(ls -A "$1" | wc -l) entries)"
        "$2/configure" --with-ompi-source="$3" --with-ompi="$4"
        make -j2
        make -C plugin check' \
        sh "$OMPI5_INCLUDE" "$TBRDMA_REPO" "$SRC" "$OMPI5_PREFIX" >"$OBJ/tbrdma-build.log" 2>&1) \
        || rc=$?
    t1=$(date +%s)
    [ "$rc" = 0 ] || tail -n 20 "$OBJ/tbrdma-build.log" | sed 's/^/    | /'
    grep -E '^hidden:' "$OBJ/tbrdma-build.log"
    sed -n '/^tbrdma configuration/,/^  CFLAGS/p' "$OBJ/tbrdma-build.log"
    echo "tbrdma configure + make + make -C plugin check: $((t1 - t0)) s" \
        "(log: $OBJ/tbrdma-build.log)"
    check "tbrdma's configure, make and make -C plugin check succeed (exit $rc)" [ "$rc" = 0 ]
    check "installed opal headers were hidden during the build" \
        grep -q '^hidden: .*(empty tmpfs; 0 entries)' "$OBJ/tbrdma-build.log"
    check_grep "configure took the headers from the source tree" "$OBJ/tbrdma-build.log" \
        "^  Open MPI cppflags \.+ +-I$SRC -I$SRC/opal/include( |$)"
    check_nogrep "configure's cppflags name no installed Open MPI include dir" \
        "$OBJ/tbrdma-build.log" "^  Open MPI cppflags .*$OMPI5_PREFIX/include"
    check "the plugin was built ($OBJ/plugin/.libs/mca_btl_tbrdma.so)" \
        [ -f "$OBJ/plugin/.libs/mca_btl_tbrdma.so" ]
    check_grep "make check: plugin_load_check passes (RTLD_NOW into the installed 5.0.7)" \
        "$OBJ/plugin/plugin_load_check.trs" '^:test-result: PASS'
}

# The plugin's dependency files: opal headers from SRC only, none from the installed tree.
check_header_origin()
{
    local deps f
    mapfile -t deps < <(plugin_deps)
    for f in opal/include/opal_config.h opal/mca/btl/btl.h; do
        check "every plugin object included $SRC/$f" \
            [ "$(grep -l "$SRC/$f" "${deps[@]}" | wc -l)" = "${#deps[@]}" ]
    done
    check "no plugin object included a header of $OMPI5_PREFIX/include (${#deps[@]} .Plo files)" \
        [ -z "$(grep -l "$OMPI5_PREFIX/include" "${deps[@]}")" ]
}

# ompi_info of the installed Open MPI lists the plugin and the same parameters as the
# devel-headers build (build/ompi5/obj) when that exists.
check_ompi_info()
{
    local version out=$OBJ/tbrdma-ompi_info.txt ref=$WORK/obj/plugin/.libs
    version=$(sed -n 's/^#define OPAL_VERSION "\(.*\)"$/\1/p' "$ROOT$OMPI5_INCLUDE/opal_config.h")
    in_chroot env OMPI_MCA_opal_mca_base_component_path="SYS_DEFAULT:$OBJ/plugin/.libs" \
        ompi_info --param btl tbrdma --level 9 >"$out" 2>&1
    grep -E 'MCA btl: tbrdma' "$out"
    check_grep "ompi_info lists 'MCA btl: tbrdma (MCA v2.1.0, API v3.3.0, Component v$version)'" \
        "$out" "MCA btl: tbrdma \(MCA v2\.1\.0, API v3\.3\.0, Component v${version//./\\.}\)"
    check "ompi_info shows btl_tbrdma_ parameters ($(grep -c 'MCA btl tbrdma: parameter' "$out"))" \
        [ "$(grep -c 'MCA btl tbrdma: parameter "btl_tbrdma_' "$out")" -gt 0 ]
    if [ ! -f "$ref/mca_btl_tbrdma.so" ]; then
        echo "ompi_info: $ref not built (test/ompi5/build.sh): parameter list not compared"
        return 0
    fi
    check "the same parameters as the devel-headers build ($ref)" diff \
        <(params_of "$ref") <(grep -o 'parameter "[a-z0-9_]*"' "$out")
}

# Print the parameter names ompi_info shows for the plugin in directory $1.
params_of()
{
    in_chroot env OMPI_MCA_opal_mca_base_component_path="SYS_DEFAULT:$1" \
        ompi_info --param btl tbrdma --level 9 2>&1 | grep -o 'parameter "[a-z0-9_]*"'
}

# Two ranks over self,tcp,tbrdma with this plugin: the 5.0 mpirun integration test.
check_mpirun()
{
    local rc
    TBRDMA_BUILD_DIR=$OBJ "$TBRDMA_REPO/test/integration/ompi/mpirun.sh" 5.0 2>&1 \
        | sed 's/^/    | /'
    rc=${PIPESTATUS[0]}
    check "test/integration/ompi/mpirun.sh 5.0 with the source-tree plugin passes (exit $rc)" \
        [ "$rc" = 0 ]
}

main()
{
    local tarball args t_conf
    [ -f "$ROOT/$TBRDMA_CHROOT_STAMP" ] || skip "no Open MPI 5 chroot at $ROOT (make-chroot.sh)"
    [ "$(id -u)" = 0 ] || skip "needs root (chroot, mounts)"
    [ -x "$TBRDMA_REPO/configure" ] || fatal "$TBRDMA_REPO/configure missing: run ./autogen.sh"
    ensure_packages
    tarball=$(orig_tarball) || exit $?
    echo "tarball: $tarball"
    args=$WORK/openmpi-configure-args.txt
    configure_args >"$args" || exit 1
    t_conf=$(date +%s)
    configure_tree "$tarball" "$args"
    echo "open mpi tree: $(($(date +%s) - t_conf)) s"
    build_plugin
    check_header_origin
    check_opal_config
    check_ompi_info
    check_mpirun
    echo "source-tree: total $(($(date +%s) - T_START)) s"
    finish
}

main "$@"
