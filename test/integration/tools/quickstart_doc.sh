#!/usr/bin/env bash
# quickstart_doc.sh: follows docs/quickstart-macos.md on 4 simulated Macs whose Thunderbolt ports
# have no IPv4 (the macOS 26.2 default), as far as it applies off a Mac. Every command the page
# shows with a "$ " prompt is read from the page itself and run as written, in one shell on
# mac-a, in order; a command of macOS alone (rdma_ctl, ibv_devices) is listed as not run. Each
# must exit 0, except the doctor's first run (step 6: a fresh cluster has problems). The lines
# the page shows after a command that tbrdma's tools print (the doctor's verdicts, the plan's
# headings, the "tbrdma mesh:" lines, the latency line, the versions) must start a line of what
# the command printed, with numbers, versions and checksums free and "..." matching anything.
# The one translation: the page's plan is macOS's, and off a Mac it is Linux's ("Darwin" and
# "macos plan" read as "Linux" and "linux plan").
#
# What stands in for the Mac: ssh is the simulated Macs' launch agent, `brew --prefix tbrdma`
# a directory holding share/tbrdma/examples, tbrdma's tools are the build's, and Open MPI finds
# tbrdma through ~/.openmpi/mca-params.conf (as Homebrew's etc/openmpi-mca-params.conf does).
# The environment carries what a simulated Mac needs and a Mac does not: the simulator as the
# verbs library, mpirun allowed as root, the management network, no core binding.
source "$(dirname "$0")/lib.sh"
require_env
command -v python3 >/dev/null || fatal "python3 is needed to read the page (test/install-deps.sh)"
command -v mpicc >/dev/null || fatal "mpicc is needed for the page's latency check (test/install-deps.sh)"
page=$top/docs/quickstart-macos.md

tools_cluster_up 4 --addressing none

# The stand-ins, first in PATH.
shims=$TC_TMP/shims
prefix=$TC_TMP/brew-prefix
mkdir -p "$shims" "$prefix/share/tbrdma"
ln -s "$top/tools/examples" "$prefix/share/tbrdma/examples"
for t in tbrdma-doctor tbrdma-info tbrdma-fieldtest; do ln -s "$build/tools/$t" "$shims/$t"; done
for t in tbrdma-setup tbrdma-probe; do ln -s "$top/tools/$t" "$shims/$t"; done
cat >"$shims/ssh" <<EOF
#!/bin/bash
# ssh [options] HOST COMMAND...: the simulated Macs' launch agent (options dropped)
while [ \$# -gt 0 ]; do
    case \$1 in
    -[BbcDEeFIiJLlmOopQRSWw]) shift 2 ;;
    -*) shift ;;
    *) break ;;
    esac
done
exec "$agent" "\$@"
EOF
cat >"$shims/brew" <<EOF
#!/bin/sh
# brew --prefix tbrdma: where the page expects tbrdma's shared files
[ "\$1 \$2" = "--prefix tbrdma" ] && { echo "$prefix"; exit 0; }
echo "brew: only --prefix tbrdma off a Mac" >&2
exit 1
EOF
chmod +x "$shims/ssh" "$shims/brew"

# The page's commands: "$ " lines of its indented blocks, continued after a trailing "\" and
# through a here-document; each with the lines shown after it (up to the next command or
# section) that tbrdma's tools print. Records: "cmd<TAB>COMMAND" then "want<TAB>LINE"...
python3 - "$page" >"$TC_TMP/page" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
ours = ("tbrdma-doctor:", "no Thunderbolt port has", "# host ", "# dry run", "tbrdma mesh:",
        "mpi_latency:", "tbrdma-info (tbrdma)", "MCA btl: tbrdma")
i, cmd = 0, None
while i < len(lines):
    line = lines[i]
    if line.startswith("## "):
        cmd = None
    elif line.startswith("    $ "):
        cmd = line[6:]
        while cmd.endswith("\\"):
            i += 1
            cmd = cmd[:-1] + " " + lines[i].strip()
        m = re.search(r"<<'?(\w+)'?", cmd)
        if m:
            while True:
                i += 1
                cmd += "\n" + lines[i][4:]
                if lines[i].strip() == m.group(1):
                    break
        print("cmd\t" + cmd.replace("\\", "\\\\").replace("\n", "\\n"))
    elif cmd is not None and line.startswith("    ") and line.strip().startswith(ours):
        print("want\t" + line.strip())
    i += 1
PY

# want_re LINE: the regex of a page line: numbers, versions and checksums free (and the plural
# after a number), "..." anything, macOS's plan read as Linux's; leading blanks free.
want_re()
{
    python3 - "$1" <<'PY'
import re, sys
line = sys.argv[1].replace("(Darwin,", "(Linux,").replace("macos plan", "linux plan")
out = ""
for part in re.split(r"(\.\.\.|src\.[0-9a-f]+|[0-9]+)", line):
    if part == "...":
        out += ".*"
    elif part.startswith("src."):
        out += r"src\.[0-9a-f]+"
    elif part.isdigit():
        out += "[0-9]+"
    else:
        out += re.escape(part)
# "5 problems" on the Mac may be "1 problem" here
out = re.sub(r"(\[0-9\]\+(\\)? [a-z]+)s\b", r"\1s?", out)
print("^ *" + out)
PY
}

work=$TC_TMP/home/mac-a/work
mkdir -p "$work"
env_mac=(HOME="$TC_TMP/home/mac-a" PATH="$shims:$PATH" TBRDMA_VERBS_LIB="$simlib"
    OMPI_MCA_btl_tbrdma_verbs_lib="$simlib" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    OMPI_MCA_oob_tcp_if_include="$TC_MGMT.0/24" OMPI_MCA_hwloc_base_binding_policy=none)
ran=0 skipped=0 n=0
# run_cmd: runs $cmd in the page's shell on mac-a; then checks its status and the page's lines.
run_cmd()
{
    local first=${cmd%% *} want_rc=0 w re
    n=$((n + 1))
    case $first in
    rdma_ctl | ibv_devices)
        echo "  not run off a Mac: $cmd"
        skipped=$((skipped + 1))
        return
        ;;
    esac
    ran=$((ran + 1))
    printf '%s\n' "$cmd" >"$TC_TMP/cmd.$n"
    out=$(on mac-a env "${env_mac[@]}" bash -c 'cd "$1" && . "$2"' _ "$work" "$TC_TMP/cmd.$n" 2>&1)
    rc=$?
    echo "\$ $cmd" | head -1
    echo "$out" | sed 's/^/    | /'
    # the doctor on a fresh cluster: problems, so not 0 (step 6)
    [[ $cmd == "tbrdma-doctor --hostfile hosts.txt" ]] && want_rc=1
    expect "page step \"$(echo "$cmd" | head -1)\": exit status" "$want_rc" "$rc"
    for w in "${wants[@]}"; do
        re=$(want_re "$w")
        if echo "$out" | grep -Eq -- "$re"; then
            pass "page step \"$(echo "$cmd" | head -1)\" printed \"$w\""
        else
            fail "page step \"$(echo "$cmd" | head -1)\": no line like the page's \"$w\""
        fi
    done
}

cmd="" wants=()
while IFS=$'\t' read -r kind text; do
    if [ "$kind" = cmd ]; then
        [ -z "$cmd" ] || run_cmd
        cmd=$(printf '%b' "$text") wants=()
    else
        wants+=("$text")
    fi
done <"$TC_TMP/page"
[ -z "$cmd" ] || run_cmd
check "the page's commands were read ($n, $ran run, $skipped of macOS alone)" test "$ran" -ge 9
finish
