#!/usr/bin/env bash
# bench/baselines.sh: the two raw-verbs baselines side by side, in one run: the project's
# uc_pingpong over the fabric simulator (bench/sim_pingpong.sh) and over Soft-RoCE between two
# qemu VMs (bench/vm_uc_pingpong.sh), then the VM/simulator ratio per row. The plugin's own
# overhead will be divided by these. No pass/fail: timing only describes this machine (and, for
# the VMs, qemu's emulation), never Thunderbolt. Options: -q fewer iterations (both benches).
# Needs root, network namespaces and qemu (what the two benches need).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== simulator"
"$here/sim_pingpong.sh" "$@" | tee "$tmp/sim"
echo "== Soft-RoCE VMs"
"$here/vm_uc_pingpong.sh" "$@" | tee "$tmp/vm"

# "mode bytes rtt_us MB/s" for every measured row of a bench table.
rows()
{
    awk '$1 ~ /^(pingpong|stream)\*?$/ && $2 ~ /^[0-9]+$/ { sub(/\*$/, "", $1); print $1, $2, $4, $6 }' "$1"
}

echo "== side by side (same run, load $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-9s %9s %12s %12s %9s %12s %12s %9s\n' mode bytes sim_rtt_us vm_rtt_us ratio \
    sim_MB/s vm_MB/s ratio
join -j1 <(rows "$tmp/sim" | awk '{ print $1 "/" $2, $3, $4 }' | sort) \
    <(rows "$tmp/vm" | awk '{ print $1 "/" $2, $3, $4 }' | sort) \
    | awk '{
        split($1, k, "/")
        rt = ($2 != "-" && $4 != "-" && $2 > 0) ? sprintf("%.0fx", $4 / $2) : "-"
        bw = ($3 > 0 && $5 > 0) ? sprintf("1/%.0f", $3 / $5) : "-"
        printf "%-9s %9s %12s %12s %9s %12s %12s %9s\n", k[1], k[2], $2, $4, rt, $3, $5, bw
    }' | sort -k1,1 -k2,2n
