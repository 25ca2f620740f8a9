#!/usr/bin/env bash
# tbrdma-setup on 4 simulated Macs whose Thunderbolt ports have no IPv4 (the macOS 26.2
# default): it finds the cables without any address, gives each its own /30 (--apply, run on
# every Mac through the launch agent), the doctor then passes, and the hostfiles it writes are
# read back: Open MPI's (each Mac's performance cores as its slots: nproc here, 6 on mac-b, none
# on mac-d whose nproc fails) by mpirun (an MPI job over tbrdma alone, btl self,tbrdma: every cable
# resolved, every rank's data checked, the simulator's counters moved on every cable; and the
# latency check of docs/quickstart-macos.md), tbrdma's mesh file compared with the cables, MLX's
# hostfile read by the plugin (btl_tbrdma_mesh_file) and checked against the rules mlx.launch
# and JACCL document.
# --revert, given the hostfile setup wrote, takes the addresses away again.
source "$(dirname "$0")/lib.sh"
require_env
command -v python3 >/dev/null || fatal "python3 is needed to check MLX's hostfile (test/install-deps.sh)"
command -v mpicc >/dev/null || fatal "mpicc is needed for the MPI job (test/install-deps.sh)"

tools_cluster_up 4 --addressing none
nproc_stub mac-b 6
nproc_stub mac-d
hf="$TC_TMP/hostfiles"
hostlist=$(IFS=,; echo "${HOSTS[*]}")

# run_setup ARGS...: tbrdma-setup on mac-a for the 4 Macs ($hosts_arg); output kept in $out,
# status in $rc.
hosts_arg=(--hosts "$hostlist")
run_setup()
{
    out=$(on mac-a env HOME="$TC_TMP/home/mac-a" "$top/tools/tbrdma-setup" "${hosts_arg[@]}" \
        --launch-agent "$agent" --doctor "$doctor" --mca btl_tbrdma_verbs_lib "$simlib" "$@" 2>&1)
    rc=$?
    echo "$out" | sed 's/^/    | /'
}

# addressed: the number of Thunderbolt ports holding an IPv4 address (tbcluster status).
addressed()
{
    "$tbc" status | grep -o ' UP 192\.168\.[0-9.]*/30' | wc -l
}

run_doctor
expect_problem "before: no port has IPv4" '^no Thunderbolt port has an IPv4 address \(12 ports on 4 hosts\)' \
    'tbrdma-setup --hostfile FILE --apply'
check_grep_out() { if echo "$out" | grep -Eq -- "$2"; then pass "$1"; else fail "$1: no line matching '$2'"; fi; }

run_setup
expect "dry run (the default) exits 0" 0 "$rc"
check "dry run prints a plan per host found without addresses" \
    [ "$(echo "$out" | grep -c '^# host mac-[a-d] (Linux, reached as mac-[a-d]): 3 cables, linux plan$')" -eq 4 ]
check_grep_out "the plan gives mac-a en2 (cable to mac-b) the first /30" '^sudo ip addr add 192\.168\.0\.1/30 dev en2$'
expect "dry run changed nothing" 0 "$(addressed)"

run_setup --apply --hostfiles "$hf"
expect "--apply exits 0 (the doctor passes after it)" 0 "$rc"
check_grep_out "--apply ran on every host" '^    \+ ip addr add 192\.168\.0\.2[12]/30 dev en4$'
check_grep_out "the doctor passes after --apply" '^tbrdma-doctor: ready: 4 hosts, 12 ports, 6 cables, full mesh'
expect "every port has its /30" 12 "$(addressed)"
check "each cable's two ends share a /30" \
    [ -z "$("$tbc" status | awk '/^cable / { split($4, a, "[./]"); split($8, b, "[./]");
        if (a[1] a[2] a[3] != b[1] b[2] b[3] || int(a[4] / 4) != int(b[4] / 4)) print }')" ]

# The Open MPI hostfile: the four Macs, as mpirun reads it, each with its cores as slots but
# mac-d, whose probe reported none.
expect "Open MPI hostfile" "mac-a slots=$(on mac-a nproc) mac-b slots=6 mac-c slots=$(on mac-c nproc) mac-d" \
    "$(grep -v '^#' "$hf/hostfile" | tr '\n' ' ' | sed 's/ $//')"
expect "Open MPI hostfile: its first line says where slots come from" \
    "# slots: each Mac's performance cores (hw.perflevel0.physicalcpu), or as listed where unknown" \
    "$(head -n 1 "$hf/hostfile")"

# tbrdma's mesh file: exactly tbcluster's cables.
want=$(sed -n 's/^cable c[0-9]* \([^ ]*\) \([^ ]*\) \([^ ]*\) \([^ ]*\)$/\1:rdma_\2 \3:rdma_\4/p' "$TBSIM_DIR/topology" | sort)
expect "the mesh file names tbcluster's 6 cables" "$want" "$(grep -v '^#' "$hf/mesh.txt" | sort)"

