#!/usr/bin/env bash
# ./run-tests.sh: installs what tbrdma needs, builds it, and runs every test:
#   unit        CUnit tests of the pure logic (make check); the macOS branches compiled for macOS
#               against stand-in headers (test/macos-sdk)
#   sanitize    the unit tests under ASan+UBSan, and each libFuzzer target for 20 s
#   ompi-4.1    the plugin in Debian 12's Open MPI 4.1.4 (ompi_info, mpirun, version guard)
#   ompi-5.0    the same in Open MPI 5.0.7 from a Debian 13 chroot
#   netif       interface discovery in network namespaces
#   sim         the Thunderbolt fabric simulator and the simulated cluster of Macs
#   mutate      each rule of the simulator broken on purpose (test/sim/mutate.sh), and each rule of
#               tbrdma's own protocol (test/mutate/plugin.sh): its test fails
#   plugin-sim  tbrdma's discovery, diagnostics and mesh solver on simulated Macs
#   mpi         MPI over tbrdma's data path on simulated Macs, Open MPI 4.1 and 5.0: the test
#               programs, faults (loss, corruption, pulled cable, stopped and killed ranks,
#               outages of 10 ms to longer than the peer timeout, signals an application
#               handles itself),
#               start-up refusals, striping over double and crossed cables, NetPIPE and
#               HPCC, the shipped coll/tuned rules (installed, in effect, results right),
#               valgrind memcheck and an AddressSanitizer build (test/mpi)
#   hpc         real HPC codes, unmodified, over tbrdma on simulated Macs (1 and 2 ranks per Mac),
#               each compared with the same run over tcp: LAMMPS, GROMACS, NWChem, ScaLAPACK's
#               tests, HPCC (Open MPI 4.1; LAMMPS, NWChem and ScaLAPACK on 5.0) (test/mpi/hpc.sh)
#   tools       tbrdma-doctor, tbrdma-setup and the hostfiles on simulated Macs; make distcheck
#               and the Homebrew formula (distcheck runs in the background lane); Homebrew steps
#   bench       the benchmark suite (bench/run --smoke) writes every CSV, plot and report row
#               it should; bench/compare-jaccl: its MPI half end to end on simulated Macs (4.1
#               and 5.0), its refusals, its report on recorded samples, the MLX script on a
#               stand-in for MLX (timing is never judged)
#   vm          real kernel verbs: Soft-RoCE (rxe) in qemu VMs
#   agree       the simulator and rxe give the same outcome for the same setup
#   self        the suite's own assumptions (e.g. it passes from a checkout only root can enter)
# Every test prints what it checked; its log is under build/test-logs/ ($TBRDMA_LOGS overrides).
# The last line is "tests: N passed, M failed, K skipped". Exit status 0 only when nothing
# failed. A test that cannot run here (no root, no namespaces, no VM boot, no sanitizer runtime)
# is skipped, with its reason listed before the last line; with CI=true (.ci/run sets it) it
# fails the run instead: CI must be red when a stage did not run.
# ompi-5.0's chroot and builds run in the background (SCHED_IDLE) from the start, beside unit to
# plugin-sim; their verdicts are printed before ompi-4.1, which needs them. Each test's line gives
# its wall time and how busy the machine's cores were meanwhile (both lanes).
# Rotation (test/lib/rotation.sh): the mutants, the HPC code runs and the VM tier's MPI tests are
# split into 3 slices; a run takes the slice of its commit (commit count mod 3), so every one of
# them runs at least once in any 3 commits in a row; --full takes them all.
# Options: --only STAGE[,STAGE...]  run only these stages; --skip STAGE[,...]  skip these;
#          --full  every slice of the rotation.
set -uo pipefail

top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
only=""
skip=""
while [ $# -gt 0 ]; do
    case "$1" in
    --only) only="$2"; shift 2 ;;
    --skip) skip="$2"; shift 2 ;;
    --full) export ROT_FULL=1; shift ;;
    -h | --help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    *) echo "run-tests: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

