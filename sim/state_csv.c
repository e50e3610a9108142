/* state_csv.c - bodies as CSV: id,component,mass,x,y,z,vx,vy,vz in the
 * scene's units, one body a line. Written for output.initial_state and
 * output.final_state; read for bodies of model: file.
 *
 * Reading checks every field strictly (the rules are in sim.h and
 * docs/scenes.md) but keeps only mass, position and velocity: the bodies
 * take ids in creation order and the component of the scene entry that
 * loads them, whose name and colour the scene gives. So a final_state
 * written by one run can seed another, whatever it called its components.
 *
 * Try: printf 'id,component,mass,x,y,z,vx,vy,vz\n0,a,1,0,0,0,0,0,0\n' > b.csv
 * and a scene entry {name: b, model: file, file: b.csv}. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim.h"
#include "table.h"

#define CSV_HEADER SIM_CSV_HEADER
#define CSV_NCOL 9
#define CSV_DIGITS "0123456789"
/* component: what sim_component.name can hold (NAME.disk and the like) */
#define CSV_COMP_MAX (SCENE_NAME_MAX + 7)
#define CSV_COMP_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"

static const char *const csv_cols[CSV_NCOL] = {"id", "component", "mass", "x", "y",
					       "z",  "vx",        "vy",   "vz"};

/* One pass over one file: the line being read and the ids seen so far. */
struct csv_reader {
	FILE *f;
	const char *name; /* for messages */
	long line;        /* number of the line in buf (1 = header) */
	char buf[SIM_CSV_LINE_MAX + 2];
	uint64_t *ids;    /* id << 32 | body index, one per body */
	size_t nids, capids;
	int ids_rising;   /* every id so far larger than the one before */
	long double mass; /* the bodies' total mass so far, scene units (no overflow) */
};

const char *sim_csv_show(const char *s, char *out, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; s[i] && o + 8 < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (i == 40) {
			o += (size_t)snprintf(out + o, len - o, "...");
			break;
		}
		if (c >= 0x20 && c < 0x7f)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", c);
	}
	out[o] = '\0';
	return out;
}

int sim_csv_line(FILE *f, const char *name, long *line, char *buf)
{
	const long ln = *line + 1;
	size_t n = 0;
	int c;
	while ((c = getc_unlocked(f)) != EOF && c != '\n') {
		if (c == '\0') {
			log_error("%s:%ld: byte %zu of the line is a NUL byte; expected text", name, ln,
				  n + 1);
			return NB_EINPUT;
		}
		if (n == SIM_CSV_LINE_MAX + 1) {
			log_error("%s:%ld: expected a line of at most %d bytes, got a longer one", name,
				  ln, SIM_CSV_LINE_MAX);
			return NB_EINPUT;
		}
		buf[n++] = (char)c;
	}
	if (c == EOF && ferror(f)) {
		log_error("%s:%ld: read error: %s", name, ln, strerror(errno));
		return NB_ERUNTIME;
	}
	if (c == EOF && n == 0)
		return 0;
	if (n > 0 && buf[n - 1] == '\r')
		n--; /* CRLF line ends are accepted */
	if (n > SIM_CSV_LINE_MAX) {
		log_error("%s:%ld: expected a line of at most %d bytes, got a longer one", name, ln,
			  SIM_CSV_LINE_MAX);
		return NB_EINPUT;
	}
	buf[n] = '\0';
	*line = ln;
	return 1;
}

/* The next line into r->buf (sim_csv_line). */
static int csv_next_line(struct csv_reader *r)
{
	return sim_csv_line(r->f, r->name, &r->line, r->buf);
}

/* Split line (modified in place) at commas. Returns how many fields it has;
 * fields[] gets the first CSV_NCOL of them. */
static int csv_split(char *line, char *fields[CSV_NCOL])
{
	int nf = 1;
	fields[0] = line;
	for (char *p = line; *p; p++) {
		if (*p != ',')
			continue;
		*p = '\0';
		if (nf < CSV_NCOL)
			fields[nf] = p + 1;
		nf++;
	}
	return nf;
}

int sim_csv_is_decimal(const char *s)
{
	if (*s == '+' || *s == '-')
		s++;
	size_t whole = strspn(s, CSV_DIGITS), frac = 0;
	s += whole;
	if (*s == '.') {
		s++;
		frac = strspn(s, CSV_DIGITS);
		s += frac;
	}
	if (whole + frac == 0)
		return 0;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		size_t exp = strspn(s, CSV_DIGITS);
		if (exp == 0)
			return 0;
		s += exp;
	}
	return *s == '\0';
}

