# Builds what a guest boots, cached in $TBVM_BUILD (sourced by tbvm; needs common.sh):
#   debs/       the Debian kernel package (apt-get download, never installed on the host)
#   kroot/      its contents (dpkg -x) with modules.dep (depmod -b); guests see kroot/lib/modules
#   vmlinux     the ELF kernel for qemu's PVH entry      initramfs.cpio.gz  busybox + modules + init
#   ssh/        throw-away keys: client (OpenSSH format) and dropbear host key
# Every step is skipped when its output exists; `tbvm build --force` starts over.

# The package linux-image-amd64 depends on (e.g. linux-image-6.1.0-57-amd64). Order: the
# TBVM_KERNEL_PKG override, apt's metadata, then a package downloaded earlier.
tbvm_kernel_pkg()
{
    local pkg deb
    if [ -n "${TBVM_KERNEL_PKG:-}" ]; then
        echo "$TBVM_KERNEL_PKG"
        return 0
    fi
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
        awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9].*-amd64$/ { print $2; exit }')
    if [ -n "$pkg" ]; then
        echo "$pkg"
        return 0
    fi
    deb=$(ls -1 "$TBVM_BUILD"/debs/linux-image-[0-9]*-amd64_*.deb 2>/dev/null | sort -V | tail -n 1)
    if [ -n "$deb" ]; then
        basename "$deb" | cut -d_ -f1
        return 0
    fi
    tbvm_log "cannot resolve the kernel package: apt-cache depends linux-image-amd64 names none" \
        "and $TBVM_BUILD/debs holds none; set TBVM_KERNEL_PKG=linux-image-<version>-amd64"
    return 1
}

tbvm_build_fetch_kernel()
{
    local pkg=$1 deb
    mkdir -p "$TBVM_BUILD/debs"
    deb=$(ls -1 "$TBVM_BUILD/debs/${pkg}"_*.deb 2>/dev/null | tail -n 1)
    if [ -z "$deb" ]; then
        tbvm_log "build: apt-get download $pkg"
        (cd "$TBVM_BUILD/debs" && apt-get -q download "$pkg" >&2 2>/dev/null) ||
            { tbvm_log "apt-get download $pkg failed"; return 1; }
        deb=$(ls -1 "$TBVM_BUILD/debs/${pkg}"_*.deb 2>/dev/null | tail -n 1)
    fi
    [ -n "$deb" ] || { tbvm_log "apt-get download $pkg left no .deb in $TBVM_BUILD/debs"; return 1; }
    echo "$deb"
}

tbvm_build_kroot()
{
    local deb=$1 kver=$2 tmp="$TBVM_BUILD/kroot.tmp"
    rm -rf "$tmp" "$TBVM_BUILD/kroot"
    tbvm_log "build: unpacking $(basename "$deb")"
    dpkg -x "$deb" "$tmp" || { tbvm_log "dpkg -x $deb failed"; return 1; }
    # The package's postinst would run depmod; without it modprobe finds nothing.
    depmod -b "$tmp" "$kver" || { tbvm_log "depmod -b $tmp $kver failed"; return 1; }
    mv "$tmp" "$TBVM_BUILD/kroot"
}

# Module files for the initramfs in load order, dependencies first, without repeats.
tbvm_initrd_module_list()
{
    local kver=$1 mod
    for mod in $TBVM_INITRD_MODULES; do
        modprobe -d "$TBVM_BUILD/kroot" -S "$kver" --show-depends "$mod" ||
            { tbvm_log "module $mod: not found in kernel $kver"; return 1; }
    done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }'
}

tbvm_build_initramfs()
{
    local kver=$1 root="$TBVM_BUILD/initramfs.d" out="$TBVM_BUILD/initramfs.cpio.gz" list ko
    local applet
    list=$(tbvm_initrd_module_list "$kver") || return 1
    rm -rf "$root"
    mkdir -p "$root/.tbvm/bin" "$root/.tbvm/modules" "$root/dev" "$root/proc" "$root/sys"
    cp "$(command -v busybox)" "$root/.tbvm/bin/busybox"
    for applet in sh mount mkdir ln insmod cat sleep poweroff ls echo mknod; do
        ln -s busybox "$root/.tbvm/bin/$applet"
    done
    : >"$root/.tbvm/modules/order"
    for ko in $list; do
        cp "$ko" "$root/.tbvm/modules/"
        basename "$ko" >>"$root/.tbvm/modules/order"
    done
    cp "$TBVM_DIR/guest/init1" "$root/init"
    chmod +x "$root/init"
    # busybox cpio writes the newc format the kernel unpacks; no cpio package needed.
    (cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1 >"$out.tmp") &&
        mv "$out.tmp" "$out"
}

