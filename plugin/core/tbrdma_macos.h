/*
 * Readers of the macOS tools' output that tbrdma's operator tools rely on (tbrdma-doctor,
 * tbrdma-setup): the Thunderbolt topology of `system_profiler -json SPThunderboltDataType`,
 * `networksetup -listallhardwareports`, `-listnetworkserviceorder` and `-getinfo`, and the
 * application firewall's `socketfilterfw --getglobalstate`. Pure text in, facts out: the tools
 * run the commands on the Mac (or read recorded outputs, test/samples/macos/) and call these.
 * The formats are Apple's (documented by the tools' help and seen in public captures); fields
 * this code does not need are ignored, unknown text yields "unknown", never a guess.
 */
#ifndef TBRDMA_MACOS_H
#define TBRDMA_MACOS_H

#include "tbrdma_types.h"

#define TBRDMA_MACOS_TEXT_MAX 64 /* a bus, port or service name, a UUID, with the NUL */

/* One Thunderbolt bus (one port of the Mac) of SPThunderboltDataType. */
typedef struct tbrdma_tb_bus {
    char name[TBRDMA_MACOS_TEXT_MAX];        /* "thunderboltusb4_bus_1" */
    char domain_uuid[TBRDMA_MACOS_TEXT_MAX]; /* this port's domain UUID */
    int receptacle;                          /* receptacle_id_key: "Thunderbolt N" is port N */
    int connected;                           /* receptacle_status_key is receptacle_connected */
    int speed_gbps;                          /* N of current_speed_key ("80 Gb/s"), 0 unknown */
    int speed_is_max;                        /* "Up to N Gb/s": nothing linked, N is the port's */
    char peer_uuid[TBRDMA_MACOS_TEXT_MAX];   /* domain UUID of the Mac at the other end, "" */
    char peer_name[TBRDMA_MACOS_TEXT_MAX];   /* its "_name" ("Mac Studio"), "" */
} tbrdma_tb_bus_t;

/*
 * Reads the buses of `system_profiler -json SPThunderboltDataType` (up to max). A bus's peer is
 * the first item under it with a domain UUID: another Mac (a drive or dock has none). Returns
 * the number of buses, or -EINVAL with err saying why (not JSON, no SPThunderboltDataType).
 */
int tbrdma_macos_tb_buses(const char *json, tbrdma_tb_bus_t *buses, int max, char *err,
                          size_t errlen);

/*
 * The Thunderbolt generation a bus shows: 5 when it links at (or, unlinked, offers) 80 Gb/s or
 * more, 4 below that (a Thunderbolt 4 port, cable or peer), 0 when the speed is unknown.
 */
int tbrdma_macos_tb_generation(const tbrdma_tb_bus_t *bus);

/* One "Hardware Port" of `networksetup -listallhardwareports`. */
typedef struct tbrdma_hwport {
    char port[TBRDMA_MACOS_TEXT_MAX]; /* "Thunderbolt 1", "Thunderbolt Bridge", "Wi-Fi" */
    char device[TBRDMA_NAME_MAX];     /* "en2" */
    char mac[24];                     /* "Ethernet Address", "" when absent or N/A */
} tbrdma_hwport_t;

/* Reads the hardware ports (up to max); returns their number (0 for foreign text). */
int tbrdma_macos_hwports(const char *text, tbrdma_hwport_t *ports, int max);

/* N of a hardware port named "Thunderbolt N" (the receptacle), 0 for any other name. */
int tbrdma_macos_hwport_receptacle(const char *port);

/* One network service of `networksetup -listnetworkserviceorder`. */
typedef struct tbrdma_netservice {
    char name[TBRDMA_MACOS_TEXT_MAX]; /* "Thunderbolt Bridge", "tbrdma en2" */
    int enabled;                      /* 0 when listed as "(*) name" */
    char port[TBRDMA_MACOS_TEXT_MAX]; /* its hardware port */
    char device[TBRDMA_NAME_MAX];     /* its device ("bridge0", "en2"), "" when none */
} tbrdma_netservice_t;

/* Reads the services (up to max) in service order; returns their number. */
int tbrdma_macos_services(const char *text, tbrdma_netservice_t *svcs, int max);

/* IPv4 configuration of a service, from `networksetup -getinfo SERVICE`. */
typedef enum tbrdma_svc_config {
    TBRDMA_SVC_UNKNOWN = 0,
    TBRDMA_SVC_MANUAL, /* "Manual Configuration" */
    TBRDMA_SVC_DHCP,   /* "DHCP Configuration" (link-local 169.254/16 without a server) */
    TBRDMA_SVC_OTHER   /* BOOTP, "DHCP with a manual address", IPv4 off */
} tbrdma_svc_config_t;

typedef struct tbrdma_svcinfo {
    tbrdma_svc_config_t config;
    int has_ipv4;  /* "IP address:" holds an address */
    uint32_t ipv4; /* host byte order */
    int prefix;    /* from "Subnet mask:", -1 when absent or not contiguous */
} tbrdma_svcinfo_t;

/* Reads one -getinfo output; returns 0, or -EINVAL when it is not one (e.g. "** Error"). */
int tbrdma_macos_getinfo(const char *text, tbrdma_svcinfo_t *info_p);

/* socketfilterfw --getglobalstate: the "(State = N)" value (0 off, 1 on, 2 block all), -1. */
int tbrdma_macos_firewall_state(const char *text);

#endif /* TBRDMA_MACOS_H */
