#!/usr/bin/env bash
# tbrdma-doctor on 3 simulated Macs with self-assigned link-local addresses (exo's scheme) and
# two cables between mac-a and mac-b: the doubled cable is a note; link-local addressing is the
# one problem until a mesh file names the cables. The doctor writes that mesh file and MLX's
# hostfile (the doubled pair as arrays in the same cable order), and with either as the mesh
# file it passes, as does an MPI job in which tbrdma resolves every pair from it. A mesh file
# that swaps the two cables of the pair is named, one line per wrong cable. The doctor also
# takes its hosts from a file: its own Open MPI hostfile, one by hand, MLX's, Open MPI's default.
# The Open MPI hostfile written gives each Mac its performance cores as slots (here nproc: mac-a's
# own, 12 on mac-b, none on mac-c whose nproc fails and whose probe so has no "cores" line).
source "$(dirname "$0")/lib.sh"
require_env
command -v python3 >/dev/null || fatal "python3 is needed to read MLX's hostfile (test/install-deps.sh)"
tools_cluster_up 3 --addressing linklocal --topology double:a-b
mesh="$TC_TMP/mesh.txt"
mlx="$TC_TMP/mlx-hostfile.json"
nproc_stub mac-b 12
nproc_stub mac-c

run_doctor --write-mesh-file "$mesh" --write-mlx-hostfile "$mlx" --mlx-backend jaccl-ring \
    --write-hostfile "$TC_TMP/hostfile"
expect_problem "link-local addresses without a mesh file" \
    '^4 cables join ports with link-local addresses \(169\.254/16' 'tbrdma-doctor --write-mesh-file'
check "the doubled cable is a note" \
    bash -c "echo \"\$1\" | grep -q '^note: host mac-a and host mac-b are joined by 2 cables (mac-a rdma_en2 <-> mac-b rdma_en2, mac-a rdma_en3 <-> mac-b rdma_en3)'" _ "$out"

want=$(sed -n 's/^cable c[0-9]* \([^ ]*\) \([^ ]*\) \([^ ]*\) \([^ ]*\)$/\1:rdma_\2 \3:rdma_\4/p' "$TBSIM_DIR/topology" | sort)
expect "the mesh file written names tbcluster's 4 cables" "$want" "$(grep -v '^#' "$mesh" | sort)"
expect "MLX's hostfile: the doubled pair as arrays, the k-th names the same cable" \
    "jaccl-ring ['rdma_en2', 'rdma_en3'] ['rdma_en2', 'rdma_en3'] rdma_en4 rdma_en2" \
    "$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); r = [h["rdma"] for h in d["hosts"]]
print(d["backend"], r[0][1], r[1][0], r[0][2], r[2][0])' "$mlx")"

run_doctor --mesh-file "$mesh"
expect_ready "with the mesh file written"
run_doctor --mca btl_tbrdma_mesh_file "$mlx"
expect_ready "with MLX's hostfile as btl_tbrdma_mesh_file"

# The hosts from a file instead of arguments: the Open MPI hostfile the doctor wrote, one
# written by hand (slots, comments), MLX's hostfile, and Open MPI's default hostfile (the
# environment of an mpirun allocation).
expect "the Open MPI hostfile written: slots from each Mac's cores (mac-c: none reported)" \
    "mac-a slots=$(on mac-a nproc) mac-b slots=12 mac-c" \
    "$(grep -v '^#' "$TC_TMP/hostfile" | tr '\n' ' ' | sed 's/ $//')"
expect "the Open MPI hostfile written: its first line says where slots come from" \
    "# slots: each Mac's performance cores (hw.perflevel0.physicalcpu), or as listed where unknown" \
    "$(head -n 1 "$TC_TMP/hostfile")"
printf '# the Macs\nmac-a slots=2\nmac-b   # no slots\n\nmac-c slots=1 max_slots=4\n' >"$TC_TMP/by-hand"
for f in "$TC_TMP/hostfile" "$TC_TMP/by-hand" "$mlx"; do
    run_doctor --hostfile "$f" --mesh-file "$mesh" --
    expect_ready "hosts from $(basename "$f")" && check "$(basename "$f"): the 3 Macs" \
        grep -q '^tbrdma-doctor: ready: 3 hosts, ' <<<"$out"
done
export OMPI_MCA_orte_default_hostfile="$TC_TMP/by-hand"
run_doctor --mesh-file "$mesh" --
unset OMPI_MCA_orte_default_hostfile
expect_ready "hosts from Open MPI's default hostfile" && check "default hostfile: the 3 Macs" \
    grep -q '^tbrdma-doctor: ready: 3 hosts, ' <<<"$out"

out=$(tb_mpirun 3 --mca btl_tbrdma_mesh_file "$mesh" -- "$(hello_bin)" 2>&1)
rc=$?
echo "$out" | grep -E '^hello|tbrdma mesh:' | sed 's/^/    | /'
expect "MPI job with the mesh file: exit status" 0 "$rc"
expect "MPI job with the mesh file: tbrdma resolved the 3 pairs, mac-a and mac-b's 2 cables" "3 4" \
    "$(echo "$out" | sed -n 's/.*tbrdma mesh: \(mac-[a-c]\) rdma_en[0-9] <-> \(mac-[a-c]\) rdma_en[0-9].*/\1 \2/p' | sort -u | wc -l) $(echo "$out" | grep -o 'tbrdma mesh: mac-[a-c] rdma_en[0-9] <-> mac-[a-c] rdma_en[0-9]' | sort -u | wc -l)"

# A mesh file that swaps the two cables between mac-a and mac-b.
printf 'mac-a:rdma_en2 mac-b:rdma_en3\nmac-a:rdma_en3 mac-b:rdma_en2\nmac-a:rdma_en4 mac-c:rdma_en2\nmac-b:rdma_en4 mac-c:rdma_en3\n' \
    >"$TC_TMP/wrong.txt"
run_doctor --mesh-file "$TC_TMP/wrong.txt"
expect "a mesh file with the two a-b cables swapped: exit 1, one line per wrong line of it" "1 2 2" \
    "$rc $(problems | grep -c .) $(problems | grep -c "the mesh file $TC_TMP/wrong.txt says it is cabled to mac-b rdma_en[23], but it is cabled to mac-b rdma_en[23]")"
finish
