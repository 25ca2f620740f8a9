/*
 * The modex blob: what each process publishes through PMIx so that its peers can reach it.
 * Versioned, length-checked, byte-order independent (big-endian on the wire). The exact layout
 * is documented in docs/wire-format.md.
 */
#ifndef TBRDMA_MODEX_H
#define TBRDMA_MODEX_H

#include "tbrdma_types.h"

#define TBRDMA_MODEX_MAGIC   0x54425244u /* "TBRD" */
#define TBRDMA_MODEX_VERSION 2

typedef struct tbrdma_modex_port {
    char device[TBRDMA_NAME_MAX];
    tbrdma_gid_t gid; /* the IPv4-mapped GID */
    int gid_index;    /* its index in the sender's table (0..65535) */
    uint32_t ipv4;    /* host byte order */
    int prefix;       /* 0..32 */
    int active_mtu;   /* ibv_mtu value */
    int link_layer;   /* TBRDMA_LINK_LAYER_* */
} tbrdma_modex_port_t;

typedef struct tbrdma_modex {
    char host[TBRDMA_HOST_MAX]; /* host identity: the node name Open MPI sees */
    int nports;                 /* 0..TBRDMA_MAX_PORTS usable ports */
    int bulk_frames;            /* the sender's btl_tbrdma_bulk_frames (0..65535): one per job */
    tbrdma_modex_port_t ports[TBRDMA_MAX_PORTS];
} tbrdma_modex_t;

/* Fills a modex port from a usable discovered port (the IPv4-mapped GID at gid_index). */
void tbrdma_modex_port_from_info(const tbrdma_port_info_t *info, tbrdma_modex_port_t *port_p);

/* Bytes tbrdma_modex_encode() writes for m. */
size_t tbrdma_modex_encoded_size(const tbrdma_modex_t *m);

/* Encodes m. Returns 0, -EINVAL (m out of range) or -ENOSPC (len too small). */
int tbrdma_modex_encode(const tbrdma_modex_t *m, void *buf, size_t len, size_t *used_p);

/*
 * Decodes a blob received from a peer. Never reads past len. Returns 0, -EBADMSG (short,
 * corrupt or inconsistent) or -EPROTONOSUPPORT (another tbrdma wire version). *m_p is
 * written only on success.
 */
int tbrdma_modex_decode(const void *buf, size_t len, tbrdma_modex_t *m_p);

/* Text for a decode error: "short or corrupt blob", "foreign wire version", ... */
const char *tbrdma_modex_strerror(int rc);

#endif /* TBRDMA_MODEX_H */
