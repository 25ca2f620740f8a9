/*
 * Unit tests of plugin/core/tbrdma_diag.c: the order in which port problems are diagnosed, the
 * content of each message (host, device, interface, the cause and the fix commands), the
 * snprintf-like length contract under truncation, and the interface Apple pairs with a device.
 */
#include "tbrdma_diag.h"
#include "tbrdma_gid.h"

#include "ut_run.h"

#include <CUnit/Basic.h>
#include <string.h>

#define MSG_MAX 2048

/* A usable Apple port: rdma_en3/en3, ACTIVE, 192.168.3.1/30, table fe80::, mapped, empty. */
static void make_port(tbrdma_port_info_t *port)
{
    memset(port, 0, sizeof(*port));
    strcpy(port->device, "rdma_en3");
    port->port_num = 1;
    port->state = TBRDMA_PORT_STATE_ACTIVE;
    port->link_layer = TBRDMA_LINK_LAYER_THUNDERBOLT;
    port->active_mtu = 5;
    strcpy(port->ifname, "en3");
    port->if_up = 1;
    port->has_ipv4 = 1;
    port->ipv4 = 0xc0a80301u;
    port->prefix = 30;
    port->gid_count = 3;
    tbrdma_gid_parse("fe80::1c2b:3aff:fe4d:5e6f", &port->gids[0]);
    tbrdma_gid_from_ipv4(port->ipv4, &port->gids[1]);
    port->gid_index = 1;
}

static int contains(const char *msg, const char *part)
{
    return NULL != strstr(msg, part);
}

static void test_diag_port_ok(void)
{
    tbrdma_port_info_t port;
    char msg[MSG_MAX];

    make_port(&port);
    CU_ASSERT(TBRDMA_DIAG_OK == tbrdma_diag_port(&port));
    CU_ASSERT_STRING_EQUAL(tbrdma_diag_name(TBRDMA_DIAG_OK), "ok");
    tbrdma_diag_port_message(&port, TBRDMA_DIAG_OK, "mac-a", msg, sizeof(msg));
    CU_ASSERT(contains(msg, "host mac-a: device rdma_en3 (interface en3): usable"));
    CU_ASSERT(contains(msg, "::ffff:192.168.3.1"));
}

/* Every problem present at once: each fix reveals the next, in enum order. */
static void test_diag_port_order(void)
{
    tbrdma_port_info_t port;

    make_port(&port);
    strcpy(port.bridge, "bridge0");
    port.state = TBRDMA_PORT_STATE_DOWN;
    port.ifname[0] = '\0';
    port.has_ipv4 = 0;
    port.gid_index = -1;
    CU_ASSERT(TBRDMA_DIAG_BRIDGED == tbrdma_diag_port(&port));
    port.bridge[0] = '\0';
    CU_ASSERT(TBRDMA_DIAG_PORT_DOWN == tbrdma_diag_port(&port));
    port.state = TBRDMA_PORT_STATE_ACTIVE;
    CU_ASSERT(TBRDMA_DIAG_NO_INTERFACE == tbrdma_diag_port(&port));
    strcpy(port.ifname, "en3");
    CU_ASSERT(TBRDMA_DIAG_NO_IPV4 == tbrdma_diag_port(&port));
    port.has_ipv4 = 1;
    CU_ASSERT(TBRDMA_DIAG_NO_MAPPED_GID == tbrdma_diag_port(&port));
    port.gid_index = 1;
    CU_ASSERT(TBRDMA_DIAG_OK == tbrdma_diag_port(&port));
}

static void test_diag_name_all(void)
{
    CU_ASSERT_STRING_EQUAL(tbrdma_diag_name(TBRDMA_DIAG_BRIDGED), "bridged");
    CU_ASSERT_STRING_EQUAL(tbrdma_diag_name(TBRDMA_DIAG_PORT_DOWN), "port-down");
    CU_ASSERT_STRING_EQUAL(tbrdma_diag_name(TBRDMA_DIAG_NO_INTERFACE), "no-interface");
    CU_ASSERT_STRING_EQUAL(tbrdma_diag_name(TBRDMA_DIAG_NO_IPV4), "no-ipv4");
    CU_ASSERT_STRING_EQUAL(tbrdma_diag_name(TBRDMA_DIAG_NO_MAPPED_GID), "no-mapped-gid");
    CU_ASSERT_STRING_EQUAL(tbrdma_diag_name(TBRDMA_DIAG_COUNT), "unknown");
}

static void test_diag_message_bridged(void)
{
    tbrdma_port_info_t port;
    char msg[MSG_MAX];

    make_port(&port);
    strcpy(port.bridge, "bridge0");
    tbrdma_diag_port_message(&port, TBRDMA_DIAG_BRIDGED, "mac-a", msg, sizeof(msg));
    CU_ASSERT(contains(msg, "host mac-a: device rdma_en3 (interface en3): "));
    CU_ASSERT(
        contains(msg, "interface en3 is a member of bridge bridge0 (the Thunderbolt Bridge)"));
    CU_ASSERT(contains(msg, "must not be bridged"));
    CU_ASSERT(contains(msg, "System Settings > Network > Thunderbolt Bridge > Make Inactive"));
    CU_ASSERT(contains(msg, "`sudo ifconfig bridge0 deletem en3`"));
    CU_ASSERT(contains(msg, "`sudo ifconfig bridge0 down`"));
    CU_ASSERT(contains(msg, "give en3 its own address"));
    CU_ASSERT(NULL == strchr(msg, '\n')); /* one message, one line */
}

