/*
 * tbsim shared fabric state: the fixed-layout, versioned file $TBSIM_DIR/fabric that every
 * simulated host's processes and tbsimctl map MAP_SHARED. It holds the hosts, the cables with
 * their live faults, one device per cable end with its host-wide QP and MR slot tables and its
 * published IPv4, and the per-QP receive files' naming. Sizes are bounded by the constants
 * below. Writers: tbsimctl init (everything, once, magic last), tbsimctl fault/rdma (the
 * atomics), libtbsim (slot tables, published addresses). No locks: every shared field that
 * changes after init is a C11 atomic.
 *
 * Also the layout of one QP's receive file (struct tbsim_rxq): the lock-free rings between the
 * receiving process (posts receive descriptors, consumes delivered slots) and the sending
 * process (consumes receive credits, fills slots).
 */
#ifndef TBSIM_SHM_H
#define TBSIM_SHM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define TBSIM_MAGIC       0x544253494d464231ull /* "TBSIMFB1" */
#define TBSIM_RXQ_MAGIC   0x544253494d525831ull /* "TBSIMRX1" */
#define TBSIM_VERSION     7
#define TBSIM_DIR_DEFAULT "/run/tbsim"
#define TBSIM_SHM_DEFAULT "/dev/shm"

#define TBSIM_NAME_LEN  64 /* host name, including the NUL */
#define TBSIM_IF_LEN    16 /* interface name (IFNAMSIZ), including the NUL */
#define TBSIM_ID_LEN    16 /* cable id, including the NUL */
#define TBSIM_MAX_HOSTS 16
#define TBSIM_MAX_CABLE 32
#define TBSIM_MAX_DEVS  (2 * TBSIM_MAX_CABLE) /* one device per cable end */

/* Apple's limits (TN3205 and field reports, see test/sim/README.md). */
#define TBSIM_QP_MAX      10  /* UC QPs per device, host-wide */
#define TBSIM_MR_MAX      100 /* MRs per device, host-wide */
#define TBSIM_QP_SLOTS    16  /* slot table size; the limit is counted (tbsim_slot_take) */
#define TBSIM_MR_SLOTS    128
#define TBSIM_WR_MAX      63       /* outstanding WRs per queue */
#define TBSIM_WR_CAP_MAX  4095     /* largest cap create_qp accepts */
#define TBSIM_RING        64       /* ring slots, > TBSIM_WR_MAX */
#define TBSIM_FRAME       4096     /* bytes per Thunderbolt frame */
#define TBSIM_MSG_MAX     16773120 /* 4095 frames */
#define TBSIM_GID_TBL_LEN 16
#define TBSIM_PPM         1000000u /* fault probabilities are parts per million */

/*
 * The link model's documented setting ("on"): Thunderbolt 5's 80 Gbit/s per direction scaled
 * to 1/10, so that 2 cores can copy it, and Apple's measured ~4 us one-way latency unscaled
 * (test/sim/README.md, "Link model"). Off (0, 0) is the default.
 */
#define TBSIM_LINK_ON_RATE_BPS   8000000000ull
#define TBSIM_LINK_ON_LATENCY_NS 4000ull

/*
 * The setting "apple": the rate a third party measured between Macs, unscaled: 75 Gbit/s
 * (ib_send_bw, one UC queue pair, 64 KiB), a 3 us one-way latency (with the simulator's own ~1 us,
 * about the published 4.15 us half round trip at 64 B), and packets interleaved on the wire, so
 * that a small message waits behind one packet of a large one at most. This machine cannot copy 75
 * Gbit/s both ways on two cores: at this setting, software costs show, and the rate is a ceiling,
 * not a wire.
 */
#define TBSIM_LINK_APPLE_RATE_BPS   75000000000ull
#define TBSIM_LINK_APPLE_LATENCY_NS 3000ull

