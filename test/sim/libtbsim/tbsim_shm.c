/*
 * tbsim shared fabric state: creating it from the topology file, mapping it, removing it.
 * Shared by libtbsim and tbsimctl. Only the control path lives here (system calls allowed).
 */
#include "tbsim_shm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TBSIM_FABRIC_FILE "fabric"
#define TBSIM_TOPO_FILE   "topology"

const char *tbsim_dir(void)
{
    const char *dir = getenv("TBSIM_DIR");

    if (NULL == dir || '\0' == dir[0]) {
        return TBSIM_DIR_DEFAULT;
    }
    return dir;
}

static const char *tbsim_shm_dir(void)
{
    const char *dir = getenv("TBSIM_SHM_DIR");

    if (NULL == dir || '\0' == dir[0]) {
        return TBSIM_SHM_DEFAULT;
    }
    return dir;
}

static void fabric_path(char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", tbsim_dir(), TBSIM_FABRIC_FILE);
}

struct tbsim_fabric *tbsim_fabric_map(void)
{
    char path[4096];
    struct tbsim_fabric *fab;
    struct stat st;
    int fd;

    fabric_path(path, sizeof(path));
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        return NULL;
    }
    if (0 != fstat(fd, &st) || (size_t) st.st_size < sizeof(*fab)) {
        close(fd);
        errno = EPROTO;
        return NULL;
    }
    fab = mmap(NULL, sizeof(*fab), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (MAP_FAILED == fab) {
        return NULL;
    }
    if (TBSIM_MAGIC != fab->magic || TBSIM_VERSION != fab->version || sizeof(*fab) != fab->size) {
        munmap(fab, sizeof(*fab));
        errno = EPROTO;
        return NULL;
    }
    return fab;
}

int tbsim_host_find(const struct tbsim_fabric *fab, const char *name)
{
    for (uint32_t i = 0; i < fab->nhosts; i++) {
        if (0 == strcmp(fab->hosts[i].name, name)) {
            return (int) i;
        }
    }
    return -1;
}

int tbsim_cable_find(const struct tbsim_fabric *fab, const char *id)
{
    for (uint32_t i = 0; i < fab->ncables; i++) {
        if (0 == strcmp(fab->cables[i].id, id)) {
            return (int) i;
        }
    }
    return -1;
}

static int topo_add_host(struct tbsim_fabric *fab, const char *name, char *err, size_t errlen)
{
    if (TBSIM_MAX_HOSTS <= fab->nhosts || TBSIM_NAME_LEN <= strlen(name)) {
        snprintf(err, errlen, "topology: too many hosts or name too long: %s", name);
        return -EINVAL;
    }
    snprintf(fab->hosts[fab->nhosts].name, TBSIM_NAME_LEN, "%s", name);
    atomic_store(&fab->hosts[fab->nhosts].rdma_enabled, 1);
    fab->nhosts++;
    return 0;
}

static int topo_add_cable(struct tbsim_fabric *fab, char **f, char *err, size_t errlen)
{
    struct tbsim_cable *cable = &fab->cables[fab->ncables];
    int c = (int) fab->ncables;

    if (TBSIM_MAX_CABLE <= fab->ncables || TBSIM_ID_LEN <= strlen(f[0])) {
        snprintf(err, errlen, "topology: too many cables or id too long: %s", f[0]);
        return -EINVAL;
    }
    snprintf(cable->id, TBSIM_ID_LEN, "%s", f[0]);
    for (int end = 0; end < 2; end++) {
        int host = tbsim_host_find(fab, f[1 + 2 * end]);
        struct tbsim_dev *dev = &fab->devs[2 * c + end];

        if (host < 0 || TBSIM_IF_LEN <= strlen(f[2 + 2 * end])) {
            snprintf(err, errlen, "topology: cable %s: unknown host %s or bad interface %s", f[0],
                     f[1 + 2 * end], f[2 + 2 * end]);
            return -EINVAL;
        }
        cable->host[end] = host;
        snprintf(cable->ifname[end], TBSIM_IF_LEN, "%s", f[2 + 2 * end]);
        dev->host = host;
        dev->cable = c;
        dev->end = end;
        snprintf(dev->ifname, TBSIM_IF_LEN, "%s", f[2 + 2 * end]);
    }
    fab->ncables++;
    return 0;
}

