/*
 * Diagnostics: decides the first problem of a discovered port and words one message per
 * problem, naming the host, the device, the interface, what is wrong and the fix. All the text
 * users see about a broken Thunderbolt RDMA setup lives here (docs/diagnostics.md mirrors it).
 * Messages follow the snprintf contract: truncated to the buffer, the full length returned.
 */
#include "tbrdma_diag.h"
#include "tbrdma_fmt.h"
#include "tbrdma_gid.h"

#include <string.h>

static const char *const diag_names[TBRDMA_DIAG_COUNT] = {
    [TBRDMA_DIAG_OK] = "ok",
    [TBRDMA_DIAG_BRIDGED] = "bridged",
    [TBRDMA_DIAG_PORT_DOWN] = "port-down",
    [TBRDMA_DIAG_NO_INTERFACE] = "no-interface",
    [TBRDMA_DIAG_NO_IPV4] = "no-ipv4",
    [TBRDMA_DIAG_NO_MAPPED_GID] = "no-mapped-gid",
};

tbrdma_diag_t tbrdma_diag_port(const tbrdma_port_info_t *port)
{
    if ('\0' != port->bridge[0]) {
        return TBRDMA_DIAG_BRIDGED;
    }
    if (TBRDMA_PORT_STATE_ACTIVE != port->state) {
        return TBRDMA_DIAG_PORT_DOWN;
    }
    if ('\0' == port->ifname[0]) {
        return TBRDMA_DIAG_NO_INTERFACE;
    }
    if (!port->has_ipv4) {
        return TBRDMA_DIAG_NO_IPV4;
    }
    if (0 > port->gid_index) {
        return TBRDMA_DIAG_NO_MAPPED_GID;
    }
    return TBRDMA_DIAG_OK;
}

const char *tbrdma_diag_name(tbrdma_diag_t diag)
{
    if (0 > (int) diag || TBRDMA_DIAG_COUNT <= diag) {
        return "unknown";
    }
    return diag_names[diag];
}

/* "host H: " when the host is known. */
static void diag_add_host(tbrdma_fmt_t *fmt, const char *host)
{
    if (NULL != host && '\0' != host[0]) {
        tbrdma_fmt_add(fmt, "host %s: ", host);
    }
}

/* "host H: device D (interface I): " or "... (no interface): ". */
static void diag_add_subject(tbrdma_fmt_t *fmt, const tbrdma_port_info_t *port, const char *host)
{
    diag_add_host(fmt, host);
    if ('\0' != port->ifname[0]) {
        tbrdma_fmt_add(fmt, "device %s (interface %s): ", port->device, port->ifname);
    } else {
        tbrdma_fmt_add(fmt, "device %s (no interface): ", port->device);
    }
}

static void diag_add_ok(tbrdma_fmt_t *fmt, const tbrdma_port_info_t *port)
{
    char gid[TBRDMA_GID_STR_MAX] = "?";

    if (0 <= port->gid_index && port->gid_index < port->gid_count) {
        tbrdma_gid_to_string(&port->gids[port->gid_index], gid, sizeof(gid));
    }
    tbrdma_fmt_add(fmt, "usable: port ACTIVE, GID index %d (%s)", port->gid_index, gid);
}

static void diag_add_bridged(tbrdma_fmt_t *fmt, const tbrdma_port_info_t *port)
{
    const char *br = port->bridge, *ifn = port->ifname;

    tbrdma_fmt_add(fmt,
                   "interface %s is a member of bridge %s (the Thunderbolt Bridge); RDMA ports "
                   "must not be bridged; fix: System Settings > Network > Thunderbolt Bridge > "
                   "Make Inactive (or `sudo ifconfig %s deletem %s` / `sudo ifconfig %s down`), "
                   "then give %s its own address",
                   ifn, br, br, ifn, br, ifn);
}

static void diag_add_port_down(tbrdma_fmt_t *fmt)
{
    tbrdma_fmt_add(fmt, "port state DOWN: no cable on this port, the Mac at the other end has "
                        "RDMA disabled or its Thunderbolt Bridge active, or the cable is a "
                        "Thunderbolt 4 cable; fix: check the cable (Thunderbolt 5) and run "
                        "`rdma_ctl status` on both Macs");
}

static void diag_add_no_interface(tbrdma_fmt_t *fmt, const tbrdma_port_info_t *port)
{
    const char *expected = tbrdma_diag_iface_of(port->device);

    tbrdma_fmt_add(fmt,
                   "no network interface pairs with the device (expected %s for %s); fix: check "
                   "that `ifconfig %s` exists and is up, then report it if it does",
                   expected, port->device, expected);
}

