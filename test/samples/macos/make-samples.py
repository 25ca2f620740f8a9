#!/usr/bin/env python3
"""Writes the recorded macOS command outputs of test/samples/macos (see README.md there).

The formats are those of macOS's own tools as publicly documented and captured (README.md
names the sources); the values describe 4 Mac Studios cabled as tbcluster's 4-host full mesh
(mac-a en2 <-> mac-b en2, mac-a en3 <-> mac-c en2, ...), so that the simulated cluster and the
samples agree. Run it from anywhere; it rewrites the files next to it. Deterministic.
"""
import json
import os
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
HOSTS = ["mac-a", "mac-b", "mac-c", "mac-d"]
PORTS = 6  # Thunderbolt 1..6 -> en2..en7 (M3 Ultra Mac Studio)


def uid(*parts):
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, "tbrdma." + ".".join(parts))).upper()


def cables():
    """tbcluster's order: pairs a-b, a-c, ..., each host numbering its ports en2, en3, ..."""
    nxt = {h: 2 for h in HOSTS}
    out = []
    for i, a in enumerate(HOSTS):
        for b in HOSTS[i + 1:]:
            out.append((a, "en%d" % nxt[a], b, "en%d" % nxt[b]))
            nxt[a] += 1
            nxt[b] += 1
    return out


def addresses():
    """tbcluster's p2p plan: cable k gets 192.168.0.(4k+1) and (4k+2), /30."""
    addr = {}
    for k, (a, ia, b, ib) in enumerate(cables()):
        addr[(a, ia)] = "192.168.0.%d" % (4 * k + 1)
        addr[(b, ib)] = "192.168.0.%d" % (4 * k + 2)
    return addr


def bus_uuid(host, receptacle):
    return uid(host, "bus", str(receptacle))


def peer_of(host, ifname):
    for a, ia, b, ib in cables():
        if (a, ia) == (host, ifname):
            return b, ib
        if (b, ib) == (host, ifname):
            return a, ia
    return None


def system_profiler(host, speeds=None, unplugged=()):
    speeds = speeds or {}
    buses = []
    for r in range(PORTS, 0, -1):  # system_profiler lists the highest bus first
        ifname = "en%d" % (r + 1)
        peer = None if ifname in unplugged else peer_of(host, ifname)
        bus = {"_name": "thunderboltusb4_bus_%d" % (r - 1), "device_name_key": "Mac Studio",
               "domain_uuid_key": bus_uuid(host, r)}
        tag = {"current_speed_key": "Up to 120 Gb/s", "link_status_key": "0x100",
               "micro_version_key": "0.0.0", "receptacle_id_key": str(r),
               "receptacle_status_key": "receptacle_no_devices_connected"}
        if peer:
            tag.update(current_speed_key=speeds.get(ifname, "80 Gb/s"), link_status_key="0x2",
                       receptacle_status_key="receptacle_connected")
            bus["_items"] = [{
                "_name": "Mac Studio", "device_id_key": "0xA", "device_name_key": "Mac15,14",
                "domain_uuid_key": bus_uuid(peer[0], int(peer[1][2:]) - 1),
                "services_title": [{"_name": "service_ip", "protocol_id_key": 1,
                                    "protocol_revision_key": 1, "protocol_version_key": 1,
                                    "service_uuid_key": uid(host, ifname, "ip")}],
                "vendor_id_key": "0x0A27", "vendor_name_key": "Apple Inc."}]
        bus["receptacle_1_tag"] = tag
        bus["route_string_key"] = "0"
        bus["switch_uid_key"] = "0x05AC%012X" % (0x714E4ABE9810 + HOSTS.index(host) * 16 + r)
        bus["vendor_name_key"] = "Apple Inc."
        buses.append(bus)
    return json.dumps({"SPThunderboltDataType": buses}, indent=2, separators=(",", " : ")) + "\n"


def mac_of(host, ifname):
    return "36:%02x:04:ea:4e:%02x" % (0x40 + HOSTS.index(host), int(ifname[2:]))


