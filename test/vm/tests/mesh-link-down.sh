#!/bin/bash
# tbvm-vms: 3
# VM tier: the mesh job of mesh.sh with the link of vm1's cable to vm3 down (ip link set down
# in vm1 before the job). The plugin must name the missing pair ("no cable between host vm1 and
# host vm3", either order) and still name the two remaining cables with the right devices.
# The job's exit status is printed, not judged (falling back to TCP or stopping are both
# defensible; the lead decides). The link is brought back up on exit.
. "$TBVM_REPO/test/vm/guest/lib.sh"
tbvm_mesh_require

read -r ifname dev _ _ < <(tbvm_cable vm1 vm3)
trap 'ip link set dev "$ifname" up' EXIT
ip link set dev "$ifname" down || { echo "FAIL: cannot take $ifname down"; exit 1; }
echo "vm1: $ifname (device $dev, cable to vm3) is down; port state: $(cat /sys/class/infiniband/$dev/ports/1/state)"

out=/tmp/tbvm-mesh-down.out
tbvm_mesh_mpirun "$out"
rc=$?
cat "$out"
echo "vm: mesh-link-down mpirun status=$rc (not judged)"
tbvm_expect "missing pair vm1-vm3 reported" \
    "$(grep -cE 'no cable between host (vm1 and host vm3|vm3 and host vm1)' "$out" | awk '{ print ($1 > 0) }')" 1
named=$(tbvm_mesh_named "$out")
while read -r a da b db; do
    if [ "$a $b" = "vm1 vm3" ]; then
        tbvm_expect "cable vm1-vm3 (down) named" "$(awk '$1 == "vm1" && $3 == "vm3"' <<<"$named")" ""
        continue
    fi
    tbvm_expect "cable $a-$b named as" "$(awk -v a="$a" -v b="$b" '$1 == a && $3 == b' <<<"$named" |
        tr '\n' ';')" "$a $da $b $db;"
done < <(tbvm_mesh_expected)
echo "vm: mesh-link-down pairs named: $(tr '\n' ';' <<<"$named")"
[ "$TBVM_FAILS" = 0 ]
