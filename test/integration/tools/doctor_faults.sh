#!/usr/bin/env bash
# tbrdma-doctor on 4 simulated Macs (full mesh, one /30 per cable): ready as built; then each
# fault injected in turn is named in exactly one line with its fix, and the doctor passes again
# once the fault is undone. Faults: a port in a bridge, a port without IPv4, a missing cable,
# two cables crossed at one Mac, RDMA off on one Mac, tbrdma not installed on one Mac, Open MPI
# not finding tbrdma on one Mac, a host that cannot be reached. (Another Open MPI version on
# one Mac: doctor_ompi_version.sh.) Also: the default launch agent is ssh, with BatchMode; the
# missing cable as --json reports it.
source "$(dirname "$0")/lib.sh"
require_env
command -v python3 >/dev/null || fatal "python3 is needed to read --json (test/install-deps.sh)"
tools_cluster_up 4 --addressing p2p

t0=$(date +%s)
run_doctor
expect_ready "as built"
echo "    (doctor wall time: $(($(date +%s) - t0)) s for 4 Macs)"

# The default launch agent, as mpirun's: the first of "ssh : rsh" in PATH, ssh with BatchMode and
# a connect timeout (a host that asks for a password fails at once). Here an ssh that logs its
# arguments, then runs ./agent. mac-a, where the doctor runs, is run directly, as mpirun does.
mkdir -p "$TC_TMP/ssh-bin"
printf '#!/bin/sh\necho "$*" >>"%s/ssh.log"\nwhile [ "$1" = -o ]; do shift 2; done\nexec "%s" "$@"\n' \
    "$TC_TMP" "$agent" >"$TC_TMP/ssh-bin/ssh"
chmod +x "$TC_TMP/ssh-bin/ssh"
out=$(on mac-a env -u OMPI_MCA_plm_rsh_agent HOME="$TC_TMP/home/mac-a" PATH="$TC_TMP/ssh-bin:$PATH" \
    "$doctor" --mca btl_tbrdma_verbs_lib "$simlib" "${HOSTS[@]}" 2>&1)
rc=$?
echo "$out" | sed 's/^/    | /'
expect_ready "through ssh, the default launch agent"
expect "ssh ran the probe on mac-b, mac-c, mac-d (not mac-a), with BatchMode and a connect timeout" \
    "mac-b mac-c mac-d " "$(sed -n 's/^-o BatchMode=yes -o ConnectTimeout=10 \(mac-[a-d]\) sh -s -- .*/\1/p' \
        "$TC_TMP/ssh.log" | sort | tr '\n' ' ')"

# A port in a bridge (the Thunderbolt Bridge holding en3 of mac-b).
ip -n "${TC_PREFIX}mac-b" link add bridge0 type bridge
ip -n "${TC_PREFIX}mac-b" link set en3 master bridge0
ip -n "${TC_PREFIX}mac-b" link set bridge0 up
run_doctor
expect_problem "bridge" '^host mac-b: device rdma_en3 \(interface en3\): interface en3 is a member of bridge bridge0'
ip -n "${TC_PREFIX}mac-b" link del bridge0
run_doctor
expect_ready "bridge removed"

# No IPv4 on a port: the line gives the address this cable needs.
ip -n "${TC_PREFIX}mac-c" -4 addr flush dev en4
run_doctor
expect_problem "no IPv4" '^host mac-c: device rdma_en4 \(interface en4\): interface en4 has no IPv4' \
    'errno 22' 'mac-d en4 has 192\.168\.0\.22/30, so en4 needs 192\.168\.0\.21/30'
ip -n "${TC_PREFIX}mac-c" addr add 192.168.0.21/30 dev en4
run_doctor
expect_ready "address restored"

# A missing cable: c3 (mac-a en4 <-> mac-d en2) unplugged.
"$tbc" fault c3 down
run_doctor
expect_problem "missing cable" '^host mac-a: device rdma_en4 \(interface en4\): no cable to host mac-d' \
    "mac-d's rdma_en2 \(en2\)" 'connect mac-a en4 to mac-d en2 with a Thunderbolt 5 cable'