struct tbsim_host {
    char name[TBSIM_NAME_LEN];
    _Atomic uint32_t rdma_enabled;
};

struct tbsim_fault {
    _Atomic uint32_t drop_ppm;
    _Atomic uint32_t corrupt_ppm;
    _Atomic uint32_t delay_us;
    _Atomic uint32_t drop_min; /* drop only messages of at least this many bytes (0: any) */
    _Atomic uint64_t seed;
};

/*
 * The link model of a cable, live (tbsimctl link): each direction is its own wire of this rate,
 * and every frame arrives latency_ns after its last byte left. 0 = no limit / no latency; both
 * 0 = the model is off (a frame arrives as soon as it is copied, plus the delay fault).
 */
struct tbsim_linkmodel {
    _Atomic uint64_t rate_bps;   /* bits per second per direction */
    _Atomic uint64_t latency_ns; /* one way */
    _Atomic uint32_t interleave; /* 1: a 1-frame message waits for one packet, not whole messages */
    uint32_t pad;
};

struct tbsim_cable {
    char id[TBSIM_ID_LEN];
    int32_t host[2];
    char ifname[2][TBSIM_IF_LEN];
    struct tbsim_fault fault;
    struct tbsim_linkmodel model;
};

/* One QP slot of a device; in use while its qp_owner entry is not 0 (the owning pid). */
struct tbsim_qp_entry {
    _Atomic uint32_t gen;      /* bumped at every create: names the receive file's content */
    _Atomic uint32_t qpn;      /* 0 while the slot is being set up */
    _Atomic uint32_t state;    /* enum ibv_qp_state value */
    _Atomic uint32_t dest_qpn; /* valid once state >= RTR */
};

/*
 * Traffic counters of one device, shared by every process of its host (atomic adds). Counted
 * by the process that moves the message: tx and lost by the sender, rx and len_err by the
 * receiver. Tests read them (tbsimctl counters) to prove which cable carried a job's traffic.
 */
struct tbsim_counters {
    _Atomic uint64_t tx_msgs;   /* messages that left this device (delivered or corrupted) */
    _Atomic uint64_t tx_bytes;  /* their bytes */
    _Atomic uint64_t rx_msgs;   /* receives completed with success */
    _Atomic uint64_t rx_bytes;  /* their bytes */
    _Atomic uint64_t lost;      /* sends lost: drop fault, or the port was DOWN */
    _Atomic uint64_t corrupted; /* messages sent with a flipped bit (corrupt fault) */
    _Atomic uint64_t len_err;   /* receives failed by the frame rule */
};

struct tbsim_dev {
    int32_t host;
    int32_t cable;
    int32_t end; /* 0 or 1: which end of the cable */
    char ifname[TBSIM_IF_LEN];
    _Atomic uint32_t pub_ipv4;  /* IPv4 last seen on the interface (network order), 0 = none */
    _Atomic uint32_t pub_valid; /* 1 once a process of the host published */
    _Atomic int32_t mr_owner[TBSIM_MR_SLOTS]; /* pid holding MR slot i, 0 = free */
    _Atomic int32_t qp_owner[TBSIM_QP_SLOTS]; /* pid holding QP slot i, 0 = free */
    _Atomic uint32_t mr_peak; /* the most MR slots ever held at once (tbsimctl show) */
    _Atomic uint32_t qp_peak; /* the most QP slots ever held at once */
    struct tbsim_qp_entry qp[TBSIM_QP_SLOTS];
    struct tbsim_counters cnt;
    /*
     * The link model's wire from this end to the other (one direction of the cable), shared by
     * every QP of every process of the host on this device: the CLOCK_MONOTONIC time at which
     * the last frame sent on it has left (its serialisation ends). Advanced with a CAS.
     */
    _Alignas(64) _Atomic uint64_t wire_free_ns;
};

