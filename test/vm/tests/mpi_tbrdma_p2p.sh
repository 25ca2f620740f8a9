#!/bin/bash
# tbvm-vms: 3
# VM tier: tbrdma's data path on real kernel verbs, point-to-point. The project's MPI test
# programs tb_pingpong (0 B to 4 MiB, every frame and fragment boundary +-48 B), tb_p2p (many
# outstanding, ANY_SOURCE, probe, cancel, dup/split) and tb_thread (MPI_THREAD_MULTIPLE), one
# rank per VM, over pml ob1 and btl self,tbrdma only. Each job: status 0, every rank's OK line,
# every rank's "tbrdma stats:" line and 0 frames not returned; every rxe device of every VM
# sent and received packets. rxe is not Apple (no frame rule, a UC message without a posted
# receive is dropped, RC exists); tbrdma uses UC and SEND/RECV only, as on Apple.
. "$TBVM_REPO/test/vm/guest/mpi.sh"
tbvm_mpi_tbrdma "tb_pingpong 4194304" tb_p2p tb_thread
