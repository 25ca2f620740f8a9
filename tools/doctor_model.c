/*
 * The helpers every part of tbrdma-doctor shares over its model of a cluster (doctor.h): the
 * names hosts and ports go by in messages, whether a port is usable, and the list of findings.
 * The lowest of the doctor's files: it calls none of the others.
 */
#include "doctor.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *doc_host_name(const doc_host_t *h)
{
    return ('\0' != h->hostname[0]) ? h->hostname : h->entry.name;
}

void doc_add(doc_cluster_t *cl, const char *check, int problem, int host, const char *device,
             const char *ifname, const char *format, ...)
{
    doc_finding_t *f;
    va_list ap;

    if (cl->nfindings == cl->maxfindings) {
        int max = (0 == cl->maxfindings) ? 16 : 2 * cl->maxfindings;
        doc_finding_t *grown = realloc(cl->findings, (size_t) max * sizeof(*grown));

        if (NULL == grown) {
            return;
        }
        cl->findings = grown;
        cl->maxfindings = max;
    }
    f = &cl->findings[cl->nfindings++];
    memset(f, 0, sizeof(*f));
    snprintf(f->check, sizeof(f->check), "%s", check);
    f->problem = problem;
    f->host = host;
    snprintf(f->device, sizeof(f->device), "%s", (NULL != device) ? device : "");
    snprintf(f->ifname, sizeof(f->ifname), "%s", (NULL != ifname) ? ifname : "");
    va_start(ap, format);
    vsnprintf(f->text, sizeof(f->text), format, ap);
    va_end(ap);
}

/* "host H: device D (interface I)" for messages. */
void doc_port_subject(const doc_host_t *h, const doc_port_t *p, char *buf, size_t len)
{
    snprintf(buf, len, "host %s: device %s (interface %s)", doc_host_name(h), p->info.device,
             ('\0' != p->info.ifname[0]) ? p->info.ifname : "none");
}

int doc_port_usable(const doc_port_t *p)
{
    return 0 == strcmp(p->diag, "ok");
}