struct tbsim_fabric {
    uint64_t magic;
    uint32_t version;
    uint32_t size;
    uint64_t fabric_id; /* names this fabric's files under the shm directory */
    uint32_t nhosts;
    uint32_t ncables;
    _Atomic uint32_t next_qpn;
    _Atomic uint32_t next_gen;
    struct tbsim_host hosts[TBSIM_MAX_HOSTS];
    struct tbsim_cable cables[TBSIM_MAX_CABLE];
    struct tbsim_dev devs[TBSIM_MAX_DEVS];
};

/*
 * Receive-file layout: header, then TBSIM_RING data regions of TBSIM_MSG_MAX bytes (sparse: a
 * region's pages are allocated at its first use, about 1,000 page faults in the sender and as many
 * in the receiver for 4 MiB). A message goes to the lowest free region, so a queue pair with few
 * messages in flight keeps reusing the same warm pages; until 2026-12-02 receive i used region
 * i % TBSIM_RING, and every queue pair's first 64 large messages paid those faults.
 */
enum tbsim_slot_status {
    TBSIM_SLOT_OK = 0,
    TBSIM_SLOT_LEN_ERR = 1, /* frame count (or length) mismatch: nothing delivered */
};

struct tbsim_rq_desc {
    uint32_t frames;
    uint32_t len;
    uint64_t post_ns; /* CLOCK_MONOTONIC time of the post: the credit exists from then on */
};

struct tbsim_rx_slot {
    _Atomic uint64_t seq; /* receive index + 1 once the slot holds that receive's outcome */
    uint32_t status;      /* enum tbsim_slot_status */
    uint32_t byte_len;
    uint64_t deliver_ns; /* CLOCK_MONOTONIC time before which the receive must not complete */
    uint32_t region;     /* data region holding the message (TBSIM_SLOT_OK only) */
};

struct tbsim_rxq {
    uint64_t magic;
    uint32_t gen;
    uint32_t qpn;
    _Alignas(64) _Atomic uint64_t rq_posted;  /* written by the receiver */
    _Alignas(64) _Atomic uint64_t tx_claimed; /* written by the (single) sender */
    /* bit i: data region i holds a message not yet copied out (set by the sender, cleared by the
     * receiver once it copied) */
    _Alignas(64) _Atomic uint64_t region_busy;
    _Alignas(64) struct tbsim_rq_desc desc[TBSIM_RING];
    struct tbsim_rx_slot slot[TBSIM_RING];
};

#define TBSIM_RXQ_HDR  4096
#define TBSIM_RXQ_SIZE ((size_t) TBSIM_RXQ_HDR + (size_t) TBSIM_RING * TBSIM_MSG_MAX)
_Static_assert(sizeof(struct tbsim_rxq) <= TBSIM_RXQ_HDR, "the receive file's header fits");
_Static_assert(64 == TBSIM_RING, "region_busy has a bit per data region");

/* $TBSIM_DIR, or the default. */
const char *tbsim_dir(void);

/* Maps the fabric file read-write. Returns NULL with errno set (ENOENT: no fabric). */
struct tbsim_fabric *tbsim_fabric_map(void);

/* Creates the fabric from $TBSIM_DIR/topology. Returns 0 or -errno; err says why. */
int tbsim_fabric_init(char *err, size_t errlen);

/* Removes the fabric file and every receive file of it. Returns 0 or -errno. */
int tbsim_fabric_destroy(void);

/* Index of a host by name, or -1. */
int tbsim_host_find(const struct tbsim_fabric *fab, const char *name);

/* Index of a cable by id, or -1. */
int tbsim_cable_find(const struct tbsim_fabric *fab, const char *id);

/* The device at the other end of dev's cable. */
static inline int tbsim_dev_peer(int dev)
{
    return dev ^ 1;
}

/* Path of the receive file of device dev's QP slot. */
void tbsim_rxq_path(const struct tbsim_fabric *fab, int dev, int slot, char *buf, size_t len);

#endif /* TBSIM_SHM_H */
