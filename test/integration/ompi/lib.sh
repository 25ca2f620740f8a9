# shellcheck shell=bash
#
# Shared part of the Open MPI integration tests (ompi-info.sh, mpirun.sh, version-guard.sh):
# the Open MPI "flavour" a test runs against and how to run in it. The verdict helpers (check,
# skip, fatal, finish, ...) come from test/lib/check.sh.
#
# Flavours (first argument of a test, else $TBRDMA_OMPI_FLAVOUR, else 4.1):
#   4.1  the host's Open MPI (Debian 12: 4.1.4); plugin build dir <repo>/build
#   5.0  Open MPI 5.0.7 in the Debian 13 chroot of test/ompi5 (commands run through
#        test/ompi5/in-chroot.sh); plugin build dir <repo>/build/ompi5/obj
# Overrides: TBRDMA_BUILD_DIR (plugin build dir of the flavour), TBRDMA_OTHER_BUILD_DIR (the
# other flavour's, for the version guard), TBRDMA_OMPI_WRAP (command prefix, word-split).
#
# Tests exit 0 pass, 1 fail, 77 skip, and print one "ok:" or "FAIL:" line per check.

# shellcheck disable=SC2034 # (the variables are used by the tests that source this file)
# shellcheck source=../../lib/check.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/check.sh"

IT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IT_REPO=$(cd "$IT_DIR/../../.." && pwd)
IT_TIMEOUT=${TBRDMA_IT_TIMEOUT:-300}
IT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/tbrdma-ompi-it.XXXXXX")
trap 'rm -rf "$IT_TMP"' EXIT

# Run a command in the flavour's environment (host or chroot).
it_run()
{
    "${IT_WRAP[@]}" "$@"
}

# Set IT_FLAVOUR, IT_WRAP, IT_BUILD, IT_OTHER_BUILD, IT_API, IT_MPIRUN_EXTRA from flavour $1, and
# CHECK_NAME, the name finish reports: "TEST (FLAVOUR)".
it_flavour()
{
    IT_FLAVOUR=${1:-${TBRDMA_OMPI_FLAVOUR:-4.1}}
    case "$IT_FLAVOUR" in
    4.1)
        IT_WRAP=()
        IT_BUILD=${TBRDMA_BUILD_DIR:-$IT_REPO/build}
        IT_OTHER_FLAVOUR=5.0
        IT_OTHER_BUILD=${TBRDMA_OTHER_BUILD_DIR:-$IT_REPO/build/ompi5/obj}
        IT_API=3.1.0
        IT_PATH_PARAM=mca_base_component_path
        IT_MPIRUN_EXTRA=()
        ;;
    5.0)
        IT_WRAP=("$IT_REPO/test/ompi5/in-chroot.sh")
        IT_BUILD=${TBRDMA_BUILD_DIR:-$IT_REPO/build/ompi5/obj}
        IT_OTHER_FLAVOUR=4.1
        IT_OTHER_BUILD=${TBRDMA_OTHER_BUILD_DIR:-$IT_REPO/build}
        IT_API=3.3.0
        # In 5.0 mpirun (PRRTE) hands a plain "mca_base_component_path" to PMIx as well, whose
        # own component loader then warns in every rank that SYS_DEFAULT does not exist and
        # that mca_btl_tbrdma.so "has bad prefix - expected: pmix_mca_". The name with OPAL's
        # project prefix reaches only Open MPI.
        IT_PATH_PARAM=opal_mca_base_component_path
        # 5.0.7's btl/tcp finds no "reachable pairing" for this machine's eth0 (virtio, speed
        # unknown) and aborts MPI_Init; loopback works. 4.1 has no reachable framework.
        IT_MPIRUN_EXTRA=(--mca btl_tcp_if_include lo)
        ;;
    *)
        echo "usage: $(basename "$0") [4.1|5.0]" >&2
        exit 2
        ;;
    esac
    if [ -n "${TBRDMA_OMPI_WRAP:-}" ]; then
        read -r -a IT_WRAP <<<"$TBRDMA_OMPI_WRAP"
    fi
    CHECK_NAME="$(basename "$0" .sh) ($IT_FLAVOUR)"
    IT_LIBS=$IT_BUILD/plugin/.libs
    IT_OTHER_LIBS=$IT_OTHER_BUILD/plugin/.libs
    echo "flavour $IT_FLAVOUR: plugin $IT_LIBS/mca_btl_tbrdma.so, run through" \
        "'${IT_WRAP[*]:-host}'"
}

