/* The option list of a tool's --help, and its --version (see tool_usage.h). */
#include "config.h"

#include "tool_usage.h"

#include "tbrdma_source_id.h"

#include <string.h>

#define TOOL_SHORT_MAX 256 /* getopt_long vals from here on have no short letter */

void tbrdma_tool_options(FILE *out, const struct option *longopts, const char *const help[][2])
{
    size_t i;

    for (i = 0; NULL != longopts[i].name; i++) {
        if (TOOL_SHORT_MAX > longopts[i].val) {
            fprintf(out, "  -%c, ", longopts[i].val);
        } else {
            fprintf(out, "      ");
        }
        fprintf(out, "--%s%s%s\n        %s\n", longopts[i].name, ('\0' != help[i][0][0]) ? " " : "",
                help[i][0], help[i][1]);
    }
}

void tbrdma_tool_version(FILE *out, const char *argv0)
{
    const char *slash = strrchr(argv0, '/');

    fprintf(out, "%s (tbrdma) %s+src.%s\n", (NULL != slash) ? slash + 1 : argv0, PACKAGE_VERSION,
            TBRDMA_SOURCE_ID);
}
