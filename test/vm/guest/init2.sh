#!/bin/bash
# Stage-2 init of a tbvm guest (PID 1, host bash over 9p). Reads its part of the run plan from
# $run/vm<id>.conf (written by tbvm on the host), then:
#   names and addresses the NICs by MAC (eth0 = management, eth1.. = cables in link order),
#   creates one Soft-RoCE device per cable (rxe<k-1> on eth<k>), adds /32 routes to every
#   peer address over the direct cable, starts dropbear with the throw-away keys,
#   writes $run/vm<id>.ready, and on vm1 runs $run/cmd with its output in $run/vm1.out and its
#   exit status in $run/vm1.rc. Workers idle until tbvm kills them. Failures go to
#   $run/vm<id>.fail and power the VM off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root

param()
{
    local word
    for word in $(</proc/cmdline); do
        case "$word" in
        "tbvm.$1="*) echo "${word#tbvm.$1=}" ;;
        esac
    done
}

TBVM_ID=$(param id)
TBVM_RUN=$(param run)
TBVM_REPO=$(param repo)
TBVM_BUILD=$(param build)
export TBVM_ID TBVM_RUN TBVM_REPO TBVM_BUILD

fail()
{
    echo "vm$TBVM_ID: $*" | tee -a "$TBVM_RUN/vm$TBVM_ID.fail" >/dev/console
    sync
    busybox poweroff -f
}

# shellcheck source=/dev/null
. "$TBVM_RUN/vm$TBVM_ID.conf" || fail "cannot read $TBVM_RUN/vm$TBVM_ID.conf"
export TBVM_VMS TBVM_MGMT_NET
# shellcheck source=lib.sh
. "$TBVM_REPO/test/vm/guest/lib.sh" || fail "cannot read guest/lib.sh"

mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
ln -sf /proc/self/fd /dev/fd
hostname "vm$TBVM_ID"
echo "vm$TBVM_ID" >/etc/hostname

# Interface names by MAC: the PCI order normally gives them already, rename only if not.
name_nics()
{
    local name mac dev
    for name in "${!TBVM_NIC_MAC[@]}"; do
        mac=${TBVM_NIC_MAC[$name]}
        dev=$(tbvm_ifname_of_mac "$mac") || fail "no NIC with MAC $mac (for $name)"
        if [ "$dev" != "$name" ]; then
            ip link set dev "$dev" name "tbvmtmp$name" || fail "cannot rename $dev"
        fi
    done
    for name in "${!TBVM_NIC_MAC[@]}"; do
        dev=$(tbvm_ifname_of_mac "${TBVM_NIC_MAC[$name]}")
        if [ "$dev" != "$name" ]; then
            ip link set dev "$dev" name "$name" || fail "cannot rename $dev to $name"
        fi
    done
}

ip link set lo up
name_nics
tbvm_net_up || fail "network setup failed"
{
    echo "127.0.0.1 localhost"
    for ((i = 1; i <= TBVM_VMS; i++)); do
        echo "$TBVM_MGMT_NET.$i vm$i"
    done
} >/etc/hosts

modprobe rdma_rxe || fail "modprobe rdma_rxe failed"
modprobe rdma_ucm
tbvm_rxe_up || fail "rxe setup failed"

mkdir -p /root/.ssh /etc/dropbear
cp "$TBVM_BUILD/ssh/id_ed25519" /root/.ssh/id_ed25519
cp "$TBVM_BUILD/ssh/id_ed25519.pub" /root/.ssh/authorized_keys
cp "$TBVM_BUILD/ssh/dropbear_ed25519_host_key" /etc/dropbear/dropbear_ed25519_host_key
cat >/root/.ssh/config <<EOC
Host *
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
    LogLevel ERROR
    IdentityFile /root/.ssh/id_ed25519
EOC
chmod 600 /root/.ssh/* /etc/dropbear/*
dropbear -s -r /etc/dropbear/dropbear_ed25519_host_key -p 22 || fail "dropbear did not start"

# mpirun's out-of-band channel on the management network, whatever the cables do.
mkdir -p /etc/openmpi
echo "oob_tcp_if_include = $TBVM_MGMT_NET.0/24" >>/etc/openmpi/openmpi-mca-params.conf
for ((i = 1; i <= TBVM_VMS; i++)); do
    echo "vm$i slots=1"
done >/etc/tbvm-hostfile
export TBVM_HOSTFILE=/etc/tbvm-hostfile

# If the host's tbvm dies without stopping us (SIGKILL), its heartbeat file stops changing:
# power off after 60 s of silence rather than run forever.
watchdog()
{
    local last="" hb same=0
    while sleep 5; do
        hb=$(cat "$TBVM_RUN/heartbeat" 2>/dev/null)
        if [ "$hb" = "$last" ]; then
            same=$((same + 5))
        else
            same=0
            last=$hb
        fi
        if [ "$same" -ge 60 ]; then
            echo "vm$TBVM_ID: no heartbeat from tbvm for 60 s; powering off" >/dev/console
            busybox poweroff -f
        fi
    done
}
watchdog &

read -r up _ </proc/uptime
echo "$up" >"$TBVM_RUN/vm$TBVM_ID.ready"

if [ "$TBVM_ID" != 1 ]; then
    while :; do
        sleep 3600
    done
fi

# Head: wait until every peer has dropbear up, then run the command.
for ((i = 2; i <= TBVM_VMS; i++)); do
    for ((t = 0; t < 1200; t++)); do
        [ -f "$TBVM_RUN/vm$i.ready" ] && break
        [ -f "$TBVM_RUN/vm$i.fail" ] && fail "peer vm$i failed to start"
        sleep 0.25
    done
    [ -f "$TBVM_RUN/vm$i.ready" ] || fail "peer vm$i not ready after 300 s"
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$TBVM_REPO" || fail "cd $TBVM_REPO failed"
bash "$TBVM_RUN/cmd" </dev/null >"$TBVM_RUN/vm1.out" 2>&1
echo $? >"$TBVM_RUN/vm1.rc.tmp"
mv "$TBVM_RUN/vm1.rc.tmp" "$TBVM_RUN/vm1.rc"
sync
busybox poweroff -f
