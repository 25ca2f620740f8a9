/*
 * tbrdma-doctor: checks a whole Thunderbolt Mac cluster from one machine, before the first
 * mpirun. It reaches every host the way mpirun does (the launch agent, ssh by default), runs the
 * probe there (tools/tbrdma-probe, sent on stdin), and checks: RDMA enabled, Thunderbolt 5, port
 * state, IPv4 and the IPv4-mapped GID, bridges, which port reaches which host (missing, doubled
 * and crossed cables), the same Open MPI and tbrdma on every host, Open MPI finding tbrdma, and
 * on macOS the firewall, the Thunderbolt Bridge service and addresses that survive a restart.
 * One line per problem with its fix; a ready cluster prints one summary line. See
 * docs/doctor.md; doctor_check.c runs the checks (doctor.h lists the pieces).
 *
 * Exit codes: 0 a full-mesh job can run (notes may be printed), 1 problems, 2 usage error.
 */
#include "config.h"

#include "doctor.h"
#include "doctor_check.h"
#include "doctor_launch.h"
#include "doctor_report.h"
#include "doctor_topo.h"
#include "tool_usage.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DOCTOR_EXIT_READY    0
#define DOCTOR_EXIT_PROBLEMS 1
#define DOCTOR_EXIT_USAGE    2

#define DOCTOR_TIMEOUT_DEFAULT 60
#define DOCTOR_ARGS_MAX        256
#define DOCTOR_FILE_MAX        (1024 * 1024)
#define DOCTOR_AGENT_DEFAULT   "ssh : rsh" /* Open MPI's plm_rsh_agent default */

extern char **environ;

typedef struct doctor_opts {
    const char *hostfile;
    const char *hostarg;
    char **hosts;
    int nhosts;
    const char *agent;
    const char *verbs_lib;
    const char *mesh_file;
    const char *probe;
    int timeout;
    int json, verbose, cables;
    doc_files_t files;
    char *mca[DOCTOR_ARGS_MAX]; /* "OMPI_MCA_name=value" from --mca */
    int nmca;
    char self_dir[PATH_MAX];
} doctor_opts_t;

enum { OPT_CABLES = 256, OPT_HOSTFILE_OUT, OPT_MESH_OUT, OPT_MLX_OUT, OPT_MLX_BACKEND, OPT_PROBE };

