#!/bin/bash
# cluster_fault.sh: tbcluster fault CABLE down|up on a 3-host p2p mesh.
# Checks: "down" (cable given by id) takes the carrier away at both ends and stops pings across
# that cable while the other cables keep working; "up" (cable given as HOST:IF of the far end)
# brings carrier back at both ends and pings pass again; unknown cables are refused.
set -uo pipefail
. "$(dirname "$0")/cluster_lib.sh"
cl_init cluster_fault

if ! cl_up --hosts 3 >/dev/null 2>&1; then
    fail "tbcluster up --hosts 3"
    finish
fi
pass "tbcluster up --hosts 3"
# c1 joins mac-a:en2 (192.168.0.1) and mac-b:en2 (192.168.0.2); c2 mac-a:en3 - mac-c:en2.
expect "c1 ends" "mac-a en2 mac-b en2" \
    "$(awk '$2 == "c1" {print $3, $4, $5, $6}' "$TBSIM_DIR/topology")"
check "before: carrier at mac-a:en2" cl_carrier mac-a en2
check "before: carrier at mac-b:en2" cl_carrier mac-b en2

check "fault c1 down" "$TBCLUSTER" fault c1 down
check_not "after down: no carrier at mac-a:en2" cl_carrier mac-a en2
check_not "after down: no carrier at mac-b:en2" cl_carrier mac-b en2
check_not "after down: mac-b cannot ping 192.168.0.1 over c1" cl_ping mac-b 192.168.0.1
check "after down: c2 still carries pings" cl_ping mac-a 192.168.0.6
status=$("$TBCLUSTER" status)
check "status shows c1 down at both ends" \
    grep -q "^cable c1: mac-a:en2 DOWN .* mac-b:en2 DOWN " <<<"$status"

check "fault mac-b:en2 up" "$TBCLUSTER" fault mac-b:en2 up
check "after up: carrier at mac-a:en2" cl_carrier mac-a en2
check "after up: carrier at mac-b:en2" cl_carrier mac-b en2
check "after up: mac-b pings 192.168.0.1 over c1" cl_ping mac-b 192.168.0.1
check "after up: mac-a pings 192.168.0.2 over c1" cl_ping mac-a 192.168.0.2

check_not "fault c9 refused" "$TBCLUSTER" fault c9 down
check_not "fault mac-a:en9 refused" "$TBCLUSTER" fault mac-a:en9 down
check_not "fault c1 sideways refused" "$TBCLUSTER" fault c1 sideways

check "tbcluster down" "$TBCLUSTER" down
cl_check_nothing_left "after down"
finish