line=$(problems)
run_doctor --json
expect "missing cable, --json: exit 1; not ready, 1 problem, its check, host, device, interface and text" \
    "1 False 1 no-cable mac-a rdma_en4 en4 True" "$rc $(echo "$out" | python3 -c 'import json, sys
d = json.load(sys.stdin); f = [x for x in d["findings"] if x["problem"]]
print(d["ready"], d["problems"], f[0]["check"], f[0]["host"], f[0]["device"], f[0]["ifname"],
      f[0]["text"] == sys.argv[1])' "$line" 2>&1)"
"$tbc" fault c3 up
run_doctor
expect_ready "cable plugged back"

# Two cables crossed at mac-a: the cables of en2 (to mac-b) and en3 (to mac-c) swap ports.
# Moving a cable is moving the veth end: the two interfaces swap names, each port keeping its
# address. libtbsim's topology file still lists the cables as they were, which the doctor does
# not read (it finds cables by link-local neighbours).
cross()
{
    local ns=${TC_PREFIX}$1 a=$2 b=$3 aa ba
    aa=$(ip -n "$ns" -4 -o addr show dev "$a" | awk '{ print $4 }')
    ba=$(ip -n "$ns" -4 -o addr show dev "$b" | awk '{ print $4 }')
    ip -n "$ns" link set "$a" down && ip -n "$ns" link set "$b" down &&
        ip -n "$ns" link set "$a" name tbx && ip -n "$ns" link set "$b" name "$a" &&
        ip -n "$ns" link set tbx name "$b" && ip -n "$ns" -4 addr flush dev "$a" &&
        ip -n "$ns" -4 addr flush dev "$b" && ip -n "$ns" addr add "$aa" dev "$a" &&
        ip -n "$ns" addr add "$ba" dev "$b" && ip -n "$ns" link set "$a" up &&
        ip -n "$ns" link set "$b" up || fatal "crossing $a and $b on $1 failed"
}
cross mac-a en2 en3
run_doctor
expect_problem "crossed cables" '^host mac-a: devices rdma_en2 \(interface en2\) and rdma_en3 \(interface en3\): cables crossed' \
    'en2 is cabled to mac-c but addressed for mac-b' 'swap the two cables at mac-a'
cross mac-a en2 en3
run_doctor
expect_ready "cables swapped back"

# RDMA off on mac-c: one line, which names the ports it takes DOWN on the other Macs.
"$tbc" rdma mac-c off
run_doctor
expect_problem "RDMA off" '^host mac-c: no RDMA device: RDMA is disabled' 'rdma_ctl enable' \
    'mac-a rdma_en3, mac-b rdma_en3, mac-d rdma_en4 are DOWN'
"$tbc" rdma mac-c on
run_doctor
expect_ready "RDMA back on"

# tbrdma not installed on mac-d: its tools and its component are not there (empty directories
# mounted over them in mac-d's shell only).
mkdir -p "$TC_TMP/empty"
profile_add mac-d "mount --bind '$TC_TMP/empty' '$build/tools' && mount --bind '$TC_TMP/empty' '$plugin_dir'"
run_doctor
expect_problem "tbrdma not installed" '^host mac-d: tbrdma is not installed' 'install tbrdma on mac-d'
profile_reset mac-d
run_doctor
expect_ready "tbrdma installed again"

# Open MPI does not find tbrdma on mac-b: its mca-params.conf lacks the component path.
: >"$TC_TMP/home/mac-b/.openmpi/mca-params.conf"
run_doctor
expect_problem "component not found" '^host mac-b: Open MPI 4\.1\.4 does not find tbrdma' \
    'component path \(/[^)]*openmpi3:' 'opal_mca_base_component_path = SYS_DEFAULT:DIR'
profile_reset mac-b
run_doctor
expect_ready "component path restored"

# A host that cannot be reached through the launch agent.
run_doctor -- "${HOSTS[@]}" mac-z
expect_problem "unreachable host" '^host mac-z: cannot run commands there through the launch agent' \
    "$agent mac-z true"
finish
