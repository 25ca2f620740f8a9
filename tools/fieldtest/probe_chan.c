/*
 * The TCP side channel between tbrdma-fieldtest --server and --client (any network the hosts share,
 * like uc_pingpong's): fixed-size messages, every wait bounded by a deadline and by the stop
 * flag, so a silent peer never hangs the probe.
 */
#include "probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static uint32_t chan_cur_epoch;

void chan_set_epoch(uint32_t epoch)
{
    chan_cur_epoch = epoch;
}

uint32_t chan_epoch(void)
{
    return chan_cur_epoch;
}

/* Waits until fd is readable (or writable): 1, 0 at the deadline or when stopped. */
static int chan_ready(int fd, short events, double deadline)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        double left = deadline - guard_now();
        int n;

        if (guard_stopped() || left <= 0) {
            return 0;
        }
        n = poll(&p, 1, left > 0.1 ? 100 : (int) (left * 1000) + 1);
        if (n > 0) {
            return 1;
        }
        if (n < 0 && EINTR != errno) {
            return 0;
        }
    }
}

int chan_listen(int port, double deadline)
{
    struct sockaddr_in6 sa;
    int one = 1, fd = -1, lfd = socket(AF_INET6, SOCK_STREAM, 0);

    if (lfd < 0) {
        return -1;
    }
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&sa, 0, sizeof(sa));
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons((uint16_t) port);
    sa.sin6_addr = in6addr_any;
    if (0 != bind(lfd, (struct sockaddr *) &sa, sizeof(sa)) || 0 != listen(lfd, 1)) {
        fprintf(stderr, "tbrdma-fieldtest: side channel: cannot listen on TCP port %d: %s\n", port,
                strerror(errno));
        close(lfd);
        return -1;
    }
    if (chan_ready(lfd, POLLIN, deadline)) {
        fd = accept(lfd, NULL, NULL);
    }
    close(lfd);
    if (fd >= 0) {
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    return fd;
}

static int chan_try(const struct addrinfo *res)
{
    int one = 1;

    for (const struct addrinfo *ai = res; NULL != ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);

        if (fd >= 0 && 0 == connect(fd, ai->ai_addr, ai->ai_addrlen)) {
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            return fd;
        }
        if (fd >= 0) {
            close(fd);
        }
    }
    return -1;
}

int chan_connect(const char *host, int port, double deadline)
{
    struct addrinfo hints, *res = NULL;
    char svc[16];
    int fd = -1;

    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    snprintf(svc, sizeof(svc), "%d", port);
    if (0 != getaddrinfo(host, svc, &hints, &res)) {
        fprintf(stderr, "tbrdma-fieldtest: side channel: cannot resolve host %s\n", host);
        return -1;
    }
    while (fd < 0 && !guard_stopped() && guard_now() < deadline) {
        fd = chan_try(res);
        if (fd < 0) {
            guard_sleep(0.2); /* the server may start a moment later */
        }
    }
    freeaddrinfo(res);
    return fd;
}

static void chan_order(probe_msg_t *m, int to_net)
{
    uint32_t *w[] = {&m->type,           (uint32_t *) &m->a, (uint32_t *) &m->b,
                     (uint32_t *) &m->c, (uint32_t *) &m->d, &m->qpn};

    for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
        *w[i] = to_net ? htonl(*w[i]) : ntohl(*w[i]);
    }
}

int chan_send(int fd, probe_msg_t *m)
{
    probe_msg_t out = *m;
    const char *p = (const char *) &out;
    size_t left = sizeof(out);

    out.text[sizeof(out.text) - 1] = '\0';
    out.epoch = chan_cur_epoch;
    chan_order(&out, 1);
    while (left > 0) {
        ssize_t n = write(fd, p, left);

        if (n <= 0) {
            if (n < 0 && EINTR == errno && !guard_stopped()) {
                continue;
            }
            return -1;
        }
        p += n;
        left -= (size_t) n;
    }
    return 0;
}

/* Reads one whole message before deadline. 0 or -1. */
static int chan_read(int fd, probe_msg_t *m, double deadline)
{
    char *p = (char *) m;
    size_t got = 0;

    while (got < sizeof(*m)) {
        ssize_t n;

        if (!chan_ready(fd, POLLIN, deadline)) {
            return -1;
        }
        n = read(fd, p + got, sizeof(*m) - got);
        if (n <= 0) {
            if (n < 0 && EINTR == errno) {
                continue;
            }
            return -1;
        }
        got += (size_t) n;
    }
    chan_order(m, 0);
    m->text[sizeof(m->text) - 1] = '\0';
    return 0;
}

int chan_recv(int fd, probe_msg_t *m, uint32_t want, double deadline)
{
    do {
        if (0 != chan_read(fd, m, deadline)) {
            return -1;
        }
    } while (m->epoch < chan_cur_epoch); /* left over from an earlier step */
    return (0 == want || want == m->type) ? 0 : -1;
}

int chan_sync(int fd, double deadline)
{
    probe_msg_t m;

    memset(&m, 0, sizeof(m));
    m.type = MSG_SYNC;
    if (0 != chan_send(fd, &m)) {
        return -1;
    }
    return chan_recv(fd, &m, MSG_SYNC, deadline);
}
