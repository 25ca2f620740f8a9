/*
 * Unit tests of tbrdma-doctor's checks (tools/doctor_*.c) on recorded probe output: what
 * tools/tbrdma-probe printed on 4 simulated Macs (test/samples/probe, paths made neutral),
 * edited to carry the faults the simulator cannot make: a tbrdma component built for another
 * Open MPI patch release, another tbrdma version, the same version built from other sources,
 * no verbs library, an unreadable device list, a port diagnosis nothing else explains, no Open
 * MPI, one port's address outside its cable's /30, a probe cut short, two hosts with one name,
 * queue pairs held by dead tbrdma processes.
 * Also the JSON report and the files written, read back, with the hostfile's slots from the
 * probe's "cores" line.
 */
#include "doctor.h"
#include "doctor_check.h"
#include "doctor_report.h"
#include "tbrdma_json.h"

#include "ut_run.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NHOSTS     4
#define SAMPLE_MAX (64 * 1024)

static char sample[NHOSTS][SAMPLE_MAX];
static char edit[NHOSTS][SAMPLE_MAX];
static doc_cluster_t cl;

static void load_samples(void)
{
    char path[1024];
    FILE *f;
    size_t n;
    int i;

    for (i = 0; i < NHOSTS; i++) {
        snprintf(path, sizeof(path), "%s/mac-%c.txt", PROBE_SAMPLES_DIR, 'a' + i);
        f = fopen(path, "r");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        n = fread(sample[i], 1, SAMPLE_MAX - 1, f);
        fclose(f);
        sample[i][n] = '\0';
        memcpy(edit[i], sample[i], SAMPLE_MAX);
    }
}

/* Replaces every "from" in host h's edited output by "to". */
static void replace(int h, const char *from, const char *to)
{
    char out[SAMPLE_MAX], *p = edit[h], *hit;
    size_t used = 0, flen = strlen(from), tlen = strlen(to);

    CU_ASSERT_PTR_NOT_NULL_FATAL(strstr(p, from));
    while (NULL != (hit = strstr(p, from))) {
        memcpy(out + used, p, (size_t) (hit - p));
        used += (size_t) (hit - p);
        memcpy(out + used, to, tlen);
        used += tlen;
        p = hit + flen;
    }
    strcpy(out + used, p);
    strcpy(edit[h], out);
}

/* Replaces host h's block NAME (begin ... end) by body. */
static void replace_block(int h, const char *name, const char *body)
{
    char begin[128], *start, *end, out[SAMPLE_MAX];

    snprintf(begin, sizeof(begin), "begin name=%s ", name);
    start = strstr(edit[h], begin);
    CU_ASSERT_PTR_NOT_NULL_FATAL(start);
    end = strstr(start, "\nend status=");
    CU_ASSERT_PTR_NOT_NULL_FATAL(end);
    end = strchr(end + 1, '\n') + 1;
    snprintf(out, sizeof(out), "%.*s%s%s", (int) (start - edit[h]), edit[h], body, end);
    strcpy(edit[h], out);
}

static void cluster_free(void)
{
    free(cl.hosts);
    free(cl.findings);
    free(cl.modex);
    memset(&cl, 0, sizeof(cl));
}

/* Parses the edited outputs and runs every check; returns the number of problems. */
static int run_checks(void)
{
    int i;

    cluster_free();
    cl.nhosts = NHOSTS;
    cl.hosts = calloc(NHOSTS, sizeof(*cl.hosts));
    CU_ASSERT_PTR_NOT_NULL_FATAL(cl.hosts);
    for (i = 0; i < NHOSTS; i++) {
        snprintf(cl.hosts[i].entry.name, sizeof(cl.hosts[i].entry.name), "mac-%c", 'a' + i);
        strcpy(cl.hosts[i].entry.login, cl.hosts[i].entry.name);
        doc_probe_parse(edit[i], &cl.hosts[i]);
    }
    return doc_check_all(&cl, "ssh", 60);
}

