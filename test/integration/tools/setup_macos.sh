#!/usr/bin/env bash
# tbrdma-setup's macOS plan, run on 4 simulated Macs against recorded macOS output: the cables
# are found from the recorded Thunderbolt topology of a fresh cluster (test/samples/macos/
# factory4: the Thunderbolt Bridge holds every port, no per-port service), and each Mac's plan
# runs there with networksetup and ifconfig replaced by ./macos-stub, which prints the recorded
# output and logs every change it is asked for. Checked: the exact networksetup/ifconfig calls
# of --apply on every Mac (bridge service off, each port out of bridge0, a "tbrdma enX" service
# on the right hardware port with the cable's /30, another service of the port turned off),
# and of --revert on the state after setup (cluster4). What this does not run: macOS's
# networksetup itself (its effect is what doctor_macos.sh reads back from recorded output).
source "$(dirname "$0")/lib.sh"
require_env
samples="$top/test/samples/macos"
tools_cluster_up 4 --addressing none
export TBRDMA_DOCTOR_FAKE_MACOS="$TC_TMP/macos"
cp -r "$samples/factory4" "$TBRDMA_DOCTOR_FAKE_MACOS"
stubs="$TC_TMP/stubs"
log="$TC_TMP/stub-log"
mkdir -p "$stubs"
ln -s "$top/test/integration/tools/macos-stub" "$stubs/networksetup"
ln -s "$top/test/integration/tools/macos-stub" "$stubs/ifconfig"
stub_env="export PATH='$stubs':\$PATH TBRDMA_STUB_DIR='$TBRDMA_DOCTOR_FAKE_MACOS' TBRDMA_STUB_LOG='$log'"
for h in "${HOSTS[@]}"; do
    profile_add "$h" "$stub_env"
done

# mac-b already has a service of its own on en2 (as exo's script makes one): it must go off.
b=$TBRDMA_DOCTOR_FAKE_MACOS/mac-b
printf '(4) EXO Thunderbolt 1\n(Hardware Port: Thunderbolt 1, Device: en2)\n\n' \
    >>"$b/networksetup_-listnetworkserviceorder"
echo 'EXO Thunderbolt 1' >>"$b/networksetup_-listallnetworkservices"

run_setup()
{
    out=$(on mac-a env HOME="$TC_TMP/home/mac-a" PATH="$stubs:$PATH" \
        TBRDMA_STUB_DIR="$TBRDMA_DOCTOR_FAKE_MACOS" TBRDMA_STUB_LOG="$log" \
        "$top/tools/tbrdma-setup" --hosts "$(IFS=,; echo "${HOSTS[*]}")" --os macos \
        --launch-agent "$agent" --doctor "$doctor" --mca btl_tbrdma_verbs_lib "$simlib" "$@" 2>&1)
    rc=$?
    echo "$out" | sed 's/^/    | /'
}

# want_calls HOST ADDR...: the calls --apply must make on HOST, its ports en2.. getting ADDRs.
want_calls()
{
    local host=$1 i=2 r=1 addr
    shift
    echo 'networksetup "-setnetworkserviceenabled" "Thunderbolt Bridge" "off"'
    for addr in "$@"; do
        echo "ifconfig \"bridge0\" \"deletem\" \"en$i\""
        echo "networksetup \"-createnetworkservice\" \"tbrdma en$i\" \"Thunderbolt $r\""
        if [ "$host" = mac-b ] && [ "$i" = 2 ]; then
            echo 'networksetup "-setnetworkserviceenabled" "EXO Thunderbolt 1" "off"'
        fi
        echo "networksetup \"-setnetworkserviceenabled\" \"tbrdma en$i\" \"on\""
        echo "networksetup \"-setmanual\" \"tbrdma en$i\" \"$addr\" \"255.255.255.252\""
        i=$((i + 1))
        r=$((r + 1))
    done
}

run_setup
expect "dry run exits 0" 0 "$rc"
check "the dry run found the 4 Macs' cables from the Thunderbolt topology" \
    [ "$(echo "$out" | grep -c '^# host mac-[a-d] (Linux, reached as mac-[a-d]): 3 cables, macos plan$')" -eq 4 ]
check "the dry run's macOS plan of mac-a" diff <(echo "$out" | awk '/^# host mac-a/ { p = 1; next } /^# / { p = 0 } p') \
    <(printf 'tb_bridge_off\ntb_port en2 192.168.0.1\ntb_port en3 192.168.0.5\ntb_port en4 192.168.0.9\n')
check "the dry run asked for no change" [ ! -e "$log" ]

run_setup --apply
expect "--apply runs the plans, then the doctor finds no address (the stubs change nothing)" 1 "$rc"
echo "$out" | grep -q '^no Thunderbolt port has an IPv4 address' || fail "the doctor did not run after --apply"
check "mac-a: the calls of its plan" diff "$log/mac-a.log" <(want_calls mac-a 192.168.0.1 192.168.0.5 192.168.0.9)
check "mac-b: the calls of its plan (exo's service of en2 turned off)" \
    diff "$log/mac-b.log" <(want_calls mac-b 192.168.0.2 192.168.0.13 192.168.0.17)
check "mac-c: the calls of its plan" diff "$log/mac-c.log" <(want_calls mac-c 192.168.0.6 192.168.0.14 192.168.0.21)
check "mac-d: the calls of its plan" diff "$log/mac-d.log" <(want_calls mac-d 192.168.0.10 192.168.0.18 192.168.0.22)

# --revert on the state tbrdma-setup leaves (cluster4): its services removed, the bridge back on.
rm -rf "$log" "$TBRDMA_DOCTOR_FAKE_MACOS"
cp -r "$samples/cluster4" "$TBRDMA_DOCTOR_FAKE_MACOS"
run_setup --revert
expect "--revert exits 0" 0 "$rc"
check "mac-c: --revert removes its services and turns the Thunderbolt Bridge service on" diff "$log/mac-c.log" \
    <(printf 'networksetup "-removenetworkservice" "tbrdma en%s"\n' 2 3 4
      echo 'networksetup "-setnetworkserviceenabled" "Thunderbolt Bridge" "on"')
finish
