/*
 * tbsim_devinfo: lists verbs devices like ibv_devices + ibv_devinfo -v, in the terms that
 * matter for Thunderbolt RDMA: port state, link layer, MTU, the non-zero GID table entries,
 * and whether ibv_alloc_pd works (Apple: it returns NULL on a PORT_DOWN device).
 * Plain verbs: runs over libtbsim (LD_PRELOAD) and over rxe alike.
 *
 *   tbsim_devinfo [-d dev]
 *
 * Exit 0 when the list was read (even if empty), 1 on a verbs failure, 2 on usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *port_state_name(int state)
{
    switch (state) {
    case IBV_PORT_DOWN:
        return "PORT_DOWN";
    case IBV_PORT_INIT:
        return "PORT_INIT";
    case IBV_PORT_ARMED:
        return "PORT_ARMED";
    case IBV_PORT_ACTIVE:
        return "PORT_ACTIVE";
    default:
        return "PORT_OTHER";
    }
}

static const char *link_layer_name(int ll)
{
    switch (ll) {
    case IBV_LINK_LAYER_INFINIBAND:
        return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET:
        return "Ethernet";
    case 100:
        return "Thunderbolt";
    default:
        return "Unknown";
    }
}

static void print_gids(struct ibv_context *ctx, int len)
{
    static const uint8_t zero[16] = {0};

    for (int i = 0; i < len; i++) {
        union ibv_gid gid;
        char text[INET6_ADDRSTRLEN];

        if (0 != ibv_query_gid(ctx, 1, i, &gid)) {
            printf("\tGID[%d]: query failed: %s (errno %d)\n", i, strerror(errno), errno);
            continue;
        }
        if (0 == memcmp(gid.raw, zero, 16)) {
            continue;
        }
        inet_ntop(AF_INET6, gid.raw, text, sizeof(text));
        printf("\tGID[%d]: %s\n", i, text);
    }
}

static void probe_pd(struct ibv_context *ctx)
{
    struct ibv_pd *pd = ibv_alloc_pd(ctx);

    if (NULL == pd) {
        printf("\talloc_pd: failed: %s (errno %d)\n", strerror(errno), errno);
        return;
    }
    printf("\talloc_pd: ok\n");
    ibv_dealloc_pd(pd);
}

static int show_device(struct ibv_device *dev)
{
    struct ibv_context *ctx = ibv_open_device(dev);
    struct ibv_device_attr da;
    struct ibv_port_attr pa;
    int rc;

    if (NULL == ctx) {
        printf("device %s: open_device failed: %s (errno %d)\n", ibv_get_device_name(dev),
               strerror(errno), errno);
        return -1;
    }
    rc = ibv_query_device(ctx, &da);
    if (0 == rc) {
        rc = ibv_query_port(ctx, 1, &pa);
    }
    if (0 != rc) {
        printf("device %s: query failed: %s (errno %d)\n", ibv_get_device_name(dev), strerror(rc),
               rc);
        ibv_close_device(ctx);
        return -1;
    }
    printf("device %s node_guid %016llx phys_port_cnt %d max_qp %d max_mr %d max_qp_wr %d "
           "max_sge %d\n",
           ibv_get_device_name(dev), (unsigned long long) be64toh(da.node_guid), da.phys_port_cnt,
           da.max_qp, da.max_mr, da.max_qp_wr, da.max_sge);
    printf("\tport 1: state %s (%d) link_layer %s (%d) active_mtu %d max_mtu %d "
           "gid_tbl_len %d max_msg_sz %u\n",
           port_state_name(pa.state), pa.state, link_layer_name(pa.link_layer), pa.link_layer,
           128 << pa.active_mtu, 128 << pa.max_mtu, pa.gid_tbl_len, pa.max_msg_sz);
    print_gids(ctx, pa.gid_tbl_len);
    probe_pd(ctx);
    ibv_close_device(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    struct ibv_device **list;
    int n = 0;
    int rc = 0;
    int ch;

    while (-1 != (ch = getopt(argc, argv, "d:h"))) {
        if ('d' != ch) {
            fprintf(stderr, "usage: tbsim_devinfo [-d dev]\n");
            return 2;
        }
        only = optarg;
    }
    list = ibv_get_device_list(&n);
    if (NULL == list) {
        fprintf(stderr, "get_device_list failed: %s (errno %d)\n", strerror(errno), errno);
        return 1;
    }
    printf("%d device(s)\n", n);
    for (int i = 0; i < n; i++) {
        if (NULL == only || 0 == strcmp(only, ibv_get_device_name(list[i]))) {
            rc |= show_device(list[i]);
        }
    }
    ibv_free_device_list(list);
    return (0 == rc) ? 0 : 1;
}
