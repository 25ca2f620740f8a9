# Starting, watching and stopping the qemu processes of one run (sourced by tbvm; needs
# common.sh and plan.sh). Every qemu started is recorded in TBVM_PIDS and killed by PID in
# tbvm_qemu_stop_all, which the caller's trap runs on exit, Ctrl-C, timeout or failure.

TBVM_PIDS=()
TBVM_SOCKDIR=""

# Accelerator options for qemu: "kvm" or "tcg".
tbvm_accel_opts()
{
    if [ "$1" = kvm ]; then
        echo "-accel kvm -cpu host"
    else
        # A smaller translation cache keeps qemu's RSS near 450 MB per VM.
        echo "-accel tcg,tb-size=64 -cpu max"
    fi
}

# Starts VM <id> of <n> in the background; its console goes to $run/vm<id>.console.
tbvm_qemu_start()
{
    local n=$1 id=$2 run=$3 accel=$4 mgmt=$5 fs
    local append="console=ttyS0 loglevel=4 panic=-1 tbvm.id=$id tbvm.run=$run"
    append="$append tbvm.repo=$TBVM_REPO tbvm.build=$TBVM_BUILD"
    fs="-fsdev local,id=fsusr,path=/usr,security_model=none,readonly=on"
    fs="$fs -device virtio-9p-pci,fsdev=fsusr,mount_tag=hostusr"
    fs="$fs -fsdev local,id=fsetc,path=/etc,security_model=none,readonly=on"
    fs="$fs -device virtio-9p-pci,fsdev=fsetc,mount_tag=hostetc"
    fs="$fs -fsdev local,id=fsrepo,path=$TBVM_REPO,security_model=none"
    fs="$fs -device virtio-9p-pci,fsdev=fsrepo,mount_tag=repo"
    case "$TBVM_BUILD/" in
    "$TBVM_REPO"/*) ;;
    *)
        fs="$fs -fsdev local,id=fsbuild,path=$TBVM_BUILD,security_model=none"
        fs="$fs -device virtio-9p-pci,fsdev=fsbuild,mount_tag=build"
        ;;
    esac
    # shellcheck disable=SC2046 # the option strings are word lists on purpose (no spaces in paths)
    qemu-system-x86_64 -nodefaults -no-user-config -machine pc $(tbvm_accel_opts "$accel") \
        -smp 1 -m 512 -display none -no-reboot -serial "file:$run/vm$id.console" \
        -kernel "$TBVM_BUILD/vmlinux" -initrd "$TBVM_BUILD/initramfs.cpio.gz" -append "$append" \
        $fs \
        -netdev "socket,id=mgmt,mcast=$mgmt,localaddr=127.0.0.1" \
        -device "virtio-net-pci,netdev=mgmt,mac=$(printf '52:54:00:00:00:%02x' "$id")" \
        $(tbvm_qemu_cable_opts "$n" "$TBVM_SOCKDIR" "$id") \
        </dev/null >"$run/vm$id.qemu.log" 2>&1 &
    TBVM_PIDS[$id]=$!
    echo "${TBVM_PIDS[$id]}" >"$run/vm$id.pid"
}

tbvm_qemu_alive()
{
    [ -n "${TBVM_PIDS[$1]:-}" ] && kill -0 "${TBVM_PIDS[$1]}" 2>/dev/null
}

# Stops every qemu of this run by PID: TERM, then KILL after 2 s; removes the sockets.
tbvm_qemu_stop_all()
{
    local id pid t
    for id in "${!TBVM_PIDS[@]}"; do
        pid=${TBVM_PIDS[$id]}
        kill -TERM "$pid" 2>/dev/null
    done
    for id in "${!TBVM_PIDS[@]}"; do
        pid=${TBVM_PIDS[$id]}
        for ((t = 0; t < 20; t++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    TBVM_PIDS=()
    if [ -n "$TBVM_SOCKDIR" ]; then
        rm -rf "$TBVM_SOCKDIR"
        TBVM_SOCKDIR=""
    fi
}

# A random multicast group and port for the management network, so concurrent runs on one
# host do not see each other's frames.
tbvm_mgmt_group()
{
    echo "239.255.$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1)):$((RANDOM % 30000 + 20000))"
}