tbvm_build_keys()
{
    local dir="$TBVM_BUILD/ssh"
    [ -f "$dir/id_ed25519" ] && [ -f "$dir/dropbear_ed25519_host_key" ] && return 0
    rm -rf "$dir"
    mkdir -p "$dir"
    chmod 700 "$dir"
    ssh-keygen -q -t ed25519 -N '' -C tbvm-throwaway -f "$dir/id_ed25519" ||
        { tbvm_log "ssh-keygen failed"; return 1; }
    dropbearkey -t ed25519 -f "$dir/dropbear_ed25519_host_key" >/dev/null 2>&1 ||
        { tbvm_log "dropbearkey failed"; return 1; }
}

# Checks the host tools a build and a boot need; names every missing one at once.
tbvm_check_tools()
{
    local missing="" tool
    for tool in qemu-system-x86_64 busybox modprobe depmod xz dpkg apt-get ssh ssh-keygen \
        dropbear dropbearkey gzip flock; do
        command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
    done
    if [ -n "$missing" ]; then
        tbvm_log "missing host tools:$missing (see test/vm/README.md for the package list)"
        return 1
    fi
}

# Builds everything under a lock, so concurrent runs share one build directory safely.
tbvm_build()
{
    local force=${1:-0} pkg deb kver t0
    tbvm_check_tools || return 1
    mkdir -p "$TBVM_BUILD"
    exec 9>"$TBVM_BUILD/.build.lock"
    flock 9
    if [ "$force" = 1 ]; then
        rm -rf "$TBVM_BUILD/kroot" "$TBVM_BUILD/vmlinux" "$TBVM_BUILD/initramfs.cpio.gz" \
            "$TBVM_BUILD/ssh" "$TBVM_BUILD/kernel.version"
    fi
    pkg=$(tbvm_kernel_pkg) || return 1
    kver=${pkg#linux-image-}
    t0=$(tbvm_now)
    deb=$(tbvm_build_fetch_kernel "$pkg") || return 1
    if [ ! -f "$TBVM_BUILD/kroot/lib/modules/$kver/modules.dep" ]; then
        tbvm_build_kroot "$deb" "$kver" || return 1
        tbvm_log "build: $(basename "$deb") -> kroot/lib/modules/$kver ($(tbvm_since "$t0") s)"
    fi
    t0=$(tbvm_now)
    if [ ! -f "$TBVM_BUILD/vmlinux" ] || [ "$(cat "$TBVM_BUILD/kernel.version" 2>/dev/null)" != "$kver" ]; then
        "$TBVM_LIB/extract-vmlinux.sh" "$TBVM_BUILD/kroot/boot/vmlinuz-$kver" "$TBVM_BUILD/vmlinux" ||
            return 1
        echo "$kver" >"$TBVM_BUILD/kernel.version"
        tbvm_log "build: vmlinux (ELF for the PVH entry) ($(tbvm_since "$t0") s)"
    fi
    t0=$(tbvm_now)
    if [ ! -f "$TBVM_BUILD/initramfs.cpio.gz" ] ||
        [ "$TBVM_DIR/guest/init1" -nt "$TBVM_BUILD/initramfs.cpio.gz" ] ||
        [ "$TBVM_LIB/build.sh" -nt "$TBVM_BUILD/initramfs.cpio.gz" ] ||
        [ "$TBVM_BUILD/vmlinux" -nt "$TBVM_BUILD/initramfs.cpio.gz" ]; then
        tbvm_build_initramfs "$kver" || return 1
        tbvm_log "build: initramfs.cpio.gz ($(tbvm_since "$t0") s)"
    fi
    tbvm_build_keys || return 1
    flock -u 9
    exec 9>&-
}
