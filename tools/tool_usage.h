/*
 * The option list of a tool's --help, printed from its getopt_long table and a parallel table
 * of argument names and help texts (the fi_info style the tools share).
 */
#ifndef TBRDMA_TOOL_USAGE_H
#define TBRDMA_TOOL_USAGE_H

#include <getopt.h>
#include <stdio.h>

/*
 * One entry per option: "  -x, --name ARG" (options without a short letter, val >= 256, are
 * indented alike), then its help text on the next line. help[i] = {ARG or "", text}.
 */
void tbrdma_tool_options(FILE *out, const struct option *longopts, const char *const help[][2]);

/*
 * --version: "NAME (tbrdma) VERSION+src.ID", NAME the program's base name, ID the checksum of
 * the component's sources (tools/Makefile.am), as tbrdma-info prints it.
 */
void tbrdma_tool_version(FILE *out, const char *argv0);

#endif /* TBRDMA_TOOL_USAGE_H */
