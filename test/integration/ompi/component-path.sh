#!/bin/bash
#
# component-path.sh [4.1|5.0]: the ways a user points Open MPI at an uninstalled or privately
# installed tbrdma all work, with the variable's OPAL name opal_mca_base_component_path (the
# plain name mca_base_component_path also reaches PMIx in 5.0, which warns about every file
# of the directory, and in ~/.openmpi/mca-params.conf does not reach 5.0's MPI processes at
# all: MPI_Init then fails because btl tbrdma was requested but not found). For each way:
# ompi_info lists tbrdma, or hello runs on 2 ranks with tbrdma opened by the BTL framework,
# and no output complains about the component path ("bad prefix", "failed to add").
#   1. mpirun --mca opal_mca_base_component_path SYS_DEFAULT:<dir>
#   2. environment OMPI_MCA_opal_mca_base_component_path (ompi_info and mpirun)
#   3. $HOME/.openmpi/mca-params.conf (ompi_info and mpirun; HOME is a scratch directory)

set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

IT_NOISE='bad prefix|failed to add|unable to be opened|was not found'

# Checks of one mpirun run: tbrdma opened in both ranks, no complaint about the path.
check_run()
{
    local name=$1 out=$IT_TMP/$1.out opened
    opened=$(grep -c 'components_open: component tbrdma open function successful' "$out")
    check "$name: tbrdma opened in both ranks ($opened of 2)" [ "$opened" = 2 ]
    if ! check "$name: no complaint about the component path" it_lacks "$out" "$IT_NOISE"
    then
        it_show "$out" "$IT_NOISE"
    fi
}

# ompi_info (with VAR=VALUE... set) lists tbrdma without complaints.
check_ompi_info()
{
    local name=$1 out=$IT_TMP/$1-ompi_info.out rc
    shift
    it_run env "$@" ompi_info >"$out" 2>&1
    rc=$?
    echo "-- $name: $* ompi_info: exit $rc"
    check "$name: ompi_info exits 0 (exit $rc)" [ "$rc" = 0 ]
    check "$name: ompi_info lists 'MCA btl: tbrdma'" it_has "$out" 'MCA btl: tbrdma \('
    check "$name: ompi_info does not complain about the path" it_lacks "$out" "$IT_NOISE"
}

check_mpirun_mca()
{
    it_mpirun_hello mca -- --mca opal_mca_base_component_path "SYS_DEFAULT:$IT_LIBS" \
        --mca btl_base_verbose 10
    check_run mca
}

check_environment()
{
    local var=OMPI_MCA_opal_mca_base_component_path=SYS_DEFAULT:$IT_LIBS
    check_ompi_info env "$var"
    it_mpirun_hello env "$var" -- --mca btl_base_verbose 10
    check_run env
}

# The scratch HOME lives in the build tree, which the 5.0 chroot sees at the same path.
check_params_file()
{
    local home=$IT_BUILD/test/integration/ompi/home
    rm -rf "$home"
    mkdir -p "$home/.openmpi"
    echo "opal_mca_base_component_path = SYS_DEFAULT:$IT_LIBS" >"$home/.openmpi/mca-params.conf"
    echo "mca-params.conf: $(cat "$home/.openmpi/mca-params.conf")"
    check_ompi_info conf HOME="$home"
    it_mpirun_hello conf HOME="$home" -- --mca btl_base_verbose 10
    check_run conf
    rm -rf "$home"
}

main()
{
    it_flavour "${1:-}"
    it_require_ompi
    it_require_plugin
    IT_HELLO=$(it_hello) || exit 1
    check_mpirun_mca
    check_environment
    check_params_file
    finish
}

main "$@"
