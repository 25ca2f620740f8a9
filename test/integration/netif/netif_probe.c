/*
 * netif_probe: prints what btl_tbrdma_netif says about the interfaces and devices named on the
 * command line, one line each, for run.sh to compare with what it configured:
 *   netif_probe if NAME...      "if NAME rc=R up=U ipv4=A.B.C.D/P|- bridge=B|-"
 *   netif_probe pair DEVICE...  "pair DEVICE rc=R ifname=I|-"
 *   netif_probe hostname        "hostname rc=R name=N"
 */
#include "base/btl_tbrdma_netif.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static void probe_if(const char *name)
{
    tbrdma_port_info_t port;
    char ip[INET_ADDRSTRLEN] = "-";
    struct in_addr addr;
    int rc;

    memset(&port, 0, sizeof(port));
    snprintf(port.ifname, sizeof(port.ifname), "%s", name);
    rc = tbrdma_netif_fill(&port);
    if (port.has_ipv4) {
        addr.s_addr = htonl(port.ipv4);
        inet_ntop(AF_INET, &addr, ip, sizeof(ip));
        snprintf(ip + strlen(ip), sizeof(ip) - strlen(ip), "/%d", port.prefix);
    }
    printf("if %s rc=%d up=%d ipv4=%s bridge=%s\n", name, rc, port.if_up, ip,
           ('\0' != port.bridge[0]) ? port.bridge : "-");
}

static void probe_pair(const char *device)
{
    char ifname[TBRDMA_NAME_MAX] = "";
    int rc = tbrdma_netif_pair(device, 1, ifname, sizeof(ifname));

    printf("pair %s rc=%d ifname=%s\n", device, rc, ('\0' != ifname[0]) ? ifname : "-");
}

int main(int argc, char **argv)
{
    char host[TBRDMA_HOST_MAX] = "";
    int i, rc;

    if (argc < 2) {
        fprintf(stderr, "usage: %s if|pair NAME... | hostname\n", argv[0]);
        return 2;
    }
    if (0 == strcmp(argv[1], "hostname")) {
        rc = tbrdma_netif_hostname(host, sizeof(host));
        printf("hostname rc=%d name=%s\n", rc, host);
        return 0;
    }
    for (i = 2; i < argc; i++) {
        if (0 == strcmp(argv[1], "if")) {
            probe_if(argv[i]);
        } else if (0 == strcmp(argv[1], "pair")) {
            probe_pair(argv[i]);
        } else {
            fprintf(stderr, "%s: unknown command %s\n", argv[0], argv[1]);
            return 2;
        }
    }
    return 0;
}