/* The one problem found: its check name, host and a piece of its text. */
static void assert_one_problem(const char *check, int host, const char *text)
{
    const doc_finding_t *f = NULL;
    int k, n = 0;

    for (k = 0; k < cl.nfindings; k++) {
        if (cl.findings[k].problem) {
            f = &cl.findings[k];
            n++;
            printf("\n    %s: %s\n", f->check, f->text);
        }
    }
    CU_ASSERT_EQUAL_FATAL(n, 1);
    CU_ASSERT_STRING_EQUAL(f->check, check);
    CU_ASSERT_EQUAL(f->host, host);
    CU_ASSERT_PTR_NOT_NULL(strstr(f->text, text));
    CU_ASSERT_PTR_NOT_NULL(strstr(f->text, "; fix: "));
}

static void test_doctor_ready(void)
{
    load_samples();
    CU_ASSERT_EQUAL(run_checks(), 0);
    CU_ASSERT_EQUAL(cl.ncables, 6);
    CU_ASSERT(cl.solved);
    CU_ASSERT_STRING_EQUAL(cl.hosts[1].ompi_version, "4.1.4");
    CU_ASSERT_STRING_EQUAL(cl.hosts[1].tbrdma_built_for, "4.1.4");
    CU_ASSERT_EQUAL(cl.hosts[2].ports[0].peer_host, 0); /* mac-c en2 faces mac-a en3 */
    CU_ASSERT_STRING_EQUAL(cl.hosts[2].ports[0].peer_ifname, "en3");
    CU_ASSERT_EQUAL(cl.hosts[2].ports[0].source, DOC_SOURCE_LINK_LOCAL);
}

static void test_doctor_component_version(void)
{
    load_samples();
    replace(1, "\"component:4.1.4\"", "\"component:4.1.3\"");
    CU_ASSERT_EQUAL(run_checks(), 1);
    assert_one_problem("component-version", 1, "loads was built for Open MPI 4.1.3");
}

static void test_doctor_tbrdma_version(void)
{
    load_samples();
    replace(3, "(tbrdma) 0.1.0", "(tbrdma) 0.2.0");
    CU_ASSERT_EQUAL(run_checks(), 1);
    assert_one_problem("tbrdma-version", 3,
                       "host mac-d: tbrdma 0.2.0 (/opt/tbrdma/bin/tbrdma-info), "
                       "but mac-a, mac-b, mac-c have tbrdma 0.1.0");
}

/* The same version built from other sources (tbrdma-info's +src. checksum) is another build. */
static void test_doctor_tbrdma_build(void)
{
    int i;

    load_samples();
    for (i = 0; i < NHOSTS; i++) {
        replace(i, "(tbrdma) 0.1.0,",
                (3 == i) ? "(tbrdma) 0.1.0+src.0badf00d," : "(tbrdma) 0.1.0+src.43d2252d,");
    }
    CU_ASSERT_EQUAL(run_checks(), 1);
    assert_one_problem("tbrdma-version", 3,
                       "host mac-d: tbrdma 0.1.0+src.0badf00d (/opt/tbrdma/bin/tbrdma-info), "
                       "but mac-a, mac-b, mac-c have tbrdma 0.1.0+src.43d2252d");
    replace(3, "+src.0badf00d,", "+src.43d2252d,");
    CU_ASSERT_EQUAL(run_checks(), 0);
}

static void test_doctor_no_verbs_library(void)
{
    load_samples();
    replace_block(2, "tbrdma-info",
                  "begin name=tbrdma-info path=/opt/tbrdma/bin/tbrdma-info\n"
                  "| diag host=mac-c device=- port=0 name=no-library text=host mac-c: cannot load "
                  "the verbs library librdma.dylib (image not found): RDMA over Thunderbolt needs "
                  "macOS 26.2 or later; fix: set btl_tbrdma_verbs_lib to its path\n"
                  "end status=3\n");
    CU_ASSERT_EQUAL(run_checks(), 1);
    assert_one_problem("no-verbs-library", 2, "cannot load the verbs library librdma.dylib");
}

static void test_doctor_no_device_list(void)
{
    load_samples();
    replace_block(0, "tbrdma-info",
                  "begin name=tbrdma-info path=/opt/tbrdma/bin/tbrdma-info\n"
                  "| diag host=mac-a device=- port=0 name=no-device-list text=host mac-a: cannot "
                  "list RDMA devices: ibv_get_device_list: Operation not permitted; fix: run as a "
                  "user allowed to open the RDMA devices\n"
                  "end status=3\n");
    CU_ASSERT_EQUAL(run_checks(), 1);
    assert_one_problem("rdma-device-list", 0, "cannot list RDMA devices");
}

