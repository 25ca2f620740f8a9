#!/usr/bin/env bash
# sim_pingpong: the raw-verbs UC ping-pong (plain verbs, libtbsim preloaded) between two hosts
# works with /30 addressing and with IPv4 link-local addressing (the IPv4-mapped GID found by
# scanning), for 1-frame, multi-frame and 1 MiB messages, every byte and byte_len of every echo
# checked, and a stream of 10000 B and 1 MiB messages arriving whole (hash of every byte); with no
# IPv4 on the ports there is no IPv4-mapped GID, and an RTR with sgid_index 1 (JACCL's
# hard-coded index) fails with EINVAL, the field's "RTR failed with errno 22". On 3 hosts the
# device chooses the cable: a QP on the cable to mac-b cannot be connected to mac-c (EINVAL).
# The devices' traffic counters (tbsimctl counters) count every message and byte, and no QP or
# MR slot stays held once the programs exit (tbsimctl held). Without --link at up, the cables
# have no link model (tbsimctl show: rate 0, latency 0). A ping-pong of more messages than the
# receive file has data regions reuses one region (its pages stay few: tbsimctl held).
set -uo pipefail
source "$(dirname "$0")/sim_lib.sh"
sim_init sim_pingpong

# Usage: pingpong_ok ADDRESSING SIZE ITERS
pingpong_ok()
{
    sim_pair mac-b mac-a uc_pingpong "" "-s $2 -n $3"
    expect "$1: ping-pong of $3 x $2 B: client exit" 0 "$SIM_CLI_RC"
    expect "$1: ping-pong of $3 x $2 B: server exit" 0 "$SIM_SRV_RC"
    check_grep "$1: client reports $3 round trips of $2 B" "$TC_TMP/client.out" \
        "^uc_pingpong: $3 iters of $2 B: rtt [0-9.]+ us"
    check_grep "$1: every echo of $2 B had byte_len $2 and every byte sent" "$TC_TMP/client.out" \
        "^uc_pingpong: every echo had byte_len $2 and every byte sent\$"
}

# Usage: stream_ok ADDRESSING SIZE COUNT : COUNT messages of SIZE B, each hashed whole.
stream_ok()
{
    sim_pair mac-b mac-a uc_pingpong "" "-m stream -s $2 -n $3"
    expect "$1: stream of $3 x $2 B: exit status" "0 0" "$SIM_CLI_RC $SIM_SRV_RC"
    check_grep "$1: all $3 messages of $2 B arrive whole (byte_len and hash)" \
        "$TC_TMP/server.out" "^uc_pingpong: stream: received $3 of $3, corrupted 0, error completions 0\$"
    check_grep "$1: no sequence number of the $2 B stream is missing" "$TC_TMP/server.out" \
        '^uc_pingpong: stream: lost seq: none \(0\)$'
}

# Usage: region_reuse_ok : a ping-pong of 70 x 1 MiB, more than the receive file's 64 data
# regions, paused before its teardown (-P): the client's receive file holds at most 2 regions' pages
# (the header's 4 KiB aside), not one per echo. A message goes to the lowest free region: one in
# flight reuses warm pages (a region's first use page-faults it in, a cost no device has).
region_reuse_ok()
{
    local fifo=$TC_TMP/pp.fifo kib spid cpid _
    rm -f "$fifo"
    mkfifo "$fifo"
    sim_on mac-b uc_pingpong >"$TC_TMP/server.out" 2>&1 &
    spid=$!
    sim_on mac-a uc_pingpong -s 1048576 -n 70 -P mac-b <"$fifo" >"$TC_TMP/client.out" 2>&1 &
    cpid=$!
    exec 9>"$fifo"
    for _ in $(seq 300); do # waits for the client's word; the loop bounds a client that died
        grep -q 'paused after' "$TC_TMP/client.out" && break
        sleep 0.1
    done
    "$TBSIMCTL" held >"$TC_TMP/held.out"
    echo go >&9
    exec 9>&-
    wait "$cpid"
    SIM_CLI_RC=$?
    wait "$spid"
    SIM_SRV_RC=$?
    sed 's/^/  held| /' "$TC_TMP/held.out"
    expect "70 x 1 MiB ping-pong paused before teardown: exit statuses" "0 0" \
        "$SIM_CLI_RC $SIM_SRV_RC"
    check_grep "... the client paused after its 70 round trips" "$TC_TMP/client.out" \
        '^uc_pingpong: paused after 70 round trips$'
    kib=$(sed -n 's/^held mac-a:rdma_en2 qp .*, receive file \([0-9]*\) KiB$/\1/p' \
        "$TC_TMP/held.out")
    check "... mac-a's receive file holds at most 2 regions of 1 MiB (${kib:-no file} KiB)" \
        test "${kib:-999999}" -le $((2 * 1024 + 4))
}

