/*
 * Runs the probe on every host at once, the way mpirun starts its daemons: through the launch
 * agent (Open MPI's plm_rsh_agent, ssh by default) for remote hosts, and directly for this
 * host. The probe script travels on the agent's stdin (`AGENT HOST sh -s -- ARGS`), so a host
 * needs nothing installed to be probed; its arguments are quoted for the remote shell, as
 * sshd hands the command line to one. A host that does not answer within the timeout is
 * killed (its whole process group) and reported with what it printed.
 */
#include "doctor_launch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LAUNCH_OUTPUT_MAX (4 * 1024 * 1024)
#define LAUNCH_WORDS_MAX  64
#define LAUNCH_CMD_MAX    65536

typedef struct launch_child {
    pid_t pid;
    int out;       /* its stdout and stderr, -1 once at EOF */
    int in;        /* its stdin, -1 once the script is written */
    size_t in_off; /* bytes of the script written */
    char *buf;     /* what it printed */
    size_t used;
    int status; /* exit status, -1 when killed */
    int timed_out;
} launch_child_t;

/* "ssh : rsh": the first alternative whose program exists. Splits it into words. */
static int agent_words(const char *agent, char *store, size_t len, char **words, int max)
{
    char *alt, *save = NULL, *w, *wsave = NULL, path[4096];
    int n = 0;

    snprintf(store, len, "%s", agent);
    for (alt = strtok_r(store, ":", &save); NULL != alt; alt = strtok_r(NULL, ":", &save)) {
        n = 0;
        for (w = strtok_r(alt, " \t", &wsave); NULL != w && n < max - 1;
             w = strtok_r(NULL, " \t", &wsave)) {
            words[n++] = w;
        }
        if (0 < n && 0 == doc_which(words[0], path, sizeof(path))) {
            words[n] = NULL;
            return n;
        }
    }
    return -ENOENT;
}

int doc_which(const char *prog, char *buf, size_t len)
{
    const char *path = getenv("PATH"), *p, *colon;
    struct stat st;

    if (NULL != strchr(prog, '/')) {
        snprintf(buf, len, "%s", prog);
        return (0 == access(prog, X_OK)) ? 0 : -ENOENT;
    }
    for (p = (NULL != path) ? path : "/usr/bin:/bin"; '\0' != *p; p = colon + 1) {
        colon = strchr(p, ':');
        colon = (NULL != colon) ? colon : p + strlen(p);
        snprintf(buf, len, "%.*s/%s", (int) (colon - p), p, prog);
        if (0 == stat(buf, &st) && S_ISREG(st.st_mode) && 0 == access(buf, X_OK)) {
            return 0;
        }
        if ('\0' == *colon) {
            break;
        }
    }
    return -ENOENT;
}

/* Appends word to cmd quoted for a POSIX shell ('...' with ' as '\''). */
static void shell_quote(char *cmd, size_t len, const char *word)
{
    size_t used = strlen(cmd);

    used += (size_t) snprintf(cmd + used, (used < len) ? len - used : 0, " '");
    for (; '\0' != *word && used + 5 < len; word++) {
        if ('\'' == *word) {
            used += (size_t) snprintf(cmd + used, len - used, "'\\''");
        } else {
            cmd[used++] = *word;
            cmd[used] = '\0';
        }
    }
    if (used + 2 < len) {
        strcat(cmd, "'");
    }
}

int doc_is_local(const char *login)
{
    char self[256];
    size_t n;

    if (NULL != strchr(login, '@')) {
        return 0;
    }
    if (0 == strcmp(login, "localhost") || 0 == strcmp(login, "127.0.0.1")) {
        return 1;
    }
    if (0 != gethostname(self, sizeof(self))) {
        return 0;
    }
    self[sizeof(self) - 1] = '\0';
    if (0 == strcmp(login, self)) {
        return 1;
    }
    n = strcspn(self, ".");
    return strlen(login) == n && 0 == strncmp(login, self, n);
}

/*
 * ssh (the default agent) gets BatchMode and a connect timeout: a host that would ask for a
 * password fails at once instead of waiting for a terminal the doctor does not read. Returns
 * the new word count.
 */
static int ssh_batch(char **argv, int n)
{
    const char *base = strrchr(argv[0], '/');
    int k;

    base = (NULL != base) ? base + 1 : argv[0];
    if (0 != strcmp(base, "ssh")) {
        return n;
    }
    for (k = n - 1; 1 <= k; k--) {
        argv[k + 4] = argv[k];
    }
    argv[1] = "-o";
    argv[2] = "BatchMode=yes";
    argv[3] = "-o";
    argv[4] = "ConnectTimeout=10";
    return n + 4;
}

