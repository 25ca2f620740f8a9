/*
 * Mutation switches of tbrdma's own logic, for test/mutate/plugin.sh: each breaks one rule of
 * the protocol or one of Apple's rules on purpose, and the test named for it in the script's table
 * must then fail at the check named there. Only a mutable build (-DTBRDMA_MUTATIONS, configured by
 * the script into build/mutable) carries them; which one is on comes from the environment at run
 * time (TBRDMA_MUTANT=name, read once; mpirun -x passes it to the ranks), so one build serves
 * every mutant. In a normal build TBRDMA_MUTANT() is the constant 0 and the compiler drops every
 * mutant branch.
 */
#ifndef TBRDMA_MUTATE_H
#define TBRDMA_MUTATE_H

/* X-macro: the mutations, lowercase names as TBRDMA_MUTANT takes them upper-cased. */
#define TBRDMA_MUTATIONS_LIST(X)                                                                 \
    X(CRC_ACCEPTED)           /* a payload whose CRC32C differs is accepted */                   \
    X(CRC_ONE_SHORT)          /* the payload CRC covers one byte fewer */                        \
    X(FRAME_COUNT_UNCHECKED)  /* a frame of another channel's frame count is accepted */         \
    X(DUP_DELIVERED)          /* a duplicate data frame is delivered again */                    \
    X(ACK_ONE_TOO_FAR)        /* an acknowledgement frees one frame more than it covers */       \
    X(RETRANSMIT_NEVER)       /* the retransmission timer never expires */                       \
    X(CREDIT_PLUS1)           /* one frame more than the grant is sent */                        \
    X(NACK_KEEPS_TIMING)      /* a go-back on a NACK keeps timing the round trip (Karn) */       \
    X(CREDIT_PROBE_NEVER)     /* the bulk channel's credit probe never becomes due */            \
    X(STALL_UNTIMED)          /* a frame waiting for credit starts no timer */                   \
    X(SAMPLE_WRAPS)           /* a round trip is sampled with a clock older than its stamp */    \
    X(UNACKED_NEVER)          /* frames never count as waiting for an acknowledgement */         \
    X(PEER_TIMEOUT_NEVER)     /* a silent peer is never declared lost */                         \
    X(STALL_UNFORGIVEN)       /* a stall of this process counts as the peers' silence */         \
    X(UNREAD_JUDGED)          /* a pass that left completions unread declares peers lost */      \
    X(ZC_SAME_FRAMES)         /* zero-copy chunks outstanding at once may span equal frames */   \
    X(ZC_ACCEPT_WITHOUT_DONE) /* a chunk is accepted once its receive completed */               \
    X(ZC_DEADLINE_FROM_DONE)  /* a chunk's data is timed from its DONE alone */                  \
    X(QP_BUDGET_PER_PROCESS)  /* the 10 queue pairs of a device are counted per process */       \
    X(GID_INDEX_1)            /* the source GID index is 1, whatever the table holds */          \
    X(CABLES_OWN_ORDER)       /* each host orders a pair's cables by its own device names */     \
    X(TRAIN_SPLIT)            /* a train's second-last piece is sent as its last */              \
    X(CAUSAL_HOLD_SKIPPED)    /* a peer's frames are delivered while a callback to it waits */   \
    X(HELD_BEFORE_CALLBACKS)  /* held frames are delivered before the waiting callbacks run */   \
    X(ZC_RETRIES_1000)        /* a get is retried 1000 times before ob1 copies it */             \
    X(LIVENESS_THREAD_IDLE)   /* the liveness thread never runs a pass */                        \
    X(ZC_BUDGET_IGNORED)      /* zero-copy's third queue pair ignores the budget */              \
    X(ZC_REGS_UNLIMITED)      /* zero-copy registrations are not bounded per device */           \
    X(ZC_HOOKS_IGNORED)       /* zero-copy runs without Open MPI's memory hooks */               \
    X(RELEASE_SKIPPED)        /* finalize releases no queue pair or memory region */             \
    X(SIGNAL_ANY_DISPOSITION) /* the signal handler replaces the application's own */            \
    X(BULK_UNPADDED)          /* a short bulk message is sent at its own frame count */          \
    X(SENDI_DOUBLE_RELEASE)   /* a sendi frame is released for its owner too */                  \
    X(WATCHDOG_OFF)           /* unacknowledged frames never end a wait */                       \
    X(RING_FULL_ONE_LATE)     /* a hand-off ring takes one entry more than it has slots */       \
    X(ROUTE_DEPARTED)         /* the agent hands a departed rank's frames on */                  \
    X(VUC_FRAME_RULE_OFF)     /* a virtual queue pair takes a frame of another frame count */    \
    X(VPORT_CTRL_RESERVE_OFF) /* a rank's data frames may take every send slot of the agent's */ \
    X(AGENT_BEAT_UNLOCKED)    /* the agent's heartbeat judged unlocked, its age unclamped */     \
    X(HEAP_FRAMES_OFF)        /* alloc and prepare_src refuse when the pool is empty */          \
    X(CARRIER_RESERVE_OFF)    /* ob1 may take a pool's last frames, which carriers need */       \
    X(RTT_CAPPED_SHORT)       /* a measured round trip's timeout stops at the backoff's cap */   \
    X(QUEUED_TIMED)           /* a frame still in this host's send queue can time out */         \
    X(BACKOFF_RESET_BY_ACK)   /* an ack of a frame sent again resets a backed-off timeout */

#ifdef TBRDMA_MUTATIONS
enum tbrdma_mutation {
    TBRDMA_MUT_NONE = 0,
#define TBRDMA_MUT_ENUM(name) TBRDMA_MUT_##name,
    TBRDMA_MUTATIONS_LIST(TBRDMA_MUT_ENUM)
#undef TBRDMA_MUT_ENUM
        TBRDMA_MUT_COUNT
};

/* The mutation TBRDMA_MUTANT names (TBRDMA_MUT_NONE when unset); an unknown name aborts. */
int tbrdma_mutation(void);

#define TBRDMA_MUTANT(name) (TBRDMA_MUT_##name == tbrdma_mutation())
#else
#define TBRDMA_MUTANT(name) 0
#endif

#endif /* TBRDMA_MUTATE_H */
