/* table.c - body tables for model: file: CSV or whitespace-separated
 * (SPLASH-style) columns, with a column map by header name or position.
 * The rules are in table.h and docs/scenes.md ("Body tables"). A state CSV
 * read with the default map goes to sim/state_csv.c, whose rules it keeps.
 *
 * Try: printf '# x y z m\n0 0 0 1\n1 0 0 2\n' > b.txt and a scene entry
 * {name: b, model: file, file: b.txt, columns: {mass: m}}. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sim.h"
#include "table.h"

#define TAB_MAXF (SIM_CSV_LINE_MAX + 1) /* the most fields a line can hold */
#define TAB_STATE_CSV 1                 /* from the stream reader: a state CSV */
#define TAB_BLANKS " \t"

static const char *const tab_qty[SCENE_NCOL] = {"x", "y", "z", "vx", "vy", "vz", "mass"};

/* One pass over one table. */
struct tab_reader {
	FILE *f;
	const char *name; /* for messages */
	long line;        /* number of the line in buf */
	char buf[SIM_CSV_LINE_MAX + 2];
	char names_buf[SIM_CSV_LINE_MAX + 2]; /* the line that names the columns, split */
	char comment[SIM_CSV_LINE_MAX + 2];   /* the last comment before the first row */
	long comment_line;                    /* its line, 0: none */
	char *names[TAB_MAXF];
	int nnames;        /* 0: no line names the columns */
	long names_line;   /* the line that does */
	char *fields[TAB_MAXF];
	char sep;          /* ',' or ' ' (runs of blanks) */
	int nf;            /* fields in every row */
	long shape_line;   /* the line that set nf */
	int col[SCENE_NCOL]; /* field index of each quantity, -1: none */
	int bad_col;       /* the map entry a refusal is about, -1: none */
	long double mass;  /* total so far, scene units */
};

/* 1: a blank line, 2: a comment, 0: a line of fields. */
static int tab_kind(const char *s)
{
	s += strspn(s, TAB_BLANKS);
	return *s == '\0' ? 1 : *s == '#' ? 2 : 0;
}

/* Split line (modified in place) at sep into fields[]; returns the count. */
static int tab_split(char *line, char sep, char **fields)
{
	int n = 0;
	if (sep == ' ') {
		char *save = NULL;
		for (char *t = strtok_r(line, TAB_BLANKS, &save); t;
		     t = strtok_r(NULL, TAB_BLANKS, &save))
			fields[n++] = t;
		return n;
	}
	for (char *p = line;; p++) {
		char *end = strchr(p, ',');
		if (end)
			*end = '\0';
		p += strspn(p, TAB_BLANKS);
		size_t len = strlen(p);
		while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			p[--len] = '\0';
		fields[n++] = p;
		if (!end)
			return n;
		p = end;
	}
}

static int tab_all_numbers(char **fields, int n)
{
	for (int i = 0; i < n; i++)
		if (!sim_csv_is_decimal(fields[i]))
			return 0;
	return 1;
}

/* The next line of fields into r->buf: 1, 0 at the end, or an error. Keeps
 * the last comment while no row has been read (r->nf == 0). */
static int tab_next(struct tab_reader *r)
{
	int got;
	while ((got = sim_csv_line(r->f, r->name, &r->line, r->buf)) > 0) {
		int kind = tab_kind(r->buf);
		if (kind == 0)
			return 1;
		if (kind == 2 && r->nf == 0) {
			memcpy(r->comment, r->buf, sizeof r->comment);
			r->comment_line = r->line;
		}
	}
	return got;
}

/* "column 4 'm' (mass)", or "column 4 (mass)" without names. */
static const char *tab_label(const struct tab_reader *r, int q, char *out, size_t len)
{
	int c = r->col[q];
	if (c < r->nnames && r->names[c][0])
		snprintf(out, len, "column %d '%.60s' (%s)", c + 1, r->names[c], tab_qty[q]);
	else
		snprintf(out, len, "column %d (%s)", c + 1, tab_qty[q]);
	return out;
}

