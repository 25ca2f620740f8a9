#!/usr/bin/env bash
# plugin.sh: mutation tests of tbrdma's own logic (plugin/ and plugin/core). Each switch of
# plugin/core/tbrdma_mutate.h breaks one protocol rule or one of Apple's rules on purpose; with it
# on, the test named in the table below must fail at the check named there: then the mutant is
# killed and that test is proven able to fail. One mutable build (build/mutable: configured with
# -DTBRDMA_MUTATIONS -DTBRDMA_DEBUG, so tbrdma's invariant checks abort too) serves every mutant;
# the switch is chosen at run time (TBRDMA_MUTANT=name, passed to the ranks by test/mpi/lib.sh).
# The normal build carries no switch.
#
#   plugin.sh NAME     runs mutant NAME's test. Exit 0 when it failed at the named check, 1 when
#                      the mutant survived (or was killed by another check only), 77 when the test
#                      cannot run here
#   plugin.sh --list   the mutation names, one a line
#   plugin.sh --build  configures (when needed) and builds build/mutable
#   plugin.sh --table  this table, tbrdma_mutate.h and docs/design.md's rule table name the same
#                      mutations; the normal build carries none, the mutable one all
#
# Tests: unit/PROGRAM (a CUnit program of the mutable build; the check is the CUnit test that
# must fail) or mpi/SCRIPT[:ARG...] (test/mpi/SCRIPT.sh 4.1 ARG... against the mutable build; the
# check is the start of the line that must say FAIL; the script stops there, CHECK_STOP_AT).
set -uo pipefail
# shellcheck source=../lib/check.sh
. "$(dirname "$0")/../lib/check.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
MUTABLE=${TBRDMA_MUTABLE_BUILD:-$TOP/build/mutable}
FLAGS="-DTBRDMA_MUTATIONS -DTBRDMA_DEBUG"

# mutation  test  the check (its text, or the start of it) that must fail
MUTATIONS=$(
    cat <<'TABLE'
crc_accepted           unit/test_wire           test_wire_refusals_are_named
crc_one_short          unit/test_wire           test_wire_checksum_covers_every_payload_byte
frame_count_unchecked  unit/test_wire           test_wire_frame_count_is_the_channels
dup_delivered          unit/test_rel            test_rel_receiver_verdicts
ack_one_too_far        unit/test_rel            test_rel_ack_nack_and_timeout
retransmit_never       unit/test_rel            test_rel_ack_nack_and_timeout
credit_plus1           unit/test_rel            test_rel_credit_data_and_control
nack_keeps_timing      unit/test_rel            test_rel_karn_after_nack
credit_probe_never     unit/test_rel            test_rel_model_outage
stall_untimed          unit/test_rel            test_rel_stall_starts_the_probe_timer
sample_wraps           unit/test_rel            test_rel_sample_never_wraps
unacked_never          unit/test_rel            test_rel_unacked_for
rtt_capped_short       unit/test_rel            test_rel_long_round_trips_are_waited_for
queued_timed           unit/test_rel            test_rel_queued_frame_does_not_time_out
backoff_reset_by_ack   unit/test_rel            test_rel_ack_nack_and_timeout
peer_timeout_never     unit/test_live           test_live_probe_port_and_loss
stall_unforgiven       unit/test_live           test_live_stall_is_forgiven
unread_judged          unit/test_live           test_live_unread_completions_never_lose
zc_same_frames         unit/test_zc             test_zc_chunk_len_windows_distinct
zc_accept_without_done unit/test_zc             test_zc_judge
zc_deadline_from_done  unit/test_zc             test_zc_deadline_wire
qp_budget_per_process  unit/test_conn           test_budget_arithmetic
gid_index_1            unit/test_gid            test_gid_find_ipv4_mapped_apple_table
cables_own_order       unit/test_mesh           test_mesh_solve_duplicate_cables_order_independent
train_split            mpi/suite:p2p:1          pingpong:
causal_hold_skipped    mpi/suite:p2p:1          pingpong:
held_before_callbacks  mpi/liveness             overlap:
zc_retries_1000        mpi/zcopy                giveup:
liveness_thread_idle   mpi/liveness             compute:
zc_budget_ignored      mpi/zcopy                budget:
zc_regs_unlimited      mpi/zcopy                evict:
zc_hooks_ignored       mpi/zcopy                nohooks:
release_skipped        mpi/suite:p2p:1          after the suite:
signal_any_disposition mpi/signal               own:
bulk_unpadded          mpi/suite:p2p:1          pingpong:
sendi_double_release   mpi/suite:p2p:1          pingpong:
watchdog_off           mpi/outage:1             starve:
ring_full_one_late     unit/test_ring           test_ring_full_and_order
route_departed         unit/test_route          test_route_frame_outcomes
vuc_frame_rule_off     unit/test_route          test_vuc_rules
vport_ctrl_reserve_off unit/test_vport          test_vport_ctrl_reserve
agent_beat_unlocked    unit/test_agentlink      test_agentlink_check_threads
heap_frames_off        mpi/suite:linklocal:2    pools
carrier_reserve_off    mpi/suite:linklocal:2    pools
TABLE
)

# entry NAME: prints "TEST CHECK-TEXT" of mutation NAME; fails when there is none.
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

