/*
 * The queue pair budget of a Thunderbolt RDMA device: Apple allows 10 UC queue pairs per device,
 * counted over every process of the Mac. tbrdma connects every local rank to every rank on the
 * host at the other end of the device's cable, with one queue pair per channel, so a device
 * needs (local ranks) x (ranks on the peer host) x (channels) of them. This module does the
 * arithmetic and words the start-up refusal; opal-free.
 */
#ifndef TBRDMA_BUDGET_H
#define TBRDMA_BUDGET_H

#include <stddef.h>

#define TBRDMA_APPLE_QP_BUDGET 10 /* UC queue pairs per device (TN3205; EBUSY past it) */

typedef struct tbrdma_budget_use {
    const char *host;      /* this host */
    const char *device;    /* the device, "rdma_en2" */
    const char *interface; /* its interface, "en2" */
    const char *peer_host; /* the host at the other end of its cable */
    int local_ranks;       /* tbrdma ranks on this host */
    int peer_ranks;        /* tbrdma ranks on the peer host */
    int qps_per_pair;      /* queue pairs per pair of ranks (channels) */
} tbrdma_budget_use_t;

/* Queue pairs the device needs. */
int tbrdma_budget_needed(const tbrdma_budget_use_t *u);

/*
 * The largest number of ranks per host (the same on both hosts) that fits budget queue pairs
 * with qps_per_pair each; 0 when not even one rank fits.
 */
int tbrdma_budget_max_ranks(int budget, int qps_per_pair);

/*
 * 0 when the device's use fits budget; else -ENOSPC with msg holding one line that states the
 * budget, the count needed and what to do.
 */
int tbrdma_budget_check(const tbrdma_budget_use_t *u, int budget, char *msg, size_t len);

#endif /* TBRDMA_BUDGET_H */
