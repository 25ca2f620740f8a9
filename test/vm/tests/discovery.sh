#!/bin/bash
# tbvm-vms: 2
# VM tier: tbrdma-info --parsable finds every Soft-RoCE port of every VM with its netdev, IPv4
# address and IPv4-mapped GID index, in agreement with the run plan, `ibv_devinfo -v`, sysfs
# (/sys/class/infiniband/*/ports/1/{state,gids/*,gid_attrs/ndevs/*}) and `ip addr`.
# Runs on vm1 through `tbvm run`; checks each VM (itself with --local, over ssh).
. "$TBVM_REPO/test/vm/guest/lib.sh"

# sysfs GID text (8 groups of 4 hex digits) of an IPv4-mapped GID, or nothing.
mapped_ipv4_of_sysfs_gid()
{
    case "$1" in
    0000:0000:0000:0000:0000:ffff:*)
        local hex=${1#0000:0000:0000:0000:0000:ffff:}
        hex=${hex/:/}
        printf '%d.%d.%d.%d' "0x${hex:0:2}" "0x${hex:2:2}" "0x${hex:4:2}" "0x${hex:6:2}"
        ;;
    esac
}

# Checks one rxe device of this VM against tbrdma-info's lines in $info.
check_device()
{
    local dev=$1 sys=/sys/class/infiniband/$1/ports/1 line ndev ip4 idx gid_file n mapped
    local dv_idx want_if want_addr link dv
    dv=$(ibv_devinfo -v -d "$dev")
    line=$(grep "^port .* device=$dev " <<<"$info")
    tbvm_expect "$(hostname) $dev: port lines" "$(grep -c . <<<"$line")" 1
    read -r want_if _ want_addr link < <(awk -v h="$(hostname)" -v d="$dev" '
        $1 == "cable" && $3 == h && $5 == d { print $4, $5, $6, $2 }
        $1 == "cable" && $7 == h && $9 == d { print $8, $9, $10, $2 }' "$TBVM_RUN/plan")
    ndev=$(cat "$sys/gid_attrs/ndevs/0")
    ip4=$(ip -4 -o addr show dev "$ndev" | awk '{ print $4; exit }')
    idx=-1
    for gid_file in "$sys"/gids/*; do
        n=${gid_file##*/}
        mapped=$(mapped_ipv4_of_sysfs_gid "$(cat "$gid_file" 2>/dev/null)")
        if [ -n "$mapped" ] && [ "$mapped" = "${ip4%/*}" ]; then
            idx=$n
            break
        fi
    done
    dv_idx=$(awk -v a="::ffff:${ip4%/*}," '
        $1 ~ /^GID\[/ && $NF != "" { for (i = 1; i <= NF; i++) if ($i == a) { g = $0; sub(/^.*GID\[ */, "", g); sub(/\].*/, "", g); print g; exit } }' <<<"$dv")
    tbvm_expect "$(hostname) $dev: ifname (plan, cable $link)" "$(tbvm_field ifname <<<"$line")" "$want_if"
    tbvm_expect "$(hostname) $dev: ifname (sysfs gid_attrs/ndevs/0)" "$(tbvm_field ifname <<<"$line")" "$ndev"
    tbvm_expect "$(hostname) $dev: ipv4 (plan)" "$(tbvm_field ipv4 <<<"$line")" "$want_addr"
    tbvm_expect "$(hostname) $dev: ipv4 (ip addr)" "$(tbvm_field ipv4 <<<"$line")" "$ip4"
    tbvm_expect "$(hostname) $dev: gid_index (sysfs gids/*)" "$(tbvm_field gid_index <<<"$line")" "$idx"
    tbvm_expect "$(hostname) $dev: gid_index (ibv_devinfo -v)" "$(tbvm_field gid_index <<<"$line")" "$dv_idx"
    tbvm_expect "$(hostname) $dev: state (sysfs)" "$(tbvm_field state <<<"$line")" \
        "$(awk '{ print $2 }' "$sys/state")"
    tbvm_expect "$(hostname) $dev: link_layer" "$(tbvm_field link_layer <<<"$line")" \
        "$(awk '$1 == "link_layer:" { print $2; exit }' <<<"$dv")"
    tbvm_expect "$(hostname) $dev: mtu (ibv_devinfo active_mtu)" "$(tbvm_field mtu <<<"$line")" \
        "$(awk '$1 == "active_mtu:" { print $2; exit }' <<<"$dv")"
    tbvm_expect "$(hostname) $dev: bridge" "$(tbvm_field bridge <<<"$line")" -
    tbvm_expect "$(hostname) $dev: diag" "$(tbvm_field diag <<<"$line")" ok
    check_gid_lines "$dev" "$dv"
}

# The gid lines must be exactly ibv_devinfo's non-empty GID[i] entries (same RFC 5952 text).
check_gid_lines()
{
    local dev=$1 dv=$2 got want
    got=$(grep "^gid .* device=$dev " <<<"$info" | awk '{
        for (i = 2; i <= NF; i++) { if ($i ~ /^index=/) x = substr($i, 7); if ($i ~ /^gid=/) g = substr($i, 5) }
        print x, g }')
    want=$(awk '$1 ~ /^GID\[/ {
        l = $0; sub(/^[^[]*\[ */, "", l); x = l; sub(/\].*/, "", x)
        g = l; sub(/^[^:]*:[ \t]*/, "", g); sub(/,.*/, "", g)
        if (g != "::" && g != "0000:0000:0000:0000:0000:0000:0000:0000") print x, g }' <<<"$dv")
    tbvm_expect "$(hostname) $dev: gid lines vs ibv_devinfo GID[] ($(echo $want | tr ' ' '/'))" \
        "$(echo $got)" "$(echo $want)"
}

check_local()
{
    local bin dev devs
    bin=$(tbvm_tbrdma_info) || { echo "SKIP: tbrdma-info not built"; exit 77; }
    info=$("$bin" --parsable)
    echo "$(hostname): tbrdma-info --parsable:"
    sed 's/^/  /' <<<"$info"
    devs=$(ls /sys/class/infiniband)
    [ -n "$devs" ] || { echo "FAIL: $(hostname): no RDMA device in /sys/class/infiniband"; exit 1; }
    tbvm_expect "$(hostname): rxe devices in sysfs vs plan" "$(echo $devs)" \
        "$(awk -v h="$(hostname)" '$1 == "cable" && $3 == h { print $5 } $1 == "cable" && $7 == h { print $9 }' \
            "$TBVM_RUN/plan" | sort | tr '\n' ' ' | sed 's/ $//')"
    tbvm_expect "$(hostname): port lines" "$(grep -c '^port ' <<<"$info")" "$(echo $devs | wc -w)"
    for dev in $devs; do
        check_device "$dev"
    done
    [ "$TBVM_FAILS" = 0 ]
}

if [ "${1:-}" = --local ]; then
    check_local
    exit $?
fi
tbvm_tbrdma_info >/dev/null || { echo "SKIP: $(tbvm_project_build)/tools/tbrdma-info not built"; exit 77; }
status=0
[ "${TBVM_VMS:-0}" -ge 2 ] || { echo "FAIL: TBVM_VMS is '${TBVM_VMS:-}', need 2 or more VMs"; exit 1; }
# The VMs check themselves in parallel (each is a separate emulated CPU); outputs in order.
pids=()
for ((i = 1; i <= TBVM_VMS; i++)); do
    tbvm_on "vm$i" "cd $TBVM_REPO && bash test/vm/tests/discovery.sh --local" \
        >"/tmp/tbvm-discovery.vm$i.out" 2>&1 &
    pids[i]=$!
done
for ((i = 1; i <= TBVM_VMS; i++)); do
    wait "${pids[i]}" || status=1
    cat "/tmp/tbvm-discovery.vm$i.out"
done
echo "discovery: $([ $status = 0 ] && echo all checks passed || echo some checks FAILED) on $TBVM_VMS VMs"
exit $status
