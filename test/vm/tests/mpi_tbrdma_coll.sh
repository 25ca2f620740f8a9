#!/bin/bash
# tbvm-vms: 3
# VM tier: tbrdma's data path on real kernel verbs, collectives and one-sided. The project's
# MPI test programs tb_coll (every collective, 4 datatypes, MPI_IN_PLACE), tb_rma (put, get,
# accumulate with fence and lock/unlock over osc/pt2pt) and tb_ring (5 s of 64 KiB exchanges at
# every distance), one rank per VM, over pml ob1 and btl self,tbrdma only. Checks as in
# mpi_tbrdma_p2p.sh.
. "$TBVM_REPO/test/vm/guest/mpi.sh"
tbvm_mpi_tbrdma tb_coll tb_rma "tb_ring 5 65536"
