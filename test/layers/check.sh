#!/usr/bin/env bash
# check.sh [BUILD]: the plugin's layers (docs/design.md, "Layers") hold in the code as built.
#
# Every file of plugin/ belongs to the layer its folder names, from the bottom up: core (and the
# shared type headers btl_tbrdma.h, btl_tbrdma_compat.h), base, fabric, channel, proto (with
# proto/zcopy/), engine, and the top (the files left in plugin/: connect, signal, module,
# params, component). The rule, checked two ways:
#   calls     every function or variable one object of the plugin takes from another (nm: what
#             it leaves undefined, resolved to the object that defines it) lies in its own layer
#             or a lower one; within a layer, those calls form no circle (tsort)
#   includes  every header a source or header of the plugin includes lies in its own layer or a
#             lower one
# One name may be taken from higher up: mca_btl_tbrdma_component, the component's structure,
# which holds the MCA parameters every layer reads (data, not a call). A lower layer that must
# reach up goes through the module's table of upcalls (function pointers: no symbol to take).
# BUILD: the build folder (default build/, after ./build.sh).
set -uo pipefail
# shellcheck source=../lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
CHECK_NAME=layers
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
[ -d "$build/plugin" ] || skip "no build in $build (./build.sh first)"
command -v nm >/dev/null || skip "nm (binutils) is not installed"
command -v tsort >/dev/null || skip "tsort (coreutils) is not installed"

# layer_of PATH: the layer of a path below plugin/ (a source, a header or an object), as
# "RANK NAME"; nothing for a path outside the plugin's layers (coll/, plugin_load_check).
layer_of()
{
    case "$1" in
    core/* | btl_tbrdma.h | btl_tbrdma_compat.h) echo "0 core" ;;
    base/*) echo "1 base" ;;
    fabric/*) echo "2 fabric" ;;
    channel/*) echo "3 channel" ;;
    proto/*) echo "4 proto" ;;
    engine/*) echo "5 engine" ;;
    btl_tbrdma_*.[ch] | .libs/btl_tbrdma_*.o) echo "6 top" ;;
    esac
}

# The objects: plugin/<layer>/.libs/*.o (libtool's PIC objects), named as their source.
tmp=$(mktemp -d) || fatal "mktemp"
trap 'rm -rf "$tmp"' EXIT
(cd "$build/plugin" && find . -path ./coll -prune -o -path ./core -prune -o -name '*.o' \
    -path '*/.libs/*' -print | sed 's|^\./||' | sort) >"$tmp/objects"
check "the plugin's objects are built ($(wc -l <"$tmp/objects") in $build/plugin)" \
    test "$(wc -l <"$tmp/objects")" -ge 20

# name_of OBJECT: the source path the object was built from (without .c).
name_of()
{
    local dir base
    dir=$(dirname "$(dirname "$1")")
    base=$(basename "$1" .o)
    base=${base#libtbrdma_sys_la-}
    if [ "$dir" = . ]; then echo "$base"; else echo "$dir/$base"; fi
}

: >"$tmp/defs"
: >"$tmp/uses"
while read -r o; do
    n=$(name_of "$o")
    nm "$build/plugin/$o" | awk -v n="$n" '$2 ~ /^[TDBRCV]$/ { print $3, n }' >>"$tmp/defs"
    nm -u "$build/plugin/$o" | awk -v n="$n" '{ print $2, n }' >>"$tmp/uses"
done <"$tmp/objects"

# Every call between two objects: "USER DEFINER SYMBOL".
awk 'NR == FNR { def[$1] = $2; next } ($1 in def) && def[$1] != $2 { print $2, def[$1], $1 }' \
    "$tmp/defs" "$tmp/uses" | sort -u >"$tmp/calls"
check "calls between the plugin's files found ($(wc -l <"$tmp/calls"))" \
    test "$(wc -l <"$tmp/calls")" -ge 50

up=0
: >"$tmp/same"
while read -r user definer sym; do
    read -r ru lu < <(layer_of "$user.c")
    read -r rd ld < <(layer_of "$definer.c")
    if [ "$sym" = mca_btl_tbrdma_component ]; then
        continue
    fi
    if [ "$rd" -gt "$ru" ]; then
        echo "    $user.c ($lu) calls up into $definer.c ($ld): $sym"
        up=$((up + 1))
    elif [ "$rd" -eq "$ru" ]; then
        echo "$user $definer" >>"$tmp/same"
    fi
done <"$tmp/calls"
check "no file calls a file of a higher layer ($up such calls)" test "$up" -eq 0

# Within a layer: the calls form no circle (tsort names the files of one when there is).
awk '{ print $2, $1 }' "$tmp/same" | sort -u >"$tmp/edges"
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/tsort"; then
    sed 's/^/    /' "$tmp/tsort"
fi
check "no circle of calls within a layer ($(wc -l <"$tmp/edges") calls within layers)" \
    test ! -s "$tmp/tsort"

# Includes, read from the sources.
bad=0
while read -r f; do
    read -r rf lf < <(layer_of "$f")
    [ -n "${rf:-}" ] || continue
    while read -r inc; do
        read -r ri li < <(layer_of "$inc")
        [ -n "${ri:-}" ] || continue
        if [ "$ri" -gt "$rf" ]; then
            echo "    $f ($lf) includes $inc ($li)"
            bad=$((bad + 1))
        fi
    done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$top/plugin/$f")
done < <(cd "$top/plugin" && find . -path ./coll -prune -o \( -name '*.c' -o -name '*.h' \) -print \
    | sed 's|^\./||' | grep -v '^core/' | sort)
check "no file includes a header of a higher layer ($bad such includes)" test "$bad" -eq 0
finish
