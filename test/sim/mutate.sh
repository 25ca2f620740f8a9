#!/usr/bin/env bash
# mutate.sh: mutation tests of the simulator's rules (test/sim/README.md, "Enforced rules and the
# tests that prove them"). Each switch of libtbsim/tbsim_mutate.h disables or loosens one rule (or
# makes it harsher than Apple, where a test must prove the accepting side of a limit). Built with
# that switch, in build/mutants/<name> (the normal build is untouched), the test named for the rule
# must fail, at the check named below: then the mutant is killed and the test proven able to fail.
#
#   mutate.sh NAME     builds mutant NAME and runs its test. Exit 0 when the test failed at the
#                      named check, 1 when the mutant survived (or was killed by another check
#                      only), 77 when the test cannot run here (no root or namespaces)
#   mutate.sh --list   prints the mutation names, one a line
#   mutate.sh --table  checks that this table, the README's table and tbsim_mutate.h name the same
#                      mutations, and that the normal build's libtbsim carries no mutant
set -uo pipefail
# shellcheck source=../lib/check.sh
. "$(dirname "$0")/../lib/check.sh"

SIM_SRC=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$SIM_SRC/../.." && pwd)
BUILD=${TBRDMA_BUILD:-$TOP/build}
MUTANTS=$BUILD/mutants