/* Field f of column c as a finite decimal number. */
static int csv_number(const struct csv_reader *r, int c, const char *f, double *out)
{
	char shown[200];
	if (!sim_csv_is_decimal(f)) {
		/* say "finite" for nan and inf, which strtod would take */
		char *end = NULL;
		double w = strtod(f, &end);
		int nonfinite = *f && *end == '\0' && !isfinite(w);
		log_error("%s:%ld: column '%s': expected a %s number, got '%s'", r->name, r->line,
			  csv_cols[c], nonfinite ? "finite" : "decimal", sim_csv_show(f, shown, sizeof shown));
		return NB_EINPUT;
	}
	double v = strtod(f, NULL);
	if (!isfinite(v)) {
		log_error("%s:%ld: column '%s': expected a finite number (|x| < 1.8e308), got '%s'",
			  r->name, r->line, csv_cols[c], sim_csv_show(f, shown, sizeof shown));
		return NB_EINPUT;
	}
	*out = v;
	return 0;
}

/* Field f of column id: a decimal integer in [0, 2^32 - 1], no sign. */
static int csv_id(const struct csv_reader *r, const char *f, uint32_t *out)
{
	char shown[200];
	size_t n = strspn(f, CSV_DIGITS);
	uint64_t v = 0;
	int ok = n > 0 && f[n] == '\0';
	for (size_t i = 0; ok && i < n; i++) {
		v = 10 * v + (uint64_t)(f[i] - '0');
		ok = v <= UINT32_MAX;
	}
	if (!ok) {
		log_error("%s:%ld: column 'id': expected an integer in [0, %u], got '%s'", r->name,
			  r->line, UINT32_MAX, sim_csv_show(f, shown, sizeof shown));
		return NB_EINPUT;
	}
	*out = (uint32_t)v;
	return 0;
}

/* Field f of column component: a name (its value is not used, see top). */
static int csv_component(const struct csv_reader *r, const char *f)
{
	char shown[200];
	size_t n = strlen(f);
	if (n == 0 || n > CSV_COMP_MAX || strspn(f, CSV_COMP_CHARS) != n) {
		log_error("%s:%ld: column 'component': expected a name of 1 to %d characters "
			  "A-Z a-z 0-9 _ . -, got '%s'",
			  r->name, r->line, CSV_COMP_MAX, sim_csv_show(f, shown, sizeof shown));
		return NB_EINPUT;
	}
	return 0;
}

/* Remember body nb's id for the duplicate check. */
static int csv_keep_id(struct csv_reader *r, uint32_t id, size_t nb)
{
	if (r->nids == r->capids) {
		size_t cap = r->capids ? 2 * r->capids : 1024;
		uint64_t *p = realloc(r->ids, cap * sizeof *p);
		if (!p) {
			log_error("%s:%ld: out of memory for %zu ids", r->name, r->line, cap);
			return NB_ERUNTIME;
		}
		r->ids = p;
		r->capids = cap;
	}
	if (r->nids > 0 && (uint32_t)(r->ids[r->nids - 1] >> 32) >= id)
		r->ids_rising = 0;
	r->ids[r->nids++] = (uint64_t)id << 32 | (uint64_t)nb;
	return 0;
}

static int csv_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* No id twice. Body k sits on line k + 2 (blank lines come only at the end),
 * and the message names the first line, in file order, that repeats an id. */
static int csv_check_ids(struct csv_reader *r)
{
	if (r->ids_rising)
		return 0;
	qsort(r->ids, r->nids, sizeof *r->ids, csv_cmp_u64);
	size_t worst = SIZE_MAX, earlier = 0;
	uint32_t id = 0;
	for (size_t i = 1; i < r->nids; i++) {
		if (r->ids[i] >> 32 != r->ids[i - 1] >> 32)
			continue;
		size_t k = (size_t)(r->ids[i] & 0xffffffffu);
		if (k < worst) {
			worst = k;
			id = (uint32_t)(r->ids[i] >> 32);
			size_t j = i - 1; /* the group's first: its earliest line */
			while (j > 0 && r->ids[j - 1] >> 32 == id)
				j--;
			earlier = (size_t)(r->ids[j] & 0xffffffffu);
		}
	}
	if (worst == SIZE_MAX)
		return 0;
	log_error("%s:%zu: column 'id': expected an id not used before, got %u (also on line %zu)",
		  r->name, worst + 2, id, earlier + 2);
	return NB_EINPUT;
}