/* A diagnosis of tbrdma-info nothing else explains is passed on as tbrdma-info worded it. */
static void test_doctor_port_diagnosis_passed_on(void)
{
    load_samples();
    replace(3,
            "port host=mac-d device=rdma_en3 port=1 state=ACTIVE link_layer=Thunderbolt mtu=1024 "
            "ifname=en3 ipv4=192.168.0.18/30 bridge=- gid_index=1 diag=ok",
            "port host=mac-d device=rdma_en3 port=1 state=ACTIVE link_layer=Thunderbolt mtu=1024 "
            "ifname=en3 ipv4=192.168.0.18/30 bridge=- gid_index=-1 diag=no-mapped-gid");
    replace(3, "| summary host=mac-d",
            "| diag host=mac-d device=rdma_en3 port=1 name=no-mapped-gid text=host mac-d: device "
            "rdma_en3 (interface en3): interface en3 has IPv4 192.168.0.18/30 but the GID table "
            "has no ::ffff:192.168.0.18; fix: re-add the address\n| summary host=mac-d");
    CU_ASSERT_EQUAL(run_checks(), 1);
    assert_one_problem("no-mapped-gid", 3, "has no ::ffff:192.168.0.18");
}

/* tbrdma-info's slot ledger line: queue pairs of a port held by dead tbrdma processes. */
static void test_doctor_held_slots(void)
{
    load_samples();
    replace(1, "| summary host=mac-b",
            "| held host=mac-b device=rdma_en3 port=1 qps=6 text=device rdma_en3: 6 of its queue "
            "pairs are held by 2 tbrdma processes of mac-b that ended without releasing them "
            "(killed with SIGKILL, MPI_Abort or a crash): pid 4242 (job [1234,1]) 3, pid 4250 "
            "(job [1301,1]) 3; Apple's stack frees them only when mac-b restarts; fix: restart "
            "mac-b, and end jobs with Ctrl-C or kill (SIGTERM), not kill -9\n| summary host=mac-b");
    CU_ASSERT_EQUAL(run_checks(), 1);
    assert_one_problem("held-slots", 1, "host mac-b: device rdma_en3: 6 of its queue pairs");
    CU_ASSERT(cl.solved); /* the port stays usable: the mesh is solved as before */
}

static void test_doctor_no_ompi(void)
{
    load_samples();
    replace_block(1, "ompi_info", "begin name=ompi_info path=-\nend status=127\n");
    replace_block(1, "ompi_info-component-path", "");
    CU_ASSERT_EQUAL(run_checks(), 1);
    assert_one_problem("no-ompi", 1, "host mac-b: Open MPI is not found (no ompi_info in the PATH");
}

static void test_doctor_address_mismatch(void)
{
    load_samples();
    replace(1, "192.168.0.13", "192.168.0.50");
    CU_ASSERT_EQUAL(run_checks(), 1);
    assert_one_problem("address-mismatch", 1,
                       "host mac-b: device rdma_en3 (interface en3): cabled to mac-c rdma_en3, but "
                       "the two ends are not alone in one subnet (192.168.0.50/30 and "
                       "192.168.0.14/30)");
}

static void test_doctor_probe_cut_short(void)
{
    load_samples();
    strcpy(strstr(edit[3], "lladdr "), "ssh: connect to host mac-d port 22: Connection refused\n");
    CU_ASSERT_EQUAL(run_checks(), 1);
    assert_one_problem("unreachable", 3, "Connection refused");
}

/* Two Macs calling themselves by one name: tbrdma's solver refuses, and says why. */
static void test_doctor_solver_last(void)
{
    load_samples();
    replace(3, "host=mac-d", "host=mac-c");
    CU_ASSERT_EQUAL(run_checks(), 1);
    assert_one_problem("mesh-unresolved", -1, "host mac-c is listed twice");
}

