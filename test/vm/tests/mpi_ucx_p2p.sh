#!/bin/bash
# tbvm-vms: 3
# VM tier: the reference transport on the same rxe links as mpi_tbrdma_p2p.sh. The same
# programs at the same sizes (tb_pingpong 0 B to 4 MiB, tb_p2p, tb_thread), one rank per VM,
# over pml ucx with UCX limited to its verbs transports on the rxe devices (settings:
# guest/mpi.sh). Each job: status 0, every rank's OK line, every rank on a UCX lane over rxe
# and none over tcp; every rxe device of every VM sent and received packets.
. "$TBVM_REPO/test/vm/guest/mpi.sh"
tbvm_mpi_ucx "tb_pingpong 4194304" tb_p2p tb_thread
