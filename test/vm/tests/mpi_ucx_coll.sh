#!/bin/bash
# tbvm-vms: 3
# VM tier: the reference transport on the same rxe links as mpi_tbrdma_coll.sh: tb_coll,
# tb_rma (osc ucx) and tb_ring (5 s), one rank per VM, over pml ucx on the rxe devices. Checks
# as in mpi_ucx_p2p.sh.
. "$TBVM_REPO/test/vm/guest/mpi.sh"
tbvm_mpi_ucx tb_coll tb_rma "tb_ring 5 65536"
