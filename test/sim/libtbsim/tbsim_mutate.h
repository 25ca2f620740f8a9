/*
 * Mutation switches of the simulator (libtbsim and tbsimctl), for test/sim/mutate.sh. A build
 * with -DTBSIM_MUTATE=TBSIM_MUT_<NAME> disables or loosens one rule of the table "Enforced
 * rules and the tests that prove them" in test/sim/README.md (or makes it harsher than Apple,
 * where a test must prove the accepting side of a limit); the test named there for that rule
 * must then fail. A normal build defines no TBSIM_MUTATE: every TBSIM_MUTANT() is the constant
 * 0 and the compiler drops the mutant branches. An unknown name does not compile.
 */
#ifndef TBSIM_MUTATE_H
#define TBSIM_MUTATE_H

enum tbsim_mutation {
    TBSIM_MUT_NONE = 0,
    /* devices and ports */
    TBSIM_MUT_DEVICE_LIST_ALL,   /* every host's devices are listed, not only the caller's */
    TBSIM_MUT_GUID_MAC,          /* node GUID = the MAC padded with zeros, not its EUI-64 */
    TBSIM_MUT_GID_STALE,         /* the IPv4-mapped GID outlives the interface's address */
    TBSIM_MUT_PEER_RDMA_IGNORED, /* RDMA off on the peer host leaves the port ACTIVE */
    TBSIM_MUT_RDMA_OFF_LISTS,    /* RDMA off on this host still lists its devices */
    TBSIM_MUT_BRIDGE_IGNORED,    /* a bridge member stays ACTIVE */
    TBSIM_MUT_CARRIER_IGNORED,   /* a pulled cable (no carrier) stays ACTIVE */
    TBSIM_MUT_PD_ON_DOWN,        /* ibv_alloc_pd works on a DOWN port */
    /* QP creation and the caps */
    TBSIM_MUT_QP_TYPE_ANY,        /* RC and UD QPs are created */
    TBSIM_MUT_INLINE_OK,          /* max_inline_data > 0 is accepted */
    TBSIM_MUT_SGE_MULTI,          /* 2 SGEs accepted at create and in a WR */
    TBSIM_MUT_QP_CAP_11,          /* 11 QPs per device */
    TBSIM_MUT_QP_CAP_PER_PROCESS, /* the 10 QPs are counted per process, not per host */
    TBSIM_MUT_MR_CAP_101,         /* 101 MRs per device */
    TBSIM_MUT_WR_DEPTH_64,        /* 64 outstanding WRs per queue */
    TBSIM_MUT_WR_CAP_IGNORED,     /* max_send_wr / max_recv_wr below 63 are not honoured */
    TBSIM_MUT_WR_CAP_4096,        /* create_qp accepts caps of 4096 */
    TBSIM_MUT_OPCODE_ANY,         /* RDMA WRITE is posted (as a SEND) */
    TBSIM_MUT_MSG_MAX_PLUS1,      /* a 16,773,121 B message is posted */
    TBSIM_MUT_MSG_MAX_2MIB,       /* harsher: messages over 2 MiB are refused */
    /* the QP state machine */
    TBSIM_MUT_RTS_FROM_INIT, /* RTS straight from INIT */
    TBSIM_MUT_RTR_SGID_ANY,  /* RTR takes any sgid_index */
    TBSIM_MUT_RTR_DGID_ANY,  /* RTR takes any dgid */
    TBSIM_MUT_RTR_ANY_CABLE, /* RTR takes the address of any device in the fabric */
    TBSIM_MUT_RTR_MTU_ANY,   /* RTR takes a path MTU above 4096 */
    TBSIM_MUT_RTR_MASK_ANY,  /* RTR takes any attribute mask with IBV_QP_STATE */
    /* the data path */
    TBSIM_MUT_COPY_4K,             /* only the first 4096 B of a message are copied */
    TBSIM_MUT_FRAME_RULE_OFF,      /* any frame count is accepted if the message fits */
    TBSIM_MUT_FRAME_RULE_STRICT,   /* harsher: the lengths must be equal, not the frame counts */
    TBSIM_MUT_FRAME_LEN_OVER,      /* a send longer than the receive, same frames, is accepted */
    TBSIM_MUT_CREDITS_OFF,         /* a send leaves without a posted receive */
    TBSIM_MUT_CREDITS_PLUS1,       /* one send more than the posted receives leaves */
    TBSIM_MUT_WC_BYTE_LEN,         /* a receive completion reports the posted length */
    TBSIM_MUT_UNSIGNALED_COMPLETE, /* unsignaled sends complete too */
    TBSIM_MUT_SEND_CQE_IMMEDIATE,  /* a send's completion is visible at once */
    TBSIM_MUT_SYSCALL_IN_POLL,     /* ibv_poll_cq makes a system call */
    /* faults */
    TBSIM_MUT_DROP_ERROR,      /* a dropped send completes with an error (as if acked) */
    TBSIM_MUT_DROP_UNSEEDED,   /* the drop decision depends on the time, not the seed */
    TBSIM_MUT_FAULT_LATCHED,   /* a QP keeps the faults of the time it connected */
    TBSIM_MUT_CORRUPT_IGNORED, /* the corrupt fault changes nothing */
    TBSIM_MUT_DELAY_IGNORED,   /* the delay fault holds nothing back */
    TBSIM_MUT_DOWN_DELIVERS,   /* sends on a DOWN port are delivered */
    TBSIM_MUT_LINK_FEED_DEAF,  /* the data path reads the port once and misses its changes */
    /* the link model */
    TBSIM_MUT_LINK_OFF,           /* the rate and latency hold nothing back */
    TBSIM_MUT_LINK_DUPLEX_SHARED, /* both directions of a cable share one wire */
    TBSIM_MUT_LINK_CABLES_SHARED, /* every cable of a host shares one wire */
    TBSIM_MUT_LINK_LATCHED,       /* a QP keeps the link model of the time it connected */
    TBSIM_MUT_INTERLEAVE_IGNORED, /* interleave=1 changes nothing: whole messages in order */
    /* resources and counters */
    TBSIM_MUT_CRASH_RELEASE,     /* the slots of a dead process are taken over at once */
    TBSIM_MUT_DEREG_KEEPS_SLOT,  /* ibv_dereg_mr leaves the MR slot held */
    TBSIM_MUT_COUNTERS_RX_BYTES, /* received bytes are not counted */
    TBSIM_MUT_PIN_IGNORED,       /* TBSIM_PIN=1: a region does not pin its pages */
};

#ifndef TBSIM_MUTATE
#define TBSIM_MUTATE TBSIM_MUT_NONE
#endif

/* 1 in the build of mutation NAME only. */
#define TBSIM_MUTANT(name) (TBSIM_MUT_##name == (TBSIM_MUTATE))

#endif /* TBSIM_MUTATE_H */
