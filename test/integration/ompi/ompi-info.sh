#!/bin/bash
#
# ompi-info.sh [4.1|5.0]: the flavour's ompi_info finds the built plugin through
# OMPI_MCA_mca_base_component_path (ompi_info ignores --mca for the component path), lists
# "MCA btl: tbrdma" with the flavour's BTL API version (3.1.0 / 3.3.0), and lists every
# parameter tbrdma promises (its own, those named in docs/params.md, and the base BTL ones)
# each with a non-empty help string.

set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# tbrdma's own parameters and the base BTL ones registered by mca_btl_base_param_register.
IT_REQUIRED_PARAMS="btl_tbrdma_verbose btl_tbrdma_verbs_lib btl_tbrdma_if_include
btl_tbrdma_if_exclude btl_tbrdma_mesh_file btl_tbrdma_allow_partial_mesh
btl_tbrdma_exclusivity btl_tbrdma_flags btl_tbrdma_eager_limit btl_tbrdma_max_send_size"

# Parameter names documented in docs/params.md (empty when the file does not exist).
documented_params()
{
    local doc=$IT_REPO/docs/params.md
    [ -f "$doc" ] && grep -Eo 'btl_tbrdma_[a-z0-9_]+' "$doc" | sort -u
}

# ompi_info with the plugin's directory after the system components.
ompi_info_tbrdma()
{
    it_run env OMPI_MCA_mca_base_component_path="SYS_DEFAULT:$IT_LIBS" ompi_info "$@"
}

check_listing()
{
    local out=$IT_TMP/human rc
    ompi_info_tbrdma --param btl tbrdma --level 9 >"$out" 2>&1
    rc=$?
    it_check "ompi_info --param btl tbrdma --level 9 exits 0 (exit $rc)" [ "$rc" = 0 ]
    it_show "$out" 'MCA btl: tbrdma'
    it_check "lists 'MCA btl: tbrdma (MCA v2.1.0, API v$IT_API, Component v$IT_FLAVOUR.x)'" \
        it_has "$out" "MCA btl: tbrdma \\(MCA v2\\.1\\.0, API v${IT_API//./\\.}, Component v${IT_FLAVOUR//./\\.}\\."
    it_check "no component load error reported" \
        it_lacks "$out" 'unable to be opened|was not found|does not match filename'
}

# Check every parameter has help text and every required one is listed.
check_params()
{
    local out=$IT_TMP/parsable names name help missing="" nohelp=""
    ompi_info_tbrdma --param btl tbrdma --level 9 --parsable >"$out" 2>&1
    names=$(sed -n 's/^mca:btl:tbrdma:param:\(btl_tbrdma_[a-z0-9_]*\):value:.*/\1/p' "$out" | sort -u)
    echo "parameters listed: $(echo "$names" | wc -w)"
    for name in $names; do
        help=$(sed -n "s/^mca:btl:tbrdma:param:$name:help://p" "$out" | head -n 1)
        printf '    %-40s %.70s\n' "$name" "$help"
        [ -n "${help// /}" ] || nohelp="$nohelp $name"
    done
    it_check "every listed parameter has a help string (without:${nohelp:- none})" \
        [ -z "$nohelp" ]
    for name in $IT_REQUIRED_PARAMS $(documented_params); do
        echo "$names" | grep -qx "$name" || missing="$missing $name"
    done
    if [ -f "$IT_REPO/docs/params.md" ]; then
        echo "docs/params.md names: $(documented_params | tr '\n' ' ')"
    else
        echo "docs/params.md does not exist yet: checking the built-in list only"
    fi
    it_check "every required and documented parameter is listed (missing:${missing:- none})" \
        [ -z "$missing" ]
}

main()
{
    it_flavour "${1:-}"
    it_require_ompi
    it_require_plugin
    check_listing
    check_params
    it_finish
}

main "$@"
