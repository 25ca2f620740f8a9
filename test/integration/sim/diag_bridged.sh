#!/usr/bin/env bash
# Thunderbolt ports enslaved to the Thunderbolt Bridge: diagnosed as bridged (not as a raw
# port-down or errno), naming the bridge and the fix.
source "$(dirname "$0")/lib.sh"
require_env
cluster_up --hosts 2 --addressing bridged
info_expect mac-a 1 "no usable port"
echo "$out" | grep -q '^port .*device=rdma_en2 .*bridge=bridge0 .*diag=bridged' \
    || fatal "rdma_en2 not diagnosed bridged"
text=$(echo "$out" | grep '^diag .*device=rdma_en2')
for want in "bridge0" "en2" "Thunderbolt Bridge"; do
    echo "$text" | grep -qF "$want" || fatal "bridged message lacks '$want': $text"
done
pass "bridged port diagnosed"
finish
