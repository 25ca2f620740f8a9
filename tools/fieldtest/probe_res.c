/*
 * Every verbs object a probe creates goes through here and is recorded, so that one call,
 * res_release_all(), destroys them all in a safe order after each probe, after a failure or
 * after Ctrl-C: QPs, then MRs (and their buffers), CQs, PDs. Nothing is left held.
 */
#include "probe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define RES_MAX 512

typedef enum { RES_QP, RES_MR, RES_CQ, RES_PD } res_kind_t;

typedef struct res_entry {
    res_kind_t kind;
    void *obj;
    void *buf; /* an MR's buffer */
} res_entry_t;

static res_entry_t res_tab[RES_MAX];
static int res_n;

static int res_add(res_kind_t kind, void *obj, void *buf)
{
    if (RES_MAX == res_n) {
        return -1;
    }
    res_tab[res_n].kind = kind;
    res_tab[res_n].obj = obj;
    res_tab[res_n].buf = buf;
    res_n++;
    return 0;
}

struct ibv_pd *res_pd(probe_env_t *env)
{
    struct ibv_pd *pd = tbrdma_verbs_fn.alloc_pd(env->ctx);

    if (NULL != pd && 0 != res_add(RES_PD, pd, NULL)) {
        tbrdma_verbs_fn.dealloc_pd(pd);
        errno = ENOSPC;
        return NULL;
    }
    return pd;
}

struct ibv_cq *res_cq(probe_env_t *env, int cqe)
{
    struct ibv_cq *cq = tbrdma_verbs_fn.create_cq(env->ctx, cqe, NULL, NULL, 0);

    if (NULL != cq && 0 != res_add(RES_CQ, cq, NULL)) {
        tbrdma_verbs_fn.destroy_cq(cq);
        errno = ENOSPC;
        return NULL;
    }
    return cq;
}

struct ibv_qp *res_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
    struct ibv_qp *qp;

    errno = 0;
    qp = tbrdma_verbs_fn.create_qp(pd, ia);
    if (NULL != qp && 0 != res_add(RES_QP, qp, NULL)) {
        tbrdma_verbs_fn.destroy_qp(qp);
        errno = ENOSPC;
        return NULL;
    }
    return qp;
}

struct ibv_mr *res_mr(struct ibv_pd *pd, size_t len, void **buf_p)
{
    void *buf = NULL;
    struct ibv_mr *mr;

    if (0 != posix_memalign(&buf, PROBE_FRAME, len)) {
        errno = ENOMEM;
        return NULL;
    }
    memset(buf, 0, len);
    errno = 0;
    mr = tbrdma_verbs_fn.reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
    if (NULL == mr || 0 != res_add(RES_MR, mr, buf)) {
        int err = (NULL == mr) ? errno : ENOSPC;

        if (NULL != mr) {
            tbrdma_verbs_fn.dereg_mr(mr);
        }
        free(buf);
        errno = err;
        return NULL;
    }
    *buf_p = buf;
    return mr;
}

void res_drop_qp(struct ibv_qp *qp)
{
    for (int i = 0; i < res_n; i++) {
        if (RES_QP == res_tab[i].kind && qp == res_tab[i].obj) {
            tbrdma_verbs_fn.destroy_qp(qp);
            res_tab[i] = res_tab[--res_n];
            return;
        }
    }
}

static void res_release_kind(res_kind_t kind)
{
    for (int i = res_n - 1; i >= 0; i--) {
        res_entry_t *e = &res_tab[i];

        if (kind != e->kind) {
            continue;
        }
        switch (kind) {
        case RES_QP:
            tbrdma_verbs_fn.destroy_qp(e->obj);
            break;
        case RES_MR:
            tbrdma_verbs_fn.dereg_mr(e->obj);
            free(e->buf);
            break;
        case RES_CQ:
            tbrdma_verbs_fn.destroy_cq(e->obj);
            break;
        case RES_PD:
            tbrdma_verbs_fn.dealloc_pd(e->obj);
            break;
        }
        res_tab[i] = res_tab[--res_n];
    }
}

void res_release_all(void)
{
    res_release_kind(RES_QP);
    res_release_kind(RES_MR);
    res_release_kind(RES_CQ);
    res_release_kind(RES_PD);
}

int res_held(void)
{
    return res_n;
}
