#!/usr/bin/env bash
# Installs every Debian 12 package tbrdma needs to build, run its demo and run its tests.
# Idempotent: asks apt only for what is missing. Root only (CI runs as root). apt's output goes
# to build/install-deps.log (INSTALL_DEPS_LOG), one line per step to the terminal.
set -euo pipefail

packages=(
    # build
    gcc make autoconf automake libtool pkg-config
    libopenmpi-dev openmpi-bin libibverbs-dev libcunit1-dev
    # the simulated Mac cluster (network namespaces, veth cables)
    iproute2 util-linux procps psmisc iputils-ping bridge-utils
    # real verbs: rdma-core, and Soft-RoCE inside qemu VMs
    rdma-core ibverbs-utils ibverbs-providers
    qemu-system-x86 busybox-static kmod dropbear-bin openssh-client xz-utils
    # the VM tier's reference transport: Open MPI's pml ucx over the rxe devices
    libucx0
    # Open MPI 5.0 in a Debian 13 chroot
    debootstrap
    # tools used by tests; third-party MPI codes run over tbrdma (test/mpi/thirdparty.sh, hpc.sh)
    strace clang-format valgrind netpipe-openmpi hpcc
    lammps gromacs nwchem-openmpi scalapack-mpi-test
    # Debian's gmx_mpi mdrun refuses a CPU without rdtscp: hpc.sh runs it under qemu-user there
    qemu-user
    # the tools tests: MLX hostfile and --json checks, the Homebrew formula's syntax
    python3 ruby
    # bench/run's and bench/compare-jaccl's plots (the bench stage checks their PNGs)
    gnuplot-nox
    # the sanitize stage: clang, its ASan/UBSan runtimes and libFuzzer (libclang_rt.*)
    clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
        missing+=("$p")
    fi
done
if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages present"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages (${missing[*]}); run as root or install them" >&2
    exit 1
fi
# apt's own output (hundreds of lines) goes to a log; the terminal gets one line per step.
log=${INSTALL_DEPS_LOG:-$(cd "$(dirname "$0")/.." && pwd)/build/install-deps.log}
mkdir -p "$(dirname "$log")"
: >"$log"
echo "install-deps: installing ${#missing[@]} packages (apt's output: $log)"
export DEBIAN_FRONTEND=noninteractive
for attempt in 1 2 3; do
    if { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
        >>"$log" 2>&1; then
        echo "install-deps: installed ${#missing[@]} packages"
        exit 0
    fi
    echo "install-deps: apt failed (attempt $attempt), retrying in 10 s; its last lines:" >&2
    tail -n 5 "$log" | sed 's/^/    /' >&2
    sleep 10
done
echo "install-deps: could not install ${missing[*]} (apt's output: $log)" >&2
exit 1
