#!/bin/bash
# tbvm-vms: 2
# VM tier: with a cable interface enslaved to a bridge (Linux's stand-in for macOS's Thunderbolt
# Bridge), tbrdma-info --parsable reports diag=bridged and names the bridge for that port, and
# keeps diag=ok for the other ports. Runs on vm1; the bridge is removed on exit.
. "$TBVM_REPO/test/vm/guest/lib.sh"

BR=tbvmbr0
bin=$(tbvm_tbrdma_info) || { echo "SKIP: $(tbvm_project_build)/tools/tbrdma-info not built"; exit 77; }
read -r ifname dev _ _ < <(tbvm_cable vm1 vm2)

cleanup()
{
    ip link set dev "$ifname" nomaster 2>/dev/null
    ip link del "$BR" 2>/dev/null
}
trap cleanup EXIT

ip link add "$BR" type bridge || { echo "FAIL: cannot create bridge $BR"; exit 1; }
ip link set dev "$ifname" master "$BR" || { echo "FAIL: cannot enslave $ifname to $BR"; exit 1; }
ip link set dev "$BR" up
echo "vm1: $ifname (device $dev) enslaved to $BR"
info=$("$bin" --parsable)
sed 's/^/  /' <<<"$info"
line=$(grep "^port .* device=$dev " <<<"$info")
tbvm_expect "$dev: diag" "$(tbvm_field diag <<<"$line")" bridged
tbvm_expect "$dev: bridge" "$(tbvm_field bridge <<<"$line")" "$BR"
tbvm_expect "$dev: ifname" "$(tbvm_field ifname <<<"$line")" "$ifname"
tbvm_expect "$dev: diag record" "$(grep "^diag .* device=$dev " <<<"$info" | tbvm_field name)" bridged
for other in $(grep '^port ' <<<"$info" | tbvm_field device); do
    [ "$other" = "$dev" ] && continue
    tbvm_expect "$other (not bridged): diag" \
        "$(grep "^port .* device=$other " <<<"$info" | tbvm_field diag)" ok
done
echo "vm: bridged diag=$(tbvm_field diag <<<"$line")"
[ "$TBVM_FAILS" = 0 ]