static void test_diag_message_port_down(void)
{
    tbrdma_port_info_t port;
    char msg[MSG_MAX];

    make_port(&port);
    port.state = TBRDMA_PORT_STATE_DOWN;
    tbrdma_diag_port_message(&port, TBRDMA_DIAG_PORT_DOWN, "mac-b", msg, sizeof(msg));
    CU_ASSERT(contains(msg, "host mac-b: device rdma_en3 (interface en3): port state DOWN"));
    CU_ASSERT(contains(msg, "no cable"));
    CU_ASSERT(contains(msg, "RDMA disabled"));
    CU_ASSERT(contains(msg, "Thunderbolt Bridge active"));
    CU_ASSERT(contains(msg, "Thunderbolt 4 cable"));
    CU_ASSERT(contains(msg, "`rdma_ctl status` on both Macs"));
}

static void test_diag_message_no_interface(void)
{
    tbrdma_port_info_t port;
    char msg[MSG_MAX];

    make_port(&port);
    strcpy(port.device, "rdma_en5");
    port.ifname[0] = '\0';
    tbrdma_diag_port_message(&port, TBRDMA_DIAG_NO_INTERFACE, NULL, msg, sizeof(msg));
    CU_ASSERT(0 == strncmp(msg, "device rdma_en5 (no interface): ", 32)); /* no host given */
    CU_ASSERT(contains(msg, "no network interface pairs with the device"));
    CU_ASSERT(contains(msg, "(expected en5 for rdma_en5)"));
    CU_ASSERT(!contains(msg, "host "));
}

/* Apple's device name to its interface: the prefix stripped once; any other name as it is. */
static void test_diag_iface_of(void)
{
    const char *bare = "rdma_", *empty = "", *other = "mlx5_0", *partial = "rdma";

    CU_ASSERT_STRING_EQUAL(tbrdma_diag_iface_of("rdma_en2"), "en2");
    CU_ASSERT_STRING_EQUAL(tbrdma_diag_iface_of("rdma_rdma_en2"), "rdma_en2");
    CU_ASSERT_PTR_EQUAL(tbrdma_diag_iface_of(other), other); /* the same string, unchanged */
    CU_ASSERT_PTR_EQUAL(tbrdma_diag_iface_of(partial), partial);
    CU_ASSERT_PTR_EQUAL(tbrdma_diag_iface_of(empty), empty);
    CU_ASSERT_PTR_EQUAL(tbrdma_diag_iface_of(bare), bare + 5); /* the prefix alone: "" */
    CU_ASSERT_STRING_EQUAL(tbrdma_diag_iface_of(bare), "");
}

static void test_diag_message_no_ipv4(void)
{
    tbrdma_port_info_t port;
    char msg[MSG_MAX];

    make_port(&port);
    strcpy(port.device, "rdma_en4");
    strcpy(port.ifname, "en4");
    port.has_ipv4 = 0;
    port.gid_index = -1;
    tbrdma_diag_port_message(&port, TBRDMA_DIAG_NO_IPV4, "mac-c", msg, sizeof(msg));
    CU_ASSERT(contains(msg, "host mac-c: device rdma_en4 (interface en4): "));
    CU_ASSERT(contains(msg, "interface en4 has no IPv4 address"));
    CU_ASSERT(contains(msg, "::ffff:a.b.c.d"));
    CU_ASSERT(contains(msg, "Changing queue pair to RTR failed with errno 22"));
    CU_ASSERT(contains(msg, "EINVAL"));
    CU_ASSERT(contains(msg, "macOS 26.2 does not self-assign"));
    CU_ASSERT(contains(msg, "169.254/16"));
    CU_ASSERT(contains(msg, "`networksetup -createnetworkservice \"TB en4\" en4; networksetup "
                            "-setdhcp \"TB en4\"`"));
    CU_ASSERT(contains(msg, "`sudo ifconfig en4 inet 192.168.X.1 netmask 255.255.255.252`"));
    CU_ASSERT(contains(msg, "tbrdma-setup"));
    CU_ASSERT(!contains(msg, "once it exists"));
}

