#!/usr/bin/env bash
# zcopy.sh FLAVOUR: zero-copy large messages (docs/design.md, "Zero-copy large messages") on 4
# simulated Macs, one rank each, every byte checked by tb_zcopy itself; after each case nothing
# is left held in the simulator.
#   carry    zero-copy carried exactly the bytes of the contiguous messages of at least
#            btl_tbrdma_zcopy_min (the ranks' "zero-copy bytes received" add up to what tb_zcopy
#            says they must), smaller and strided ones were copied, no get fell back
#   evict    at most 2 registrations per device: grdma evicts, what finds none is copied
#   noreg    no registration at all (btl_tbrdma_zcopy_max_regs 0): everything copied, correct
#   budget   no room for a third queue pair (btl_tbrdma_max_qps_per_device 2): copied, and said
#   nohooks  Open MPI's memory hooks off (--mca memory ^patcher): copied, and said
#   realloc  buffers freed and allocated again at the same address, new content each time, with
#            the simulator modelling pinned pages (TBSIM_PIN=1: a stale registration would send
#            and receive the old pages): right data, every incarnation registered anew
#   lost     5 % of the messages lost on every cable: lost chunks noticed, new epochs, every
#            byte still carried zero-copy exactly once
#   corrupt  5 % corrupted (checksums on): bad chunk checksums noticed and repaired the same way
#   reuse    5 % lost, checksums off, the simulator giving a destroyed queue pair's number to the
#            next one (TBSIM_QPN_REUSE=1): every new epoch's queue pair has another number than
#            the one it replaces, every byte arrives
#   giveup   (4.1) every chunk lost for good: each get gives up after 8 epochs, ob1 copies it
#   slow     cables at 50 MB/s on which 1-frame messages pass bulk ones: chunks still on the wire
#            (behind the chunks before them) are not declared lost again and again, everything
#            carried zero-copy
set -uo pipefail
MT_VARIANT="zero-copy"
. "$(dirname "$0")/lib.sh"
mt_flavour "${1:?usage: zcopy.sh 4.1|5.0}"
mt_require
mt_build tb_zcopy
mt_cluster p2p
MIN=131072 # above ob1's eager limit (69,592 B): smaller messages never go by rendezvous
CHUNK=1048576
ZC=(--mca btl_tbrdma_zcopy 1 --mca btl_tbrdma_zcopy_min "$MIN" --mca btl_tbrdma_zcopy_chunk "$CHUNK")
CABLES=$(sed -n 's/^cable \([^ ]*\) .*/\1/p' "$TBSIM_DIR/topology")

# expected: the zero-copy bytes tb_zcopy's ranks say they received (last run).
expected()
{
    grep -o "expects [0-9]* zero-copy bytes" "$MT_OUT" | awk '{s += $2} END {print s + 0}'
}

# faults SPEC: every cable gets the faults SPEC (seeded).
faults()
{
    local c seed=11
    for c in $CABLES; do
        "$MT_TBCLUSTER" fault "$c" $1 seed=$((seed++)) || fatal "tbcluster fault $c $1 failed"
    done
}

# carried NAME: the run carried zero-copy exactly the bytes expected, no get fell back.
carried()
{
    local want got
    want=$(expected)
    got=$(mt_stat "zero-copy bytes received")
    check "$1: tb_zcopy expects zero-copy bytes ($want)" test "$want" -gt 0
    expect "$1: zero-copy bytes received, all ranks" "$want" "$got"
    expect "$1: gets copied instead or failed" "0 0" \
        "$(mt_stat 'gets copied instead') $(mt_stat 'gets failed')"
    # with faults, a peer's last ack or CLOSE may be lost: such frames are dropped at finalize
    echo "    | $1: $(mt_stat 'frames never acknowledged') frames never acknowledged, dropped at finalize"
}

if mt_run carry 4 1 "${ZC[@]}" -- tb_zcopy sizes "$MIN" "$CHUNK"; then
    carried carry
    expect "carry: frames never acknowledged, dropped at finalize (clean cables)" 0 \
        "$(mt_stat 'frames never acknowledged')"
fi
mt_nothing_held "carry"

