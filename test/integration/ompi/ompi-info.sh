#!/bin/bash
#
# ompi-info.sh [4.1|5.0]: the flavour's ompi_info finds the built plugin through
# OMPI_MCA_mca_base_component_path (ompi_info ignores --mca for the component path), lists
# "MCA btl: tbrdma" with the flavour's BTL API version (3.1.0 / 3.3.0), lists tbrdma's own
# and the base BTL parameters each with a non-empty help string, and agrees with the tables
# of docs/params.md (same parameters for this flavour, same levels, same defaults); so does the
# coll component's ompi_info (coll/tbrdma, mca_coll_tbrdma.so beside the BTL's build).

set -u

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# tbrdma's own parameters and the base BTL ones registered by mca_btl_base_param_register.
IT_REQUIRED_PARAMS="btl_tbrdma_verbose btl_tbrdma_verbs_lib btl_tbrdma_if_include
btl_tbrdma_if_exclude btl_tbrdma_mesh_file btl_tbrdma_allow_partial_mesh
btl_tbrdma_exclusivity btl_tbrdma_flags btl_tbrdma_eager_limit btl_tbrdma_max_send_size"

# documented_params [FRAMEWORK]: "NAME<TAB>LEVEL<TAB>DEFAULT" for every FRAMEWORK_tbrdma_*
# (default btl) parameter row of the tables in docs/params.md that
# applies to this flavour (rows saying "Open MPI X.Y only" for another X.Y are left out). LEVEL is
# the row's "Level" column, "-" when the table has none. DEFAULT is written as ompi_info prints
# a value: the "Default" column's first word, without backticks; "" and "none" are empty,
# SIZE_MAX is 2^64 - 1 ("?" when the table has no such column). Prints nothing when the file
# does not exist.
documented_params()
{
    local doc=$IT_REPO/docs/params.md
    [ -f "$doc" ] || return 0
    awk -F'|' -v flavour="$IT_FLAVOUR" -v fw="${1:-btl}" '
        /^\| *Parameter *\|/ {
            level_col = 0
            default_col = 0
            for (i = 2; i < NF; i++) {
                h = $i; gsub(/ /, "", h)
                if (h == "Level") level_col = i
                if (h == "Default") default_col = i
            }
            next
        }
        $2 ~ "^ *`" fw "_tbrdma_[a-z0-9_]+`" {
            if (match($0, /Open MPI [0-9]+\.[0-9]+ only/)) {
                only = substr($0, RSTART + 9, RLENGTH - 14)
                if (only != flavour) next
            }
            name = $2; gsub(/[ `]/, "", name)
            level = "-"
            if (level_col) { level = $level_col; gsub(/ /, "", level) }
            d = "?"
            if (default_col) { d = $default_col; gsub(/`/, "", d); sub(/^ +/, "", d); sub(/ .*/, "", d) }
            if (d == "\"\"" || d == "none") d = ""
            if (d == "SIZE_MAX") d = "18446744073709551615"
            print name "\t" level "\t" d
        }' "$doc"
}

# ompi_info with the plugin's directory after the system components.
ompi_info_tbrdma()
{
    it_run env OMPI_MCA_mca_base_component_path="SYS_DEFAULT:$IT_LIBS" ompi_info "$@"
}