/* The JSON report of cl, parsed (the caller frees it). */
static tbrdma_json_doc_t *report_json(char *text)
{
    tbrdma_json_doc_t *doc = NULL;
    char err[256];
    FILE *f = tmpfile();
    size_t n;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    doc_report_json(&cl, 0, f);
    rewind(f);
    n = fread(text, 1, SAMPLE_MAX - 1, f);
    text[n] = '\0';
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(tbrdma_json_parse(text, &doc, err, sizeof(err)), 0);
    return doc;
}

/*
 * The JSON's "mesh_file": null without one; with one, its path and every cable it names, a host
 * of the cluster by the name it calls itself (mac-a.local is mac-a), another host as written.
 */
static void check_json_mesh_file(char *text)
{
    tbrdma_mesh_spec_t *spec = calloc(1, sizeof(*spec));
    tbrdma_json_doc_t *doc;
    int mf, first, a, b;
    char err[256];

    CU_ASSERT_PTR_NOT_NULL_FATAL(spec);
    doc = report_json(text);
    CU_ASSERT_EQUAL(tbrdma_json_kind(doc, tbrdma_json_member(doc, 0, "mesh_file")),
                    TBRDMA_JSON_NULL);
    tbrdma_json_free(doc);
    CU_ASSERT_EQUAL_FATAL(tbrdma_mesh_spec_parse("mac-a.local:rdma_en2 mac-x:rdma_en9\n"
                                                 "mac-b:rdma_en3 mac-c:rdma_en2\n",
                                                 spec, err, sizeof(err)),
                          0);
    cl.spec = spec;
    cl.spec_path = "/tmp/mesh.txt";
    doc = report_json(text);
    mf = tbrdma_json_member(doc, 0, "mesh_file");
    CU_ASSERT_EQUAL_FATAL(tbrdma_json_kind(doc, mf), TBRDMA_JSON_OBJECT);
    CU_ASSERT_STRING_EQUAL(tbrdma_json_string(doc, tbrdma_json_member(doc, mf, "path")),
                           "/tmp/mesh.txt");
    first = tbrdma_json_first(doc, tbrdma_json_member(doc, mf, "cables"));
    a = tbrdma_json_member(doc, first, "a");
    b = tbrdma_json_member(doc, first, "b");
    CU_ASSERT_STRING_EQUAL(tbrdma_json_string(doc, tbrdma_json_member(doc, a, "host")), "mac-a");
    CU_ASSERT_STRING_EQUAL(tbrdma_json_string(doc, tbrdma_json_member(doc, a, "device")),
                           "rdma_en2");
    CU_ASSERT_STRING_EQUAL(tbrdma_json_string(doc, tbrdma_json_member(doc, b, "host")), "mac-x");
    CU_ASSERT_STRING_EQUAL(tbrdma_json_string(doc, tbrdma_json_member(doc, b, "device")),
                           "rdma_en9");
    CU_ASSERT_NOT_EQUAL(tbrdma_json_next(doc, first), -1);
    CU_ASSERT_EQUAL(tbrdma_json_next(doc, tbrdma_json_next(doc, first)), -1);
    tbrdma_json_free(doc);
    cl.spec = NULL;
    free(spec);
}

static void test_doctor_json_and_files(void)
{
    char dir[] = "/tmp/test_doctor.XXXXXX", path[256], *text = malloc(SAMPLE_MAX);
    doc_files_t files = {NULL, NULL, NULL, "jaccl"};
    tbrdma_json_doc_t *doc = NULL;
    tbrdma_mesh_spec_t *spec = calloc(1, sizeof(*spec));
    char err[256];
    FILE *f;
    size_t n;

    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(spec);
    load_samples();
    CU_ASSERT_EQUAL(run_checks(), 0);
    doc = report_json(text);
    CU_ASSERT_EQUAL(tbrdma_json_kind(doc, tbrdma_json_member(doc, 0, "ready")), TBRDMA_JSON_TRUE);
    tbrdma_json_free(doc);
    check_json_mesh_file(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/mlx.json", dir);
    files.mlx_hostfile = path;
    CU_ASSERT_EQUAL(doc_write_files(&cl, &files), 0);
    f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    n = fread(text, 1, SAMPLE_MAX - 1, f);
    text[n] = '\0';
    fclose(f);
    CU_ASSERT_EQUAL(tbrdma_mesh_spec_parse(text, spec, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(spec->ncables, 6);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"ips\": [\"10.95.9.1\"]"));
    remove(path);
    rmdir(dir);
    free(spec);
    free(text);
    cluster_free();
}

/* Writes the Open MPI hostfile of cl into dir and reads it back into text. */
static void write_ompi_hostfile(const char *dir, char *text)
{
    doc_files_t files = {NULL, NULL, NULL, "jaccl"};
    char path[256];
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "%s/hostfile", dir);
    files.ompi_hostfile = path;
    CU_ASSERT_EQUAL_FATAL(doc_write_files(&cl, &files), 0);
    f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    n = fread(text, 1, SAMPLE_MAX - 1, f);
    text[n] = '\0';
    fclose(f);
    remove(path);
}