def hardware_ports(host, swap=()):
    out = ["", "Hardware Port: Ethernet", "Device: en0",
           "Ethernet Address: 1c:57:dc:%02x:00:01" % HOSTS.index(host), "",
           "Hardware Port: Wi-Fi", "Device: en1",
           "Ethernet Address: 1c:57:dc:%02x:00:02" % HOSTS.index(host), ""]
    for r in range(1, PORTS + 1):
        ifname = "en%d" % (r + 1)
        if ifname in swap:  # the two devices trade receptacles (cables crossed)
            ifname = swap[1 - swap.index(ifname)]
        out += ["Hardware Port: Thunderbolt %d" % r, "Device: %s" % ifname,
                "Ethernet Address: %s" % mac_of(host, ifname), ""]
    out += ["Hardware Port: Thunderbolt Bridge", "Device: bridge0",
            "Ethernet Address: 36:%02x:04:ea:4e:00" % (0x40 + HOSTS.index(host)), "",
            "VLAN Configurations", "==================="]
    return "\n".join(out) + "\n"


def services(host, state, bridge_on=False, drop=()):
    """state: 'factory' (the Thunderbolt Bridge holds the ports) or 'setup' (tbrdma-setup ran)."""
    svcs = [("Ethernet", "Ethernet", "en0", True), ("Wi-Fi", "Wi-Fi", "en1", True),
            ("Thunderbolt Bridge", "Thunderbolt Bridge", "bridge0", state == "factory" or bridge_on)]
    if state == "setup":
        for ifname in sorted(i for (h, i) in addresses() if h == host and i not in drop):
            svcs.append(("tbrdma %s" % ifname, "Thunderbolt %d" % (int(ifname[2:]) - 1), ifname,
                         True))
    order = ["An asterisk (*) denotes that a network service is disabled."]
    names = ["An asterisk (*) denotes that a network service is disabled."]
    for n, (name, port, dev, on) in enumerate(svcs, 1):
        order += ["(%s) %s" % (n if on else "*", name),
                  "(Hardware Port: %s, Device: %s)" % (port, dev), ""]
        names.append(("" if on else "*") + name)
    return "\n".join(order) + "\n", "\n".join(names) + "\n", svcs


def getinfo(host, name, dev, state):
    if name == "Ethernet":
        return ("DHCP Configuration\nIP address: 10.0.1.%d\nSubnet mask: 255.255.255.0\n"
                "Router: 10.0.1.254\nClient ID: \nIPv6: Automatic\nIPv6 IP address: none\n"
                "IPv6 Router: none\nEthernet Address: 1c:57:dc:%02x:00:01\n"
                % (11 + HOSTS.index(host), HOSTS.index(host)))
    if name == "Wi-Fi":
        return ("DHCP Configuration\nClient ID: \nIPv6: Automatic\nIPv6 IP address: none\n"
                "IPv6 Router: none\nWi-Fi ID: 1c:57:dc:%02x:00:02\n" % HOSTS.index(host))
    if name == "Thunderbolt Bridge":
        return ("DHCP Configuration\nIP address: 169.254.%d.%d\nSubnet mask: 255.255.0.0\n"
                "Router: (null)\nClient ID: \nIPv6: Automatic\nIPv6 IP address: none\n"
                "IPv6 Router: none\nEthernet Address: 36:%02x:04:ea:4e:00\n"
                % (100 + HOSTS.index(host), 7, 0x40 + HOSTS.index(host)))
    return ("Manual Configuration\nIP address: %s\nSubnet mask: 255.255.255.252\nRouter: (null)\n"
            "IPv6: Automatic\nIPv6 IP address: none\nIPv6 Router: none\nEthernet Address: %s\n"
            % (addresses()[(host, dev)], mac_of(host, dev)))