if mt_run evict 4 1 "${ZC[@]}" --mca btl_tbrdma_zcopy_max_regs 2 -- tb_zcopy sizes "$MIN" "$CHUNK"; then
    check "evict: registrations reached the budget ($(mt_stat 'times over the budget') times)" \
        test "$(mt_stat 'times over the budget')" -gt 0
    check "evict: grdma released registrations ($(mt_stat 'released by the cache'))" \
        test "$(mt_stat 'released by the cache')" -gt 0
    check "evict: zero-copy still carried bytes ($(mt_stat 'zero-copy bytes received'))" \
        test "$(mt_stat 'zero-copy bytes received')" -gt 0
fi
mt_nothing_held "evict"

if mt_run noreg 4 1 "${ZC[@]}" --mca btl_tbrdma_zcopy_max_regs 0 -- tb_zcopy sizes "$MIN" "$CHUNK"; then
    expect "noreg: zero-copy bytes received" 0 "$(mt_stat 'zero-copy bytes received')"
    check "noreg: registrations refused, messages copied ($(mt_stat 'registrations refused'))" \
        test "$(mt_stat 'registrations refused')" -gt 0
fi
mt_nothing_held "noreg"

if mt_run budget 4 1 "${ZC[@]}" --mca btl_tbrdma_max_qps_per_device 2 --mca btl_tbrdma_verbose 1 \
    -- tb_zcopy sizes "$MIN" "$CHUNK"; then
    expect "budget: zero-copy bytes received" 0 "$(mt_stat 'zero-copy bytes received')"
    check_grep "budget: verbosity 1 says zero-copy is off and why" "$MT_OUT" \
        'zero-copy off towards host mac-.: 1 ranks on mac-. x 1 on mac-. x 3 queue pairs per pair of ranks exceed the budget of 2 per device'
fi
mt_nothing_held "budget"

# nohooks: Open MPI's memory patcher off, so no memory hooks: a freed buffer could keep a stale
# registration, so tbrdma copies (and says why); realloc below is the case that would go wrong.
if mt_run nohooks 4 1 "${ZC[@]}" --mca memory ^patcher --mca btl_tbrdma_verbose 1 \
    -- tb_zcopy realloc 2 $((8 << 20)); then
    expect "nohooks: zero-copy bytes received" 0 "$(mt_stat 'zero-copy bytes received')"
    check_grep "nohooks: verbosity 1 says the memory hooks are missing" "$MT_OUT" \
        "Open MPI's memory hooks are not active .*large messages are copied"
fi
mt_nothing_held "nohooks"

rounds=6
# checksums off: a stale registration's bytes would reach tb_zcopy's own check, not a retry
if mt_run realloc 4 1 "${ZC[@]}" -x TBSIM_PIN=1 --mca btl_tbrdma_checksum 0 \
    -- tb_zcopy realloc "$rounds" $((8 << 20)); then
    same=$(grep -o ": [0-9]* of $rounds buffers came back" "$MT_OUT" | awk '{s += $2} END {print s + 0}')
    check "realloc: buffers came back at the same address ($same of $((4 * rounds)))" \
        test "$same" -gt 0
    check "realloc: each incarnation registered anew ($(mt_stat 'registrations,') >= $((4 * rounds)))" \
        test "$(mt_stat 'registrations,')" -ge $((4 * rounds))
    expect "realloc: gets copied instead or failed" "0 0" \
        "$(mt_stat 'gets copied instead') $(mt_stat 'gets failed')"
fi
mt_nothing_held "realloc"

faults "drop=0.05"
if mt_run lost 4 1 "${ZC[@]}" --mca btl_tbrdma_checksum 1 -- tb_zcopy sizes "$MIN" "$CHUNK"; then
    carried lost
    check "lost: lost chunks noticed ($(mt_stat 'lost chunks')), new epochs ($(mt_stat 'epochs changed'))" \
        test "$(mt_stat 'lost chunks')" -gt 0 -a "$(mt_stat 'epochs changed')" -gt 0
fi
faults "drop=0 corrupt=0.05"
if mt_run corrupt 4 1 "${ZC[@]}" --mca btl_tbrdma_checksum 1 -- tb_zcopy sizes "$MIN" "$CHUNK"; then
    carried corrupt
    check "corrupt: bad chunk checksums noticed ($(mt_stat 'bad chunk checksums'))" \
        test "$(mt_stat 'bad chunk checksums')" -gt 0