# build_mutable: build/mutable configured with FLAGS (again when configure or the flags changed),
# then built, unit test programs included.
build_mutable()
{
    mkdir -p "$MUTABLE" || return 1
    if [ ! -f "$MUTABLE/Makefile" ] || [ "$TOP/configure" -nt "$MUTABLE/config.status" ] \
        || [ "$(cat "$MUTABLE/mutable-flags" 2>/dev/null)" != "$FLAGS" ]; then
        (cd "$MUTABLE" && "$TOP/configure" CPPFLAGS="$FLAGS") >"$MUTABLE/configure.out" 2>&1 \
            || { echo "configure of $MUTABLE failed (see configure.out)"; return 1; }
        echo "$FLAGS" >"$MUTABLE/mutable-flags"
    fi
    # only what the mutants' tests use: the plugins, the simulator, the unit test programs
    local d
    : >"$MUTABLE/make.out"
    for d in plugin/core plugin plugin/coll test/sim; do
        make -C "$MUTABLE/$d" -j2 >>"$MUTABLE/make.out" 2>&1 \
            || { echo "the mutable build failed in $d (see $MUTABLE/make.out)"; return 1; }
    done
    # shellcheck disable=SC2046 # one program a word
    make -C "$MUTABLE/test/unit" -j2 $(awk '$2 ~ /^unit\// { sub("unit/", "", $2); print $2 }' \
        <<<"$MUTATIONS" | sort -u) >>"$MUTABLE/make.out" 2>&1 \
        || { echo "the mutable build of the unit tests failed (see $MUTABLE/make.out)"; return 1; }
}

# carries LIB: the library holds the mutation names (a mutable build).
carries()
{
    grep -aq "tbrdma mutants:" "$1"
}

# run_test TEST TEXT LOG: the mutant's test, its output in LOG; its exit status returned.
run_test_of()
{
    local test=$1 text=$2 log=$3 prog script args
    case "$test" in
    unit/*)
        prog=$MUTABLE/test/unit/${test#unit/}
        [ -x "$prog" ] || { echo "no $prog (plugin.sh --build)" >"$log"; return 1; }
        timeout --kill-after=10 300 "$prog" >"$log" 2>&1 </dev/null
        ;;
    mpi/*)
        IFS=: read -r script args <<<"${test#mpi/}"
        # shellcheck disable=SC2086 # the arguments of the table, one word each
        CHECK_STOP_AT=$text MT_BUILD_DIR=$MUTABLE \
            timeout --kill-after=10 600 "$TOP/test/mpi/$script.sh" 4.1 ${args//:/ } >"$log" 2>&1 \
            </dev/null
        ;;
    *) echo "unknown kind of test: $test" >"$log"; return 1 ;;
    esac
}

# failed_at TEST TEXT LOG: the log says the named check failed.
failed_at()
{
    case "$1" in
    unit/*) # the test's lines, up to the next test's, end in FAILED (a test may print in between)
        awk -v t="Test: $2 ..." 'index($0, t) { on = 1 } on && /Test: / && !index($0, t) { on = 0 }
            on && /FAILED/ { f = 1 } END { exit !f }' "$3" ;;
    *) grep -q "^FAIL: $(printf '%s' "$2" | sed 's/[][\.*^$()+?{}|]/\\&/g')" "$3" ;;
    esac
}

run_mutant()
{
    local name=$1 test text log rc
    read -r test text < <(entry "$name") || fatal "no mutation named $name (see --list)"
    # shellcheck disable=SC2034 # the name check.sh's finish reports
    CHECK_NAME=mutate-plugin-$name
    [[ $test == unit/* ]] || skip_unless_netns
    build_mutable || fatal "the mutable build failed"
    check "the mutable build's plugin carries the switches" \
        carries "$MUTABLE/plugin/.libs/mca_btl_tbrdma.so"
    log=$MUTABLE/mutant-$name.log
    echo "== $test with tbrdma mutated by $name"
    TBRDMA_MUTANT=$name run_test_of "$test" "$text" "$log"
    rc=$?
    grep -E "FAIL|Test: .*FAILED|stopped|internal check|checks," "$log" | head -12 | sed 's/^/  | /'
    [ "$rc" != 77 ] || skip "$test cannot run here: $(grep '^SKIP' "$log" | tail -1)"
    check "$test fails with the mutant (exit $rc)" test "$rc" != 0
    check "$test fails at: $text" failed_at "$test" "$text" "$log"
    finish
}

names_here()
{
    awk 'NF { print $1 }' <<<"$MUTATIONS" | sort
}

names_header()
{
    grep -o 'X([A-Z0-9_]*)' "$TOP/plugin/core/tbrdma_mutate.h" | sed 's/X(\(.*\))/\1/' \
        | tr '[:upper:]' '[:lower:]' | sort
}

# The mutations named in docs/design.md's table of mutants.
names_design()
{
    awk -F'|' '/^### Mutants of the protocol/ { on = 1; next } /^#/ { on = 0 }
        on && /^\| `/ { print $2 }' "$TOP/docs/design.md" | tr -d '` ' | sort -u
}

check_table()
{
    # shellcheck disable=SC2034 # the name check.sh's finish reports
    CHECK_NAME=mutate-plugin-table
    expect "every switch of tbrdma_mutate.h has a row here" "$(names_header | xargs)" \
        "$(names_here | xargs)"
    expect "docs/design.md's table of mutants names every mutation" "$(names_here | xargs)" \
        "$(names_design | xargs)"
    check "the normal build's plugin is built" test -e "$TOP/build/plugin/.libs/mca_btl_tbrdma.so"
    check_not "the normal build's plugin carries no mutant" \
        carries "$TOP/build/plugin/.libs/mca_btl_tbrdma.so"
    finish
}

case "${1:-}" in
--list) names_here ;;
--build) build_mutable ;;
--table) check_table ;;
-* | '') sed -n '2,19s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
*) run_mutant "$1" ;;
esac
