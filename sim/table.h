/* table.h - body tables for model: file (sim/table.c), and the text helpers
 * it shares with the state CSV reader (sim/state_csv.c). Private to sim/
 * (and its tests and fuzz harness).
 *
 * A body table is text, lines as the state CSV's (sim.h: at most
 * SIM_CSV_LINE_MAX bytes, "\n" or "\r\n", no NUL byte). Blank lines and
 * comment lines (# as the first character that is not a blank) may come
 * anywhere. The first other line decides the separator: a comma if it holds
 * one (CSV: each field stripped of the spaces and tabs around it), else
 * runs of spaces and tabs (SPLASH-style ascii). That line is the header
 * when any of its fields is not a number: its fields name the columns.
 * Without a header line, the last comment line before the first row names
 * them when it has as many fields as the rows and is not all numbers
 * (numpy.savetxt's "# x y z mass"). Every row has as many fields as the
 * first.
 *
 * The column map (bodies.*.columns, SCENE_NCOL strings in the order of
 * enum scene_column) gives each of x, y, z, vx, vy, vz, mass a column: a
 * whole number is a position (1 = the first field), anything else a name
 * matched against the header's without regard to case; "" means the column
 * named like the quantity, if there is one. x, y and z must have a column;
 * vx, vy, vz all three or none (none: every velocity 0); mass none means 1
 * each (scene units). Other columns are not read. Values in the used
 * columns follow the state CSV's rules (decimal, finite, mass > 0, |x|, |v|
 * at most SIM_CSV_XMAX).
 *
 * A file whose first line is exactly the state CSV header, read with an
 * empty map, is a state CSV and read by sim_state_read_csv, with all its
 * rules (ids, components, where blank lines may be). */
#ifndef NB_SIM_TABLE_H
#define NB_SIM_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "sim.h"

#define SIM_CSV_HEADER "id,component,mass,x,y,z,vx,vy,vz"

/* Read the next line of f into buf (SIM_CSV_LINE_MAX + 2 bytes) without its
 * end; *line counts lines (for messages naming name:line). 1: a line; 0: end
 * of file; NB_EINPUT (NUL byte, line too long) or NB_ERUNTIME (read error),
 * logged. */
int sim_csv_line(FILE *f, const char *name, long *line, char *buf);
/* 1 when s is a decimal number as %g writes it: [+-]digits[.digits]
 * [(e|E)[+-]digits], with digits on at least one side of the point. No
 * blanks, no hex, no nan or inf. */
int sim_csv_is_decimal(const char *s);
/* s for a message in out (len bytes): at most 40 bytes of it, bytes outside
 * printable ASCII as \xNN. Returns out. */
const char *sim_csv_show(const char *s, char *out, size_t len);

/* Read the body table at path with the column map cols (NULL: every entry
 * ""), as sim_state_read_csv reads a state CSV: *out_n gets the body count
 * (0 on error); the bodies go to st at first.. converted by u when st !=
 * NULL (u may be NULL in a count pass). lg_mass, if not NULL, gets log10 of
 * the total mass in scene units. bad_col, if not NULL, gets the enum
 * scene_column whose map entry the refusal is about, else -1. Returns 0,
 * NB_EINPUT (one message naming path:line and the column by name and
 * position) or NB_ERUNTIME. */
int sim_table_read(const char *path, const char (*cols)[SCENE_NAME_MAX],
		   const struct sim_units *u, struct sim_state *st, size_t first, size_t *out_n,
		   double *lg_mass, int *bad_col);
/* The same over the len bytes at buf, naming it name, with at most
 * max_bodies bodies (as sim_state_read_csv_mem). For fuzzing and tests. */
int sim_table_read_mem(const char *name, const void *buf, size_t len,
		       const char (*cols)[SCENE_NAME_MAX], size_t max_bodies,
		       const struct sim_units *u, struct sim_state *st, size_t first,
		       size_t *out_n);

#endif