logs=${TBRDMA_LOGS:-$top/build/test-logs}
# shellcheck source=test/lib/rotation.sh
. "$top/test/lib/rotation.sh"
slice=$(rot_slice)
passed=0
failed=0
skipped=0
failures=()
skips=()
start_all=$(date +%s)
# Wall time and tests per stage, in the order the stages first ran (the summary's table).
declare -A stage_secs=() stage_tests=()
stage_order=()
case "${CI:-}" in
true | 1 | yes) ci=1 ;;
*) ci=0 ;;
esac
# Names this run, so that a stage reading another stage's log (agree reads the VM tier's) can
# tell a log of this run from one an earlier run left.
TBRDMA_RUN_ID="$(date +%s)-$$"
export TBRDMA_RUN_ID

stage_wanted()
{
    local s=$1
    if [ -n "$only" ] && [[ ",$only," != *",$s,"* ]]; then
        return 1
    fi
    [[ ",$skip," != *",$s,"* ]]
}

# not_run NAME WHY SECS: a test that could not run here: skipped, or failed when CI=true.
not_run()
{
    local name=$1 why=${2:-no reason given} secs=$3
    if [ "$ci" = 1 ]; then
        failed=$((failed + 1)); failures+=("$name (could not run, CI=true: $why)")
        printf '  FAIL  %-40s %4s  could not run (CI=true): %s\n' "$name" "$secs" "$why"
    else
        skipped=$((skipped + 1)); skips+=("$name ($why)")
        printf '  SKIP  %-40s %4s  %s\n' "$name" "$secs" "$why"
    fi
}

# cpu_ticks: "BUSY TOTAL", the clock ticks all CPUs have spent so far busy and in all (/proc/stat;
# idle and iowait are not busy).
cpu_ticks()
{
    awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print t - $5 - $6, t; exit }' /proc/stat
}

# cpu_share BUSY0 TOTAL0: the share of the machine's CPUs busy since that cpu_ticks, as "cpu N%"
# (of all cores, whoever used them); tells a test that waits from one that computes.
cpu_share()
{
    local b1 t1
    read -r b1 t1 < <(cpu_ticks)
    echo "cpu $(((b1 - $1) * 100 / ((t1 - $2) > 0 ? t1 - $2 : 1)))%"
}

# stage_add STAGE SECS [TESTS]: adds to the stage's wall time and test count (summary table).
stage_add()
{
    [ -n "${stage_secs[$1]+x}" ] || stage_order+=("$1")
    stage_secs[$1]=$((${stage_secs[$1]:-0} + $2))
    stage_tests[$1]=$((${stage_tests[$1]:-0} + ${3:-1}))
}

# run_test STAGE NAME TIMEOUT CMD...: runs one test, records pass (0), skip (77) or fail.
run_test()
{
    local stage=$1 name=$2 limit=$3
    shift 3
    local log="$logs/$stage/$name.log" t0 rc b0 j0 cpu
    mkdir -p "$(dirname "$log")"
    t0=$(date +%s)
    read -r b0 j0 < <(cpu_ticks)
    timeout --kill-after=20 "$limit" "$@" >"$log" 2>&1 </dev/null
    rc=$?
    local secs=$(($(date +%s) - t0))
    stage_add "$stage" "$secs"
    cpu=$(cpu_share "$b0" "$j0")
    case $rc in
    0) passed=$((passed + 1)); printf '  PASS  %-40s %4ds  %s\n' "$stage/$name" "$secs" "$cpu" ;;
    77) not_run "$stage/$name" "$(grep -i 'skip' "$log" | tail -1)" "${secs}s" ;;
    124 | 137) failed=$((failed + 1)); failures+=("$stage/$name (timeout ${limit}s)")
        printf '  FAIL  %-40s %4ds  %s  timed out after %ss\n' "$stage/$name" "$secs" "$cpu" \
            "$limit" ;;
    *) failed=$((failed + 1)); failures+=("$stage/$name")
        printf '  FAIL  %-40s %4ds  %s  exit %d, log %s\n' "$stage/$name" "$secs" "$cpu" "$rc" "$log"
        tail -n 15 "$log" | sed 's/^/        | /' ;;
    esac
    return 0
}

