#!/bin/bash
# cluster_tbsimctl.sh: tbcluster's side of the contract with tbsimctl, and cleanup of failed or
# interrupted `up`s, using a fake tbsimctl that logs its calls.
# Checks: up runs "tbsimctl init" once, with TBSIM_DIR exported and the topology written, then
# with --link "tbsimctl link all" with its settings; fault forwards drop=/corrupt=/delay_us=/seed=
# with the cable id (also when the cable is given as HOST:IF); link forwards its settings for a
# cable (id or HOST:IF) or all, unknown settings refused; rdma forwards HOST on|off with the full
# host name; down runs "tbsimctl destroy" while the state dir still exists; a second up is
# refused and leaves the running cluster alone; without tbsimctl, fault settings and rdma fail
# with a message; an up whose init fails, an up interrupted by SIGINT, a down after the cluster
# file was lost and a down while a process still runs in a host leave nothing behind.
set -uo pipefail
. "$(dirname "$0")/cluster_lib.sh"
cl_init cluster_tbsimctl

FAKE=$TC_TMP/tbsimctl
LOG=$TC_TMP/tbsimctl.log
# The fake logs "TBSIM_DIR-ok" or "TBSIM_DIR-wrong", whether topology exists, then its arguments.
# FAKE_INIT=fail makes init fail; FAKE_INIT=interrupt sends SIGINT to the calling tbcluster.
cat >"$FAKE" <<FAKE_EOF
#!/bin/bash
dir=wrong
[ "\$TBSIM_DIR" = "$TBSIM_DIR" ] && dir=ok
topo=no-topology
[ -f "\$TBSIM_DIR/topology" ] && topo=topology
echo "TBSIM_DIR-\$dir \$topo \$*" >>"$LOG"
if [ "\$1" = init ] && [ "\${FAKE_INIT:-}" = fail ]; then
    exit 3
fi
if [ "\$1" = init ] && [ "\${FAKE_INIT:-}" = interrupt ]; then
    kill -INT \$PPID
fi
exit 0
FAKE_EOF
chmod +x "$FAKE"

tbc()
{
    "$TBCLUSTER" --tbsimctl "$FAKE" "$@"
}

last_log()
{
    tail -n 1 "$LOG" 2>/dev/null
}

check_forwarding()
{
    check_not "up --link with an unknown setting refused" \
        tbc up --prefix "$TC_PREFIX" --mgmt-net "$TC_MGMT" --hosts 3 --link rate=3
    check "up --link with the fake tbsimctl" tbc up --prefix "$TC_PREFIX" --mgmt-net "$TC_MGMT" \
        --hosts 3 --link rate_gbps=1,latency_us=40
    expect "up called init once, then link all with the --link settings" \
        "TBSIM_DIR-ok topology init|TBSIM_DIR-ok topology link all rate_gbps=1 latency_us=40" \
        "$(paste -sd'|' "$LOG")"
    tbc fault c2 drop=0.1 corrupt=0.01 delay_us=50 seed=7
    expect "fault c2 forwarded" "TBSIM_DIR-ok topology fault c2 drop=0.1 corrupt=0.01 delay_us=50 seed=7" \
        "$(last_log)"
    tbc fault mac-c:en3 drop=0
    expect "fault mac-c:en3 forwarded as c3" "TBSIM_DIR-ok topology fault c3 drop=0" \
        "$(last_log)"
    tbc link c2 rate_gbps=0.5 latency_us=4
    expect "link c2 forwarded" "TBSIM_DIR-ok topology link c2 rate_gbps=0.5 latency_us=4" \
        "$(last_log)"
    tbc link mac-c:en3 off
    expect "link mac-c:en3 forwarded as c3" "TBSIM_DIR-ok topology link c3 off" "$(last_log)"
    tbc link all on
    expect "link all forwarded" "TBSIM_DIR-ok topology link all on" "$(last_log)"
    check_not "link c1 rate=3 refused" tbc link c1 rate=3
    tbc rdma b off
    expect "rdma b off forwarded" "TBSIM_DIR-ok topology rdma mac-b off" "$(last_log)"
    tbc rdma 2 on
    expect "rdma 2 on forwarded" "TBSIM_DIR-ok topology rdma mac-c on" "$(last_log)"
    check_not "rdma mac-a maybe refused" tbc rdma mac-a maybe
    check_not "fault c1 drop=x without tbsimctl fails" \
        "$TBCLUSTER" --tbsimctl "$TC_TMP/none" fault c1 drop=0.5
    check_not "rdma without tbsimctl fails" "$TBCLUSTER" --tbsimctl "$TC_TMP/none" rdma a on
    check_not "second up refused" \
        tbc up --prefix "$TC_PREFIX" --mgmt-net "$TC_MGMT" --hosts 2
    expect "first cluster still there after the refused up" "mac-b" \
        "$("$TBCLUSTER" exec mac-b -- hostname)"
    check "down" tbc down
    expect "down called destroy with the state dir present" \
        "TBSIM_DIR-ok topology destroy" "$(last_log)"
    cl_check_nothing_left "down"
}

check_failed_up()
{
    : >"$LOG"
    FAKE_INIT=fail tbc up --prefix "$TC_PREFIX" --mgmt-net "$TC_MGMT" --hosts 3 >/dev/null 2>&1
    expect "up with failing init exits 1" 1 "$?"
    cl_check_nothing_left "up with failing init"
    FAKE_INIT=interrupt tbc up --prefix "$TC_PREFIX" --mgmt-net "$TC_MGMT" --hosts 4 >/dev/null 2>&1
    check "up interrupted by SIGINT fails ($?)" [ "$?" != 0 ]
    cl_check_nothing_left "up interrupted by SIGINT"
}

# Usage: up_quiet ARGS... : cl_up without its output.
up_quiet()
{
    cl_up "$@" >/dev/null 2>&1
}

check_lost_state()
{
    check "up for the lost-state case" up_quiet --hosts 2 || return
    rm -f "$TBSIM_DIR/cluster"
    check "down --prefix after the cluster file was lost" \
        "$TBCLUSTER" down --prefix "$TC_PREFIX"
    cl_check_nothing_left "down --prefix with lost state"
}

check_running_process()
{
    local pid comm=""
    check "up for the running-process case" up_quiet --hosts 2 || return
    "$TBCLUSTER" exec mac-b -- sleep 600 &
    pid=$!
    # Wait (bounded) until the background exec has become a sleep inside mac-b.
    for _ in $(seq 50); do
        comm=$(for p in $(ip netns pids "${TC_PREFIX}mac-b"); do cat "/proc/$p/comm"; done)
        [ "$comm" = sleep ] && break
        sleep 0.1
    done
    expect "a process runs in mac-b" "sleep" "$comm"
    check "down with a process still running in mac-b" "$TBCLUSTER" down
    cl_check_nothing_left "down with a running process"
    wait "$pid" 2>/dev/null
    check "the process was ended by down (status $?)" [ "$?" != 0 ]
}

check_forwarding
check_failed_up
check_lost_state
check_running_process
finish