# mutation  test  the check (its text, or the start of it) that must fail
MUTATIONS=$(
    cat <<'TABLE'
device_list_all      sim_devices   one device listed
guid_mac             sim_devices   node GUID is the EUI-64 of MAC
gid_stale            sim_devices   no IPv4-mapped GID once en2 has no IPv4
peer_rdma_ignored    sim_devices   port DOWN while mac-b has RDMA off
rdma_off_lists       sim_devices   no device at all while this host has RDMA off
bridge_ignored       sim_devices   port DOWN while en2 is a bridge member
carrier_ignored      sim_linkdown  mac-a: port DOWN with the cable pulled
pd_on_down           sim_devices   alloc_pd fails with ENXIO on a DOWN port
qp_type_any          sim_limits    RC QP fails with EOPNOTSUPP
inline_ok            sim_limits    inline data fails with EINVAL
sge_multi            sim_limits    a send with 2 SGEs fails with EINVAL
qp_cap_11            sim_limits    the 11th QP fails with EBUSY
qp_cap_per_process   sim_limits    ... and the 7th fails with EBUSY
mr_cap_101           sim_limits    the 101st MR fails with ENOMEM
wr_depth_64          sim_limits    the 64th posted receive fails with ENOMEM
wr_cap_ignored       sim_limits    the 33rd outstanding send fails with ENOMEM (max_send_wr honoured)
wr_cap_4096          sim_limits    max_send_wr 4096 fails create_qp with EINVAL
opcode_any           sim_limits    RDMA WRITE opcode fails post_send with EINVAL
msg_max_plus1        sim_limits    a send of 16,773,121 B (inside its MR) fails with EINVAL
msg_max_2mib         sim_limits    a 16,773,120 B send (4095 frames) into as much arrives whole
rts_from_init        sim_limits    RTS before RTR fails with EINVAL
rtr_sgid_any         sim_limits    RTR with sgid_index 0 (fe80, not IPv4-mapped) fails with EINVAL
rtr_dgid_any         sim_limits    RTR towards our own GID (not the peer's) fails with EINVAL
rtr_any_cable        sim_pingpong  RTR towards a GID that is not on this port's cable: EINVAL
rtr_mtu_any          sim_limits    RTR with an MTU above 4096 fails with EINVAL
rtr_mask_any         sim_limits    RTR without DEST_QPN and RQ_PSN in the mask fails with EINVAL
copy_4k              sim_pingpong  p2p: every echo of 10000 B had byte_len 10000 and every byte sent
frame_rule_off       sim_limits    a 1-frame send into a 2-frame receive fails the receive with IBV_WC_LOC_LEN_ERR
frame_rule_strict    sim_limits    a 100 B send into a 4096 B receive (1 frame each) arrives whole
frame_len_over       sim_limits    a 4001 B send into a 4000 B receive (1 frame each) fails the receive
credits_off          sim_limits    no send completes while the peer posts no receive
credits_plus1        sim_limits    no send completes while the peer posts no receive
wc_byte_len          sim_limits    a 100 B send into a 4096 B receive (1 frame each) arrives whole
unsignaled_complete  sim_limits    only the signaled send completes (wr_id 13)
send_cqe_immediate   sim_limits    the first poll_cq after the send reports no completion yet
syscall_in_poll      sim_nosyscall 19900 extra round trips add
drop_error           sim_faults    every send completes with success
drop_unseeded        sim_faults    the same seed loses the same messages (by sequence number)
fault_latched        sim_faults    exactly the 100 messages sent before the change arrived
corrupt_ignored      sim_faults    all 100 arrive with success status and changed bytes
delay_ignored        sim_faults    no round trip shorter than 2 x 300000 us
down_delivers        sim_linkdown  only the 100 sent before the pull arrive
link_feed_deaf       sim_linkdown  only the 100 sent before the pull arrive
link_off             sim_link      on (4 us, 8 Gbit/s): 8 B: no half round trip shorter than the model's
link_duplex_shared   sim_link      both directions of c1 at once: one wire each way, both second halves within
link_cables_shared   sim_link      c1 and c2 at once, a->b: one wire each, both second halves within
link_latched         sim_link      the rate changed while the stream was paused holds for the rest
interleave_ignored   sim_link      interleave=1: the ping waits for one packet at most
crash_release        sim_limits    the dead process's 4 QPs still count: the 7th QP fails with EBUSY
dereg_keeps_slot     sim_pingpong  p2p: no QP or MR slot is held once both programs exited
counters_rx_bytes    sim_pingpong  p2p: mac-a:rdma_en2 counted 200 messages of 64 B sent and received
pin_ignored          sim_limits    a send from a range mapped again after its registration carries the old pages
TABLE
)

# Usage: entry NAME : prints "TEST CHECK-TEXT" of mutation NAME; fails when there is none.
entry()
{
    local name test text
    while read -r name test text; do
        if [ "$name" = "$1" ]; then
            echo "$test $text"
            return 0
        fi
    done <<<"$MUTATIONS"
    return 1
}

# Prints the normal build's compiler, its flags, and the visibility flags, one a line.
# shellcheck disable=SC2016 # the $(...) are make's variables, expanded by make
build_flags()
{
    printf 'mutate-flags:\n\t@echo "$(CC)"; echo "$(CFLAGS) $(TBRDMA_CFLAGS) $(CPPFLAGS) %s"; %s\n' \
        '$(VERBS_CPPFLAGS)' 'echo "$(VISIBILITY_CFLAGS)"' |
        make -s -C "$BUILD/test/sim" -f Makefile -f - mutate-flags
}

# Usage: build_mutant NAME : libtbsim.so and tbsimctl with the switch, the examples linked from
# the normal build (they are not mutated), under $MUTANTS/NAME/test/sim.
build_mutant()
{
    local name=$1 dir=$MUTANTS/$1/test/sim cc cflags vis def p
    { read -r cc; read -r cflags; read -r vis; } < <(build_flags) || return 1
    def=(-DTBSIM_MUTATE="TBSIM_MUT_${name^^}" -DTBSIM_MUTATE_NAME="\"$name\"")
    rm -rf "${MUTANTS:?}/$name"
    mkdir -p "$dir/.libs" || return 1
    # shellcheck disable=SC2086 # flag lists
    $cc $cflags $vis -fPIC -shared "${def[@]}" -o "$dir/.libs/libtbsim.so" \
        "$SIM_SRC"/libtbsim/tbsim_{shm,net,verbs,data,link,pin}.c || return 1
    # shellcheck disable=SC2086
    $cc $cflags "${def[@]}" -o "$dir/tbsimctl" "$SIM_SRC/tbsimctl.c" \
        "$SIM_SRC/libtbsim/tbsim_shm.c" || return 1
    for p in uc_pingpong tbsim_limits tbsim_devinfo; do
        ln -s "$BUILD/test/sim/$p" "$dir/$p" || return 1
    done
}

# Usage: carries LIB NAME : whether the library holds the mutant id of NAME.
carries()
{
    grep -aq "tbsim mutant: $2" "$1"
}

run_mutant()
{
    local name=$1 test text log rc
    read -r test text < <(entry "$name") || fatal "no mutation named $name (see --list)"
    # shellcheck disable=SC2034 # the name check.sh's finish reports
    CHECK_NAME=mutate-$name
    skip_unless_netns
    for f in "$BUILD/test/sim/uc_pingpong" "$BUILD/test/sim/.libs/libtbsim.so"; do
        [ -e "$f" ] || fatal "$f is not built (run ./build.sh)"
    done
    build_mutant "$name" || fatal "the mutant $name does not build"
    check "the mutant's libtbsim carries the switch $name" \
        carries "$MUTANTS/$name/test/sim/.libs/libtbsim.so" "$name"
    log=$MUTANTS/$name/$test.log
    echo "== $test with libtbsim mutated by $name"
    # A shorter hang guard: a mutant often leaves a program waiting for a completion that never
    # comes; 5 s is still hundreds of times what any wait of these tests takes.
    # The test ends as soon as the named check fails (CHECK_STOP_AT, test/lib/check.sh) when
    # that check is the shell's; a check a C program makes itself runs to the program's end.
    CHECK_STOP_AT=$text EX_TIMEOUT_S=5 TBRDMA_BUILD=$MUTANTS/$name \
        timeout --kill-after=10 300 "$SIM_SRC/tests/$test.sh" >"$log" 2>&1 </dev/null
    rc=$?
    sed 's/^/  | /' "$log"
    [ "$rc" != 77 ] || skip "$test cannot run here: $(grep '^SKIP' "$log" | tail -1)"
    check "$test fails with the mutant (exit $rc)" test "$rc" != 0
    check_grep "$test fails at: $text" "$log" "FAIL: $(printf '%s' "$text" | sed 's/[][\.*^$()+?{}|]/\\&/g')"
    rm -rf "${MUTANTS:?}/$name"
    finish
}

# The names in this table, in the README's mutation column and in tbsim_mutate.h, each sorted.
names_here()
{
    awk 'NF { print $1 }' <<<"$MUTATIONS" | sort
}

# The last column of the README's rule table, one row a line.
readme_column()
{
    awk -F'|' '/^## Enforced rules/ { on = 1; next } /^## / { on = 0 }
        on && /^\| / && !/^\| rule / && NF >= 6 { print $(NF - 1) }' "$SIM_SRC/README.md"
}

names_readme()
{
    readme_column | grep -o '`[a-z0-9_]*`' | tr -d '`' | sort -u
}

names_header()
{
    sed -n 's/^ *TBSIM_MUT_\([A-Z0-9_]*\),.*/\1/p' "$SIM_SRC/libtbsim/tbsim_mutate.h" |
        grep -v '^NONE$' | tr '[:upper:]' '[:lower:]' | sort
}

check_table()
{
    # shellcheck disable=SC2034 # the name check.sh's finish reports
    CHECK_NAME=mutate-table
    expect "every switch of tbsim_mutate.h has a row in mutate.sh" "$(names_header | xargs)" \
        "$(names_here | xargs)"
    expect "the README's rule table names every mutation" "$(names_here | xargs)" \
        "$(names_readme | xargs)"
    expect "every row of the README's rule table names its mutation" 0 \
        "$(readme_column | grep -cv '`[a-z0-9_]*`')"
    check "the normal build's libtbsim is built" test -e "$BUILD/test/sim/.libs/libtbsim.so"
    check_not "the normal build's libtbsim carries no mutant" \
        grep -aq 'tbsim mutant:' "$BUILD/test/sim/.libs/libtbsim.so"
    finish
}

case "${1:-}" in
--list) names_here ;;
--table) check_table ;;
-* | '') sed -n '2,13s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
*) run_mutant "$1" ;;
esac
