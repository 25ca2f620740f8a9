#!/usr/bin/env bash
# tbrdma-doctor's macOS checks on 4 simulated Macs, with every macOS command the probe runs
# (system_profiler, networksetup, socketfilterfw) read from recorded outputs
# (test/samples/macos, TBRDMA_DOCTOR_FAKE_MACOS) that describe the same 4 Macs: the cables are
# then found from macOS's Thunderbolt topology (bus domain UUIDs), not from link-local
# neighbours. As recorded after tbrdma-setup the cluster is ready; each variant of one or two
# Macs' outputs is named in one line with its fix: a Thunderbolt 4 cable, the firewall on, the
# Thunderbolt Bridge service active, an address in no network service, exo's DHCP daemon, two
# cables crossed, a cable unplugged. The hostfile the doctor writes gives each Mac its
# performance cores as slots, from sysctl outputs made up here (not recorded): Apple silicon's
# hw.perflevel0.physicalcpu, an Intel Mac's hw.physicalcpu, none. What is not run: macOS itself
# (see test/samples/macos).
source "$(dirname "$0")/lib.sh"
require_env
command -v python3 >/dev/null || fatal "python3 is needed to read --json (test/install-deps.sh)"
samples="$top/test/samples/macos"
tools_cluster_up 4 --addressing p2p
export TBRDMA_DOCTOR_FAKE_MACOS="$TC_TMP/macos"

# recorded [VARIANT]: the recorded outputs of cluster4, with VARIANT's hosts copied over them.
recorded()
{
    rm -rf "$TBRDMA_DOCTOR_FAKE_MACOS"
    cp -r "$samples/cluster4" "$TBRDMA_DOCTOR_FAKE_MACOS"
    if [ -n "${1:-}" ]; then
        cp -r "$samples/variants/$1/." "$TBRDMA_DOCTOR_FAKE_MACOS/"
    fi
}

recorded
run_doctor
expect_ready "as recorded after tbrdma-setup"
run_doctor --json
expect "--json: ready, 6 cables, every one found from the Thunderbolt topology" \
    "True 6 thunderbolt" "$(echo "$out" | python3 -c 'import json, sys
d = json.load(sys.stdin)
print(d["ready"], len(d["cables"]), " ".join(sorted(set(c["source"] for c in d["cables"]))))')"

# The slots: mac-a an M3 Ultra (24 performance cores of 32), mac-b without perflevel0 (an
# Intel Mac: every physical core), mac-c and mac-d with no answer from sysctl.
recorded
echo 24 >"$TBRDMA_DOCTOR_FAKE_MACOS/mac-a/sysctl_-n_hw.perflevel0.physicalcpu"
echo 32 >"$TBRDMA_DOCTOR_FAKE_MACOS/mac-a/sysctl_-n_hw.physicalcpu"
echo 8 >"$TBRDMA_DOCTOR_FAKE_MACOS/mac-b/sysctl_-n_hw.physicalcpu"
run_doctor --write-hostfile "$TC_TMP/hostfile"
expect_ready "with sysctl's cores"
expect "the hostfile written: slots from hw.perflevel0.physicalcpu, else hw.physicalcpu, else none" \
    "mac-a slots=24 mac-b slots=8 mac-c mac-d" "$(grep -v '^#' "$TC_TMP/hostfile" | tr '\n' ' ' | sed 's/ $//')"
run_doctor --verbose
expect "--verbose: the cores of mac-a and mac-b, and where from" \
    "mac-a: 24 performance cores of 32 (hw.perflevel0.physicalcpu) mac-b: 8 performance cores of 8 (hw.physicalcpu) " \
    "$(echo "$out" | sed -n 's/^host \(mac-[a-d]\) .*, \([0-9]* performance cores .*\)$/\1: \2/p' | tr '\n' ' ')"

recorded tb4
run_doctor
expect_problem "Thunderbolt 4 cable" \
    '^host mac-b: device rdma_en3 \(interface en3\): Thunderbolt 2 \(thunderboltusb4_bus_1, receptacle 2\) links to mac-c rdma_en3 \(en3\) at 40 Gb/s: that is Thunderbolt 4' \
    'use a Thunderbolt 5 cable'

recorded firewall
run_doctor
expect_problem "firewall" '^host mac-c: the macOS application firewall is on \(socketfilterfw: State = 1\)' \
    'socketfilterfw --setglobalstate off'

recorded bridge-on
run_doctor
expect_problem "Thunderbolt Bridge service" '^host mac-d: the network service "Thunderbolt Bridge" \(bridge0\) is active' \
    'networksetup -setnetworkserviceenabled "Thunderbolt Bridge" off'

recorded unsaved
run_doctor
expect_problem "address not in a service" \
    '^host mac-a: device rdma_en2 \(interface en2\): address 192\.168\.0\.1/30 is in no active network service' \
    'tbrdma-setup --apply'

recorded
touch "$TBRDMA_DOCTOR_FAKE_MACOS/mac-b/io.exo.networksetup.plist"
run_doctor
expect_problem "exo's DHCP daemon" '^host mac-b: exo.s LaunchDaemon io\.exo\.networksetup is installed' \
    'launchctl bootout system/io\.exo\.networksetup'

recorded crossed
run_doctor
expect_problem "cables crossed (macOS topology)" \
    '^host mac-a: devices rdma_en2 \(interface en2\) and rdma_en3 \(interface en3\): cables crossed' \
    'en2 is cabled to mac-c but addressed for mac-b'

recorded unplugged
run_doctor
expect_problem "cable unplugged (macOS topology)" \
    '^host mac-a: device rdma_en4 \(interface en4\): no cable to host mac-d' 'connect mac-a en4 to mac-d en2'

recorded
run_doctor
expect_ready "back as recorded"
finish
