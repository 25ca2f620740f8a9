# Shared settings of the VM tier (sourced by tbvm and run-tier.sh): where the repository and the
# build directory are, logging helpers, the modules the initramfs needs. No side effects.

TBVM_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TBVM_DIR=$(dirname "$TBVM_LIB")
TBVM_REPO=$(cd "$TBVM_DIR/../.." && pwd)
TBVM_BUILD=${TBVM_BUILD:-$TBVM_REPO/build/vm}

# Modules stage 1 loads before it can reach the host: virtio PCI, the 9p shares, overlayfs for a
# writable /etc and virtio-net. Their dependencies come from modules.dep (modprobe --show-depends).
TBVM_INITRD_MODULES="virtio_pci virtio_net 9pnet_virtio 9p overlay"

tbvm_log()
{
    echo "tbvm: $*" >&2
}

tbvm_die()
{
    echo "tbvm: error: $*" >&2
    exit 1
}

# Seconds since the epoch with centiseconds, for wall-time reports.
tbvm_now()
{
    echo "$EPOCHREALTIME"
}

# Elapsed seconds since $1 (a tbvm_now value), one decimal.
tbvm_since()
{
    awk -v a="$1" -v b="$(tbvm_now)" 'BEGIN { printf "%.1f", b - a }'
}