/* "x, y, z, m": the header's names, cut short. */
static const char *tab_names_list(const struct tab_reader *r, char *out, size_t len)
{
	size_t o = 0;
	out[0] = '\0';
	for (int i = 0; i < r->nnames && o + 80 < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%.60s", i ? ", " : "", r->names[i]);
	if (o + 80 >= len)
		snprintf(out + o, len - o, ", ...");
	return out;
}

/* Names from the last comment before the first row, when it has r->nf
 * fields and not only numbers. */
static void tab_names_from_comment(struct tab_reader *r)
{
	if (!r->comment_line)
		return;
	char *s = r->comment + strspn(r->comment, TAB_BLANKS) + 1; /* past the # */
	memmove(r->names_buf, s, strlen(s) + 1);
	int n = tab_split(r->names_buf, r->sep, r->names);
	if (n == r->nf && !tab_all_numbers(r->names, n)) {
		r->nnames = n;
		r->names_line = r->comment_line;
	}
}

/* The header (if any) and the first row, into r->buf. 0, TAB_STATE_CSV,
 * or an error. */
static int tab_start(struct tab_reader *r, int empty_map)
{
	int got = tab_next(r);
	if (got < 0)
		return got;
	if (got == 0) {
		log_error("%s: no bodies: the file holds only blank lines and comments", r->name);
		return NB_EINPUT;
	}
	if (empty_map && r->line == 1 && strcmp(r->buf, SIM_CSV_HEADER) == 0)
		return TAB_STATE_CSV;
	r->sep = strchr(r->buf, ',') ? ',' : ' ';
	memcpy(r->names_buf, r->buf, sizeof r->names_buf);
	int n = tab_split(r->names_buf, r->sep, r->names);
	r->nf = n;
	r->shape_line = r->line;
	if (!tab_all_numbers(r->names, n)) {
		r->nnames = n;
		r->names_line = r->line;
		if ((got = tab_next(r)) < 0)
			return got;
		if (got == 0) {
			log_error("%s: no bodies: the file has only the header line %ld", r->name,
				  r->names_line);
			return NB_EINPUT;
		}
	} else {
		tab_names_from_comment(r);
	}
	return 0;
}

/* The field index spec names for quantity q (spec not ""), or an error. */
static int tab_map_one(struct tab_reader *r, int q, const char *spec, long at)
{
	char shown[200], list[400];
	size_t digits = strspn(spec, "0123456789");
	if (digits == strlen(spec)) {
		long pos = digits <= 9 ? strtol(spec, NULL, 10) : 0;
		if (pos < 1 || pos > r->nf) {
			log_error("%s:%ld: columns.%s: expected a position in [1, %d] (the rows have %d "
				  "fields), got %s",
				  r->name, at, tab_qty[q], r->nf, r->nf, sim_csv_show(spec, shown, sizeof shown));
			return NB_EINPUT;
		}
		r->col[q] = (int)pos - 1;
		return 0;
	}
	if (r->nnames == 0) {
		log_error("%s:%ld: columns.%s: '%s' names a column, but no header line names the "
			  "columns (line %ld holds only numbers); give its position (1 = the first "
			  "field)",
			  r->name, at, tab_qty[q], sim_csv_show(spec, shown, sizeof shown), r->shape_line);
		return NB_EINPUT;
	}
	for (int i = 0; i < r->nnames; i++) {
		if (strcasecmp(r->names[i], spec) == 0) {
			r->col[q] = i;
			return 0;
		}
	}
	log_error("%s:%ld: columns.%s: expected a column of the header, got '%s' (the header has: "
		  "%s)",
		  r->name, at, tab_qty[q], sim_csv_show(spec, shown, sizeof shown),
		  tab_names_list(r, list, sizeof list));
	return NB_EINPUT;
}

/* The default column of quantity q: the one named like it, or -1. */
static int tab_map_default(const struct tab_reader *r, int q)
{
	for (int i = 0; i < r->nnames; i++)
		if (strcasecmp(r->names[i], tab_qty[q]) == 0)
			return i;
	return -1;
}

/* A quantity that must have a column has none. */
static int tab_missing(struct tab_reader *r, int q, long at)
{
	char list[400];
	r->bad_col = q;
	if (r->nnames == 0)
		log_error("%s:%ld: no column for %s: no header line names the columns (line %ld holds "
			  "only numbers); give the positions in bodies.*.columns, e.g. columns: {x: 1, "
			  "y: 2, z: 3}",
			  r->name, at, tab_qty[q], r->shape_line);
	else
		log_error("%s:%ld: no column for %s: the header has none named '%s' (it has: %s); name "
			  "it in bodies.*.columns, e.g. columns: {%s: NAME}",
			  r->name, at, tab_qty[q], tab_qty[q], tab_names_list(r, list, sizeof list),
			  tab_qty[q]);
	return NB_EINPUT;
}

/* Resolve the column map into r->col (the rules in table.h). */
static int tab_map(struct tab_reader *r, const char (*cols)[SCENE_NAME_MAX])
{
	const long at = r->nnames ? r->names_line : r->shape_line;
	char a[120], b[120];
	for (int q = 0; q < SCENE_NCOL; q++) {
		const char *spec = cols ? cols[q] : "";
		r->col[q] = -1;
		if (!spec[0]) {
			r->col[q] = tab_map_default(r, q);
			continue;
		}
		r->bad_col = q;
		if (tab_map_one(r, q, spec, at))
			return NB_EINPUT;
		for (int p = 0; p < q; p++) {
			if (r->col[p] == r->col[q]) {
				log_error("%s:%ld: columns.%s: %s is already the column of %s", r->name, at,
					  tab_qty[q], tab_label(r, q, a, sizeof a), tab_qty[p]);
				return NB_EINPUT;
			}
		}
		r->bad_col = -1;
	}
	for (int q = SCENE_COL_X; q <= SCENE_COL_Z; q++)
		if (r->col[q] < 0)
			return tab_missing(r, q, at);
	int nv = (r->col[SCENE_COL_VX] >= 0) + (r->col[SCENE_COL_VY] >= 0) +
		 (r->col[SCENE_COL_VZ] >= 0);
	for (int q = SCENE_COL_VX; nv > 0 && nv < 3 && q <= SCENE_COL_VZ; q++) {
		if (r->col[q] >= 0)
			continue;
		int has = SCENE_COL_VX; /* the first velocity that has a column */
		while (r->col[has] < 0)
			has++;
		r->bad_col = q;
		log_error("%s:%ld: no column for %s, but %s gives %s: give all three velocities or "
			  "none (none: every velocity 0)",
			  r->name, at, tab_qty[q], tab_label(r, has, b, sizeof b), tab_qty[has]);
		return NB_EINPUT;
	}
	return 0;
}

/* Field f of quantity q as a number within the state CSV's bounds. */
static int tab_number(const struct tab_reader *r, int q, const char *f, double *out)
{
	char shown[200], label[120];
	tab_label(r, q, label, sizeof label);
	if (!sim_csv_is_decimal(f)) {
		log_error("%s:%ld: %s: expected a decimal number, got '%s'", r->name, r->line, label,
			  sim_csv_show(f, shown, sizeof shown));
		return NB_EINPUT;
	}
	double v = strtod(f, NULL);
	const char *want = NULL;
	if (!isfinite(v))
		want = "a finite number (|x| < 1.8e308)";
	else if (q == SCENE_COL_MASS && !(v > 0))
		want = "a mass > 0";
	else if (q != SCENE_COL_MASS && fabs(v) > SIM_CSV_XMAX)
		want = "a number in [-1e15, 1e15] (as the scene's vectors)";
	if (want) {
		log_error("%s:%ld: %s: expected %s, got '%s'", r->name, r->line, label, want,
			  sim_csv_show(f, shown, sizeof shown));
		return NB_EINPUT;
	}
	*out = v;
	return 0;
}

/* A row with the wrong number of fields. */
static int tab_bad_shape(const struct tab_reader *r, int got)
{
	char label[120];
	int worst = -1; /* the first quantity whose column the row lacks */
	for (int q = 0; q < SCENE_NCOL; q++)
		if (r->col[q] >= got && (worst < 0 || r->col[q] < r->col[worst]))
			worst = q;
	log_error("%s:%ld: expected %d fields (as line %ld), got %d%s%s", r->name, r->line, r->nf,
		  r->shape_line, got, worst >= 0 ? ": it lacks " : "",
		  worst >= 0 ? tab_label(r, worst, label, sizeof label) : "");
	return NB_EINPUT;
}

/* Check the row in r->buf as body nb and store it (when st != NULL). */
static int tab_row(struct tab_reader *r, const struct sim_units *u, struct sim_state *st,
		   size_t first, size_t nb)
{
	int got = tab_split(r->buf, r->sep, r->fields);
	if (got != r->nf)
		return tab_bad_shape(r, got);
	double v[SCENE_NCOL] = {0, 0, 0, 0, 0, 0, 1}; /* the defaults: at rest, mass 1 */
	for (int q = 0; q < SCENE_NCOL; q++) {
		if (r->col[q] >= 0 && tab_number(r, q, r->fields[r->col[q]], &v[q]))
			return NB_EINPUT;
	}
	r->mass += (long double)v[SCENE_COL_MASS];
	if (!st)
		return 0;
	if (first + nb >= st->n) {
		log_error("%s: has more bodies than when it was first counted (changed while "
			  "reading?)",
			  r->name);
		return NB_ERUNTIME;
	}
	size_t i = first + nb;
	st->mass[i] = v[SCENE_COL_MASS] * u->mass;
	for (int a = 0; a < 3; a++) {
		st->pos[3 * i + a] = v[SCENE_COL_X + a] * u->length;
		st->vel[3 * i + a] = v[SCENE_COL_VX + a] * u->velocity;
	}
	return 0;
}

/* The header, the map, then rows until the end of the file. */
static int tab_read_lines(struct tab_reader *r, const char (*cols)[SCENE_NAME_MAX],
			  size_t max_bodies, const struct sim_units *u, struct sim_state *st,
			  size_t first, size_t *out_n)
{
	int empty_map = 1;
	for (int q = 0; cols && q < SCENE_NCOL; q++)
		empty_map &= cols[q][0] == '\0';
	int err = tab_start(r, empty_map);
	if (err)
		return err;
	if ((err = tab_map(r, cols)))
		return err;
	size_t nb = 0;
	int got = 1;
	for (; got > 0; got = tab_next(r)) {
		if (nb == max_bodies) {
			log_error("%s:%ld: expected at most %zu bodies in a file, got more", r->name,
				  r->line, max_bodies);
			return NB_EINPUT;
		}
		if ((err = tab_row(r, u, st, first, nb)))
			return err;
		nb++;
	}
	if (got < 0)
		return got;
	*out_n = nb;
	return 0;
}

/* Read the table in f. TAB_STATE_CSV: it is a state CSV (nothing read
 * beyond its first line). */
static int tab_read_stream(FILE *f, const char *name, const char (*cols)[SCENE_NAME_MAX],
			   size_t max_bodies, const struct sim_units *u, struct sim_state *st,
			   size_t first, size_t *out_n, double *lg_mass, int *bad_col)
{
	struct tab_reader *r = calloc(1, sizeof *r);
	if (!r) {
		log_error("%s: out of memory", name);
		return NB_ERUNTIME;
	}
	r->f = f;
	r->name = name;
	r->bad_col = -1;
	if (max_bodies > SIM_CSV_MAX_BODIES)
		max_bodies = SIM_CSV_MAX_BODIES;
	int err = tab_read_lines(r, cols, max_bodies, u, st, first, out_n);
	if (lg_mass)
		*lg_mass = r->mass > 0 ? (double)log10l(r->mass) : -HUGE_VAL;
	if (bad_col)
		*bad_col = err == NB_EINPUT ? r->bad_col : -1;
	free(r);
	return err;
}

int sim_table_read(const char *path, const char (*cols)[SCENE_NAME_MAX],
		   const struct sim_units *u, struct sim_state *st, size_t first, size_t *out_n,
		   double *lg_mass, int *bad_col)
{
	char why[300];
	*out_n = 0;
	if (lg_mass)
		*lg_mass = -HUGE_VAL;
	if (bad_col)
		*bad_col = -1;
	int fd = scene_infile_open(path, why, sizeof why);
	if (fd < 0) {
		log_error("%s: %s; expected a body table", path, why);
		return NB_EINPUT;
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		log_error("%s: cannot open: %s", path, strerror(errno));
		close(fd);
		return NB_ERUNTIME;
	}
	int err = tab_read_stream(f, path, cols, SIM_CSV_MAX_BODIES, u, st, first, out_n, lg_mass,
				  bad_col);
	fclose(f);
	if (err != TAB_STATE_CSV)
		return err;
	*out_n = 0;
	if (!st && lg_mass)
		return sim_state_csv_count(path, out_n, lg_mass);
	return sim_state_read_csv(path, u, st, first, out_n);
}

int sim_table_read_mem(const char *name, const void *buf, size_t len,
		       const char (*cols)[SCENE_NAME_MAX], size_t max_bodies,
		       const struct sim_units *u, struct sim_state *st, size_t first,
		       size_t *out_n)
{
	*out_n = 0;
	if (len == 0) {
		log_error("%s: the file is empty; expected a body table", name);
		return NB_EINPUT;
	}
	FILE *f = fmemopen((void *)buf, len, "r");
	if (!f) {
		log_error("%s: cannot read from memory: %s", name, strerror(errno));
		return NB_ERUNTIME;
	}
	int err = tab_read_stream(f, name, cols, max_bodies, u, st, first, out_n, NULL, NULL);
	fclose(f);
	if (err != TAB_STATE_CSV)
		return err;
	*out_n = 0;
	return sim_state_read_csv_mem(name, buf, len, max_bodies, u, st, first, out_n);
}
