/* scene_accuracy.c - simulation.accuracy's presets: the table of rows and
 * how the loader applies one (scene_accuracy.h).
 *
 * The rows' values were chosen on a CPU version of the default scene
 * (scenes/galaxy-collision.yaml, fewer bodies, the same step) by its
 * largest |dE/E0| over the run; docs/PHYSICS.md "Accuracy presets" has
 * the measurement, docs/BENCHMARKS.md the H200's time and error. */
#include "scene_accuracy.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

/* One row per value of enum scene_accuracy. draft: softening and step x3
 * together (the 0.3 kpc and 1.5 Myr: 6.6 s against 17.0 s on the
 * H200, |dE/E0| 1.7e-3 against 3.4e-4), a wider opening angle; fine: half
 * the step (leapfrog's error goes as dt^2) and a narrower angle. */
static const struct scene_accuracy_row rows[] = {
	{SCENE_ACCURACY_DEFAULT, "default", 0.5, 2, 1.0, 1.0, 17.31, 3.43e-4},
	{SCENE_ACCURACY_DRAFT, "draft", 0.6, 2, 3.0, 3.0, 6.74, 1.69e-3},
	{SCENE_ACCURACY_FINE, "fine", 0.4, 2, 1.0, 0.5, 32.83, 1.61e-4},
};

const struct scene_accuracy_row *scene_accuracy_row(enum scene_accuracy a)
{
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		if (rows[i].id == a)
			return &rows[i];
	return NULL;
}

/* n / k rounded up, in [1, 1e6]: the step grows by at most k, so a row's
 * measured error bounds it (the 1e-9 keeps 6 / 3 at 2) */
static int divided(int n, double k)
{
	double v = ceil((double)n / k - 1e-9);
	return v < 1 ? 1 : v > 1e6 ? 1000000 : (int)v;
}

double scene_accuracy_steps(struct scene *sc, double k)
{
	if (sc->simulation.timesteps == SCENE_TIMESTEPS_INDIVIDUAL) {
		int was = sc->simulation.blocks_per_frame;
		sc->simulation.blocks_per_frame = divided(was, k);
		return (double)was / sc->simulation.blocks_per_frame;
	}
	int was = sc->simulation.steps_per_frame, now = divided(was, k);
	if (now == was)
		return 1;
	double frame = sc->simulation.dt * was;
	sc->simulation.steps_per_frame = now;
	sc->simulation.dt = frame / now;
	return (double)was / now;
}

/* Every softening length above 0 x f: the scene's, each entry's, each
 * disk-galaxy part's and each snapshot type's (0 means the level above,
 * which is scaled already). */
static void scale_softening(struct scene *sc, double f)
{
	double *keys[SCENE_SOFT_KEYS_MAX];
	const int n = scene_soft_keys(sc, keys);
	for (int k = 0; k < n; k++)
		*keys[k] *= f;
}

/* Append to a line being built (truncated silently: it is a message). */
static void __attribute__((format(printf, 3, 4))) say(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;
	va_start(ap, fmt);
	if (len < size)
		vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

/* theta and multipoles: the row's, unless ROOT gives the key. */
static void set_angle(struct scene *sc, const struct ynode *root,
		      const struct scene_accuracy_row *r, char *line, char *kept, size_t size)
{
	if (yaml_tree_lookup(root, "simulation.theta"))
		say(kept, size, " simulation.theta %g", sc->simulation.theta);
	else
		say(line, size, ", theta %g", sc->simulation.theta = r->theta);
	if (yaml_tree_lookup(root, "simulation.multipoles"))
		say(kept, size, " simulation.multipoles %d", sc->simulation.multipoles);
	else
		say(line, size, ", multipoles %d", sc->simulation.multipoles = r->multipoles);
}

/* The step x r->dt_x, described in LINE. */
static void set_step(struct scene *sc, const struct scene_accuracy_row *r, char *line,
		     size_t size)
{
	const int individual = sc->simulation.timesteps == SCENE_TIMESTEPS_INDIVIDUAL;
	const char *key = individual ? "blocks_per_frame" : "steps_per_frame";
	const int was = individual ? sc->simulation.blocks_per_frame : sc->simulation.steps_per_frame;
	const double frame = sc->simulation.dt * sc->simulation.steps_per_frame;
	const double k = scene_accuracy_steps(sc, r->dt_x);
	if (k == 1 && r->dt_x != 1)
		say(line, size, ", step kept (%s %d cannot be divided by %g)", key, was, r->dt_x);
	else if (k != 1 && individual)
		say(line, size, ", dt_max x%.3g (blocks_per_frame %d -> %d; %g per frame kept)", k,
		    was, sc->simulation.blocks_per_frame, frame);
	else if (k != 1)
		say(line, size, ", step x%.3g (dt %g with steps_per_frame %d -> %d; %g per frame kept)",
		    k, sc->simulation.dt, was, sc->simulation.steps_per_frame, frame);
}

int scene_accuracy_apply(struct scene *sc, const struct ynode *root, const char *name)
{
	const struct scene_accuracy_row *r = scene_accuracy_row(sc->simulation.accuracy);
	if (!r)
		return 0;
	char line[512] = "", kept[256] = "";
	scale_softening(sc, r->soft_x);
	if (r->soft_x != 1)
		say(line, sizeof line, ", softening x%g (simulation.softening %g)", r->soft_x,
		    sc->simulation.softening);
	set_step(sc, r, line, sizeof line);
	set_angle(sc, root, r, line, kept, sizeof kept);
	if (r->id != SCENE_ACCURACY_DEFAULT)
		log_info("%s: simulation.accuracy: %s: %s%s%s", name, r->name,
			 line[0] ? line + 2 : "nothing to change",
			 kept[0] ? "; given, so kept:" : "", kept);
	return 0;
}