def ifconfig_bridge0(host, state):
    """ifconfig bridge0: the Thunderbolt Bridge, holding every Thunderbolt port in 'factory'."""
    out = ["bridge0: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500",
           "\toptions=63<RXCSUM,TXCSUM,TSO4,TSO6>",
           "\tether 36:%02x:04:ea:4e:00" % (0x40 + HOSTS.index(host)),
           "\tConfiguration:",
           "\t\tid 0:0:0:0:0:0 priority 0 hellotime 0 fwddelay 0",
           "\t\tmaxage 0 holdcnt 0 proto stp maxaddr 100 timeout 1200",
           "\t\troot id 0:0:0:0:0:0 priority 0 ifcost 0 port 0",
           "\t\tipfilter disabled flags 0x0"]
    if state == "factory":
        for r in range(1, PORTS + 1):
            out += ["\tmember: en%d flags=3<LEARNING,DISCOVER>" % (r + 1),
                    "\t        ifmaxaddr 0 port %d priority 0 path cost 0" % (r + 7)]
    out += ["\tnd6 options=201<PERFORMNUD,DAD>", "\tmedia: <unknown type>",
            "\tstatus: %s" % ("active" if state == "factory" else "inactive")]
    return "\n".join(out) + "\n"


def fake_name(*words):
    """tbrdma-probe's --fake-macos file name: the words joined by _, other characters _."""
    key = "_".join([os.path.basename(words[0])] + list(words[1:]))
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in key)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def write_host(root, host, state, speeds=None, firewall=0, bridge_on=False, drop=(), swap=(),
               unplugged=()):
    d = os.path.join(root, host)
    write(os.path.join(d, fake_name("system_profiler", "-json", "SPThunderboltDataType")),
          system_profiler(host, speeds, unplugged))
    write(os.path.join(d, fake_name("networksetup", "-listallhardwareports")),
          hardware_ports(host, swap))
    order, names, svcs = services(host, state, bridge_on, drop)
    write(os.path.join(d, fake_name("networksetup", "-listnetworkserviceorder")), order)
    write(os.path.join(d, fake_name("networksetup", "-listallnetworkservices")), names)
    for name, _port, dev, _on in svcs:
        write(os.path.join(d, fake_name("networksetup", "-getinfo", name)),
              getinfo(host, name, dev, state))
    write(os.path.join(d, fake_name("ifconfig", "bridge0")), ifconfig_bridge0(host, state))
    states = {0: "Firewall is disabled. (State = 0)\n", 1: "Firewall is enabled. (State = 1)\n"}
    write(os.path.join(d, fake_name("/usr/libexec/ApplicationFirewall/socketfilterfw",
                                    "--getglobalstate")), states[firewall])


def main():
    for host in HOSTS:
        write_host(os.path.join(HERE, "cluster4"), host, "setup")
        write_host(os.path.join(HERE, "factory4"), host, "factory")
    # variants: the files that differ from cluster4, copied over it by the tests
    v = os.path.join(HERE, "variants")
    write_host(os.path.join(v, "tb4"), "mac-b", "setup", speeds={"en3": "40 Gb/s"})
    write_host(os.path.join(v, "tb4"), "mac-c", "setup", speeds={"en3": "40 Gb/s"})
    write_host(os.path.join(v, "firewall"), "mac-c", "setup", firewall=1)
    write_host(os.path.join(v, "bridge-on"), "mac-d", "setup", bridge_on=True)
    write_host(os.path.join(v, "unsaved"), "mac-a", "setup", drop=("en2",))
    write_host(os.path.join(v, "crossed"), "mac-a", "setup", swap=("en2", "en3"))
    write_host(os.path.join(v, "unplugged"), "mac-a", "setup", unplugged=("en4",))
    write_host(os.path.join(v, "unplugged"), "mac-d", "setup", unplugged=("en2",))
    prune(v)


def prune(variants):
    """Keeps in each variant only the files that differ from cluster4's."""
    for root, _dirs, files in os.walk(variants):
        for name in files:
            path = os.path.join(root, name)
            host = os.path.basename(root)
            base = os.path.join(HERE, "cluster4", host, name)
            if os.path.exists(base) and open(base).read() == open(path).read():
                os.remove(path)


if __name__ == "__main__":
    main()