check_listing()
{
    local out=$IT_TMP/human rc api=${IT_API//./\\.} version=${IT_FLAVOUR//./\\.}
    ompi_info_tbrdma --param btl tbrdma --level 9 >"$out" 2>&1
    rc=$?
    check "ompi_info --param btl tbrdma --level 9 exits 0 (exit $rc)" [ "$rc" = 0 ]
    it_show "$out" 'MCA btl: tbrdma'
    check "lists 'MCA btl: tbrdma (MCA v2.1.0, API v$IT_API, Component v$IT_FLAVOUR.x)'" \
        it_has "$out" "MCA btl: tbrdma \\(MCA v2\\.1\\.0, API v$api, Component v$version\\."
    check "no component load error reported" \
        it_lacks "$out" 'unable to be opened|was not found|does not match filename'
}

# Check every parameter has help text and every required one is listed.
check_params()
{
    local out=$IT_TMP/parsable names name help nohelp=""
    ompi_info_tbrdma --param btl tbrdma --level 9 --parsable >"$out" 2>&1
    names=$(sed -n 's/^mca:btl:tbrdma:param:\(btl_tbrdma_[a-z0-9_]*\):value:.*/\1/p' "$out" \
        | sort -u)
    echo "parameters listed: $(echo "$names" | wc -w)"
    for name in $names; do
        help=$(sed -n "s/^mca:btl:tbrdma:param:$name:help://p" "$out" | head -n 1)
        printf '    %-40s %.70s\n' "$name" "$help"
        [ -n "${help// /}" ] || nohelp="$nohelp $name"
    done
    check "every listed parameter has a help string (without:${nohelp:- none})" \
        [ -z "$nohelp" ]
    check_required "$names"
    check_documented "$names" "$out"
    check_defaults "$out"
}

# The parameters every flavour must list.
check_required()
{
    local names=$1 name missing=""
    for name in $IT_REQUIRED_PARAMS; do
        echo "$names" | grep -qx "$name" || missing="$missing $name"
    done
    check "the required parameters are listed (missing:${missing:- none})" [ -z "$missing" ]
}

# docs/params.md and ompi_info agree: same parameter set for this flavour, same levels.
check_documented()
{
    local names=$1 out=$2 doc name level listed_level missing="" undocumented="" badlevel=""
    doc=$(documented_params)
    if [ -z "$doc" ]; then
        echo "docs/params.md missing or without parameter tables: not compared"
        return 0
    fi
    while IFS=$'\t' read -r name level _; do
        if ! echo "$names" | grep -qx "$name"; then
            missing="$missing $name"
            continue
        fi
        listed_level=$(sed -n "s/^mca:btl:tbrdma:param:$name:level://p" "$out" | head -n 1)
        if [ "$level" != - ] && [ "$level" != "$listed_level" ]; then
            badlevel="$badlevel $name(doc $level, ompi_info $listed_level)"
        fi
    done <<<"$doc"
    for name in $names; do
        echo "$doc" | grep -q "^$name"$'\t' || undocumented="$undocumented $name"
    done
    echo "docs/params.md rows for $IT_FLAVOUR: $(echo "$doc" | wc -l)"
    check "every parameter documented for $IT_FLAVOUR is listed (missing:${missing:- none})" \
        [ -z "$missing" ]
    check "every listed parameter is documented (undocumented:${undocumented:- none})" \
        [ -z "$undocumented" ]
    check "documented levels match ompi_info (mismatches:${badlevel:- none})" [ -z "$badlevel" ]
}

# check_defaults OUT [FRAMEWORK [MIN]]: docs/params.md's defaults and levels of FRAMEWORK's
# (btl) tbrdma parameters are what ompi_info shows in OUT (--parsable, no MCA setting in the
# environment); at least MIN (10) of them are compared.
check_defaults()
{
    local out=$1 fw=${2:-btl} min=${3:-10} name level def value listed bad="" n=0
    while IFS=$'\t' read -r name level def; do
        [ -n "$name" ] && [ "$def" != "?" ] || continue
        value=$(sed -n "s/^mca:$fw:tbrdma:param:$name:value://p" "$out" | head -n 1)
        listed=$(sed -n "s/^mca:$fw:tbrdma:param:$name:level://p" "$out" | head -n 1)
        n=$((n + 1))
        [ "$def" = "$value" ] || bad="$bad $name(doc '$def', ompi_info '$value')"
        [ "$level" = - ] || [ "$level" = "$listed" ] \
            || bad="$bad $name(doc level $level, ompi_info $listed)"
    done < <(documented_params "$fw")
    check "the $n documented $fw defaults are ompi_info's (mismatches:${bad:- none})" \
        test -z "$bad" -a "$n" -ge "$min"
}

# coll/tbrdma: ompi_info lists it, and every coll_tbrdma parameter is documented with
# ompi_info's default and level, and every documented one is listed.
check_coll()
{
    local out=$IT_TMP/coll coll=$IT_BUILD/plugin/coll/.libs names doc undocumented=""
    [ -f "$coll/mca_coll_tbrdma.so" ] || {
        fail "coll/tbrdma not built ($coll/mca_coll_tbrdma.so)"
        return
    }
    it_run env OMPI_MCA_mca_base_component_path="SYS_DEFAULT:$IT_LIBS:$coll" \
        ompi_info --param coll tbrdma --level 9 --parsable >"$out" 2>&1
    names=$(sed -n 's/^mca:coll:tbrdma:param:\(coll_tbrdma_[a-z0-9_]*\):value:.*/\1/p' "$out" \
        | sort -u)
    doc=$(documented_params coll)
    for name in $names; do
        echo "$doc" | grep -q "^$name"$'\t' || undocumented="$undocumented $name"
    done
    check "ompi_info lists coll/tbrdma's parameters ($(echo "$names" | wc -w)), each documented" \
        test -n "$names" -a -z "$undocumented"
    check_defaults "$out" coll "$(echo "$doc" | grep -c .)"
}

main()
{
    it_flavour "${1:-}"
    it_require_ompi
    it_require_plugin
    check_listing
    check_params
    check_coll
    finish
}

main "$@"
