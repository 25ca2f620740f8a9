/*
 * tbrdma's output stream and help-message wrapper (see btl_tbrdma_output.h).
 * The help file is optional at run time: a plugin used from its build directory or copied
 * without its data file still explains itself, through opal_output instead of opal_show_help.
 */
#include "base/btl_tbrdma_output.h"

#include "opal/util/show_help.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define TBRDMA_HELP_FILE "help-mpi-btl-tbrdma.txt"

/* The directories searched for the help file, installed one first. */
static const char *const output_help_dirs[] = {TBRDMA_HELP_DIR, TBRDMA_HELP_BUILD_DIR};

static const char *output_help_dir; /* where the help file was found, NULL when not */

/* 1 when dir/help-mpi-btl-tbrdma.txt is readable. */
static int output_help_readable(const char *dir)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof(path), "%s/%s", dir, TBRDMA_HELP_FILE);

    if (0 > n || sizeof(path) <= (size_t) n) {
        return 0;
    }
    return 0 == access(path, R_OK);
}

static void output_find_help(void)
{
    size_t i;

    output_help_dir = NULL;
    if (!TBRDMA_HAVE_SHOW_HELP_DIR) {
        return;
    }
    for (i = 0; i < sizeof(output_help_dirs) / sizeof(output_help_dirs[0]); i++) {
        if (output_help_readable(output_help_dirs[i])) {
            opal_show_help_add_dir(output_help_dirs[i]);
            output_help_dir = output_help_dirs[i];
            return;
        }
    }
}

/*
 * A stream on stderr without opal_output's default "[host:pid] " prefix: tbrdma's lines start
 * with "tbrdma: " (or "tbrdma mesh: ") so that scripts can find them, and name their host.
 */
void mca_btl_tbrdma_output_open(void)
{
    opal_output_stream_t lds;

    OBJ_CONSTRUCT(&lds, opal_output_stream_t);
    lds.lds_want_stderr = true;
    mca_btl_tbrdma_component.output = opal_output_open(&lds);
    OBJ_DESTRUCT(&lds);
    output_find_help();
}

void mca_btl_tbrdma_output_set_verbosity(int verbose)
{
    opal_output_set_verbosity(mca_btl_tbrdma_component.output, verbose);
    if (NULL != output_help_dir) {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_RESOURCE, "help file %s/%s", output_help_dir,
                       TBRDMA_HELP_FILE);
    } else {
        TBRDMA_VERBOSE(TBRDMA_VERBOSE_RESOURCE, "no %s in %s or %s: messages are plain lines",
                       TBRDMA_HELP_FILE, TBRDMA_HELP_DIR, TBRDMA_HELP_BUILD_DIR);
    }
}

void mca_btl_tbrdma_output_close(void)
{
    if (0 <= mca_btl_tbrdma_component.output) {
        opal_output_close(mca_btl_tbrdma_component.output);
        mca_btl_tbrdma_component.output = -1;
    }
}

/*
 * The help text is rendered by Open MPI (opal_show_help_string: our file, its framing) but
 * printed here, on stderr, instead of through opal_show_help: the text names this host's own
 * device, cable or peer, and Open MPI's aggregation keys on the topic alone, so it would show the
 * first host's diagnosis and only count the others'. Callers print once per host.
 */
void mca_btl_tbrdma_show_help(const char *topic, const char *text)
{
    char *rendered = NULL;

    if (NULL != output_help_dir) {
        rendered = opal_show_help_string(TBRDMA_HELP_FILE, topic, true, text);
    }
    if (NULL != rendered) {
        opal_output(mca_btl_tbrdma_component.output, "%s", rendered);
        free(rendered);
        return;
    }
    opal_output(mca_btl_tbrdma_component.output, "tbrdma: %s", text);
}

/*
 * Open MPI 5.0: through opal_show_help, which mpirun aggregates (the first process's message,
 * then "N more processes have sent help message ..."). Open MPI 4.1.4 loses about one relayed
 * message in ten: mpirun's orte_show_help_recv fails to unpack it ("Data unpack had inadequate
 * space ... show_help.c at line 513"); the message came from orted's PMIx log handler
 * (pmix_server_log_fn), which sends it from the PMIx server thread, the likely cause (a guess,
 * from reading 4.1.4's source). So on 4.1 the host's first process prints it, once per host.
 */
void mca_btl_tbrdma_show_help_all(const char *topic, const char *text)
{
#if OPAL_MAJOR_VERSION >= 5
    if (NULL != output_help_dir) {
        opal_show_help(TBRDMA_HELP_FILE, topic, true, text);
        return;
    }
#endif
    if (mca_btl_tbrdma_speaks_for_host()) {
        mca_btl_tbrdma_show_help(topic, text);
    }
}

bool mca_btl_tbrdma_speaks_for_host(void)
{
    return 0 == TBRDMA_MY_LOCAL_RANK();
}

#ifdef TBRDMA_DEBUG
void mca_btl_tbrdma_assert(int ok, const char *what, const char *file, int line)
{
    if (ok) {
        return;
    }
    fprintf(stderr, "tbrdma: internal check failed: %s (%s:%d)\n", what, file, line);
    fflush(stderr);
    abort();
}
#endif
