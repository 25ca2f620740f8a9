#!/usr/bin/env bash
# rotation: the checks that rotate (test/lib/rotation.sh: the simulator's and the plugin's
# mutants, the HPC code runs, the VM tier's MPI tests) are all run within the stated number of
# submissions. For every group: the slices together hold every item, each exactly once, and none
# is empty where there are at least as many items as slices; --full (ROT_FULL=1) takes every item; ROT_SLICE picks a slice; a run's own slice is its
# commit count modulo the number of slices; and ./run-tests.sh draws each group's items through the
# rotation (rot_group), so no loop of its can run a subset of its own.
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
self_init rotation
# shellcheck source=../lib/rotation.sh
. "$top/test/lib/rotation.sh"

check "there are $ROT_SLICES slices (at least 2)" test "$ROT_SLICES" -ge 2
for g in $ROT_GROUPS; do
    rot_items "$g" | sort >"$tmp/$g.all"
    : >"$tmp/$g.picked"
    for ((s = 0; s < ROT_SLICES; s++)); do
        rot_group "$s" "$g" >"$tmp/$g.$s"
        if [ "$(wc -l <"$tmp/$g.all")" -ge "$ROT_SLICES" ]; then
            check "$g: slice $s holds some of the $(wc -l <"$tmp/$g.all") items ($(wc -l <"$tmp/$g.$s"))" \
                test -s "$tmp/$g.$s"
        fi
        cat "$tmp/$g.$s" >>"$tmp/$g.picked"
    done
    check "$g: there are items ($(wc -l <"$tmp/$g.all"))" test -s "$tmp/$g.all"
    expect "$g: the slices together hold every item, each once" "$(cat "$tmp/$g.all")" \
        "$(sort "$tmp/$g.picked")"
    expect "$g: --full takes every item" "$(cat "$tmp/$g.all")" \
        "$(ROT_FULL=1 rot_group "$(ROT_FULL=1 rot_slice)" "$g" | sort)"
    check "run-tests.sh draws $g through the rotation" \
        grep -q "rot_group \"\$slice\" $g" "$top/run-tests.sh"
done
busy=$(for g in ompi-source mpi-many; do rot_items "$g" | while read -r i; do rot_slice_of "$g" "$i"; done; done | sort -u | tr '\n' ' ')
while read -r g item; do
    at=$(rot_slice_of "$g" "$item")
    check "$g $item (slow) is in a slice ($at), not one of the longest ($busy)" \
        eval '[ -n "$at" ] && [[ " $busy" != *" $at "* ]]'
done <<<"$ROT_KEEP_APART"
expect "ROT_SLICE=1 picks slice 1" 1 "$(ROT_SLICE=1 rot_slice)"
expect "a run's slice is its commit count modulo $ROT_SLICES" \
    $(($(git -C "$top" rev-list --count HEAD) % ROT_SLICES)) "$(rot_slice)"
finish
