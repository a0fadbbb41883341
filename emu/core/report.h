/* The end-of-run report: named sections of named values, printed as text
 * and written as JSON.  Devices add their counters through this. */
#ifndef NICEMU_REPORT_H
#define NICEMU_REPORT_H

#include <glib.h>
#include <stdint.h>
#include <stdio.h>

typedef struct nm_report nm_report;

nm_report *nm_report_new(void);
void nm_report_free(nm_report *r);
/* Starts a new section; values added after go in it. */
void nm_report_section(nm_report *r, const char *name);
void nm_report_u64(nm_report *r, const char *key, uint64_t value);
void nm_report_str(nm_report *r, const char *key, const char *value);
void nm_report_double(nm_report *r, const char *key, double value);
void nm_report_print(const nm_report *r, FILE *out);
/* Only the sections whose name is `name` or starts with `name.`. */
void nm_report_print_sections(const nm_report *r, const char *name, FILE *out);
char *nm_report_json(const nm_report *r);

#endif
