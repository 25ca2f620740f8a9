#!/usr/bin/env bash
# A Mac whose Thunderbolt ports have no IPv4 (macOS 26.2's default): tbrdma-info explains the
# field's "RTR failed with errno 22" on every port, naming device, interface and fix.
source "$(dirname "$0")/lib.sh"
require_env
cluster_up --hosts 2 --addressing none
info_expect mac-a 1 "no usable port"
echo "$out" | grep -q '^port .*device=rdma_en2 .*diag=no-ipv4' || fatal "rdma_en2 not diagnosed no-ipv4"
text=$(echo "$out" | grep '^diag .*device=rdma_en2')
for want in "en2" "errno 22" "IPv4" "tbrdma-setup"; do
    echo "$text" | grep -qF "$want" || fatal "no-ipv4 message lacks '$want': $text"
done
pass "no IPv4 on en2 diagnosed with its fix"
human=$(info_on mac-a)
echo "$human" | grep -q "errno 22" || fatal "human output lacks the diagnosis"
pass "human output carries the same diagnosis"
finish
