/*
 * What keeps tbrdma-fieldtest safe: a stop flag set by SIGINT, SIGTERM, SIGHUP or the total time
 * bound (SIGALRM), which every wait of the probes checks, so a probe unwinds and main releases
 * everything; the check for a running MPI job; taking a link down and always bringing it back.
 */
#include "probe.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t guard_sig;
static char guard_downed[TBRDMA_NAME_MAX];

static void guard_handler(int sig)
{
    if (0 == guard_sig) {
        guard_sig = sig;
    }
}

void guard_install(double total_s)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = guard_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (total_s > 0) {
        alarm((unsigned) total_s);
    }
}

int guard_stopped(void)
{
    return 0 != guard_sig;
}

const char *guard_reason(void)
{
    switch (guard_sig) {
    case 0:
        return NULL;
    case SIGALRM:
        return "the total time bound (--timeout) was reached";
    case SIGINT:
        return "interrupted (SIGINT)";
    case SIGTERM:
        return "terminated (SIGTERM)";
    default:
        return "hung up (SIGHUP)";
    }
}

double guard_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

int guard_sleep(double s)
{
    double end = guard_now() + s;

    while (!guard_stopped()) {
        double left = end - guard_now();

        if (left <= 0) {
            return 0;
        }
        usleep(left > 0.01 ? 10000 : (useconds_t) (left * 1e6));
    }
    return -1;
}

/* Open MPI's launchers and daemons (4.x and 5.x), and MPICH's. */
static int guard_is_mpi_name(const char *comm)
{
    static const char *const names[] = {"mpirun",  "mpiexec", "orterun", "orted",
                                        "prterun", "prted",   "prte",    "hydra_pmi_proxy"};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (0 == strcmp(comm, names[i])) {
            return 1;
        }
    }
    return 0;
}

#ifdef __linux__
/* 1 when /proc/PID/FILE's content (up to 4 MiB) contains needle. */
static int guard_proc_has(const char *pid, const char *file, const char *needle)
{
    char path[300], line[512];
    FILE *f;
    int found = 0;

    snprintf(path, sizeof(path), "/proc/%s/%s", pid, file);
    f = fopen(path, "r");
    if (NULL == f) {
        return 0;
    }
    while (!found && NULL != fgets(line, sizeof(line), f)) {
        found = NULL != strstr(line, needle);
    }
    fclose(f);
    return found;
}

static int guard_same_netns(const char *pid)
{
    char a[64], b[64], path[300];
    ssize_t na, nb;

    snprintf(path, sizeof(path), "/proc/%s/ns/net", pid);
    na = readlink("/proc/self/ns/net", a, sizeof(a) - 1);
    nb = readlink(path, b, sizeof(b) - 1);
    return na > 0 && na == nb && 0 == memcmp(a, b, (size_t) na);
}

/* Linux: a process of this network namespace named like an MPI launcher or with tbrdma loaded. */
int guard_mpi_running(char *who, size_t len)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int found = 0;

    while (NULL != d && !found && NULL != (e = readdir(d))) {
        char comm[64] = "", path[300];
        FILE *f;

        if (e->d_name[0] < '1' || e->d_name[0] > '9' || getpid() == atoi(e->d_name)) {
            continue;
        }
        snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
        if (NULL != (f = fopen(path, "r"))) {
            if (NULL == fgets(comm, sizeof(comm), f)) {
                comm[0] = '\0';
            }
            fclose(f);
            comm[strcspn(comm, "\n")] = '\0';
        }
        if ((guard_is_mpi_name(comm) || guard_proc_has(e->d_name, "maps", "mca_btl_tbrdma"))
            && guard_same_netns(e->d_name)) {
            snprintf(who, len, "process %s (%s)", e->d_name, comm);
            found = 1;
        }
    }
    if (NULL != d) {
        closedir(d);
    }
    return found;
}
#else
/* macOS: any process named like an MPI launcher or daemon (ps lists them without privileges). */
int guard_mpi_running(char *who, size_t len)
{
    FILE *p = popen("ps -A -o pid= -o comm=", "r");
    char line[1024];
    int found = 0;

    while (NULL != p && !found && NULL != fgets(line, sizeof(line), p)) {
        char *comm = line + strspn(line, " 0123456789");
        char *base;

        comm[strcspn(comm, "\n")] = '\0';
        base = strrchr(comm, '/');
        if (guard_is_mpi_name(NULL != base ? base + 1 : comm)) {
            snprintf(who, len, "process %d (%s)", atoi(line), comm);
            found = 1;
        }
    }
    if (NULL != p) {
        pclose(p);
    }
    return found;
}
#endif

/* Runs argv (no shell) and waits, at most 10 s. 0 when it exited 0. */
static int guard_run(char *const argv[])
{
    pid_t pid = fork();
    int status = 0;

    if (0 == pid) {
        execvp(argv[0], argv);
        _exit(127);
    }
    if (pid < 0) {
        return -1;
    }
    for (int i = 0; i < 1000; i++) {
        if (pid == waitpid(pid, &status, WNOHANG)) {
            return (WIFEXITED(status) && 0 == WEXITSTATUS(status)) ? 0 : -1;
        }
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

int guard_link_set(const char *ifname, int up, char *err, size_t errlen)
{
    char name[TBRDMA_NAME_MAX];
#ifdef __APPLE__
    char *const argv[] = {"ifconfig", name, up ? "up" : "down", NULL};
#else
    char *const argv[] = {"ip", "link", "set", "dev", name, up ? "up" : "down", NULL};
#endif

    snprintf(name, sizeof(name), "%s", ifname);
    if (0 != guard_run(argv)) {
        snprintf(err, errlen, "interface %s: could not set it %s (needs root)", ifname,
                 up ? "up" : "down");
        return -1;
    }
    if (up) {
        guard_downed[0] = '\0';
    } else {
        snprintf(guard_downed, sizeof(guard_downed), "%s", ifname);
    }
    return 0;
}

void guard_restore(void)
{
    char err[128];

    if ('\0' != guard_downed[0] && 0 != guard_link_set(guard_downed, 1, err, sizeof(err))) {
        fprintf(stderr, "tbrdma-fieldtest: %s; bring it up by hand\n", err);
    }
}