# The background lane: a stage that nothing before bg_join needs and that needs nothing but the
# build runs beside the stages after it, in the idle scheduling class (SCHED_IDLE, set once on the
# lane's subshell and inherited by everything it starts: it gets a core only when no other task
# wants one, and a task that wakes takes the core from it at once). nice 19 was not enough: in a
# CI run with the lane at nice 19, sim_link's ping-pongs under
# a stream (4 busy programs on 2 cores) waited 2 ms or more for a core in each of 3 tries. Its
# verdicts are counted and printed at bg_join, under its own heading. One background stage at a
# time.
bg_dir=""
bg_pid=""
bg_title=""
bg_t0=0

# bg_stop: on the way out (an interrupt), the background stage's test and the lane itself end.
bg_stop()
{
    [ -n "$bg_pid" ] || return 0
    pkill -TERM -P "$bg_pid" 2>/dev/null
    kill "$bg_pid" 2>/dev/null
}
trap bg_stop EXIT

# bg_start TITLE FUNCTION: runs FUNCTION (calls of run_test) in the background lane.
# shellcheck disable=SC2030 # the lane counts in its subshell and writes the counts out
bg_start()
{
    bg_title=$1
    bg_dir="$logs/.background"
    rm -rf "$bg_dir" && mkdir -p "$bg_dir"
    (
        chrt --idle -p 0 "$BASHPID" ||
            echo "run-tests: the background lane could not enter the idle class; it runs at normal priority"
        passed=0 failed=0 skipped=0 failures=() skips=()
        stage_secs=() stage_tests=() stage_order=()
        "$2"
        echo "$passed $failed $skipped" >"$bg_dir/counts"
        for st in "${stage_order[@]}"; do
            echo "$st ${stage_secs[$st]} ${stage_tests[$st]}"
        done >"$bg_dir/stages"
        [ "${#failures[@]}" = 0 ] || printf '%s\n' "${failures[@]}" >"$bg_dir/failures"
        [ "${#skips[@]}" = 0 ] || printf '%s\n' "${skips[@]}" >"$bg_dir/skips"
        date +%s >"$bg_dir/end"
    ) >"$bg_dir/out" 2>&1 &
    bg_pid=$!
    bg_t0=$(date +%s)
}

# bg_promote: the lane and every process it started leave the idle class (what they start from
# then on inherits it). At the join the run has nothing else to do, and on a machine where other
# work keeps both cores busy an idle-class lane would get no core at all: the run would wait for
# ever.
bg_promote()
{
    local todo=("$bg_pid") p
    while [ "${#todo[@]}" -gt 0 ]; do
        p=${todo[0]}
        todo=("${todo[@]:1}")
        chrt -a --other -p 0 "$p" 2>/dev/null
        mapfile -t -O "${#todo[@]}" todo < <(pgrep -P "$p")
    done
}

# bg_join: waits for the background stage, prints its verdicts and adds them to the counts.
# shellcheck disable=SC2031 # these are the foreground's counts; the lane's come from its files
bg_join()
{
    local p f s
    [ -n "$bg_pid" ] || return 0
    bg_promote
    wait "$bg_pid"
    echo "== $bg_title (in the background from $((bg_t0 - start_all)) s to" \
        "$(($(cat "$bg_dir/end" 2>/dev/null || date +%s) - start_all)) s of this run," \
        "joined at $(($(date +%s) - start_all)) s)"
    cat "$bg_dir/out"
    if ! read -r p f s <"$bg_dir/counts"; then
        failed=$((failed + 1)); failures+=("$bg_title (the background stage ended early)")
        echo "  FAIL  $bg_title: the background stage ended without its counts"
    else
        passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    fi
    [ ! -f "$bg_dir/failures" ] || mapfile -t -O "${#failures[@]}" failures <"$bg_dir/failures"
    while read -r st secs n; do
        stage_add "$st (background)" "$secs" "$n"
    done < <(cat "$bg_dir/stages" 2>/dev/null)
    [ ! -f "$bg_dir/skips" ] || mapfile -t -O "${#skips[@]}" skips <"$bg_dir/skips"
    bg_pid=""
}

