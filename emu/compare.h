/* `nicemu compare` and `nicemu ab`: one workload on several CPU models (and,
 * for ab, two kernels), each run a child nicemu process writing
 * --report-json to a temporary directory, gathered into one table
 * (docs/measuring-a-driver-patch.md). */
#ifndef NICEMU_COMPARE_H
#define NICEMU_COMPARE_H

#include <glib.h>

/* argv[0] is the subcommand ("compare" or "ab").  Returns the exit status:
 * 0 all runs ended well, 1 a run failed, 2 bad usage. */
int nm_compare_main(int argc, char **argv);

/* The flat two-level JSON nm_report_json writes, as "section/key" -> value
 * text (strings unquoted).  NULL on a syntax error. */
GHashTable *nm_report_json_parse(const char *text);

/* Why a child run failed, from its log file: its first line containing
 * `needle` (compare: "error"; sweep: "error:", not counters named *_errors),
 * else nicemu's "run ended" summary line.  The caller frees it. */
char *nm_run_log_reason(const char *log, const char *needle);

#endif
