#!/bin/bash
#
# mpirun.sh [4.1|5.0]: two ranks on this machine (no RDMA here) with
# `--mca pml ob1 --mca btl self,tcp,tbrdma` and the plugin's build directory in the component
# path (--mca mca_base_component_path on 4.1, opal_mca_base_component_path on 5.0: see lib.sh).
# Checks, for the flavour's Open MPI:
#   1. hello (patterned send/recv, allreduce) passes on both ranks, exit 0, and nothing
#      mentions tbrdma at default verbosity;
#   2. with btl_base_verbose the framework shows tbrdma opened and its init called (so the
#      test cannot pass because the .so was never found);
#   3. with btl_tbrdma_verbose 1 a tbrdma line says why it declined;
#   4. with btl_tbrdma_verbs_lib /nonexistent/libverbs.so that line names the library.

set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

IT_BAD_LIB=/nonexistent/libverbs.so

# run_hello NAME EXTRA_MCA_ARGS...: hello with the plugin's directory in the component path.
run_hello()
{
    local name=$1
    shift
    it_mpirun_hello "$name" -- --mca "$IT_PATH_PARAM" "SYS_DEFAULT:$IT_LIBS" "$@"
}

check_default()
{
    run_hello default
    if ! check "default: no output mentions tbrdma" it_lacks "$IT_TMP/default.out" tbrdma; then
        it_show "$IT_TMP/default.out" tbrdma
    fi
}

check_loaded()
{
    local out=$IT_TMP/loaded.out
    run_hello loaded --mca btl_base_verbose 10
    it_show "$out" 'component tbrdma'
    check "loaded: framework opened tbrdma ('component tbrdma open function successful')" \
        it_has "$out" 'components_open: component tbrdma open function successful'
    check "loaded: framework called tbrdma's init ('initializing btl component tbrdma')" \
        it_has "$out" 'select: initializing btl component tbrdma'
}

check_verbose_reason()
{
    local out=$IT_TMP/verbose.out
    run_hello verbose --mca btl_tbrdma_verbose 1
    it_show "$out" tbrdma
    check "verbose: a tbrdma line says why it declined (no device / no library)" \
        it_has "$out" 'tbrdma.*(no (rdma |verbs )?devices?|librar|not (found|available|loaded))'
}

check_bad_library()
{
    local out=$IT_TMP/badlib.out
    run_hello badlib --mca btl_tbrdma_verbs_lib "$IT_BAD_LIB" --mca btl_tbrdma_verbose 1
    it_show "$out" "tbrdma|$IT_BAD_LIB"
    check "badlib: a line names $IT_BAD_LIB" it_has "$out" "$IT_BAD_LIB"
}

main()
{
    it_flavour "${1:-}"
    it_require_ompi
    it_require_plugin
    IT_HELLO=$(it_hello) || exit 1
    check_default
    check_loaded
    check_verbose_reason
    check_bad_library
    finish
}

main "$@"