static void diag_add_no_ipv4(tbrdma_fmt_t *fmt, const tbrdma_port_info_t *port)
{
    const char *ifn = port->ifname;

    tbrdma_fmt_add(fmt,
                   "interface %s has no IPv4 address, so the port has no IPv4-mapped GID "
                   "(::ffff:a.b.c.d); raw verbs and MLX JACCL report this as \"Changing queue "
                   "pair to RTR failed with errno 22\" (EINVAL); macOS 26.2 does not self-assign "
                   "one; fix: give the port an address, either a per-port network service with "
                   "DHCP, which self-assigns a link-local 169.254/16 address (`networksetup "
                   "-createnetworkservice \"TB %s\" %s; networksetup -setdhcp \"TB %s\"`; with "
                   "more than one cable per Mac, link-local addresses also need a mesh file, see "
                   "docs/mesh.md), or a manual address and route per port (`sudo ifconfig %s inet "
                   "192.168.X.1 netmask 255.255.255.252`), or tbrdma-setup, which assigns a /30 "
                   "per cable",
                   ifn, ifn, ifn, ifn, ifn);
}

static void diag_add_gid_table(tbrdma_fmt_t *fmt, const tbrdma_port_info_t *port)
{
    char gid[TBRDMA_GID_STR_MAX];
    int i, n = port->gid_count;

    if (TBRDMA_GID_TBL_MAX < n) {
        n = TBRDMA_GID_TBL_MAX;
    }
    if (0 >= n) {
        tbrdma_fmt_add(fmt, "the GID table is empty");
        return;
    }
    for (i = 0; i < n; i++) {
        if (0 != tbrdma_gid_to_string(&port->gids[i], gid, sizeof(gid))) {
            strcpy(gid, "?");
        }
        tbrdma_fmt_add(fmt, "%sgid[%d] %s", (0 == i) ? "" : ", ", i, gid);
    }
}

static void diag_add_no_mapped_gid(tbrdma_fmt_t *fmt, const tbrdma_port_info_t *port)
{
    char ip[16];

    tbrdma_ipv4_to_string(port->ipv4, ip, sizeof(ip));
    tbrdma_fmt_add(fmt, "interface %s has IPv4 %s/%d but the GID table has no ::ffff:%s (",
                   port->ifname, ip, port->prefix, ip);
    diag_add_gid_table(fmt, port);
    tbrdma_fmt_add(fmt,
                   "); fix: re-add the address (`sudo ifconfig %s inet %s/%d`) or re-plug the "
                   "cable, and report it if it persists",
                   port->ifname, ip, port->prefix);
}

size_t tbrdma_diag_port_message(const tbrdma_port_info_t *port, tbrdma_diag_t diag,
                                const char *host, char *buf, size_t len)
{
    tbrdma_fmt_t fmt;

    tbrdma_fmt_init(&fmt, buf, len);
    diag_add_subject(&fmt, port, host);
    switch (diag) {
    case TBRDMA_DIAG_OK:
        diag_add_ok(&fmt, port);
        break;
    case TBRDMA_DIAG_BRIDGED:
        diag_add_bridged(&fmt, port);
        break;
    case TBRDMA_DIAG_PORT_DOWN:
        diag_add_port_down(&fmt);
        break;
    case TBRDMA_DIAG_NO_INTERFACE:
        diag_add_no_interface(&fmt, port);
        break;
    case TBRDMA_DIAG_NO_IPV4:
        diag_add_no_ipv4(&fmt, port);
        break;
    case TBRDMA_DIAG_NO_MAPPED_GID:
        diag_add_no_mapped_gid(&fmt, port);
        break;
    default:
        tbrdma_fmt_add(&fmt, "unknown diagnosis %d", (int) diag);
        break;
    }
    return fmt.used;
}

size_t tbrdma_diag_no_library_message(const char *host, const char *lib, const char *why, char *buf,
                                      size_t len)
{
    tbrdma_fmt_t fmt;

    tbrdma_fmt_init(&fmt, buf, len);
    diag_add_host(&fmt, host);
    tbrdma_fmt_add(&fmt,
                   "cannot load the verbs library %s (%s): RDMA over Thunderbolt needs macOS 26.2 "
                   "or later (librdma.dylib) or rdma-core on Linux; fix: set btl_tbrdma_verbs_lib "
                   "to its path",
                   (NULL != lib) ? lib : "(none)", (NULL != why) ? why : "unknown error");
    return fmt.used;
}

size_t tbrdma_diag_no_devices_message(const char *host, const char *lib, char *buf, size_t len)
{
    tbrdma_fmt_t fmt;

    tbrdma_fmt_init(&fmt, buf, len);
    diag_add_host(&fmt, host);
    tbrdma_fmt_add(&fmt,
                   "the verbs library %s lists no RDMA device: RDMA is disabled (enable it from "
                   "Recovery: `rdma_ctl enable`, then reboot; check with `rdma_ctl status` and "
                   "`ibv_devices`), or this Mac has no Thunderbolt 5 ports (Thunderbolt 4 Macs "
                   "list none)",
                   (NULL != lib) ? lib : "(none)");
    return fmt.used;
}
