#!/usr/bin/env bash
# A Mac whose Thunderbolt ports have no IPv4 (macOS 26.2's default): tbrdma-info explains the
# field's "RTR failed with errno 22" on every port, naming device, interface and fix.
source "$(dirname "$0")/lib.sh"
require_env
cluster_up --hosts 2 --addressing none
out=$(info_on mac-a --parsable)
rc=$?
echo "$out"
[ "$rc" -eq 1 ] || fail "tbrdma-info exit $rc, expected 1 (no usable port)"
echo "$out" | grep -q '^port .*device=rdma_en2 .*diag=no-ipv4' || fail "rdma_en2 not diagnosed no-ipv4"
text=$(echo "$out" | grep '^diag .*device=rdma_en2')
for want in "en2" "errno 22" "IPv4" "tbrdma-setup"; do
    echo "$text" | grep -qF "$want" || fail "no-ipv4 message lacks '$want': $text"
done
ok "no IPv4 on en2 diagnosed with its fix"
human=$(info_on mac-a)
echo "$human" | grep -q "errno 22" || fail "human output lacks the diagnosis"
ok "human output carries the same diagnosis"
