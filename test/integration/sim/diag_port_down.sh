#!/usr/bin/env bash
# A pulled cable takes both ends DOWN; RDMA disabled on a Mac hides its devices (as on macOS)
# and takes its peers' ports DOWN. Each is explained.
source "$(dirname "$0")/lib.sh"
require_env
cluster_up --hosts 3 --addressing p2p
info_expect mac-a 0 "healthy mesh"
[ "$(echo "$out" | grep -c '^port .*diag=ok')" -eq 2 ] || fatal "expected 2 usable ports: $out"
pass "healthy mac-a has 2 usable ports"

read -r id ha ia hb ib < <(cables | head -1)
"$tbc" fault "$id" down || fatal "fault $id down"
for end in "$ha:$ia" "$hb:$ib"; do
    out=$(info_on "${end%%:*}" --parsable)
    echo "$out"
    echo "$out" | grep -q "^port .*device=rdma_${end##*:} .*state=DOWN .*diag=port-down" \
        || fatal "$end not DOWN after pulling cable $id"
    echo "$out" | grep "^diag .*device=rdma_${end##*:}" | grep -q "rdma_ctl status" \
        || fatal "port-down message lacks the fix"
done
pass "pulled cable $id: both ends DOWN and explained"
"$tbc" fault "$id" up || fatal "fault $id up"

"$tbc" rdma mac-c off || fatal "rdma mac-c off"
info_expect mac-c 3 "RDMA disabled: no device"
echo "$out" | grep -q "rdma_ctl enable" || fatal "no-devices message lacks the fix"
pass "RDMA disabled on mac-c: no device, explained"
out=$(info_on mac-a --parsable)
echo "$out"
peer_if=$(cables | awk '($2=="mac-a"&&$4=="mac-c"){print $3} ($4=="mac-a"&&$2=="mac-c"){print $5}')
echo "$out" | grep -q "^port .*device=rdma_$peer_if .*diag=port-down" \
    || fatal "mac-a's port to mac-c (rdma_$peer_if) not DOWN while mac-c has RDMA disabled"
pass "mac-a's port to mac-c is DOWN while mac-c has RDMA disabled"
finish