static const struct option longopts[] = {
    {"hostfile", required_argument, NULL, 'f'},
    {"host", required_argument, NULL, 'H'},
    {"launch-agent", required_argument, NULL, 'a'},
    {"mca", required_argument, NULL, 'm'},
    {"verbs-lib", required_argument, NULL, 'l'},
    {"mesh-file", required_argument, NULL, 'M'},
    {"timeout", required_argument, NULL, 't'},
    {"json", no_argument, NULL, 'j'},
    {"verbose", no_argument, NULL, 'v'},
    {"cables", no_argument, NULL, OPT_CABLES},
    {"write-hostfile", required_argument, NULL, OPT_HOSTFILE_OUT},
    {"write-mesh-file", required_argument, NULL, OPT_MESH_OUT},
    {"write-mlx-hostfile", required_argument, NULL, OPT_MLX_OUT},
    {"mlx-backend", required_argument, NULL, OPT_MLX_BACKEND},
    {"probe", required_argument, NULL, OPT_PROBE},
    {"version", no_argument, NULL, 'V'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Parallel to longopts: argument name and help text. */
static const char *const help[][2] = {
    {"FILE", "the hosts: an Open MPI hostfile, or MLX's hostfile JSON"},
    {"LIST", "the hosts, as mpirun --host: mac-a,mac-b:2,mac-c"},
    {"CMD", "how to reach the hosts (default: $OMPI_MCA_plm_rsh_agent, else \"ssh : rsh\",\n"
            "        as mpirun's plm_rsh_agent)"},
    {"NAME VALUE", "an MCA parameter for every host, as mpirun --mca (also read here:\n"
                   "        btl_tbrdma_verbs_lib, btl_tbrdma_mesh_file, plm_rsh_agent)"},
    {"PATH", "verbs library for tbrdma-info (btl_tbrdma_verbs_lib)"},
    {"FILE", "tbrdma's mesh file or MLX's hostfile, as btl_tbrdma_mesh_file"},
    {"SECONDS", "give up on hosts that have not answered by then (default 60)"},
    {"", "one JSON document instead of lines (docs/doctor.md)"},
    {"", "also print every host, port and cable, and tbrdma's mesh"},
    {"", "print the cables found (a mesh file) and exit: 0 when every host answered"},
    {"FILE", "write an Open MPI hostfile of the hosts"},
    {"FILE", "write tbrdma's mesh file of the cables found"},
    {"FILE", "write MLX's hostfile JSON (mlx.launch --hostfile) of the cables found"},
    {"NAME", "backend of that file: jaccl (default) or jaccl-ring"},
    {"PATH", "the probe script (default: tbrdma-probe beside this program)"},
    {"", "print tbrdma's version and its sources' checksum, and exit"},
    {"", "print this help and exit"},
};

static void usage(FILE *out, const char *argv0)
{
    fprintf(out, "Usage: %s [OPTIONS] [HOST...]\n", argv0);
    fprintf(out, "Checks every host and cable of a Thunderbolt RDMA Mac cluster for tbrdma and "
                 "prints\none line per problem with its fix.\n\nOptions:\n");
    tbrdma_tool_options(out, longopts, help);
    fprintf(out, "\nWithout --hostfile, --host or HOST, the hosts come from Open MPI's default "
                 "hostfile\n($OMPI_MCA_orte_default_hostfile or $PRTE_MCA_prte_default_hostfile)."
                 "\nExit status: 0 a full-mesh job can run; 1 problems found; 2 usage error.\n");
}

/* --mca NAME VALUE: VALUE is the next argument. Keeps it as OMPI_MCA_NAME=VALUE. */
static int take_mca(doctor_opts_t *o, int argc, char **argv, const char *name)
{
    size_t n;

    if (optind >= argc || DOCTOR_ARGS_MAX <= o->nmca) {
        fprintf(stderr, "%s: --mca %s needs a VALUE\n", argv[0], name);
        return -1;
    }
    n = strlen("OMPI_MCA_=") + strlen(name) + strlen(argv[optind]) + 1;
    o->mca[o->nmca] = malloc(n);
    if (NULL == o->mca[o->nmca]) {
        return -1;
    }
    snprintf(o->mca[o->nmca++], n, "OMPI_MCA_%s=%s", name, argv[optind++]);
    return 0;
}

/* The value of MCA parameter name: --mca first, then the environment. */
static const char *mca_value(const doctor_opts_t *o, const char *name)
{
    char key[128];
    size_t n;
    int k;

    n = (size_t) snprintf(key, sizeof(key), "OMPI_MCA_%s=", name);
    for (k = o->nmca - 1; 0 <= k; k--) {
        if (0 == strncmp(o->mca[k], key, n)) {
            return o->mca[k] + n;
        }
    }
    key[n - 1] = '\0';
    return getenv(key);
}

static int parse_opt(doctor_opts_t *o, int c, int argc, char **argv)
{
    switch (c) {
    case 'f':
        o->hostfile = optarg;
        break;
    case 'H':
        o->hostarg = optarg;
        break;
    case 'a':
        o->agent = optarg;
        break;
    case 'm':
        return take_mca(o, argc, argv, optarg);
    case 'l':
        o->verbs_lib = optarg;
        break;
    case 'M':
        o->mesh_file = optarg;
        break;
    case 't':
        o->timeout = atoi(optarg);
        return (0 < o->timeout) ? 0 : -1;
    case 'j':
        o->json = 1;
        break;
    case 'v':
        o->verbose = 1;
        break;
    case OPT_CABLES:
        o->cables = 1;
        break;
    case OPT_HOSTFILE_OUT:
        o->files.ompi_hostfile = optarg;
        break;
    case OPT_MESH_OUT:
        o->files.mesh_file = optarg;
        break;
    case OPT_MLX_OUT:
        o->files.mlx_hostfile = optarg;
        break;
    case OPT_MLX_BACKEND:
        o->files.mlx_backend = optarg;
        return (0 == strcmp(optarg, "jaccl") || 0 == strcmp(optarg, "jaccl-ring")) ? 0 : -1;
    case OPT_PROBE:
        o->probe = optarg;
        break;
    case 'V':
        tbrdma_tool_version(stdout, argv[0]);
        exit(DOCTOR_EXIT_READY);
    case 'h':
        usage(stdout, argv[0]);
        exit(DOCTOR_EXIT_READY);
    default:
        return -1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, doctor_opts_t *o)
{
    char self[PATH_MAX];
    int c;

    memset(o, 0, sizeof(*o));
    o->timeout = DOCTOR_TIMEOUT_DEFAULT;
    o->files.mlx_backend = "jaccl";
    while (-1 != (c = getopt_long(argc, argv, "f:H:a:m:l:M:t:jvVh", longopts, NULL))) {
        if (0 != parse_opt(o, c, argc, argv)) {
            usage(stderr, argv[0]);
            return -1;
        }
    }
    o->hosts = argv + optind;
    o->nhosts = argc - optind;
    o->agent = (NULL != o->agent) ? o->agent : mca_value(o, "plm_rsh_agent");
    o->agent = (NULL != o->agent && '\0' != o->agent[0]) ? o->agent : DOCTOR_AGENT_DEFAULT;
    o->verbs_lib = (NULL != o->verbs_lib) ? o->verbs_lib : mca_value(o, "btl_tbrdma_verbs_lib");
    o->mesh_file = (NULL != o->mesh_file) ? o->mesh_file : mca_value(o, "btl_tbrdma_mesh_file");
    if (0 != doc_which(argv[0], self, sizeof(self)) || NULL == realpath(self, o->self_dir)) {
        snprintf(o->self_dir, sizeof(o->self_dir), "%s", argv[0]);
    }
    snprintf(self, sizeof(self), "%s", o->self_dir);
    snprintf(o->self_dir, sizeof(o->self_dir), "%s", dirname(self));
    return 0;
}

/* The whole file as a string, NULL with errno set. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    char *text;
    size_t n;

    if (NULL == f) {
        return NULL;
    }
    text = malloc(DOCTOR_FILE_MAX + 1);
    n = (NULL != text) ? fread(text, 1, DOCTOR_FILE_MAX, f) : 0;
    fclose(f);
    if (NULL != text) {
        text[n] = '\0';
    }
    return text;
}

/* The hosts: --hostfile, --host, HOST arguments, else Open MPI's default hostfile. */
static int load_hosts(const doctor_opts_t *o, tbrdma_hostlist_t *list, const char *argv0)
{
    const char *file = o->hostfile;
    char err[512] = "", *text;
    int i, rc;

    if (NULL == file && NULL == o->hostarg && 0 == o->nhosts) {
        file = getenv("OMPI_MCA_orte_default_hostfile");
        file = (NULL != file) ? file : getenv("PRTE_MCA_prte_default_hostfile");
    }
    if (NULL != o->hostarg || 0 < o->nhosts) {
        /* HOST arguments are one --host list */
        text = calloc(1, DOCTOR_FILE_MAX);
        for (i = 0; NULL != text && i < o->nhosts; i++) {
            snprintf(text + strlen(text), DOCTOR_FILE_MAX - strlen(text), "%s%s",
                     (0 == i) ? "" : ",", o->hosts[i]);
        }
        rc = (NULL == text) ? -ENOMEM
                            : tbrdma_hostlist_parse_arg((NULL != o->hostarg) ? o->hostarg : text,
                                                        list, err, sizeof(err));
        free(text);
    } else if (NULL != file) {
        text = read_text(file);
        if (NULL == text) {
            fprintf(stderr, "%s: cannot read hostfile %s: %s\n", argv0, file, strerror(errno));
            return -1;
        }
        rc = tbrdma_hostlist_parse(text, list, err, sizeof(err));
        free(text);
    } else {
        fprintf(stderr, "%s: no hosts: give --hostfile FILE, --host LIST or host names\n", argv0);
        return -1;
    }
    if (0 != rc) {
        fprintf(stderr, "%s: %s%s%s\n", argv0, (NULL != file) ? file : "",
                (NULL != file) ? ": " : "", err);
    }
    return rc;
}

/* The probe: --probe, $TBRDMA_PROBE, beside this program, installed, in the source tree. */
static char *load_probe(const doctor_opts_t *o, const char *argv0)
{
    const char *tries[5] = {o->probe, getenv("TBRDMA_PROBE"), NULL, TBRDMA_BINDIR "/tbrdma-probe",
                            TBRDMA_SRCDIR "/tbrdma-probe"};
    char beside[PATH_MAX + 16], *text;
    int k;

    snprintf(beside, sizeof(beside), "%s/tbrdma-probe", o->self_dir);
    tries[2] = beside;
    for (k = 0; k < 5; k++) {
        if (NULL != tries[k] && NULL != (text = read_text(tries[k]))) {
            return text;
        }
        if (NULL != tries[k] && k < 2) {
            break; /* named explicitly: do not fall back */
        }
    }
    fprintf(stderr, "%s: cannot read the probe script tbrdma-probe (--probe PATH)\n", argv0);
    return NULL;
}

/* The probe's arguments: the verbs library, where tbrdma lives here, and the MCA environment. */
static int probe_args(const doctor_opts_t *o, char **args)
{
    const char *fake = getenv("TBRDMA_DOCTOR_FAKE_MACOS");
    char **e;
    int n = 0, k;

    args[n++] = "--tools-dir";
    args[n++] = (char *) o->self_dir;
    if (NULL != o->verbs_lib) {
        args[n++] = "--verbs-lib";
        args[n++] = (char *) o->verbs_lib;
    }
    if (NULL != fake && '\0' != fake[0]) {
        args[n++] = "--fake-macos";
        args[n++] = (char *) fake;
    }
    for (e = environ; NULL != *e && n + 2 < DOCTOR_ARGS_MAX; e++) {
        if (0 == strncmp(*e, "OMPI_MCA_", 9)) {
            args[n++] = "--env";
            args[n++] = *e;
        }
    }
    for (k = 0; k < o->nmca && n + 2 < DOCTOR_ARGS_MAX; k++) {
        args[n++] = "--env";
        args[n++] = o->mca[k];
    }
    return n;
}

/* The mesh file given (btl_tbrdma_mesh_file), parsed; NULL when none. Exits on a bad one. */
static tbrdma_mesh_spec_t *load_spec(const char *path, const char *argv0)
{
    tbrdma_mesh_spec_t *spec;
    char err[512], *text;

    if (NULL == path || '\0' == path[0]) {
        return NULL;
    }
    text = read_text(path);
    spec = calloc(1, sizeof(*spec));
    if (NULL == text || NULL == spec || 0 != tbrdma_mesh_spec_parse(text, spec, err, sizeof(err))) {
        fprintf(stderr, "%s: mesh file %s: %s\n", argv0, path,
                (NULL == text) ? strerror(errno) : err);
        exit(DOCTOR_EXIT_USAGE);
    }
    free(text);
    return spec;
}

static int probe_all(doc_cluster_t *cl, const doctor_opts_t *o, const char *script)
{
    doc_launch_result_t *res = calloc((size_t) cl->nhosts, sizeof(*res));
    const char *logins[TBRDMA_MAX_HOSTS];
    char *args[DOCTOR_ARGS_MAX];
    doc_launch_opts_t lo = {o->agent, script, o->timeout, args, 0};
    int i, rc;

    if (NULL == res) {
        return -ENOMEM;
    }
    lo.nargs = probe_args(o, args);
    for (i = 0; i < cl->nhosts; i++) {
        logins[i] = cl->hosts[i].entry.login;
    }
    rc = doc_launch_all(&lo, logins, cl->nhosts, res);
    for (i = 0; i < cl->nhosts; i++) {
        cl->hosts[i].exit_status = res[i].status;
        cl->hosts[i].timed_out = res[i].timed_out;
        if (NULL != res[i].output) {
            doc_probe_parse(res[i].output, &cl->hosts[i]);
        }
        free(res[i].output);
    }
    free(res);
    return rc;
}

/* --cables: the cables found, as a mesh file, after a "# host NAME login LOGIN os OS" line per
 * host (tbrdma-setup reads those). */
static int print_cables(const doc_cluster_t *cl)
{
    tbrdma_mesh_spec_t *spec = calloc(1, sizeof(*spec));
    char *text = malloc(DOCTOR_FILE_MAX);
    int i, all = 1;

    if (NULL == spec || NULL == text) {
        return DOCTOR_EXIT_PROBLEMS;
    }
    doc_cables_spec(cl, spec);
    tbrdma_hostfile_write_mesh(spec, text, DOCTOR_FILE_MAX);
    for (i = 0; i < cl->nhosts; i++) {
        printf("# host %s login %s os %s\n", doc_host_name(&cl->hosts[i]), cl->hosts[i].entry.login,
               ('\0' != cl->hosts[i].os[0]) ? cl->hosts[i].os : "-");
    }
    fputs(text, stdout);
    for (i = 0; i < cl->nhosts; i++) {
        if (!cl->hosts[i].probed) {
            fprintf(stderr, "tbrdma-doctor: host %s did not answer\n", cl->hosts[i].entry.name);
            all = 0;
        }
    }
    free(text);
    free(spec);
    return all ? DOCTOR_EXIT_READY : DOCTOR_EXIT_PROBLEMS;
}

static int write_files(const doc_cluster_t *cl, const doctor_opts_t *o)
{
    int rc;

    if (NULL == o->files.ompi_hostfile && NULL == o->files.mesh_file
        && NULL == o->files.mlx_hostfile) {
        return 0;
    }
    rc = doc_write_files(cl, &o->files);
    if (0 != rc) {
        fprintf(stderr, "tbrdma-doctor: writing the hostfiles failed: %s\n", strerror(-rc));
    }
    return rc;
}

int main(int argc, char **argv)
{
    tbrdma_hostlist_t *list = calloc(1, sizeof(*list));
    doc_cluster_t cl;
    doctor_opts_t o;
    char *script;
    int i, problems;

    memset(&cl, 0, sizeof(cl));
    if (0 != parse_args(argc, argv, &o)) {
        return DOCTOR_EXIT_USAGE;
    }
    cl.hosts = calloc(TBRDMA_MAX_HOSTS, sizeof(*cl.hosts));
    if (NULL == cl.hosts || NULL == list || 0 != load_hosts(&o, list, argv[0])
        || NULL == (script = load_probe(&o, argv[0]))) {
        return DOCTOR_EXIT_USAGE;
    }
    cl.nhosts = list->nhosts;
    for (i = 0; i < cl.nhosts; i++) {
        cl.hosts[i].entry = list->hosts[i];
    }
    cl.spec = load_spec(o.mesh_file, argv[0]);
    cl.spec_path = o.mesh_file;
    probe_all(&cl, &o, script);
    if (o.cables) {
        doc_topo_cables(&cl);
        return print_cables(&cl);
    }
    problems = doc_check_all(&cl, o.agent, o.timeout);
    if (o.json) {
        doc_report_json(&cl, problems, stdout);
    } else {
        doc_report_text(&cl, problems, o.verbose, stdout);
    }
    if (0 != write_files(&cl, &o)) {
        return DOCTOR_EXIT_PROBLEMS;
    }
    return (0 == problems) ? DOCTOR_EXIT_READY : DOCTOR_EXIT_PROBLEMS;
}