# run_dir STAGE DIR LIMIT [SKIP]: every executable test script of DIR but its
# lib.sh and the names listed in SKIP (space-separated, run elsewhere).
run_dir()
{
    local stage=$1 dir=$2 limit=$3 skip=${4:-} t
    for t in "$dir"/*.sh; do
        [ -x "$t" ] || continue
        case "$t" in *lib.sh) continue ;; esac
        [[ " $skip " == *" $(basename "$t" .sh) "* ]] && continue
        run_test "$stage" "$(basename "$t" .sh)" "$limit" "$t"
    done
}

# Unit tests: each test program of make check (CUnit suites, the plugin load check) counts as one.
run_unit()
{
    local log="$logs/unit/make-check.log" trs name rc f
    mkdir -p "$logs/unit"
    make -C build check -j2 >"$log" 2>&1
    for trs in build/plugin/*.trs build/plugin/coll/*.trs build/test/unit/*.trs; do
        [ -f "$trs" ] || continue
        name=$(basename "$trs" .trs)
        f="${trs%.trs}.log"
        rc=$(sed -n 's/^:test-result: //p' "$trs" | head -1)
        cp "$f" "$logs/unit/$name.log"
        stage_add unit 0
        case "$rc" in
        PASS) passed=$((passed + 1)); printf '  PASS  %-40s\n' "unit/$name" ;;
        SKIP) not_run "unit/$name" "$(grep -i 'skip' "$f" | tail -1)" "" ;;
        *) failed=$((failed + 1)); failures+=("unit/$name")
           printf '  FAIL  %-40s log %s\n' "unit/$name" "$logs/unit/$name.log"
           grep -E 'FAILED|FAIL:|Assertion|failed' "$f" | head -10 | sed 's/^/        | /' ;;
        esac
    done
    if ! ls build/test/unit/*.trs >/dev/null 2>&1; then
        failed=$((failed + 1)); failures+=("unit/make-check")
        echo "  FAIL  unit/make-check (no unit test ran; see $log)"
        tail -n 20 "$log" | sed 's/^/        | /'
    fi
}

echo "== setup: packages"
t_setup=$(date +%s)
if ! test/install-deps.sh; then
    echo "run-tests: could not install the packages tbrdma needs" >&2
    echo "tests: 0 passed, 1 failed, 0 skipped"
    exit 1
fi
stage_add setup $(($(date +%s) - t_setup)) 0
echo "== build (Open MPI $(ompi_info --version 2>/dev/null | sed -n 's/.*v\([0-9.]*\).*/\1/p' | head -1))"
t_build=$(date +%s)
mkdir -p "$logs"
if ! ./build.sh >"$logs/build.log" 2>&1; then
    echo "run-tests: the build failed; last lines of $logs/build.log:" >&2
    tail -n 30 "$logs/build.log" >&2
    echo "tests: 0 passed, 1 failed, 0 skipped"
    exit 1
fi
echo "  built $(ls build/plugin/.libs/mca_btl_tbrdma.so)"
stage_add build $(($(date +%s) - t_build)) 0

# The Open MPI 5.0 chroot and its builds (about 10 minutes, mostly downloads, dpkg and Open MPI's
# configure) need only the host's build; everything up to agree runs beside them and does not use
# them. source-tree (a configured Open MPI 5.0.7 tree: its configure alone is most of the lane)
# rotates with homebrew_steps, which uses that tree.
# The limits allow for the idle class: they are hang guards.
# make distcheck (tools/distcheck, a build directory of its own) follows them there: the lane
# has room to spare before it is joined.
ompi5_builds()
{
    run_test ompi-5.0 make-chroot 2400 test/ompi5/make-chroot.sh
    run_test ompi-5.0 build 1800 test/ompi5/build.sh
    if [ -n "$(rot_group "$slice" ompi-source)" ]; then
        run_test ompi-5.0 source-tree 2400 test/ompi5/source-tree.sh
    else
        echo "  (ompi-5.0/source-tree and tools/homebrew_steps: in another slice of the rotation)"
    fi
    if stage_wanted tools; then
        run_test tools distcheck 1800 test/integration/tools/distcheck.sh
    fi
}
if stage_wanted ompi-5.0; then
    bg_title="ompi-5.0: build in a Debian 13 chroot"
    stage_wanted tools && bg_title="$bg_title; make distcheck"
    bg_start "$bg_title" ompi5_builds
fi
if stage_wanted unit; then
    echo "== unit"
    t_unit=$(date +%s)
    run_unit
    stage_add unit $(($(date +%s) - t_unit)) 0
    run_test unit macos-syntax 120 test/macos-sdk/check.sh
    run_test unit layers 60 test/layers/check.sh
    run_test unit troubleshooting-doc 60 test/docs/troubleshooting.sh
fi
if stage_wanted sanitize; then
    mapfile -t fuzz_take < <(rot_group "$slice" fuzz)
    echo "== sanitize (AddressSanitizer and UndefinedBehaviorSanitizer, libFuzzer; slice $slice of" \
        "the rotation: ${#fuzz_take[@]} of $(rot_items fuzz | wc -l) fuzz targets, --full runs all)"
    run_test sanitize unit-asan-ubsan 900 test/unit/sanitize.sh
    for t in "${fuzz_take[@]}"; do
        run_test sanitize "$t" 300 test/fuzz/fuzz.sh "$t" 20
    done
fi
if stage_wanted netif; then
    echo "== netif"
    run_dir netif test/integration/netif 300
fi
if stage_wanted sim; then
    echo "== sim"
    run_dir sim test/sim/tests 600
fi
if stage_wanted mutate; then
    mapfile -t sim_take < <(rot_group "$slice" sim-mutants)
    mapfile -t plugin_take < <(rot_group "$slice" plugin-mutants)
    echo "== mutate (each rule broken on purpose: its test must fail; slice $slice of the" \
        "rotation: ${#sim_take[@]} of $(rot_items sim-mutants | wc -l) simulator mutants," \
        "${#plugin_take[@]} of $(rot_items plugin-mutants | wc -l) plugin mutants, --full runs all)"
    run_test mutate table 60 test/sim/mutate.sh --table
    for m in "${sim_take[@]}"; do
        run_test mutate "$m" 300 test/sim/mutate.sh "$m"
    done
    run_test mutate plugin-table 60 test/mutate/plugin.sh --table
    run_test mutate plugin-build 900 test/mutate/plugin.sh --build
    for m in "${plugin_take[@]}"; do
        run_test mutate "plugin-$m" 600 test/mutate/plugin.sh "$m"
    done
fi
if stage_wanted plugin-sim; then
    echo "== plugin-sim"
    run_dir plugin-sim test/integration/sim 600
    run_test plugin-sim agent 300 test/agent/agent.sh # the per-Mac agent, driven by a stand-in
fi

# mpi_always FL: the mpi tests of Open MPI FL that run every time, one "NAME LIMIT COMMAND
# ARGS..." a line: the suite at 1 and 2 ranks per Mac, liveness, zero-copy, signals, outages.
mpi_always()
{
    echo "suite-$1-p2p-1 600 test/mpi/suite.sh $1 p2p 1"
    echo "suite-$1-linklocal-2 900 test/mpi/suite.sh $1 linklocal 2"
    for t in liveness zcopy signal; do
        echo "$t-$1 900 test/mpi/$t.sh $1"
    done
    echo "outage-$1-1 300 test/mpi/outage.sh $1 1"
    echo "outage-$1-2 300 test/mpi/outage.sh $1 2"
}

# mpi_rotating FL: this slice's share of the others (rotation group mpi: "TEST FL" items; group
# mpi-many: the versions whose suite runs at 4 ranks per Mac, through the per-Mac agents).
mpi_rotating()
{
    local t fl
    while read -r t fl; do
        [ "$fl" = "$1" ] && echo "$t-$1 900 test/mpi/$t.sh $1"
    done < <(rot_group "$slice" mpi)
    while read -r fl; do
        [ "$fl" = "$1" ] && echo "suite-$1-p2p-4 900 test/mpi/suite.sh $1 p2p 4"
    done < <(rot_group "$slice" mpi-many)
}

# run_spec STAGE SPEC: runs one test of a spec line (its words split; no argument has a space).
run_spec()
{
    # shellcheck disable=SC2086
    run_test "$1" $2
}

# mpi_stage FL: the mpi stage's tests of Open MPI FL. One memory checker per version (about 75 s
# each): valgrind on 5.0, what Macs run (its zero-copy path included); AddressSanitizer on 4.1,
# where zero-copy stays on under it (on 5.0 ASan needs the memory patcher off, and with it
# zero-copy: docs/design.md). Either runs on the other version by hand.
mpi_stage()
{
    local spec
    echo "== mpi, Open MPI $1 (MPI over tbrdma on simulated Macs; slice $slice of the rotation:" \
        "$(mpi_rotating "$1" | wc -l) of $(($(rot_items mpi | grep -c " $1$") + $(rot_items mpi-many | grep -c "^$1$"))) rotating tests," \
        "--full runs all)"
    while read -r spec; do
        run_spec mpi "$spec"
    done < <(mpi_always "$1"; mpi_rotating "$1")
    if [ 4.1 = "$1" ]; then
        run_test mpi asan-4.1 900 test/mpi/asan.sh 4.1
    else
        run_test mpi memcheck-5.0 900 test/mpi/memcheck.sh 5.0
    fi
}

# hpc_stage FL: this slice's HPC code runs of Open MPI FL.
hpc_stage()
{
    local run
    echo "== hpc, Open MPI $1 (HPC codes over tbrdma, answers compared with tcp; slice $slice of" \
        "the rotation: $(rot_group "$slice" hpc | grep -c "^$1 ") of $(rot_items hpc | grep -c "^$1 ")" \
        "runs, --full runs all)"
    # 5.0 at 2 ranks per Mac runs by hand (test/mpi/hpc.sh 5.0 2): 135 s here, 571 s in one CI
    # run; 5.0's sm beside tbrdma is in suite-5.0-linklocal-2, the codes at 2 per Mac on 4.1.
    while read -r run; do
        # shellcheck disable=SC2086
        [ "${run%% *}" = "$1" ] && run_test hpc "hpc-${run/ /-}" 1800 test/mpi/hpc.sh $run
    done < <(rot_group "$slice" hpc)
}

# Tests of tools/ and bench/ that need the Open MPI 5.0 chroot (after the join).
TOOLS_50="doctor_ompi_version homebrew_steps"
# distcheck runs in the background lane, or here when there is none.
TOOLS_ELSEWHERE="$TOOLS_50 distcheck"
stage_wanted ompi-5.0 || TOOLS_ELSEWHERE=$TOOLS_50

stage_wanted mpi && mpi_stage 4.1
stage_wanted hpc && hpc_stage 4.1
if stage_wanted tools; then
    echo "== tools"
    run_dir tools test/integration/tools 600 "$TOOLS_ELSEWHERE"
fi
if stage_wanted bench; then
    echo "== bench (bench/run's outputs and compare-jaccl; timing is never judged)"
    run_test bench smoke 600 test/bench/smoke.sh
    run_test bench compare_report 120 test/bench/compare_report.sh
    run_test bench mlx_script 120 test/bench/mlx_script.sh
    run_test bench coll_rules_merge 60 test/bench/coll_rules_merge.sh
    run_test bench ab_smoke 300 test/bench/ab_smoke.sh
    run_test bench compare_jaccl_sim-4.1 600 test/bench/compare_jaccl_sim.sh 4.1
fi
vm_log=""
if stage_wanted vm; then
    # Every guest test but the MPI ones every time; tbrdma's MPI ones in rotation (pml ucx's
    # reference runs of the same programs on the same rxe links: by hand, docs/testing.md).
    mapfile -t vm_mpi_take < <(rot_group "$slice" vm-mpi)
    echo "== vm (slice $slice of the rotation: ${#vm_mpi_take[@]} of $(rot_items vm-mpi | wc -l)" \
        "MPI tests, --full runs all)"
    vm_tests=()
    for t in test/vm/tests/*.sh; do
        [[ $t == */mpi_* ]] || vm_tests+=("$t")
    done
    vm_tests+=("${vm_mpi_take[@]}")
    run_test vm run-tier 1800 test/vm/run-tier.sh "${vm_tests[@]}"
    grep -h '^vm tier' "$logs/vm/run-tier.log" 2>/dev/null | sed 's/^/  /'
    vm_log="$logs/vm/run-tier.log"
