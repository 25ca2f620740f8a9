/*
 * The report of tbrdma-fieldtest: a human table, --json (one probe object per line, so that a
 * line-based reader can pick one out) and --markdown (a table to paste into an issue). The
 * formats are documented in docs/field-validation.md; add fields only at the end.
 */
#include "probe.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void result_set(probe_result_t *r, probe_verdict_t v, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(r->observed, sizeof(r->observed), fmt, ap);
    va_end(ap);
    r->verdict = v;
}

void result_untested(probe_result_t *r, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(r->why, sizeof(r->why), fmt, ap);
    va_end(ap);
    if ('\0' == r->observed[0]) {
        snprintf(r->observed, sizeof(r->observed), "-");
    }
    r->verdict = VERDICT_UNTESTED;
}

const char *verdict_name(probe_verdict_t v)
{
    switch (v) {
    case VERDICT_SAME:
        return "same";
    case VERDICT_DIFFERS:
        return "differs";
    default:
        return "could not test";
    }
}

/* Writes s as a JSON string (quotes included). */
static void json_str(const char *s)
{
    putchar('"');
    for (; NULL != s && '\0' != *s; s++) {
        unsigned char c = (unsigned char) *s;

        if ('"' == c || '\\' == c) {
            printf("\\%c", c);
        } else if (c < 0x20) {
            printf("\\u%04x", c);
        } else {
            putchar(c);
        }
    }
    putchar('"');
}

/* Writes s as a Markdown table cell ('|' escaped, newlines as spaces). */
static void md_cell(const char *s)
{
    for (; NULL != s && '\0' != *s; s++) {
        if ('|' == *s) {
            fputs("\\|", stdout);
        } else {
            putchar('\n' == *s ? ' ' : *s);
        }
    }
}

static void count(const probe_result_t *res, int n, int c[3])
{
    c[0] = c[1] = c[2] = 0;
    for (int i = 0; i < n; i++) {
        c[res[i].verdict]++;
    }
}

static void report_json(const probe_env_t *env, const probe_result_t *res, int n,
                        const char *stopped)
{
    int c[3];

    printf("{\"tool\": \"tbrdma-fieldtest\", \"version\": %d, \"host\": ", PROBE_VERSION);
    json_str(env->host);
    printf(", \"device\": ");
    json_str(env->port.device);
    printf(", \"interface\": ");
    json_str(env->port.ifname);
    printf(", \"verbs_lib\": ");
    json_str(env->lib);
    printf(", \"peer\": ");
    json_str(env->peer_name);
    printf(", \"peer_device\": ");
    json_str(env->peer_port.device);
    printf(", \"stopped\": ");
    json_str(NULL != stopped ? stopped : "");
    printf(",\n \"probes\": [\n");
    for (int i = 0; i < n; i++) {
        const probe_result_t *r = &res[i];

        printf("  {\"name\": \"%s\", \"scope\": \"%s\", \"verdict\": \"%s\", \"assumes\": ",
               r->name, r->scope, verdict_name(r->verdict));
        json_str(r->assumes);
        printf(", \"rule\": ");
        json_str(r->rule);
        printf(", \"observed\": ");
        json_str(r->observed);
        printf(", \"why\": ");
        json_str(r->why);
        printf(", \"seconds\": %.2f}%s\n", r->seconds, i + 1 < n ? "," : "");
    }
    count(res, n, c);
    printf(" ],\n \"summary\": {\"same\": %d, \"differs\": %d, \"could_not_test\": %d}}\n", c[0],
           c[1], c[2]);
}

static void report_markdown(const probe_env_t *env, const probe_result_t *res, int n,
                            const char *stopped)
{
    char date[32];
    time_t now = time(NULL);
    int c[3];

    strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
    printf("### tbrdma-fieldtest report: %s %s (%s)", env->host, env->port.device,
           env->port.ifname);
    if ('\0' != env->peer_name[0]) {
        printf(" to %s %s", env->peer_name, env->peer_port.device);
    }
    printf("\n\nverbs library `%s`, %s, tbrdma-fieldtest version %d%s%s\n\n", env->lib, date,
           PROBE_VERSION, NULL != stopped ? "; stopped early: " : "",
           NULL != stopped ? stopped : "");
    printf("| probe | simulator assumes | rule (test/sim/README.md) | observed | verdict |\n");
    printf("|---|---|---|---|---|\n");
    for (int i = 0; i < n; i++) {
        const probe_result_t *r = &res[i];

        printf("| `%s` | ", r->name);
        md_cell(r->assumes);
        printf(" | \"");
        md_cell(r->rule);
        printf("\" | ");
        md_cell(r->observed);
        if (VERDICT_UNTESTED == r->verdict) {
            printf(" (");
            md_cell(r->why);
            printf(")");
        }
        printf(" | **%s** |\n", verdict_name(r->verdict));
    }
    count(res, n, c);
    printf("\n%d probes: %d same, %d differs, %d could not test\n", n, c[0], c[1], c[2]);
}

static void report_table(const probe_env_t *env, const probe_result_t *res, int n,
                         const char *stopped)
{
    int c[3];

    printf("tbrdma-fieldtest %d: host %s, device %s (%s), verbs library %s", PROBE_VERSION,
           env->host, env->port.device, env->port.ifname, env->lib);
    if ('\0' != env->peer_name[0]) {
        printf(", peer %s %s", env->peer_name, env->peer_port.device);
    }
    printf("\n\n%-14s %-15s %s\n", "PROBE", "VERDICT", "SIMULATOR ASSUMES / OBSERVED");
    for (int i = 0; i < n; i++) {
        const probe_result_t *r = &res[i];

        printf("%-14s %-15s assumes:  %s\n", r->name, verdict_name(r->verdict), r->assumes);
        printf("%-30s rule:     test/sim/README.md \"%s\"\n", "", r->rule);
        printf("%-30s observed: %s\n", "", r->observed);
        if (VERDICT_UNTESTED == r->verdict) {
            printf("%-30s why:      %s\n", "", r->why);
        }
    }
    count(res, n, c);
    printf("\n%d probes: %d same, %d differs, %d could not test%s%s\n", n, c[0], c[1], c[2],
           NULL != stopped ? "; stopped early: " : "", NULL != stopped ? stopped : "");
}

void report_print(report_format_t fmt, const probe_env_t *env, const probe_result_t *res, int n,
                  const char *stopped)
{
    switch (fmt) {
    case REPORT_JSON:
        report_json(env, res, n, stopped);
        break;
    case REPORT_MARKDOWN:
        report_markdown(env, res, n, stopped);
        break;
    default:
        report_table(env, res, n, stopped);
        break;
    }
    fflush(stdout);
}
