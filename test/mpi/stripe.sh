#!/usr/bin/env bash
# stripe.sh FLAVOUR: multi-cable striping (docs/design.md, "Multi-cable striping") on 4
# simulated Macs. mac-a and mac-b are joined by two crossed cables (mac-a en2 <-> mac-b en3 and
# mac-a en3 <-> mac-b en2: each end ordering its own interface names would cross them, and a
# queue pair connected to the wrong cable fails RTR), mac-c and mac-d by two plain ones, every
# other pair by one cable.
#   small   tb_pingpong up to 2 KiB (eager messages only), one rank per Mac: the second cable of
#           each doubled pair carried only tbrdma's 40-byte control frames (the handshake that
#           proves its queue pairs, the close), the first one carried the data
#   large   tb_pingpong 0 B .. 64 MiB and tb_coll, two ranks per Mac (2 x 2 x 2 = 8 queue pairs
#           on every device, doubled cables included: within Apple's 10): every byte checked,
#           both cables of each doubled pair carried at least 16 MiB each way, and tbrdma
#           counted data frames on striped cables
#   zcopy   tb_pingpong to 16 MiB between mac-a and mac-b, one rank each (room for zero-copy):
#           striped, nothing zero-copy (docs/design.md: striped pairs copy over every cable)
#   faults  1 % loss and 0.3 % corruption on every cable: tb_pingpong up to 16 MiB and tb_coll
#           still correct, both cables of each doubled pair lost and corrupted messages, tbrdma
#           retransmitted and refused bad checksums
#   pull    tb_ring with 4 MiB messages between mac-a and mac-b, one of their two cables pulled
#           (the second, then in another job the first): the job ends non-zero within 15 s with
#           a message naming the pulled cable, no rank received wrong data, nothing is held
# (A lost cable is a lost peer: docs/design.md says why tbrdma does not go on with the other.)
set -uo pipefail
MT_VARIANT="crossed and doubled cables"
. "$(dirname "$0")/lib.sh"
mt_flavour "${1:?usage: stripe.sh 4.1|5.0}"
mt_require
mt_build
mt_cluster p2p --topology crossed:a-b --topology double:c-d
MIB16=16777216

# pair_cables HOST-A HOST-B: the pair's cables in tbrdma's order (by the lower-named host's
# device name, docs/mesh.md), one "ID HOST IF HOST IF" line each, the lower-named host first.
pair_cables()
{
    sed -n "s/^cable \([^ ]*\) $1 \([^ ]*\) $2 \([^ ]*\)$/\1 $1 \2 $2 \3/p;
            s/^cable \([^ ]*\) $2 \([^ ]*\) $1 \([^ ]*\)$/\1 $1 \3 $2 \2/p" "$TBSIM_DIR/topology" \
        | awk '{print "rdma_" $3, $0}' | LC_ALL=C sort | cut -d' ' -f2-
}

# delta DEVICE FIELD: how much counter FIELD of DEVICE (host:rdma_enX) grew from before to after.
delta()
{
    local b a
    b=$(awk -v d="$1" -v k="$2" '$2 == d {for (i = 3; i < NF; i += 2) if ($i == k) print $(i + 1)}' \
        "$TC_TMP/before")
    a=$(awk -v d="$1" -v k="$2" '$2 == d {for (i = 3; i < NF; i += 2) if ($i == k) print $(i + 1)}' \
        "$TC_TMP/after")
    echo $((${a:-0} - ${b:-0}))
}

# ends CABLE-LINE: the cable's two devices, "host:rdma_enX host:rdma_enY".
ends()
{
    echo "$1" | awk '{print $2 ":rdma_" $3, $4 ":rdma_" $5}'
}

DOUBLED=$(pair_cables mac-a mac-b; pair_cables mac-c mac-d)
[ "$(echo "$DOUBLED" | wc -l)" -eq 4 ] || fatal "expected two cables between mac-a/mac-b and mac-c/mac-d"
echo "$DOUBLED" | sed 's/^/    doubled pair cable (tbrdma order): /'
FIRST=$(echo "$DOUBLED" | sed -n '1p;3p')
SECOND=$(echo "$DOUBLED" | sed -n '2p;4p')

# small: eager messages stay on each pair's first cable.
mt_counters "$TC_TMP/before"
mt_run small 4 1 -- tb_pingpong 2048
mt_counters "$TC_TMP/after"
for cable in $(echo "$SECOND" | awk '{print $1}'); do
    for dev in $(ends "$(echo "$SECOND" | grep "^$cable ")"); do
        msgs=$(delta "$dev" tx_msgs) bytes=$(delta "$dev" tx_bytes)
        check "small: $dev (cable $cable, a pair's second) sent only 40-byte control frames ($msgs messages, $bytes bytes)" \
            test "$msgs" -gt 0 -a "$bytes" -eq $((msgs * 40))
    done
done
for cable in $(echo "$FIRST" | awk '{print $1}'); do
    for dev in $(ends "$(echo "$FIRST" | grep "^$cable ")"); do
        msgs=$(delta "$dev" tx_msgs) bytes=$(delta "$dev" tx_bytes)
        check "small: $dev (cable $cable, a pair's first) carried the data ($msgs messages, $bytes bytes)" \
            test "$bytes" -gt $((msgs * 40))
    done