# Skip unless the flavour's Open MPI runs and has the expected major.minor version.
it_require_ompi()
{
    local version
    local stamp=${TBRDMA_OMPI5_CHROOT:-$IT_REPO/build/ompi5/chroot}/.tbrdma-chroot-ok
    if [ "$IT_FLAVOUR" = 5.0 ] && [ ! -f "$stamp" ]; then
        skip "no Open MPI 5.0 chroot (run test/ompi5/make-chroot.sh)"
    fi
    version=$(it_run ompi_info --version 2>&1 | head -n 1)
    case "$version" in
    "Open MPI v$IT_FLAVOUR."*) echo "ompi_info --version: $version" ;;
    *) skip "flavour $IT_FLAVOUR: ompi_info --version printed '$version'" ;;
    esac
}

# Skip unless the flavour's plugin is built.
it_require_plugin()
{
    if [ ! -f "$IT_LIBS/mca_btl_tbrdma.so" ]; then
        if [ "$IT_FLAVOUR" = 5.0 ]; then
            skip "$IT_LIBS/mca_btl_tbrdma.so not built (run test/ompi5/build.sh)"
        fi
        skip "$IT_LIBS/mca_btl_tbrdma.so not built (run ./build.sh)"
    fi
}

# Print the path of the hello program for this flavour, compiling it with the flavour's mpicc
# when it is missing or older than hello.c. It lives under the plugin build dir, which the
# chroot can see.
it_hello()
{
    local src=$IT_DIR/hello.c bin=$IT_BUILD/test/integration/ompi/hello
    if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
        mkdir -p "$(dirname "$bin")"
        if ! it_run mpicc -std=gnu99 -O2 -Wall -Wextra -o "$bin" "$src" >&2; then
            fatal "mpicc of $src failed"
        fi
    fi
    echo "$bin"
}

# it_mpirun_hello NAME [VAR=VALUE...] -- [MPIRUN_ARG...]: run hello on 2 ranks with
# `--mca pml ob1 --mca btl self,tcp,tbrdma`, the flavour's extra arguments and MPIRUN_ARGs, in
# an environment with the VARs set. Output (stdout+stderr) goes to $IT_TMP/NAME.out, stdout
# alone to $IT_TMP/NAME.stdout. Checks exit 0 and an OK line from both ranks. Needs IT_HELLO.
it_mpirun_hello()
{
    local name=$1 vars=() rc ok
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        vars+=("$1")
        shift
    done
    shift
    it_run env "${vars[@]}" timeout -k 10 "$IT_TIMEOUT" mpirun --allow-run-as-root \
        --oversubscribe -np 2 --mca pml ob1 --mca btl self,tcp,tbrdma "${IT_MPIRUN_EXTRA[@]}" \
        "$@" "$IT_HELLO" >"$IT_TMP/$name.stdout" 2>"$IT_TMP/$name.err"
    rc=$?
    cat "$IT_TMP/$name.stdout" "$IT_TMP/$name.err" >"$IT_TMP/$name.out"
    echo "-- $name: ${vars[*]} mpirun ... $* hello: exit $rc"
    ok=$(grep -Ec '^hello: rank [01] of 2 OK$' "$IT_TMP/$name.stdout")
    check "$name: mpirun exits 0 (exit $rc)" [ "$rc" = 0 ]
    if ! check "$name: both ranks print 'hello: rank R of 2 OK' ($ok of 2)" [ "$ok" = 2 ]; then
        sed 's/^/    | /' "$IT_TMP/$name.out" | head -n 30
    fi
}

# True when file $1 contains a line matching extended regex $2 (case-insensitive).
it_has()
{
    grep -Eiq -- "$2" "$1"
}

# True when file $1 has no line matching extended regex $2 (case-insensitive).
it_lacks()
{
    ! grep -Eiq -- "$2" "$1"
}

# Print the lines of file $1 matching regex $2, indented, at most 5.
it_show()
{
    grep -Ei -- "$2" "$1" | head -n 5 | sed 's/^/    | /'
}
