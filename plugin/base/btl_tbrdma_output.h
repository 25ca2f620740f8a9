/*
 * tbrdma's output: the btl_tbrdma_verbose stream and the one way user-facing messages are
 * shown. Works in release builds of Open MPI (BTL_VERBOSE does not: it is compiled out unless
 * Open MPI was configured --enable-debug).
 *
 * Verbosity levels: 1 = why tbrdma declines, which ports it uses, the mesh; 5 = per peer;
 * 10 = per resource (device, port, GID); 20 = every refused frame.
 */
#ifndef BTL_TBRDMA_OUTPUT_H
#define BTL_TBRDMA_OUTPUT_H

#include "btl_tbrdma.h"

#include "opal/util/output.h"

/* Room for one message of core/ (a port diagnosis is well under 1 KiB). */
#define TBRDMA_MSG_MAX 2048

#define TBRDMA_VERBOSE_DECLINE  1
#define TBRDMA_VERBOSE_PEER     5
#define TBRDMA_VERBOSE_RESOURCE 10
#define TBRDMA_VERBOSE_FRAME    20 /* every refused frame, every retransmission timeout */
#define TBRDMA_VERBOSE_WIRE     30 /* every frame sent and received (slow: debugging only) */

/* Prints "tbrdma: <fmt>" on the tbrdma stream when btl_tbrdma_verbose >= level. */
#define TBRDMA_VERBOSE(level, fmt, ...)                                                   \
    do {                                                                                  \
        if (mca_btl_tbrdma_component.verbose >= (level)) {                                \
            opal_output_verbose((level), mca_btl_tbrdma_component.output, "tbrdma: " fmt, \
                                ##__VA_ARGS__);                                           \
        }                                                                                 \
    } while (0)

/*
 * An internal invariant, checked in checking builds only (-DTBRDMA_DEBUG: test/mpi/asan.sh): when
 * it does not hold, the process says which and where, and aborts (a wrong frame handed to two
 * owners is silent corruption in a release build). Compiled out otherwise.
 */
#ifdef TBRDMA_DEBUG
#define TBRDMA_ASSERT(cond, what) mca_btl_tbrdma_assert((cond), (what), __FILE__, __LINE__)
void mca_btl_tbrdma_assert(int ok, const char *what, const char *file, int line);
#else
#define TBRDMA_ASSERT(cond, what) ((void) 0)
#endif

/*
 * Opens the verbose stream (silent until mca_btl_tbrdma_output_set_verbosity) and looks for
 * the help file (installed $(pkgdatadir), then the source directory of an uninstalled build);
 * when found, adds its directory to Open MPI's help search path. Call from component register,
 * before the parameters are verified (their warnings are shown through the help file).
 */
void mca_btl_tbrdma_output_open(void);

/* Sets the stream's verbosity (btl_tbrdma_verbose, once verified). */
void mca_btl_tbrdma_output_set_verbosity(int verbose);

/* Closes the stream. Call from component close. */
void mca_btl_tbrdma_output_close(void);

/*
 * Shows one user-facing message (text formatted by core/, e.g. tbrdma_diag_port_message) on
 * stderr: framed by the given topic of help-mpi-btl-tbrdma.txt (which says what happens next),
 * rendered by Open MPI's help system, when Open MPI can read our help file; else as one
 * "tbrdma: <text>" line. Always shown, whatever the verbosity; callers decide how often.
 */
void mca_btl_tbrdma_show_help(const char *topic, const char *text);

/*
 * Shows a message that every process may have alike (a parameter set for the whole job, the
 * job's mesh), framed as above. Call it from every process that sees the problem: Open MPI 5.0's
 * mpirun shows it once and counts the rest; on Open MPI 4.1 each host's first process prints it.
 */
void mca_btl_tbrdma_show_help_all(const char *topic, const char *text);

/*
 * True in the process that speaks for its host (local rank 0): messages every process of a host
 * would print alike are printed by that one only.
 */
bool mca_btl_tbrdma_speaks_for_host(void);

#endif /* BTL_TBRDMA_OUTPUT_H */