fi
if stage_wanted agree; then
    echo "== agree (simulator vs rxe)"
    # This run's VM tier only: without the vm stage in this run there is nothing to agree with.
    export TBRDMA_VM_TIER_LOG="$vm_log"
    run_dir agree test/integration/agree 300
fi
# What follows needs the Open MPI 5.0 chroot and builds (the version guards cross-load both).
bg_join
if stage_wanted ompi-4.1; then
    echo "== ompi-4.1"
    run_test ompi-4.1 run-all 900 test/integration/ompi/run-all.sh 4.1
fi
if stage_wanted ompi-5.0; then
    echo "== ompi-5.0"
    run_test ompi-5.0 run-all 900 test/integration/ompi/run-all.sh 5.0
fi
stage_wanted mpi && mpi_stage 5.0
stage_wanted hpc && hpc_stage 5.0
if stage_wanted tools; then
    echo "== tools, with Open MPI 5.0"
    run_test tools doctor_ompi_version 600 test/integration/tools/doctor_ompi_version.sh
    if [ -n "$(rot_group "$slice" ompi-source)" ]; then
        run_test tools homebrew_steps 600 test/integration/tools/homebrew_steps.sh
    fi
fi
if stage_wanted bench; then
    echo "== bench, with Open MPI 5.0"
    run_test bench compare_jaccl_sim-5.0 600 test/bench/compare_jaccl_sim.sh 5.0
    run_test bench compare_jaccl_refusals 600 test/bench/compare_jaccl_refusals.sh
fi
if stage_wanted self; then
    echo "== self (the test suite's own assumptions)"
    run_dir self test/self 600
fi

total_secs=$(($(date +%s) - start_all))
echo "== time per stage (wall seconds of its tests; the background lane overlapped the others)"
printf '  %-28s %6s %6s\n' stage seconds tests
for st in "${stage_order[@]}"; do
    printf '  %-28s %6d %6d\n' "$st" "${stage_secs[$st]}" "${stage_tests[$st]}"
done
printf '  %-28s %6d\n' "whole run" "$total_secs"
if [ "$total_secs" -gt 2400 ]; then
    echo "  WARNING: this run took $total_secs s, over the 40 minutes (2400 s) a CI run must stay" \
        "within (its hard limit is 90): see the table above"
fi
echo "== summary ($total_secs s)"
for f in "${failures[@]+"${failures[@]}"}"; do
    echo "  failed: $f"
done
for f in "${skips[@]+"${skips[@]}"}"; do
    echo "  skipped: $f"
done
if [ "$skipped" -gt 0 ]; then
    echo "  $skipped test(s) could not run here: not a pass; with CI=true they fail the run"
fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
