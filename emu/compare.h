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

#endif
