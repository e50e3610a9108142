/* state_csv.c - bodies as CSV: id,component,mass,x,y,z,vx,vy,vz in the
 * scene's units, one body a line. Written for output.initial_state and
 * output.final_state; read for bodies of model: file.
 *
 * Reading ignores the id and component columns' values (both must still be
 * present): the bodies take ids in creation order and the component of the
 * scene entry that loads them, whose name and colour the scene gives. So a
 * final_state written by one run can seed another, whatever it called its
 * components. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define CSV_HEADER "id,component,mass,x,y,z,vx,vy,vz"
#define CSV_NCOL 9

static const char *const csv_cols[CSV_NCOL] = {"id", "component", "mass", "x", "y",
					       "z",  "vx",        "vy",   "vz"};

/* Strip trailing newline, carriage return and blanks in place. */
static void csv_chomp(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' ||
			 s[n - 1] == '\t'))
		s[--n] = '\0';
}

/* Parse field f (NUL-terminated) of column c as a finite number. */
static int csv_number(const char *path, long line, int c, const char *f, double *out)
{
	while (*f == ' ' || *f == '\t')
		f++;
	char *end = NULL;
	errno = 0;
	double v = strtod(f, &end);
	while (end && (*end == ' ' || *end == '\t'))
		end++;
	if (end == f || !end || *end != '\0') {
		log_error("%s:%ld: column '%s': expected a number, got '%s'", path, line, csv_cols[c],
			  f);
		return NB_EINPUT;
	}
	if (!isfinite(v)) {
		log_error("%s:%ld: column '%s': expected a finite number, got '%s'", path, line,
			  csv_cols[c], f);
		return NB_EINPUT;
	}
	*out = v;
	return 0;
}

/* Split line (modified in place) at commas into at most CSV_NCOL fields;
 * returns the number of fields found (CSV_NCOL + 1 means "more"). */
static int csv_split(char *line, char *fields[CSV_NCOL])
{
	int nf = 0;
	char *p = line;
	for (;;) {
		char *comma = strchr(p, ',');
		if (nf == CSV_NCOL)
			return CSV_NCOL + 1;
		fields[nf++] = p;
		if (!comma)
			return nf;
		*comma = '\0';
		p = comma + 1;
	}
}

int sim_state_read_csv(const char *path, const struct sim_units *u, struct sim_state *st,
		       size_t first, size_t *out_n)
{
	int err = 0;
	char *line = NULL;
	size_t cap = 0;
	size_t nb = 0;
	long lineno = 0;
	*out_n = 0;
	FILE *f = fopen(path, "r");
	if (!f) {
		log_error("%s: cannot open the state file: %s", path, strerror(errno));
		return NB_EINPUT;
	}
	if (getline(&line, &cap, f) < 0) {
		log_error("%s: the file is empty; expected the header line '%s'", path, CSV_HEADER);
		err = NB_EINPUT;
		goto end;
	}
	lineno = 1;
	csv_chomp(line);
	if (strcmp(line, CSV_HEADER) != 0) {
		log_error("%s:1: expected the header line '%s', got '%.80s'", path, CSV_HEADER, line);
		err = NB_EINPUT;
		goto end;
	}
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		csv_chomp(line);
		if (line[0] == '\0')
			continue; /* blank lines (a trailing one, say) are allowed */
		char *fields[CSV_NCOL];
		int nf = csv_split(line, fields);
		if (nf != CSV_NCOL) {
			log_error("%s:%ld: expected %d columns (%s), got %s%d", path, lineno, CSV_NCOL,
				  CSV_HEADER, nf > CSV_NCOL ? "more than " : "",
				  nf > CSV_NCOL ? CSV_NCOL : nf);
			err = NB_EINPUT;
			goto end;
		}
		double v[CSV_NCOL];
		for (int c = 0; c < CSV_NCOL; c++) {
			if (c == 1)
				continue; /* component: a name, not used (see top) */
			if ((err = csv_number(path, lineno, c, fields[c], &v[c])))
				goto end;
		}
		if (v[2] < 0) {
			log_error("%s:%ld: column 'mass': expected a mass >= 0, got '%s'", path, lineno,
				  fields[2]);
			err = NB_EINPUT;
			goto end;
		}
		if (st) {
			if (first + nb >= st->n) {
				log_error("%s: has more bodies than when it was first counted "
					  "(changed while reading?)",
					  path);
				err = NB_ERUNTIME;
				goto end;
			}
			size_t i = first + nb;
			st->mass[i] = v[2] * u->mass;
			for (int a = 0; a < 3; a++) {
				st->pos[3 * i + a] = v[3 + a] * u->length;
				st->vel[3 * i + a] = v[6 + a] * u->velocity;
			}
		}
		nb++;
	}
	if (ferror(f)) {
		log_error("%s: read error: %s", path, strerror(errno));
		err = NB_EINPUT;
		goto end;
	}
	if (nb == 0) {
		log_error("%s: no bodies: the file has only the header line", path);
		err = NB_EINPUT;
		goto end;
	}
	*out_n = nb;
end:
	free(line);
	fclose(f);
	return err;
}

int sim_state_write_csv(const char *path, const struct sim_state *st, const struct sim_units *u)
{
	char tmp[SCENE_PATH_MAX + 64];
	FILE *f = sim_outfile_fopen(path, tmp, sizeof tmp);
	if (!f)
		return NB_ERUNTIME;
	int bad = fprintf(f, "%s\n", CSV_HEADER) < 0;
	for (size_t i = 0; i < st->n && !bad; i++) {
		const char *comp = st->comp[i] < st->ncomp ? st->comps[st->comp[i]].name : "";
		const double *x = st->pos + 3 * i, *v = st->vel + 3 * i;
		bad = fprintf(f, "%u,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", (unsigned)st->id[i],
			      comp, st->mass[i] / u->mass, x[0] / u->length, x[1] / u->length,
			      x[2] / u->length, v[0] / u->velocity, v[1] / u->velocity,
			      v[2] / u->velocity) < 0;
	}
	if (fclose(f) != 0)
		bad = 1;
	if (bad) {
		log_error("%s: write failed: %s", tmp, strerror(errno));
		remove(tmp);
		return NB_ERUNTIME;
	}
	return sim_outfile_commit(tmp, path, 1);
}