/* Check the line in r->buf as body nb and store it (when st != NULL). */
static int csv_body(struct csv_reader *r, const struct sim_units *u, struct sim_state *st,
		    size_t first, size_t nb)
{
	char *fields[CSV_NCOL];
	int nf = csv_split(r->buf, fields);
	if (nf != CSV_NCOL) {
		log_error("%s:%ld: expected %d columns (%s), got %d", r->name, r->line, CSV_NCOL,
			  CSV_HEADER, nf);
		return NB_EINPUT;
	}
	uint32_t id;
	double v[CSV_NCOL];
	int err = csv_id(r, fields[0], &id);
	if (!err)
		err = csv_component(r, fields[1]);
	for (int c = 2; c < CSV_NCOL && !err; c++)
		err = csv_number(r, c, fields[c], &v[c]);
	if (err)
		return err;
	if (!(v[2] > 0)) {
		log_error("%s:%ld: column 'mass': expected a mass > 0, got '%s'", r->name, r->line,
			  fields[2]);
		return NB_EINPUT;
	}
	for (int c = 3; c < CSV_NCOL; c++) {
		if (fabs(v[c]) > SIM_CSV_XMAX) {
			static const char *const col[CSV_NCOL] = {"id", "component", "mass", "x", "y",
								  "z", "vx", "vy", "vz"};
			log_error("%s:%ld: column '%s': expected a number in [-1e15, 1e15] (as the scene's "
				  "vectors), got '%s'",
				  r->name, r->line, col[c], fields[c]);
			return NB_EINPUT;
		}
	}
	if ((err = csv_keep_id(r, id, nb)))
		return err;
	r->mass += (long double)v[2];
	if (st) {
		if (first + nb >= st->n) {
			log_error("%s: has more bodies than when it was first counted "
				  "(changed while reading?)",
				  r->name);
			return NB_ERUNTIME;
		}
		size_t i = first + nb;
		st->mass[i] = v[2] * u->mass;
		for (int a = 0; a < 3; a++) {
			st->pos[3 * i + a] = v[3 + a] * u->length;
			st->vel[3 * i + a] = v[6 + a] * u->velocity;
		}
	}
	return 0;
}

/* The header, then bodies until the end of the file. */
static int csv_read_lines(struct csv_reader *r, size_t max_bodies, const struct sim_units *u,
			  struct sim_state *st, size_t first, size_t *out_n)
{
	char shown[200];
	int got = csv_next_line(r);
	if (got < 0)
		return got;
	if (got == 0) {
		log_error("%s: the file is empty; expected the header line '%s'", r->name, CSV_HEADER);
		return NB_EINPUT;
	}
	if (strcmp(r->buf, CSV_HEADER) != 0) {
		log_error("%s:1: expected the header line '%s', got '%s'", r->name, CSV_HEADER,
			  sim_csv_show(r->buf, shown, sizeof shown));
		return NB_EINPUT;
	}
	size_t nb = 0;
	long blank = 0; /* the first blank line, if any */
	int err = 0;
	while ((got = csv_next_line(r)) > 0) {
		if (r->buf[0] == '\0') {
			if (!blank)
				blank = r->line;
			continue;
		}
		if (blank) {
			log_error("%s:%ld: expected only blank lines after the blank line %ld, got a body",
				  r->name, r->line, blank);
			return NB_EINPUT;
		}
		if (nb == max_bodies) {
			log_error("%s:%ld: expected at most %zu bodies in a file, got more", r->name,
				  r->line, max_bodies);
			return NB_EINPUT;
		}
		if ((err = csv_body(r, u, st, first, nb)))
			return err;
		nb++;
	}
	if (got < 0)
		return got;
	if (nb == 0) {
		log_error("%s: no bodies: the file has only the header line", r->name);
		return NB_EINPUT;
	}
	if ((err = csv_check_ids(r)))
		return err;
	*out_n = nb;
	return 0;
}

