/*
 * The per-Mac agent's routing of frames by connection id, and a rank's virtual UC queue pair
 * (tbrdma_route.h; docs/design.md, "Wire header and routing: the agent as a UC switch").
 */
#include "tbrdma_route.h"

#include "tbrdma_mutate.h"
#include "tbrdma_wire.h"

#include <errno.h>
#include <stdlib.h>

int tbrdma_route_conn(unsigned local_rank, uint32_t rnd, uint32_t *conn_p)
{
    if (local_rank >= TBRDMA_ROUTE_RANKS) {
        return -EINVAL;
    }
    *conn_p = ((uint32_t) local_rank << 24) | (rnd & 0xffffffu);
    return 0;
}

int tbrdma_route_attach(tbrdma_route_table_t *t, unsigned r)
{
    if (r >= TBRDMA_ROUTE_RANKS) {
        return -EINVAL;
    }
    t->live[r / 64] |= 1ull << (r % 64);
    return 0;
}

int tbrdma_route_detach(tbrdma_route_table_t *t, unsigned r)
{
    if (r >= TBRDMA_ROUTE_RANKS) {
        return -EINVAL;
    }
    t->live[r / 64] &= ~(1ull << (r % 64));
    return 0;
}

int tbrdma_route_live(const tbrdma_route_table_t *t, unsigned r)
{
    return r < TBRDMA_ROUTE_RANKS && 0 != (t->live[r / 64] & (1ull << (r % 64)));
}

tbrdma_route_outcome_t tbrdma_route_frame(const tbrdma_route_table_t *t, const uint8_t *frame,
                                          uint32_t byte_len, uint8_t chan, unsigned *rank_p)
{
    uint32_t conn = 0;
    unsigned r;

    switch (tbrdma_wire_peek_conn(frame, byte_len, chan, &conn)) {
    case TBRDMA_FRAME_OK:
        break;
    case TBRDMA_FRAME_SHORT:
        return TBRDMA_ROUTE_SHORT;
    default:
        return TBRDMA_ROUTE_BAD_HDR;
    }
    r = tbrdma_route_conn_rank(conn);
    if (TBRDMA_ROUTE_AGENT == r) {
        return TBRDMA_ROUTE_TO_AGENT;
    }
    if (!tbrdma_route_live(t, r) && !TBRDMA_MUTANT(ROUTE_DEPARTED)) {
        return TBRDMA_ROUTE_NO_RANK;
    }
    *rank_p = r;
    return TBRDMA_ROUTE_TO_RANK;
}

const char *tbrdma_route_outcome_name(tbrdma_route_outcome_t o)
{
    static const char *names[TBRDMA_ROUTE_OUTCOMES] = {
        [TBRDMA_ROUTE_TO_RANK] = "to a rank",    [TBRDMA_ROUTE_TO_AGENT] = "to the agent",
        [TBRDMA_ROUTE_SHORT] = "short frame",    [TBRDMA_ROUTE_BAD_HDR] = "bad header",
        [TBRDMA_ROUTE_NO_RANK] = "no such rank",
    };

    return (o < TBRDMA_ROUTE_OUTCOMES) ? names[o] : "unknown outcome";
}

int tbrdma_vuc_init(tbrdma_vuc_t *v, uint32_t cap)
{
    *v = (tbrdma_vuc_t){0};
    if (0 == cap) {
        return -EINVAL;
    }
    v->q = calloc(cap, sizeof(*v->q));
    if (NULL == v->q) {
        return -ENOMEM;
    }
    v->cap = cap;
    return 0;
}

void tbrdma_vuc_fini(tbrdma_vuc_t *v)
{
    free(v->q);
    *v = (tbrdma_vuc_t){0};
}

int tbrdma_vuc_post_buf(tbrdma_vuc_t *v, uint64_t wr_id, void *addr, uint32_t len)
{
    if (v->count == v->cap) {
        return -ENOMEM;
    }
    v->q[(v->head + v->count) % v->cap] =
        (tbrdma_vuc_recv_t){.wr_id = wr_id, .addr = addr, .len = len};
    v->count++;
    return 0;
}

int tbrdma_vuc_post(tbrdma_vuc_t *v, uint64_t wr_id, uint32_t len)
{
    return tbrdma_vuc_post_buf(v, wr_id, NULL, len);
}

tbrdma_vuc_verdict_t tbrdma_vuc_arrive(tbrdma_vuc_t *v, uint32_t byte_len, tbrdma_vuc_recv_t *rcv)
{
    if (0 == v->count) {
        v->dropped++;
        return TBRDMA_VUC_DROP;
    }
    *rcv = v->q[v->head];
    v->head = (v->head + 1) % v->cap;
    v->count--;
    /* Apple's frame rule (libtbsim's frame_rule_ok): the same frame count, and room for it */
    if ((tbrdma_wire_frames(byte_len) != tbrdma_wire_frames(rcv->len) || byte_len > rcv->len)
        && !TBRDMA_MUTANT(VUC_FRAME_RULE_OFF)) {
        v->len_errors++;
        return TBRDMA_VUC_LEN_ERR;
    }
    return TBRDMA_VUC_DELIVER;
}