done

# large: every cable of a doubled pair carries large messages, with two ranks per Mac.
coll_args=()
if [ 5.0 = "$MT_FLAVOUR" ]; then
    coll_args=(--mca coll ^han) # see suite.sh: 5.0.7's han and strided vectors
fi
mt_counters "$TC_TMP/before"
mt_run large 8 2 -- tb_pingpong
striped=$(mt_stat "on striped cables")
mt_run coll 8 2 "${coll_args[@]}" -- tb_coll
striped=$((striped + $(mt_stat "on striped cables")))
mt_counters "$TC_TMP/after"
for dev in $(echo "$DOUBLED" | while read -r line; do ends "$line"; done); do
    bytes=$(delta "$dev" tx_bytes)
    check "large: $dev sent $bytes bytes (at least $MIB16)" test "$bytes" -ge "$MIB16"
done
check "large: tbrdma sent $striped data frames on striped cables" test "$striped" -gt 0
mt_nothing_held "large: after the jobs"

# zcopy: one rank per Mac would leave room for zero-copy, but mac-a and mac-b stripe: their
# large messages are copied over both cables, none goes zero-copy on the first alone.
mt_run zcopy 2 1 --mca btl_tbrdma_verbose 1 -- tb_pingpong 16777216
check "zcopy: tbrdma sent data frames on striped cables ($(mt_stat "on striped cables"))" \
    test "$(mt_stat "on striped cables")" -gt 0
expect "zcopy: zero-copy bytes received between striped Macs" 0 "$(mt_stat "zero-copy bytes received")"
check_grep "zcopy: zero-copy is said to be off towards the striped Mac" "$MT_OUT" \
    "zero-copy off towards host mac-[ab]: its 2 cables stripe large messages"
mt_nothing_held "zcopy: after the job"

# faults: loss and corruption on every cable, both of each doubled pair included.
seed=11
for c in $(sed -n 's/^cable \([^ ]*\) .*/\1/p' "$TBSIM_DIR/topology"); do
    "$MT_TBCLUSTER" fault "$c" drop=0.01 corrupt=0.003 seed=$((seed++)) \
        || fatal "tbcluster fault $c failed"
done
mt_counters "$TC_TMP/before"
retrans=0 badsum=0 striped=0
for prog in "tb_pingpong $MIB16" tb_coll; do
    set -- $prog
    mt_run "faulty-${1#tb_}" 4 1 --mca btl_tbrdma_checksum 1 -- "$@"
    retrans=$((retrans + $(mt_stat retransmitted)))
    badsum=$((badsum + $(mt_stat "bad checksum")))
    striped=$((striped + $(mt_stat "on striped cables")))
done
mt_counters "$TC_TMP/after"
while read -r line; do
    set -- $(ends "$line")
    lost=$(($(delta "$1" lost) + $(delta "$2" lost)))
    corrupted=$(($(delta "$1" corrupted) + $(delta "$2" corrupted)))
    check "faults: cable $(echo "$line" | cut -d' ' -f1) ($1 <-> $2) lost $lost and corrupted $corrupted messages" \
        test "$lost" -gt 0 -a "$corrupted" -gt 0
done <<<"$DOUBLED"
check "faults: tbrdma retransmitted ($retrans), refused bad checksums ($badsum), striped ($striped)" \
    test "$retrans" -gt 0 -a "$badsum" -gt 0 -a "$striped" -gt 0
mt_nothing_held "faults: after the jobs"
for c in $(sed -n 's/^cable \([^ ]*\) .*/\1/p' "$TBSIM_DIR/topology"); do
    "$MT_TBCLUSTER" fault "$c" drop=0 corrupt=0 || fatal "tbcluster fault $c failed"
done

# pull: one cable of the crossed pair pulled while both carry 4 MiB messages.
TC_BEFORE_DOWN=mt_job_stop

# pull WHICH CABLE-LINE: tb_ring between mac-a and mac-b, the cable pulled once it runs.
pull()
{
    local name="pull $1" id ha ia hb ib t0
    read -r id ha ia hb ib <<<"$2"
    mt_ring_start "pull-$1" 2 120 4194304 || return 1
    sleep 1 # a few rounds of striped 4 MiB messages in flight
    t0=$(date +%s.%N)
    "$MT_TBCLUSTER" fault "$id" down || fail "$name: tbcluster fault $id down failed"
    mt_await_end "$name" "$t0" \
        "lost peer .* over the cable ($ha rdma_$ia \(interface $ia\) <-> $hb rdma_$ib|$hb rdma_$ib \(interface $ib\) <-> $ha rdma_$ia)"
    check_nogrep "$name: no rank received wrong data" "$MT_OUT" "tbtest ring: rank [0-9]*: FAIL"
    "$MT_TBCLUSTER" fault "$id" up
    mt_nothing_held "$name: after the job"
    mt_reclaim
}

pull second "$(echo "$DOUBLED" | sed -n 2p)"
pull first "$(echo "$DOUBLED" | sed -n 1p)"
finish