static void test_diag_message_no_mapped_gid(void)
{
    tbrdma_port_info_t port;
    char msg[MSG_MAX];

    make_port(&port);
    memset(&port.gids[1], 0, sizeof(port.gids[1])); /* the mapped entry vanished */
    port.gid_index = -1;
    tbrdma_diag_port_message(&port, TBRDMA_DIAG_NO_MAPPED_GID, "mac-d", msg, sizeof(msg));
    CU_ASSERT(contains(msg, "host mac-d: device rdma_en3 (interface en3): "));
    CU_ASSERT(contains(msg, "has IPv4 192.168.3.1/30 but the GID table has no ::ffff:192.168.3.1"));
    CU_ASSERT(contains(msg, "gid[0] fe80::1c2b:3aff:fe4d:5e6f, gid[1] ::, gid[2] ::"));
    CU_ASSERT(contains(msg, "re-add the address"));
    CU_ASSERT(contains(msg, "re-plug the cable"));
    CU_ASSERT(contains(msg, "persists"));

    port.gid_count = 0;
    tbrdma_diag_port_message(&port, TBRDMA_DIAG_NO_MAPPED_GID, "mac-d", msg, sizeof(msg));
    CU_ASSERT(contains(msg, "the GID table is empty"));
}

static void test_diag_message_no_library(void)
{
    char msg[MSG_MAX];

    tbrdma_diag_no_library_message("mac-a", "/usr/lib/librdma.dylib", "image not found", msg,
                                   sizeof(msg));
    CU_ASSERT(contains(msg, "host mac-a: cannot load the verbs library /usr/lib/librdma.dylib "
                            "(image not found)"));
    CU_ASSERT(contains(msg, "macOS 26.2 or later (librdma.dylib)"));
    CU_ASSERT(contains(msg, "rdma-core on Linux"));
    CU_ASSERT(contains(msg, "btl_tbrdma_verbs_lib"));
}

static void test_diag_message_no_devices(void)
{
    char msg[MSG_MAX];

    tbrdma_diag_no_devices_message(NULL, "librdma.dylib", msg, sizeof(msg));
    CU_ASSERT(0 == strncmp(msg, "the verbs library librdma.dylib lists no RDMA device", 52));
    CU_ASSERT(contains(msg, "RDMA is disabled"));
    CU_ASSERT(contains(msg, "`rdma_ctl enable`, then reboot"));
    CU_ASSERT(contains(msg, "`rdma_ctl status`"));
    CU_ASSERT(contains(msg, "`ibv_devices`"));
    CU_ASSERT(contains(msg, "no Thunderbolt 5 ports"));
}

/* Every buffer size yields a NUL-terminated prefix of the full text, and the same length. */
static void test_diag_message_truncation(void)
{
    tbrdma_port_info_t port;
    char full[MSG_MAX], small[MSG_MAX];
    size_t need, n, len;

    make_port(&port);
    port.has_ipv4 = 0;
    need = tbrdma_diag_port_message(&port, TBRDMA_DIAG_NO_IPV4, "mac-a", full, sizeof(full));
    CU_ASSERT(need == strlen(full));
    CU_ASSERT(need < sizeof(full));
    CU_ASSERT(need == tbrdma_diag_port_message(&port, TBRDMA_DIAG_NO_IPV4, "mac-a", NULL, 0));
    for (len = 1; len <= need + 1; len++) {
        memset(small, 'x', sizeof(small));
        n = tbrdma_diag_port_message(&port, TBRDMA_DIAG_NO_IPV4, "mac-a", small, len);
        CU_ASSERT(n == need);
        CU_ASSERT(strlen(small) == ((len <= need) ? len - 1 : need));
        CU_ASSERT(0 == strncmp(small, full, strlen(small)));
        CU_ASSERT('x' == small[len]); /* nothing written past len */
    }
    need = tbrdma_diag_no_devices_message("mac-a", "librdma.dylib", NULL, 0);
    CU_ASSERT(need == tbrdma_diag_no_devices_message("mac-a", "librdma.dylib", full, sizeof(full)));
    CU_ASSERT(need == strlen(full));
    n = tbrdma_diag_no_library_message("mac-a", "x", "y", small, 10);
    CU_ASSERT(n == tbrdma_diag_no_library_message("mac-a", "x", "y", full, sizeof(full)));
    CU_ASSERT(n == strlen(full));
    CU_ASSERT(9 == strlen(small));
    CU_ASSERT(0 == strncmp(small, full, 9));
}

static const tbrdma_ut_test_t tests[] = {
    TBRDMA_UT_TEST(test_diag_port_ok),
    TBRDMA_UT_TEST(test_diag_port_order),
    TBRDMA_UT_TEST(test_diag_name_all),
    TBRDMA_UT_TEST(test_diag_message_bridged),
    TBRDMA_UT_TEST(test_diag_message_port_down),
    TBRDMA_UT_TEST(test_diag_message_no_interface),
    TBRDMA_UT_TEST(test_diag_iface_of),
    TBRDMA_UT_TEST(test_diag_message_no_ipv4),
    TBRDMA_UT_TEST(test_diag_message_no_mapped_gid),
    TBRDMA_UT_TEST(test_diag_message_no_library),
    TBRDMA_UT_TEST(test_diag_message_no_devices),
    TBRDMA_UT_TEST(test_diag_message_truncation),
    TBRDMA_UT_END,
};

int main(void)
{
    return tbrdma_ut_run("tbrdma_diag", tests);
}
