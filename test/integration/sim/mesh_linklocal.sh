#!/usr/bin/env bash
# Link-local 169.254/16 on every port (exo's scheme) cannot identify cables by subnet: without a
# mesh file tbrdma says so and how to fix it; with a mesh file, or MLX's hostfile, every process
# resolves every cable to its own devices (each rank's lines, through mpirun --tag-output).
source "$(dirname "$0")/lib.sh"
require_env
cluster_up --hosts 3 --addressing linklocal
mpirun_hello 3
echo "$out" | grep -q "btl_tbrdma_mesh_file" || fatal "ambiguity message does not point to the mesh file"
pass "link-local without a mesh file: ambiguity explained"

hello=$(hello_bin)
meshfile="$TBSIM_DIR/mesh.txt"
cables | while read -r _ ha ia hb ib; do echo "$ha:rdma_$ia $hb:rdma_$ib"; done >"$meshfile"
cat "$meshfile"
out=$(tb_mpirun 3 --tag-output --mca btl_tbrdma_mesh_file "$meshfile" -- "$hello" 2>&1)
echo "$out"
check_hello "$out" 3
check_mesh_by_rank "$out" 3
pass "link-local with a mesh file: all 3 cables resolved by every process"

# MLX's hostfile: row i entry j is host i's device cabled to host j.
mlx="$TBSIM_DIR/hostfile.json"
hosts=(mac-a mac-b mac-c)
{
    printf '{"backend": "jaccl", "hosts": ['
    for i in 0 1 2; do
        printf '%s{"ssh": "%s", "ips": [], "rdma": [' "$([ $i -gt 0 ] && echo ,)" "${hosts[$i]}"
        for j in 0 1 2; do
            dev=null
            if [ $i -ne $j ]; then
                dev=$(cables | awk -v a="${hosts[$i]}" -v b="${hosts[$j]}" \
                    '($2==a&&$4==b){print "\"rdma_"$3"\""} ($4==a&&$2==b){print "\"rdma_"$5"\""}')
            fi
            printf '%s%s' "$([ $j -gt 0 ] && echo ,)" "$dev"
        done
        printf ']}'
    done
    printf ']}\n'
} >"$mlx"
cat "$mlx"
out=$(tb_mpirun 3 --tag-output --mca btl_tbrdma_mesh_file "$mlx" -- "$hello" 2>&1)
echo "$out"
check_hello "$out" 3
check_mesh_by_rank "$out" 3
pass "link-local with MLX's hostfile: all 3 cables resolved to their devices by every process"
finish
