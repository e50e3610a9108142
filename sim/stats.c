/* stats.c - the per-frame diagnostics CSV (output.stats): energies, momentum
 * and angular momentum in the scene's units. Written under a temporary name
 * (sim/outfile.c) and renamed into place only when the run succeeds, so a
 * crashed run never leaves a file that looks complete. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

int sim_stats_open(const char *path, FILE **f)
{
	char tmp[SCENE_PATH_MAX + 64];
	*f = sim_outfile_fopen(path, tmp, sizeof tmp);
	if (!*f)
		return NB_ERUNTIME;
	if (fprintf(*f, "frame,time,kinetic,potential,total,px,py,pz,lx,ly,lz\n") < 0) {
		log_error("%s: cannot write the statistics (temporary file %s): %s", path, tmp,
			  strerror(errno));
		fclose(*f);
		*f = NULL;
		remove(tmp);
		return NB_ERUNTIME;
	}
	return 0;
}

/* The final name of the statistics file that F writes, for a message:
 * F's temporary file, found again through /proc/self/fd, without the "."
 * and the ".<pid>-<token>.partial" that sim_outfile_temp_name added. "the
 * statistics file" when it cannot be found. */
static void stats_name_of(FILE *f, char *name, size_t cap)
{
	char link[64], tmp[SCENE_PATH_MAX + 64];
	snprintf(name, cap, "the statistics file");
	snprintf(link, sizeof link, "/proc/self/fd/%d", fileno(f));
	ssize_t n = readlink(link, tmp, sizeof tmp - 1);
	if (n <= 0)
		return;
	tmp[n] = '\0';
	char *base = strrchr(tmp, '/');
	base = base ? base + 1 : tmp;
	char *dot = strrchr(base, '.');
	if (*base != '.' || !dot || strcmp(dot, ".partial") != 0)
		return;
	*dot = '\0';
	char *pid = strrchr(base, '.'); /* ".<pid>-<token>" */
	if (!pid)
		return;
	*pid = '\0';
	memmove(base, base + 1, strlen(base + 1) + 1);
	snprintf(name, cap, "%s", tmp);
}

int sim_stats_row(FILE *f, int frame, const struct sim_state *st, const struct sim_diag *d,
		  const struct sim_units *u)
{
	/* scene value = internal value / factor (scene_units) */
	const double e = u->mass * u->velocity * u->velocity;
	const double p = u->mass * u->velocity;
	const double l = u->mass * u->length * u->velocity;
	int r = fprintf(f, "%d,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g\n", frame,
			st->time / u->time, d->kinetic / e, d->potential / e, d->total / e,
			d->p[0] / p, d->p[1] / p, d->p[2] / p, d->l[0] / l, d->l[1] / l, d->l[2] / l);
	if (r < 0) {
		int err = errno;
		char name[SCENE_PATH_MAX + 64];
		stats_name_of(f, name, sizeof name);
		log_error("%s: cannot write the statistics: %s", name, strerror(err));
		return NB_ERUNTIME;
	}
	return 0;
}

int sim_stats_close(FILE *f, const char *path, int ok)
{
	char tmp[SCENE_PATH_MAX + 64];
	int err = sim_outfile_temp_name(path, tmp, sizeof tmp);
	if (f && fclose(f) != 0 && !err) {
		log_error("%s: cannot write the statistics (temporary file %s): %s", path, tmp,
			  strerror(errno));
		err = NB_ERUNTIME;
	}
	if (err) {
		unlink(tmp);
		return err;
	}
	return sim_outfile_commit(tmp, path, ok);
}
