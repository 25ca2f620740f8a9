/*
 * The connection record: what each process publishes, once its queue pairs exist, so that every
 * peer can connect its UC queue pairs to them (docs/design.md, "Connections"; the wire layout is
 * in docs/wire-format.md). One record per process, one entry per peer process on another host and
 * cable to its host (several when cables are striped): the queue pair numbers of both channels, the
 * connection id the peer must stamp on its frames, and the receive depths the credits start from. A
 * process that could not set up publishes a record with a non-zero status and no entries, so its
 * peers stop waiting for it. Big-endian, versioned, length-checked; opal-free.
 */
#ifndef TBRDMA_CONN_H
#define TBRDMA_CONN_H

#include "tbrdma_wire.h"

#include <stddef.h>
#include <stdint.h>

#define TBRDMA_CONN_MAGIC     0x5442434eu /* "TBCN" */
#define TBRDMA_CONN_VERSION   2           /* 2: entries name their cable (stripe) */
#define TBRDMA_CONN_FLAG_CSUM 0x01        /* the publisher wants payload checksums */

typedef struct tbrdma_conn_entry {
    uint32_t peer_jobid; /* the peer process this entry is for (Open MPI's name) */
    uint32_t peer_vpid;
    uint32_t conn_id;             /* the peer stamps this on every frame it sends here */
    uint32_t qpn[TBRDMA_NCHAN];   /* the publisher's queue pair per channel */
    uint32_t psn;                 /* the publisher's send PSN */
    uint16_t depth[TBRDMA_NCHAN]; /* receives the publisher posted per channel */
    uint16_t bulk_frames;         /* frames per bulk receive */
    uint16_t stripe; /* the cable, in the pair's order (docs/mesh.md); 0 = the pair's first */
} tbrdma_conn_entry_t;

typedef struct tbrdma_conn_record {
    int status;      /* 0, or the positive errno that stopped the publisher's setup */
    uint8_t flags;   /* TBRDMA_CONN_FLAG_* */
    size_t nentries; /* entries (0 when status != 0) */
    tbrdma_conn_entry_t *entries;
} tbrdma_conn_record_t;

/* Bytes tbrdma_conn_encode() writes for rec. */
size_t tbrdma_conn_encoded_size(const tbrdma_conn_record_t *rec);

/* Encodes rec into buf. Returns 0 or -ENOSPC. */
int tbrdma_conn_encode(const tbrdma_conn_record_t *rec, void *buf, size_t len, size_t *used_p);

/*
 * Decodes a peer's record. Never reads past len. The entries are malloc'ed (free with
 * tbrdma_conn_record_free). Returns 0, -EBADMSG (short, corrupt or inconsistent),
 * -EPROTONOSUPPORT (another version) or -ENOMEM. *rec_p is written only on success.
 */
int tbrdma_conn_decode(const void *buf, size_t len, tbrdma_conn_record_t *rec_p);

/* The status of a record (0: the publisher set up; else its errno), from its header alone, or
 * the negative errno tbrdma_conn_decode would return for the header. Never reads past len. */
int tbrdma_conn_status(const void *buf, size_t len);

/* Frees a decoded record's entries. */
void tbrdma_conn_record_free(tbrdma_conn_record_t *rec);

/* The entry of rec addressed to process (jobid, vpid) for cable stripe, NULL when none. */
const tbrdma_conn_entry_t *tbrdma_conn_find(const tbrdma_conn_record_t *rec, uint32_t jobid,
                                            uint32_t vpid, uint16_t stripe);

#endif /* TBRDMA_CONN_H */
