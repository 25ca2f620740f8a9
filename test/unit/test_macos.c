/*
 * Unit tests of the macOS output readers (plugin/core/tbrdma_macos.c) on the recorded samples of
 * test/samples/macos (4 Mac Studios cabled as tbcluster's 4-host mesh) and on inline text for
 * the edge cases: a drive on a bus is no peer, CRLF, errors, unknown text.
 */
#include "tbrdma_gid.h"
#include "tbrdma_macos.h"

#include "ut_run.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLE_MAX (256 * 1024)

static char text[SAMPLE_MAX];

/* Reads SAMPLES_DIR/<rel> into text; fails the test when it cannot. */
static const char *sample(const char *rel)
{
    char path[1024];
    FILE *f;
    size_t n = 0;

    snprintf(path, sizeof(path), "%s/%s", SAMPLES_DIR, rel);
    f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

static const tbrdma_tb_bus_t *bus_of(const tbrdma_tb_bus_t *buses, int n, int receptacle)
{
    int i;

    for (i = 0; i < n; i++) {
        if (receptacle == buses[i].receptacle) {
            return &buses[i];
        }
    }
    return NULL;
}

static void test_tb_buses_linked_and_free(void)
{
    tbrdma_tb_bus_t a[16], b[16];
    const tbrdma_tb_bus_t *a1, *b1, *a6;
    char err[256];
    int na, nb;

    na = tbrdma_macos_tb_buses(sample("cluster4/mac-a/system_profiler_-json_SPThunderboltDataType"),
                               a, 16, err, sizeof(err));
    nb = tbrdma_macos_tb_buses(sample("cluster4/mac-b/system_profiler_-json_SPThunderboltDataType"),
                               b, 16, err, sizeof(err));
    CU_ASSERT_EQUAL_FATAL(na, 6);
    CU_ASSERT_EQUAL_FATAL(nb, 6);
    a1 = bus_of(a, na, 1);
    b1 = bus_of(b, nb, 1);
    a6 = bus_of(a, na, 6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a6);
    /* mac-a's Thunderbolt 1 (en2) is cabled to mac-b's Thunderbolt 1: each names the other */
    CU_ASSERT(a1->connected && 80 == a1->speed_gbps && !a1->speed_is_max);
    CU_ASSERT_STRING_EQUAL(a1->peer_uuid, b1->domain_uuid);
    CU_ASSERT_STRING_EQUAL(b1->peer_uuid, a1->domain_uuid);
    CU_ASSERT_STRING_EQUAL(a1->peer_name, "Mac Studio");
    CU_ASSERT_STRING_EQUAL(a1->name, "thunderboltusb4_bus_0");
    CU_ASSERT_EQUAL(tbrdma_macos_tb_generation(a1), 5);
    /* an empty Thunderbolt 5 port offers "Up to 120 Gb/s" */
    CU_ASSERT(!a6->connected && 120 == a6->speed_gbps && a6->speed_is_max);
    CU_ASSERT_STRING_EQUAL(a6->peer_uuid, "");
    CU_ASSERT_EQUAL(tbrdma_macos_tb_generation(a6), 5);
}

static void test_tb_buses_thunderbolt4_link(void)
{
    tbrdma_tb_bus_t b[16];
    const tbrdma_tb_bus_t *b2;
    char err[256];
    int n = tbrdma_macos_tb_buses(
        sample("variants/tb4/mac-b/system_profiler_-json_SPThunderboltDataType"), b, 16, err,
        sizeof(err));

    CU_ASSERT_EQUAL_FATAL(n, 6);
    b2 = bus_of(b, n, 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b2);
    CU_ASSERT_EQUAL(b2->speed_gbps, 40);
    CU_ASSERT_EQUAL(tbrdma_macos_tb_generation(b2), 4);
    CU_ASSERT_EQUAL(tbrdma_macos_tb_generation(bus_of(b, n, 1)), 5);
}

/*
 * A drive under a bus (no domain UUID of its own) is not a Mac at the other end; the first item
 * with a domain UUID is (here behind the drive, as in a daisy chain).
 */
static void test_tb_buses_drive_is_no_peer(void)
{
    static const char json[] =
        "{\"SPThunderboltDataType\": [{\"_name\": \"thunderboltusb4_bus_3\",\n"
        " \"domain_uuid_key\": \"5F771049-70BD-4C30-A4AB-4E50482D82E0\",\n"
        " \"_items\": [{\"_name\": \"Envoy Ultra\", \"switch_uid_key\": \"0x80878DFABA68F800\"}],\n"
        " \"receptacle_1_tag\": {\"current_speed_key\": \"80 Gb/s\", \"receptacle_id_key\": "
        "\"4\",\n"
        "  \"receptacle_status_key\": \"receptacle_connected\"}},\n"
        " {\"_name\": \"thunderboltusb4_bus_1\", \"_items\": [{\"_name\": \"Envoy Ultra\"},\n"
        "  {\"_name\": \"MacBook Pro\", \"domain_uuid_key\": "
        "\"817DCFA4-B481-4100-80FC-91C7AA969F0B\"}]}]}";
    tbrdma_tb_bus_t b[2];
    char err[256];

    CU_ASSERT_EQUAL_FATAL(tbrdma_macos_tb_buses(json, b, 2, err, sizeof(err)), 2);
    CU_ASSERT(b[0].connected);
    CU_ASSERT_EQUAL(b[0].receptacle, 4);
    CU_ASSERT_STRING_EQUAL(b[0].peer_uuid, "");
    CU_ASSERT_STRING_EQUAL(b[1].peer_uuid, "817DCFA4-B481-4100-80FC-91C7AA969F0B");
    CU_ASSERT_STRING_EQUAL(b[1].peer_name, "MacBook Pro");
    CU_ASSERT_EQUAL(b[1].receptacle, 0);
    CU_ASSERT_EQUAL(tbrdma_macos_tb_generation(&b[1]), 0);
}

static void test_tb_buses_errors(void)
{
    tbrdma_tb_bus_t b[2];
    char err[256];

    CU_ASSERT_EQUAL(tbrdma_macos_tb_buses("not json", b, 2, err, sizeof(err)), -EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "system_profiler output: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "line 1 column 1"));
    CU_ASSERT_EQUAL(tbrdma_macos_tb_buses("{\"SPUSBDataType\": []}", b, 2, err, sizeof(err)),
                    -EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no SPThunderboltDataType"));
    CU_ASSERT_EQUAL(
        tbrdma_macos_tb_buses("{\"SPThunderboltDataType\": []}", b, 2, err, sizeof(err)), 0);
}

static void test_hwports(void)
{
    tbrdma_hwport_t p[32];
    int n =
        tbrdma_macos_hwports(sample("cluster4/mac-a/networksetup_-listallhardwareports"), p, 32);

    CU_ASSERT_EQUAL_FATAL(n, 9);
    CU_ASSERT_STRING_EQUAL(p[0].port, "Ethernet");
    CU_ASSERT_STRING_EQUAL(p[0].device, "en0");
    CU_ASSERT_STRING_EQUAL(p[2].port, "Thunderbolt 1");
    CU_ASSERT_STRING_EQUAL(p[2].device, "en2");
    CU_ASSERT_STRING_EQUAL(p[2].mac, "36:40:04:ea:4e:02");
    CU_ASSERT_STRING_EQUAL(p[8].port, "Thunderbolt Bridge");
    CU_ASSERT_STRING_EQUAL(p[8].device, "bridge0");
    CU_ASSERT_EQUAL(tbrdma_macos_hwport_receptacle(p[2].port), 1);
    CU_ASSERT_EQUAL(tbrdma_macos_hwport_receptacle("Thunderbolt 6"), 6);
    CU_ASSERT_EQUAL(tbrdma_macos_hwport_receptacle("Thunderbolt Bridge"), 0);
    CU_ASSERT_EQUAL(tbrdma_macos_hwport_receptacle("Thunderbolt"), 0);
    CU_ASSERT_EQUAL(tbrdma_macos_hwport_receptacle("Thunderbolt 2x"), 0);
    CU_ASSERT_EQUAL(tbrdma_macos_hwport_receptacle("Wi-Fi"), 0);
    /* CRLF and an N/A address */
    n = tbrdma_macos_hwports("Hardware Port: Thunderbolt 2\r\nDevice: en3\r\nEthernet Address: "
                             "N/A\r\n",
                             p, 32);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_STRING_EQUAL(p[0].device, "en3");
    CU_ASSERT_STRING_EQUAL(p[0].mac, "");
}

static void test_services(void)
{
    tbrdma_netservice_t s[32];
    int n = tbrdma_macos_services(sample("cluster4/mac-a/networksetup_-listnetworkserviceorder"), s,
                                  32);

    CU_ASSERT_EQUAL_FATAL(n, 6);
    CU_ASSERT_STRING_EQUAL(s[2].name, "Thunderbolt Bridge");
    CU_ASSERT_EQUAL(s[2].enabled, 0);
    CU_ASSERT_STRING_EQUAL(s[2].device, "bridge0");
    CU_ASSERT_STRING_EQUAL(s[3].name, "tbrdma en2");
    CU_ASSERT_EQUAL(s[3].enabled, 1);
    CU_ASSERT_STRING_EQUAL(s[3].port, "Thunderbolt 1");
    CU_ASSERT_STRING_EQUAL(s[3].device, "en2");
    n = tbrdma_macos_services(sample("factory4/mac-a/networksetup_-listnetworkserviceorder"), s,
                              32);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_STRING_EQUAL(s[2].name, "Thunderbolt Bridge");
    CU_ASSERT_EQUAL(s[2].enabled, 1);
    /* the note line and a "(12) " number are read right */
    n = tbrdma_macos_services("An asterisk (*) denotes that a network service is disabled.\n"
                              "(12) EXO Thunderbolt 1\n(Hardware Port: Thunderbolt 1, Device: "
                              "en2)\n",
                              s, 32);
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_STRING_EQUAL(s[0].name, "EXO Thunderbolt 1");
    CU_ASSERT_STRING_EQUAL(s[0].device, "en2");
}

static void test_getinfo(void)
{
    tbrdma_svcinfo_t info;
    uint32_t want;

    CU_ASSERT_EQUAL_FATAL(
        tbrdma_macos_getinfo(sample("cluster4/mac-a/networksetup_-getinfo_tbrdma_en3"), &info), 0);
    CU_ASSERT_EQUAL(info.config, TBRDMA_SVC_MANUAL);
    CU_ASSERT_EQUAL(tbrdma_ipv4_parse("192.168.0.5", &want, NULL), 0);
    CU_ASSERT(info.has_ipv4 && want == info.ipv4 && 30 == info.prefix);
    CU_ASSERT_EQUAL_FATAL(
        tbrdma_macos_getinfo(sample("cluster4/mac-a/networksetup_-getinfo_Thunderbolt_Bridge"),
                             &info),
        0);
    CU_ASSERT_EQUAL(info.config, TBRDMA_SVC_DHCP);
    CU_ASSERT_EQUAL(info.prefix, 16);
    CU_ASSERT_EQUAL(tbrdma_macos_getinfo("\r\nDHCP Configuration\r\nIP address: none\r\n", &info),
                    0);
    CU_ASSERT(TBRDMA_SVC_DHCP == info.config && !info.has_ipv4 && -1 == info.prefix);
    CU_ASSERT_EQUAL(tbrdma_macos_getinfo("BOOTP Configuration\n", &info), 0);
    CU_ASSERT_EQUAL(info.config, TBRDMA_SVC_OTHER);
    CU_ASSERT_EQUAL(tbrdma_macos_getinfo("Manual Configuration\nSubnet mask: 255.0.255.0\n", &info),
                    0);
    CU_ASSERT_EQUAL(info.prefix, -1);
    info.config = TBRDMA_SVC_MANUAL;
    CU_ASSERT_EQUAL(tbrdma_macos_getinfo("** Error: The parameters were not valid.\n", &info),
                    -EINVAL);
    CU_ASSERT_EQUAL(info.config, TBRDMA_SVC_MANUAL);
}

static void test_firewall_state(void)
{
    CU_ASSERT_EQUAL(
        tbrdma_macos_firewall_state(sample("cluster4/mac-a/socketfilterfw_--getglobalstate")), 0);
    CU_ASSERT_EQUAL(tbrdma_macos_firewall_state(
                        sample("variants/firewall/mac-c/socketfilterfw_--getglobalstate")),
                    1);
    CU_ASSERT_EQUAL(tbrdma_macos_firewall_state("Firewall is blocking all non-essential incoming "
                                                "connections. (State = 2)\n"),
                    2);
    CU_ASSERT_EQUAL(tbrdma_macos_firewall_state("socketfilterfw: not found\n"), -1);
    CU_ASSERT_EQUAL(tbrdma_macos_firewall_state(NULL), -1);
}

static const tbrdma_ut_test_t tests[] = {
    TBRDMA_UT_TEST(test_tb_buses_linked_and_free),
    TBRDMA_UT_TEST(test_tb_buses_thunderbolt4_link),
    TBRDMA_UT_TEST(test_tb_buses_drive_is_no_peer),
    TBRDMA_UT_TEST(test_tb_buses_errors),
    TBRDMA_UT_TEST(test_hwports),
    TBRDMA_UT_TEST(test_services),
    TBRDMA_UT_TEST(test_getinfo),
    TBRDMA_UT_TEST(test_firewall_state),
    TBRDMA_UT_END,
};

int main(void)
{
    return tbrdma_ut_run("macos", tests);
}