# MLX's hostfile, against what mlx.launch and JACCL document (research notes 1.8): a "hosts"
# list with "ssh", rank 0 with an IP, "rdma" rows of one entry per host, null on the diagonal,
# a device name of that host for every other host (a valid JACCL mesh), each entry the device
# of the cable that joins the two hosts.
mlx_check=$(python3 - "$hf/mlx-hostfile.json" "$TBSIM_DIR/topology" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
cable = {}
for line in open(sys.argv[2]):
    w = line.split()
    if w and w[0] == "cable":
        cable[(w[2], w[4])] = "rdma_" + w[3]
        cable[(w[4], w[2])] = "rdma_" + w[5]
errors = []
if doc.get("backend") not in ("jaccl", "jaccl-ring"):
    errors.append("backend %r" % doc.get("backend"))
hosts = doc.get("hosts")
if not isinstance(hosts, list) or len(hosts) != 4:
    errors.append("hosts is not a list of 4")
    hosts = []
if hosts and not (isinstance(hosts[0].get("ips"), list) and hosts[0]["ips"]):
    errors.append("rank 0 has no ips (mlx.launch needs the coordinator address)")
names = [h.get("ssh") for h in hosts]
for i, h in enumerate(hosts):
    row = h.get("rdma")
    if not isinstance(row, list) or len(row) != len(hosts):
        errors.append("host %s: rdma has not %d entries" % (names[i], len(hosts)))
        continue
    for j, e in enumerate(row):
        if i == j and e is not None:
            errors.append("host %s: diagonal entry %r is not null" % (names[i], e))
        if i != j and e != cable.get((names[i], names[j])):
            errors.append("host %s -> %s: %r, the cable is %r" % (names[i], names[j], e, cable.get((names[i], names[j]))))
print("; ".join(errors) if errors else "ok")
PY
)
expect "MLX's hostfile follows mlx.launch's format and names every cable" ok "$mlx_check"

# An MPI job through the written hostfile over tbrdma alone between the Macs (btl self,tbrdma,
# against the simulator; processes unbound, as test/mpi does): every cable resolved ("tbrdma
# mesh:" lines), every rank's data checked, every rank's tbrdma counters printed, and the
# simulator's counters moved on every device; then with MLX's hostfile as btl_tbrdma_mesh_file
# (the plugin reads it back; the mesh file is read back by an MPI job in doctor_topologies.sh).
hello=$(hello_bin) || exit 1
mpicc -O2 -o "$TC_TMP/mpi_latency" "$top/tools/examples/mpi_latency.c" || fatal "mpicc mpi_latency.c failed"
mpi()
{
    on mac-a env HOME="$TC_TMP/home/mac-a" mpirun --allow-run-as-root --hostfile "$hf/hostfile" \
        --mca plm_rsh_agent "$top/test/sim/tbcluster-agent" --mca oob_tcp_if_include "$TC_MGMT.0/24" \
        --map-by node --bind-to none --mca pml ob1 --mca btl self,tbrdma \
        --mca opal_mca_base_component_path "SYS_DEFAULT:$plugin_dir" \
        --mca btl_tbrdma_verbs_lib "$simlib" --mca btl_tbrdma_verbose 1 --mca btl_tbrdma_stats 1 \
        "$@" 2>&1
}
# idle_devices BEFORE AFTER: the simulated devices that sent nothing between two snapshots of
# the simulator's counters (tbsimctl counters: "counters HOST:DEV tx_msgs N tx_bytes N ...").
idle_devices()
{
    join <(awk '{ print $2, $6 }' "$1" | sort) <(awk '{ print $2, $6 }' "$2" | sort) \
        | awk '$3 == $2 { print $1 }'
}
for spec in "" "$hf/mlx-hostfile.json"; do
    what="MPI job on the written hostfile${spec:+ with btl_tbrdma_mesh_file $(basename "$spec")}"
    "$TBSIMCTL" counters >"$TC_TMP/before"
    out=$(mpi -np 4 ${spec:+--mca btl_tbrdma_mesh_file "$spec"} "$hello")
    rc=$?
    "$TBSIMCTL" counters >"$TC_TMP/after"
    echo "$out" | grep -E '^hello|tbrdma mesh:|tbrdma stats:' | sed 's/^/    | /'
    expect "$what: exit status" 0 "$rc"
    expect "$what: every rank checked its data" 4 "$(echo "$out" | grep -c '^hello: rank [0-3] of 4 OK')"
    expect "$what: tbrdma ran in every rank (its counters at finalize)" 4 \
        "$(echo "$out" | grep -c '^tbrdma stats: host mac-[a-d] ')"
    expect "$what: every one of the 12 simulated devices sent data (tbsimctl counters)" \
        "12 " "$(grep -c . "$TC_TMP/after") $(idle_devices "$TC_TMP/before" "$TC_TMP/after" | tr '\n' ' ')"
    expect "$what: tbrdma resolved the 6 cables" 6 \
        "$(echo "$out" | grep -o 'tbrdma mesh: mac-[a-d] rdma_en[0-9] <-> mac-[a-d] rdma_en[0-9]' | sort -u | wc -l)"
done
out=$(mpi -np 2 "$TC_TMP/mpi_latency" 8 1000)
echo "$out" | grep mpi_latency | sed 's/^/    | /'
check_grep_out "the latency check runs between mac-a and mac-b" '^mpi_latency: 8 B between mac-a and mac-b: [0-9.]+ us one-way'

# --revert, given the Macs as the Open MPI hostfile setup wrote.
hosts_arg=(--hostfile "$hf/hostfile")
run_setup --revert
expect "--revert exits 0" 0 "$rc"
expect "--revert took every address away" 0 "$(addressed)"
run_setup --revert
expect "--revert again is harmless" 0 "$rc"
finish
