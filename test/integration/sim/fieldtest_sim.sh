#!/usr/bin/env bash
# tbrdma-fieldtest (the field self-test) against the simulator, which must agree with itself: on two
# simulated Macs every probe, single-host and two-host (with --link-down), reports "same", and
# each names a row of test/sim/README.md that exists. Then the probe itself is shown able to
# fail and to be safe:
#   - a laxer simulator (libtbsim built with TBSIM_LAX_INLINE: inline data accepted) turns the
#     inline probe's verdict into "differs" (exit status 1);
#   - --markdown prints one table row per probe;
#   - a running MPI job (a process named orted on the host) is refused (status 4), --force runs;
#   - Ctrl-C in the middle of the port-down probe (interface down) stops with status 130, brings
#     the interface back up and leaves no QP or MR slot held; the server ends too;
#   - --only refuses an unknown probe name; --timeout bounds a client without a server and a
#     server without a client.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
require_env
probe="$build/tools/tbrdma-fieldtest"
readme="$top/test/sim/README.md"
[ -x "$probe" ] || fatal "missing $probe (build first: ./build.sh)"
cluster_up --hosts 2 --addressing p2p
tmp=$TC_TMP

# probe_on HOST ARGS...: the probe on a simulated Mac, against libtbsim (or $lib).
probe_on()
{
    local host=$1
    shift
    on "$host" timeout -k 5 120 "$probe" --verbs-lib "${lib:-$simlib}" "$@"
}

# pair OUT CLIENT-ARGS...: server on mac-b, client on mac-a; statuses in srv_rc and cli_rc.
pair()
{
    local out=$1 pid
    shift
    probe_on mac-b --server >"$tmp/server.err" 2>&1 &
    pid=$!
    probe_on mac-a --client mac-b "$@" >"$out" 2>"$tmp/client.err"
    cli_rc=$?
    wait "$pid"
    srv_rc=$?
    sed 's/^/  client| /' "$out" "$tmp/client.err"
    sed 's/^/  server| /' "$tmp/server.err"
}

# verdict FILE NAME: the verdict of probe NAME in a --json report.
verdict()
{
    sed -n "s/^  {\"name\": \"$2\", .*\"verdict\": \"\\([^\"]*\\)\".*/\\1/p" "$1"
}

echo "== every probe on two simulated Macs"
pair "$tmp/all.json" --json --link-down
expect "client exit status (0: every verdict same)" 0 "$cli_rc"
expect "server exit status" 0 "$srv_rc"
names=$("$probe" --list | awk '/^[a-z]/ { print $1 }')
expect "probes listed" 23 "$(echo "$names" | wc -l)"
for n in $names; do
    expect "$n: verdict" same "$(verdict "$tmp/all.json" "$n")"
done
check_grep "summary: 23 same" "$tmp/all.json" '"summary": \{"same": 23, "differs": 0, "could_not_test": 0\}'
"$probe" --list | sed -n 's/^ *rule: test\/sim\/README.md "\(.*\)"$/\1/p' | sort -u >"$tmp/rules"
while read -r rule; do
    check "rule quoted exists in test/sim/README.md: $rule" grep -qF -- "$rule" "$readme"
done <"$tmp/rules"
check "no QP or MR slot held afterwards" "$TBSIMCTL" held
check "mac-a's en2 is up after the port-down probe" \
    bash -c "$tbc exec mac-a -- ip -o link show en2 | grep -q '[<,]UP[,>]'"