/* In the child: argv for one host, then exec. */
static void child_exec(const doc_launch_opts_t *o, const char *login)
{
    char store[4096], cmd[LAUNCH_CMD_MAX] = "sh -s --";
    char *argv[LAUNCH_WORDS_MAX + 8];
    int i, n;

    if (doc_is_local(login)) {
        argv[0] = "sh";
        argv[1] = "-s";
        argv[2] = "--";
        for (i = 0; i < o->nargs && i < LAUNCH_WORDS_MAX; i++) {
            argv[3 + i] = o->args[i];
        }
        argv[3 + i] = NULL;
        execvp("sh", argv);
        _exit(127);
    }
    n = agent_words(o->agent, store, sizeof(store), argv, LAUNCH_WORDS_MAX - 4);
    if (0 > n) {
        fprintf(stderr, "no launch agent found: %s\n", o->agent);
        _exit(127);
    }
    n = ssh_batch(argv, n);
    for (i = 0; i < o->nargs; i++) {
        shell_quote(cmd, sizeof(cmd), o->args[i]);
    }
    argv[n++] = (char *) login;
    argv[n++] = cmd;
    argv[n] = NULL;
    execvp(argv[0], argv);
    fprintf(stderr, "cannot run launch agent %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

static int child_start(const doc_launch_opts_t *o, const char *login, launch_child_t *c)
{
    int in[2], out[2];

    if (0 != pipe(in) || 0 != pipe(out)) {
        return -errno;
    }
    /* the next hosts' children must not hold this one's stdin open (sh -s reads to EOF) */
    fcntl(in[1], F_SETFD, FD_CLOEXEC);
    fcntl(out[0], F_SETFD, FD_CLOEXEC);
    c->pid = fork();
    if (0 > c->pid) {
        return -errno;
    }
    if (0 == c->pid) {
        setpgid(0, 0);
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(out[1], 2);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        child_exec(o, login);
    }
    setpgid(c->pid, c->pid);
    close(in[0]);
    close(out[1]);
    c->in = in[1];
    c->out = out[0];
    fcntl(c->in, F_SETFL, O_NONBLOCK);
    c->buf = calloc(1, LAUNCH_OUTPUT_MAX + 1);
    return (NULL != c->buf) ? 0 : -ENOMEM;
}

static double now_s(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return (double) tv.tv_sec + tv.tv_usec / 1e6;
}

/* Feeds the script and drains the output of every child until all are at EOF or time is up. */
static void children_pump(launch_child_t *cs, int n, const char *script, size_t slen,
                          double deadline)
{
    struct pollfd fds[2 * TBRDMA_MAX_HOSTS];
    int who[2 * TBRDMA_MAX_HOSTS], nfds, i, k, left;
    ssize_t r;

    for (;;) {
        nfds = 0;
        for (i = 0; i < n; i++) {
            if (0 <= cs[i].out) {
                fds[nfds] = (struct pollfd){cs[i].out, POLLIN, 0};
                who[nfds++] = i;
            }
            if (0 <= cs[i].in) {
                fds[nfds] = (struct pollfd){cs[i].in, POLLOUT, 0};
                who[nfds++] = i;
            }
        }
        left = (int) ((deadline - now_s()) * 1000);
        if (0 == nfds || 0 >= left) {
            return;
        }
        if (0 > poll(fds, (nfds_t) nfds, left)) {
            if (EINTR == errno) {
                continue;
            }
            return;
        }
        for (k = 0; k < nfds; k++) {
            launch_child_t *c = &cs[who[k]];

            if (0 == fds[k].revents) {
                continue;
            }
            if (fds[k].fd == c->in) {
                r = write(c->in, script + c->in_off, slen - c->in_off);
                c->in_off += (0 < r) ? (size_t) r : 0;
                if (0 > r || c->in_off == slen) {
                    close(c->in);
                    c->in = -1;
                }
                continue;
            }
            r = read(c->out, c->buf + c->used, LAUNCH_OUTPUT_MAX - c->used);
            if (0 >= r) {
                close(c->out);
                c->out = -1;
            } else {
                c->used += (size_t) r;
            }
        }
    }
}

static void child_finish(launch_child_t *c)
{
    int st = 0;

    if (0 <= c->in) {
        close(c->in);
    }
    if (0 <= c->out) {
        c->timed_out = 1;
        kill(-c->pid, SIGKILL);
        kill(c->pid, SIGKILL);
        close(c->out);
    }
    c->status = -1;
    if (c->pid == waitpid(c->pid, &st, 0) && WIFEXITED(st) && !c->timed_out) {
        c->status = WEXITSTATUS(st);
    }
    c->buf[c->used] = '\0';
}

int doc_launch_all(const doc_launch_opts_t *o, const char *const *logins, int n,
                   doc_launch_result_t *results)
{
    launch_child_t *cs = calloc((size_t) n, sizeof(*cs));
    size_t slen = strlen(o->script);
    int i, rc = 0;

    if (NULL == cs) {
        return -ENOMEM;
    }
    signal(SIGPIPE, SIG_IGN);
    for (i = 0; i < n && 0 == rc; i++) {
        cs[i].in = cs[i].out = -1;
        rc = child_start(o, logins[i], &cs[i]);
    }
    if (0 == rc) {
        children_pump(cs, n, o->script, slen, now_s() + o->timeout);
    }
    for (i = 0; i < n; i++) {
        if (0 < cs[i].pid) {
            child_finish(&cs[i]);
        }
        results[i].output = cs[i].buf;
        results[i].status = cs[i].status;
        results[i].timed_out = cs[i].timed_out;
    }
    free(cs);
    return rc;
}
