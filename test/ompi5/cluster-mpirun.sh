#!/bin/bash
#
# cluster-mpirun.sh [--np N] [--slots S] -- MPIRUN-ARGS...: `tbcluster mpirun` for Open MPI 5.0
# (the Debian 13 chroot of make-chroot.sh): mpirun (PRRTE) runs in the chroot inside host mac-a's
# network and UTS namespaces, and starts its daemons on the other simulated Macs through
# cluster-agent.sh, which enters their namespaces with nsenter from inside the same chroot.
# The chroot sees the cluster's state directory and /run/netns (bound recursively), the
# cluster's hosts file as /etc/hosts, and the host's /dev/shm (the simulator's shared files).
# Needs a cluster up (TBSIM_DIR exported, as the tests do). Exits with mpirun's status.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
np=""
slots=1
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in
    --np) np=$2; shift 2 ;;
    --slots) slots=$2; shift 2 ;;
    *) echo "cluster-mpirun.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ "${1:-}" = -- ] || { echo "cluster-mpirun.sh: expected -- before the mpirun arguments" >&2; exit 2; }
shift
state=${TBSIM_DIR:?cluster-mpirun.sh: TBSIM_DIR is not set}
state=$(realpath "$state")
prefix=$(sed -n 's/^prefix=//p' "$state/cluster")
mgmt=$(sed -n 's/^mgmt_net=//p' "$state/cluster")
[ -n "$prefix" ] && [ -n "$mgmt" ] || { echo "cluster-mpirun.sh: no cluster in $state" >&2; exit 1; }
hostfile=$state/hostfile5.slots$slots
# written aside then renamed: an mpirun of another job at once may be reading it
sed -n 's/^host //p' "$state/topology" | sed "s/\$/ slots=$slots/" >"$hostfile.$$"
mv -f "$hostfile.$$" "$hostfile"
args=(mpirun --allow-run-as-root --hostfile "$hostfile"
    --prtemca plm_ssh_agent "$here/cluster-agent.sh"
    --prtemca oob_tcp_if_include "$mgmt.0/24")
# The TCP BTL stays on the management network unless the arguments choose its interfaces (a
# reference run over the cables).
case " $* " in
*" btl_tcp_if_include "* | *" btl_tcp_if_exclude "*) ;;
*) args+=(--mca btl_tcp_if_include "$mgmt.0/24") ;;
esac
[ -n "$np" ] && args+=(-np "$np")
first=$(sed -n 's/^host //p' "$state/topology" | head -1)
export TBSIM_DIR=$state
export TBRDMA_OMPI5_RBIND="$state /run/netns" TBRDMA_OMPI5_HOSTS=$state/hosts TBRDMA_OMPI5_HOST_SHM=1
exec "$here/in-chroot.sh" nsenter --net="/run/netns/$prefix$first" --uts="$state/uts/$first" -- \
    "${args[@]}" "$@"