/*
 * The hostfile's slots: each host's performance cores from the probe's "cores" line (Apple
 * silicon, an Intel Mac, Linux with a field and a record this doctor does not know), else as
 * listed, else none (mac-d: an older probe without the line).
 */
static void test_doctor_hostfile_slots(void)
{
    char dir[] = "/tmp/test_doctor.XXXXXX", *text = malloc(SAMPLE_MAX), err[256];
    tbrdma_hostlist_t *list = calloc(1, sizeof(*list));

    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(list);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    load_samples();
    replace(0, "\ndone", "\ncores perf=24 total=32 source=hw.perflevel0.physicalcpu\ndone");
    replace(1, "\ndone", "\ncores perf=8 total=8 source=hw.physicalcpu\ndone");
    replace(2, "\ndone", "\ncores perf=4 total=4 source=nproc smt=2\ngpu cores=80\ndone");
    CU_ASSERT_EQUAL(run_checks(), 0);
    CU_ASSERT_EQUAL(cl.hosts[0].total_cores, 32);
    CU_ASSERT_STRING_EQUAL(cl.hosts[1].cores_source, "hw.physicalcpu");
    CU_ASSERT_EQUAL(cl.hosts[3].perf_cores, 0);
    cl.hosts[2].entry.slots = 2; /* listed, but the probe knows better */
    write_ompi_hostfile(dir, text);
    CU_ASSERT_STRING_EQUAL(text, DOC_SLOTS_COMMENT "mac-a slots=24\nmac-b slots=8\n"
                                                   "mac-c slots=4\nmac-d\n");
    CU_ASSERT_EQUAL_FATAL(tbrdma_hostlist_parse(text, list, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(list->nhosts, 4);
    CU_ASSERT_EQUAL(list->hosts[0].slots, 24);
    CU_ASSERT_EQUAL(list->hosts[3].slots, 0);
    cl.hosts[3].entry.slots = 2; /* listed, the probe did not say */
    write_ompi_hostfile(dir, text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nmac-d slots=2\n"));
    rmdir(dir);
    free(list);
    free(text);
    cluster_free();
}

static const tbrdma_ut_test_t tests[] = {
    TBRDMA_UT_TEST(test_doctor_ready),
    TBRDMA_UT_TEST(test_doctor_component_version),
    TBRDMA_UT_TEST(test_doctor_tbrdma_version),
    TBRDMA_UT_TEST(test_doctor_tbrdma_build),
    TBRDMA_UT_TEST(test_doctor_no_verbs_library),
    TBRDMA_UT_TEST(test_doctor_no_device_list),
    TBRDMA_UT_TEST(test_doctor_port_diagnosis_passed_on),
    TBRDMA_UT_TEST(test_doctor_held_slots),
    TBRDMA_UT_TEST(test_doctor_no_ompi),
    TBRDMA_UT_TEST(test_doctor_address_mismatch),
    TBRDMA_UT_TEST(test_doctor_probe_cut_short),
    TBRDMA_UT_TEST(test_doctor_solver_last),
    TBRDMA_UT_TEST(test_doctor_json_and_files),
    TBRDMA_UT_TEST(test_doctor_hostfile_slots),
    TBRDMA_UT_END,
};

int main(void)
{
    return tbrdma_ut_run("doctor", tests);
}