static int csv_read_stream(FILE *f, const char *name, size_t max_bodies,
			   const struct sim_units *u, struct sim_state *st, size_t first,
			   size_t *out_n, double *lg_mass)
{
	static const struct csv_reader zero;
	struct csv_reader *r = malloc(sizeof *r);
	if (!r) {
		log_error("%s: out of memory", name);
		return NB_ERUNTIME;
	}
	*r = zero;
	r->f = f;
	r->name = name;
	r->ids_rising = 1;
	if (max_bodies > SIM_CSV_MAX_BODIES)
		max_bodies = SIM_CSV_MAX_BODIES; /* body indices must fit 32 bits */
	int err = csv_read_lines(r, max_bodies, u, st, first, out_n);
	if (lg_mass)
		*lg_mass = r->mass > 0 ? (double)log10l(r->mass) : -HUGE_VAL;
	free(r->ids);
	free(r);
	return err;
}

int sim_state_csv_check_file(const char *path, char *why, size_t len)
{
	int fd = scene_infile_open(path, why, len);
	if (fd < 0)
		return NB_EINPUT;
	close(fd);
	return 0;
}

/* sim_state_read_csv and sim_state_csv_count. */
static int csv_read_path(const char *path, const struct sim_units *u, struct sim_state *st,
			 size_t first, size_t *out_n, double *lg_mass)
{
	char why[300];
	*out_n = 0;
	int fd = scene_infile_open(path, why, sizeof why);
	if (fd < 0) {
		log_error("%s: %s; expected a state CSV file", path, why);
		return NB_EINPUT;
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		log_error("%s: cannot open: %s", path, strerror(errno));
		close(fd);
		return NB_ERUNTIME;
	}
	int err = csv_read_stream(f, path, SIM_CSV_MAX_BODIES, u, st, first, out_n, lg_mass);
	fclose(f);
	return err;
}

int sim_state_read_csv(const char *path, const struct sim_units *u, struct sim_state *st,
		       size_t first, size_t *out_n)
{
	return csv_read_path(path, u, st, first, out_n, NULL);
}

int sim_state_csv_count(const char *path, size_t *out_n, double *lg_mass)
{
	*lg_mass = -HUGE_VAL;
	return csv_read_path(path, NULL, NULL, 0, out_n, lg_mass);
}

int sim_state_read_csv_mem(const char *name, const void *buf, size_t len, size_t max_bodies,
			   const struct sim_units *u, struct sim_state *st, size_t first,
			   size_t *out_n)
{
	*out_n = 0;
	if (len == 0) {
		log_error("%s: the file is empty; expected the header line '%s'", name, CSV_HEADER);
		return NB_EINPUT;
	}
	FILE *f = fmemopen((void *)buf, len, "r");
	if (!f) {
		log_error("%s: cannot read from memory: %s", name, strerror(errno));
		return NB_ERUNTIME;
	}
	int err = csv_read_stream(f, name, max_bodies, u, st, first, out_n, NULL);
	fclose(f);
	return err;
}

int sim_state_write_csv(const char *path, const struct sim_state *st, const struct sim_units *u)
{
	char tmp[SCENE_PATH_MAX + 64];
	FILE *f = sim_outfile_fopen(path, tmp, sizeof tmp);
	if (!f)
		return NB_ERUNTIME;
	int err = fprintf(f, "%s\n", CSV_HEADER) < 0 ? (errno ? errno : EIO) : 0;
	for (size_t i = 0; i < st->n && !err; i++) {
		const char *comp = st->comp[i] < st->ncomp ? st->comps[st->comp[i]].name : "";
		const double *x = st->pos + 3 * i, *v = st->vel + 3 * i;
		if (fprintf(f, "%u,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", (unsigned)st->id[i], comp,
			    st->mass[i] / u->mass, x[0] / u->length, x[1] / u->length,
			    x[2] / u->length, v[0] / u->velocity, v[1] / u->velocity,
			    v[2] / u->velocity) < 0)
			err = errno ? errno : EIO;
	}
	/* the first failure's reason: fclose fails again on the same error */
	if (fclose(f) != 0 && !err)
		err = errno;
	if (err) {
		log_error("%s: cannot write the state CSV (temporary file %s): %s", path, tmp,
			  strerror(err));
		unlink(tmp);
		return NB_ERUNTIME;
	}
	return sim_outfile_commit(tmp, path, 1);
}