fi
# reuse: the simulator numbers queue pairs by slot (TBSIM_QPN_REUSE=1: a destroyed queue pair's
# number comes back with the next one), chunks lost and corrupted, checksums off: each new
# epoch's zero-copy queue pair must still get a number other than the one it replaces (else a
# chunk on its way to the old one could land in a receive of the new epoch, and without
# checksums nothing would tell its bytes apart), and every byte arrives.
faults "drop=0.05 corrupt=0"
if mt_run reuse 4 1 "${ZC[@]}" -x TBSIM_QPN_REUSE=1 --mca btl_tbrdma_checksum 0 \
    --mca btl_tbrdma_verbose 5 -- tb_zcopy sizes "$MIN" "$CHUNK"; then
    carried reuse
    sed -n 's/.*zero-copy towards host .*: epoch [0-9]*, queue pair \(0x[0-9a-f]*\) replaces \(0x[0-9a-f]*\).*/\1 \2/p' \
        "$MT_OUT" >"$TC_TMP/renewed"
    renewed=$(wc -l <"$TC_TMP/renewed")
    same=$(awk '$1 == $2' "$TC_TMP/renewed" | wc -l)
    check "reuse: $renewed queue pairs replaced at new epochs, none with the number of the one it replaced ($same)" \
        test "$renewed" -gt 0 -a "$same" -eq 0
fi
faults "drop=0 corrupt=0"
mt_nothing_held "after the faults"

# giveup (Open MPI 4.1; the rule is the same on 5.0): every chunk is lost for good (the cables
# drop every message of 100 KB and more: 1 MiB chunks, not the 68 KiB bulk frames): each get
# gives up after 8 epochs without progress and ob1 copies it, every byte right, in bounded time.
if [ 4.1 = "$MT_FLAVOUR" ]; then
    faults "drop=1 drop_min=100000"
    if MT_TIMEOUT=90 mt_run giveup 4 1 "${ZC[@]}" -- tb_zcopy realloc 1 4194304; then
        check "giveup: gets lost chunks ($(mt_stat 'lost chunks')), gave up and were copied by ob1 ($(mt_stat 'gets failed'))" \
            test "$(mt_stat 'lost chunks')" -gt 0 -a "$(mt_stat 'gets failed')" -gt 0
    fi
    faults "drop=0 drop_min=0"
    mt_nothing_held "giveup"
fi

# slow: the cables at 0.4 Gbit/s (50 MB/s, 20 ns a byte) and 1-frame messages passing bulk ones
# (interleave=1: what Apple's engine does if it arbitrates queue pairs packet by packet), so a
# chunk's DONE comes about 21 ms before its 1 MiB of data: zero-copy must learn the wire's pace
# and not declare chunks lost again and again (with 1 GB/s assumed, every chunk was, and after 8
# epochs ob1 copied the message: Soft-RoCE under qemu showed it).
"$MT_TBCLUSTER" link all rate_gbps=0.4 latency_us=4 interleave=1 || fatal "tbcluster link failed"
if mt_run slow 4 1 "${ZC[@]}" -- tb_zcopy sizes "$MIN" "$CHUNK"; then
    carried slow
    pace=$(grep -o "chunks given [0-9.]* ns a byte" "$MT_OUT" | awk '$3 > m {m = $3} END {print m + 0}')
    check "slow: the pace learnt is at least the wire's 20 ns a byte ($pace)" \
        awk -v p="$pace" 'BEGIN {exit !(p >= 20)}'
    # a chunk's data is timed from the previous chunk's arrival when its DONE passed the chunks
    # before it: at most one chunk lost a receiving connection (12) while the pace is learnt
    # (timed from DONE alone, 22 to 50 were, each throwing away the chunks on the wire)
    lost=$(mt_stat 'lost chunks')
    check "slow: chunks declared lost while learning the pace: $lost, at most 12" test "$lost" -le 12
fi
"$MT_TBCLUSTER" link all off interleave=0 || fatal "tbcluster link failed"
mt_nothing_held "slow"
finish