echo "== a laxer simulator (inline data accepted) makes the inline probe differ"
lax="$tmp/libtbsim-lax.so"
"${CC:-cc}" -std=gnu99 -O2 -fPIC -shared -fvisibility=hidden -Wl,-Bsymbolic \
    -DTBSIM_LAX_INLINE -DTBSIM_MUTATE=TBSIM_MUT_INLINE_OK -o "$lax" \
    "$top"/test/sim/libtbsim/*.c || fatal "building the laxer libtbsim failed"
lib=$lax probe_on mac-a --only inline,rc-qp --json >"$tmp/lax.json"
rc=$?
sed 's/^/  lax| /' "$tmp/lax.json"
expect "laxer simulator: exit status" 1 "$rc"
expect "laxer simulator: inline verdict" differs "$(verdict "$tmp/lax.json" inline)"
expect "laxer simulator: rc-qp verdict unchanged" same "$(verdict "$tmp/lax.json" rc-qp)"

echo "== --markdown"
probe_on mac-a --markdown >"$tmp/report.md"
sed 's/^/  md| /' "$tmp/report.md"
# shellcheck disable=SC2016 # backquotes of Markdown, not a command
expect "markdown rows" 10 "$(grep -c '^| `[a-z0-9-]*` | .* | \*\*same\*\* |$' "$tmp/report.md")"
check_grep "markdown header" "$tmp/report.md" '^\| probe \| simulator assumes \| rule'

echo "== a running MPI job is refused"
cp "$(command -v sleep)" "$tmp/orted"
on mac-a "$tmp/orted" 60 &
fake=
for _ in $(seq 50); do
    fake=$(pgrep -f "^$tmp/orted 60") && break
    sleep 0.1
done
probe_on mac-a --only device >"$tmp/mpi.out" 2>&1
expect "refused while orted runs: status" 4 "$?"
check_grep "the refusal names the process and --force" "$tmp/mpi.out" \
    'MPI job is running \(process [0-9]+ \(orted\)\).*--force'
probe_on mac-a --only device --force >/dev/null 2>&1
expect "--force runs anyway: status" 0 "$?"
[ -n "$fake" ] && kill "$fake"
wait

echo "== Ctrl-C while the port-down probe has the interface down"
# The probe keeps the interface down for only about 0.2 s, too short to hit from outside on a loaded
# machine: an "ip" ahead of the real one on the probe's PATH sends the SIGINT to its caller (the
# probe) just after it took the interface down, and logs both.
mkdir -p "$tmp/ipwrap"
cat >"$tmp/ipwrap/ip" <<EOF
#!/bin/sh
$(command -v ip) "\$@" || exit \$?
case "\$*" in
*" down") echo "down: \$*; SIGINT to \$PPID" >>"$tmp/ipwrap.log"; kill -INT \$PPID ;;
*) echo "other: \$*" >>"$tmp/ipwrap.log" ;;
esac
EOF
chmod +x "$tmp/ipwrap/ip"
probe_on mac-b --server >"$tmp/server.err" 2>&1 &
spid=$!
on mac-a env PATH="$tmp/ipwrap:$PATH" timeout -k 5 120 "$probe" --verbs-lib "$simlib" \
    --client mac-b --only port-down --link-down >"$tmp/int.out" 2>&1
expect "interrupted client: status" 130 "$?"
wait "$spid"
sed 's/^/  ip| /' "$tmp/ipwrap.log"
check_grep "en2 was taken down, then SIGINT sent" "$tmp/ipwrap.log" '^down: link set dev en2 down; SIGINT'
sed 's/^/  int| /' "$tmp/int.out"
check_grep "the report says it stopped" "$tmp/int.out" 'stopped early: interrupted \(SIGINT\)'
check "en2 is up again" bash -c "$tbc exec mac-a -- ip -o link show en2 | grep -q '[<,]UP[,>]'"
check "no QP or MR slot held after the interrupt" "$TBSIMCTL" held

echo "== usage"
"$probe" --only device,no-such-probe >/dev/null 2>"$tmp/usage.err"
expect "--only with an unknown probe: status" 2 "$?"
check_grep "... names it" "$tmp/usage.err" "no probe named 'no-such-probe'"

echo "== time bounds"
t0=$(date +%s)
probe_on mac-a --client mac-b --timeout 2 >/dev/null 2>&1
expect "client without a server, --timeout 2: status" 130 "$?"
probe_on mac-b --server --timeout 2 >/dev/null 2>&1
expect "server without a client, --timeout 2: status" 130 "$?"
check "both ended within 10 s" test $(($(date +%s) - t0)) -le 10
finish