for addressing in p2p linklocal; do
    echo "== addressing $addressing"
    sim_up --hosts 2 --addressing "$addressing"
    "$TBSIMCTL" show >"$TC_TMP/show.out"
    check_grep "$addressing: the link model is off by default (no rate, no latency)" \
        "$TC_TMP/show.out" '^cable c1 .* rate_gbps=0\.000 latency_us=0\.000 interleave=0$'
    sim_devinfo mac-a
    check_grep "$addressing: mac-a has an IPv4-mapped GID" "$TC_TMP/devinfo.out" 'GID\[1\]: ::ffff:'
    pingpong_ok "$addressing" 64 200
    "$TBSIMCTL" counters >"$TC_TMP/counters.out"
    cat "$TC_TMP/counters.out"
    for end in mac-a mac-b; do
        check_grep "$addressing: $end:rdma_en2 counted 200 messages of 64 B sent and received" \
            "$TC_TMP/counters.out" \
            "^counters $end:rdma_en2 tx_msgs 200 tx_bytes 12800 rx_msgs 200 rx_bytes 12800 lost 0 "
    done
    check "$addressing: no QP or MR slot is held once both programs exited" "$TBSIMCTL" held
    pingpong_ok "$addressing" 10000 50
    pingpong_ok "$addressing" 1048576 10
    stream_ok "$addressing" 10000 100
    stream_ok "$addressing" 1048576 20
    if [ p2p = "$addressing" ]; then
        region_reuse_ok
    fi
    sim_down
done

echo "== addressing none"
sim_up --hosts 2 --addressing none
sim_devinfo mac-a
check_nogrep "none: no IPv4-mapped GID on mac-a" "$TC_TMP/devinfo.out" '::ffff:'
sim_pair mac-b mac-a uc_pingpong "" "-n 10"
expect "none: the ping-pong (gid auto) fails on the client" 1 "$SIM_CLI_RC"
check_grep "none: the client says there is no IPv4-mapped GID" "$TC_TMP/client.out" \
    'no IPv4-mapped GID on port 1'
sim_pair mac-b mac-a uc_pingpong "-g 1" "-g 1 -n 10"
expect "none: with -g 1 the client fails" 1 "$SIM_CLI_RC"
expect "none: with -g 1 the server fails" 1 "$SIM_SRV_RC"
check_grep "none: client: RTR fails with EINVAL (errno 22)" "$TC_TMP/client.out" \
    '^modify_qp RTR failed: Invalid argument \(errno 22\)$'
check_grep "none: server: RTR fails with EINVAL (errno 22)" "$TC_TMP/server.out" \
    '^modify_qp RTR failed: Invalid argument \(errno 22\)$'

echo "== 3 hosts, full mesh: the device picks the cable"
sim_down
sim_up --hosts 3 --addressing p2p
sim_devinfo mac-a
check_grep "mac-a lists one device per cable (2)" "$TC_TMP/devinfo.out" '^2 device\(s\)$'
# c1 = mac-a:en2 <-> mac-b:en2, c2 = mac-a:en3 <-> mac-c:en2
sim_pair mac-c mac-a uc_pingpong "-d rdma_en2" "-d rdma_en3 -s 4096 -n 100"
expect "mac-a:rdma_en3 <-> mac-c:rdma_en2 (cable c2) ping-pong" "0 0" "$SIM_CLI_RC $SIM_SRV_RC"
sim_pair mac-c mac-a uc_pingpong "-d rdma_en2" "-d rdma_en2 -n 10"
expect "mac-a:rdma_en2 (cable to mac-b) towards mac-c fails on both sides" "1 1" \
    "$SIM_CLI_RC $SIM_SRV_RC"
check_grep "RTR towards a GID that is not on this port's cable: EINVAL" "$TC_TMP/client.out" \
    '^modify_qp RTR failed: Invalid argument \(errno 22\)$'

finish