static int topo_line(struct tbsim_fabric *fab, char *line, char *err, size_t errlen)
{
    char *f[6];
    int n = 0;
    char *save = NULL;

    for (char *tok = strtok_r(line, " \t\r\n", &save); NULL != tok && n < 6;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        f[n++] = tok;
    }
    if (0 == n || '#' == f[0][0]) {
        return 0;
    }
    if (2 == n && 0 == strcmp(f[0], "host")) {
        return topo_add_host(fab, f[1], err, errlen);
    }
    if (6 == n && 0 == strcmp(f[0], "cable")) {
        return topo_add_cable(fab, &f[1], err, errlen);
    }
    snprintf(err, errlen, "topology: cannot parse line starting with '%s'", f[0]);
    return -EINVAL;
}

static int topo_read(struct tbsim_fabric *fab, char *err, size_t errlen)
{
    char path[4096];
    char line[512];
    FILE *fp;
    int rc = 0;

    snprintf(path, sizeof(path), "%s/%s", tbsim_dir(), TBSIM_TOPO_FILE);
    fp = fopen(path, "re");
    if (NULL == fp) {
        rc = -errno;
        snprintf(err, errlen, "topology %s: %s", path, strerror(errno));
        return rc;
    }
    while (0 == rc && NULL != fgets(line, sizeof(line), fp)) {
        rc = topo_line(fab, line, err, errlen);
    }
    fclose(fp);
    return rc;
}

static uint64_t fabric_new_id(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return ((uint64_t) ts.tv_sec << 20) ^ (uint64_t) ts.tv_nsec ^ ((uint64_t) getpid() << 40);
}

static int fabric_write(const struct tbsim_fabric *fab, char *err, size_t errlen)
{
    char path[4096];
    char tmp[4200];
    int fd;

    fabric_path(path, sizeof(path));
    snprintf(tmp, sizeof(tmp), "%s.new", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0 || sizeof(*fab) != (size_t) write(fd, fab, sizeof(*fab))) {
        snprintf(err, errlen, "fabric %s: %s", tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -EIO;
    }
    fchmod(fd, 0666);
    close(fd);
    /* rename: a process never maps a half-written fabric */
    if (0 != rename(tmp, path)) {
        snprintf(err, errlen, "fabric %s: %s", path, strerror(errno));
        return -errno;
    }
    return 0;
}

int tbsim_fabric_init(char *err, size_t errlen)
{
    struct tbsim_fabric *fab = calloc(1, sizeof(*fab));
    int rc;

    if (NULL == fab) {
        snprintf(err, errlen, "fabric: out of memory");
        return -ENOMEM;
    }
    fab->version = TBSIM_VERSION;
    fab->size = sizeof(*fab);
    fab->fabric_id = fabric_new_id();
    atomic_store(&fab->next_qpn, 0x100);
    atomic_store(&fab->next_gen, 1);
    for (int d = 0; d < TBSIM_MAX_DEVS; d++) {
        fab->devs[d].host = -1;
    }
    rc = topo_read(fab, err, errlen);
    if (0 == rc) {
        fab->magic = TBSIM_MAGIC;
        rc = fabric_write(fab, err, errlen);
    }
    free(fab);
    return rc;
}

void tbsim_rxq_path(const struct tbsim_fabric *fab, int dev, int slot, char *buf, size_t len)
{
    snprintf(buf, len, "%s/tbsim-%016llx-d%d-q%d", tbsim_shm_dir(),
             (unsigned long long) fab->fabric_id, dev, slot);
}

int tbsim_fabric_destroy(void)
{
    struct tbsim_fabric *fab = tbsim_fabric_map();
    char path[4096];
    int rc = 0;

    if (NULL != fab) {
        for (int d = 0; d < TBSIM_MAX_DEVS; d++) {
            for (int q = 0; q < TBSIM_QP_SLOTS; q++) {
                tbsim_rxq_path(fab, d, q, path, sizeof(path));
                unlink(path);
            }
        }
        munmap(fab, sizeof(*fab));
    }
    fabric_path(path, sizeof(path));
    if (0 != unlink(path) && ENOENT != errno) {
        rc = -errno;
    }
    return rc;
}
