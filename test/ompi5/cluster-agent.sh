#!/bin/bash
#
# cluster-agent.sh [ssh options] [user@]HOST COMMAND...: the "ssh" cluster-mpirun.sh gives
# Open MPI 5.0's launcher (plm_ssh_agent). Runs inside the chroot: enters HOST's network and UTS
# namespaces with nsenter (the chroot and its mounts stay) and runs COMMAND through bash, as sshd
# would. TBSIM_DIR comes from the environment.
set -eu
while [ $# -gt 0 ]; do
    case $1 in
    --) shift; break ;;
    -[BbcDEeFIiJLlmOopQRSWw]) shift 2 ;; # ssh options with a separate argument
    -*) shift ;;
    *) break ;;
    esac
done
if [ $# -lt 2 ]; then
    echo "cluster-agent.sh: usage: cluster-agent.sh [ssh options] HOST COMMAND..." >&2
    exit 255
fi
host=${1#*@}
shift
prefix=$(sed -n 's/^prefix=//p' "$TBSIM_DIR/cluster")
exec nsenter --net="/run/netns/$prefix$host" --uts="$TBSIM_DIR/uts/$host" -- /bin/bash -c "$*"
