/*
 * tbrdma's output stream and help-message wrapper (see btl_tbrdma_output.h).
 * The help file is optional at run time: a plugin used from its build directory or copied
 * without its data file still explains itself, through opal_output instead of opal_show_help.
 */
#include "btl_tbrdma_output.h"

#include "opal/util/show_help.h"

#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#define TBRDMA_HELP_FILE "help-mpi-btl-tbrdma.txt"

/* The directories searched for the help file, installed one first. */
static const char *const output_help_dirs[] = {TBRDMA_HELP_DIR, TBRDMA_HELP_BUILD_DIR};

static int output_help_found;

/* 1 when dir/help-mpi-btl-tbrdma.txt is readable. */
static int output_help_readable(const char *dir)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof(path), "%s/%s", dir, TBRDMA_HELP_FILE);

    if (0 > n || (size_t) n >= sizeof(path)) {
        return 0;
    }
    return 0 == access(path, R_OK);
}

static void output_find_help(void)
{
    size_t i;

    output_help_found = 0;
    if (!TBRDMA_HAVE_SHOW_HELP_DIR) {
        return;
    }
    for (i = 0; i < sizeof(output_help_dirs) / sizeof(output_help_dirs[0]); i++) {
        if (output_help_readable(output_help_dirs[i])) {
            opal_show_help_add_dir(output_help_dirs[i]);
            output_help_found = 1;
            TBRDMA_VERBOSE(TBRDMA_VERBOSE_RESOURCE, "help file %s/%s", output_help_dirs[i],
                           TBRDMA_HELP_FILE);
            return;
        }
    }
    TBRDMA_VERBOSE(TBRDMA_VERBOSE_RESOURCE, "no %s in %s or %s: messages go to opal_output",
                   TBRDMA_HELP_FILE, TBRDMA_HELP_DIR, TBRDMA_HELP_BUILD_DIR);
}

void mca_btl_tbrdma_output_open(void)
{
    mca_btl_tbrdma_component.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_btl_tbrdma_component.output, mca_btl_tbrdma_component.verbose);
    output_find_help();
}

void mca_btl_tbrdma_output_close(void)
{
    if (0 <= mca_btl_tbrdma_component.output) {
        opal_output_close(mca_btl_tbrdma_component.output);
        mca_btl_tbrdma_component.output = -1;
    }
}

int mca_btl_tbrdma_show_help_available(void)
{
    return output_help_found;
}

void mca_btl_tbrdma_show_help(const char *topic, const char *text)
{
    if (output_help_found) {
        opal_show_help(TBRDMA_HELP_FILE, topic, true, text);
        return;
    }
    opal_output(0, "tbrdma: %s", text);
}
