/* estimate_soft.c - what the scene's softening costs the CPU tree
 * (estimate.h, app_estimate_soft_x). The calibration times the one-length
 * Plummer walk; the spline kernel and lengths per body (issue 30) change
 * both the cost of an interaction and the cells the walk opens (a cell
 * within a body's kernel is opened), by a factor that depends on the
 * lengths against the bodies' spacing: so it is measured on the scene's
 * own initial state, one tree evaluation with its softening against one
 * with a single Plummer length (simulation.softening), timed alike in
 * the process's CPU seconds (a busy machine's waits for a core are not
 * the work's), the smaller of three each.
 *
 * Try: nbody-render scenes/gadget2-galaxy.yaml --dry-run | grep softening */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "estimate.h"

/* A probe's bodies, at most: every n / PROBE_N-th walks (the tree is built
 * over all of them, as the run's). */
#define PROBE_N 8000

static double soft_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The smaller of three timings of the tree on st with s (active: the sample). */
static double soft_time(const struct sim_params *p, const struct sim_soft *s,
			struct sim_state *st, const unsigned char *active)
{
	double best = 1e30;
	for (int i = 0; i < 3; i++) {
		double t0 = soft_now();
		if (sim_tree_accel_soft(st->pos, st->mass, st->n, s, p->theta, p->multipoles,
					p->opening, active, st->acc, NULL, NULL))
			return -1;
		double t = soft_now() - t0;
		best = t < best ? t : best;
	}
	return best;
}

int app_estimate_soft_x(const struct scene *sc, double *x)
{
	struct sim_params p;
	struct sim_state st;
	struct sim_soft s, one;
	double *owned = NULL;
	*x = 1;
	sim_params_of(sc, &p);
	if (sc->simulation.solver != SCENE_SOLVER_BARNES_HUT ||
	    (!p.soft_mixed && p.soft_kernel != SCENE_SOFT_SPLINE))
		return 0;
	memset(&st, 0, sizeof st);
	if (sim_ic_build(sc, &st) != 0)
		return NB_EINPUT;
	const size_t step = st.n > PROBE_N ? st.n / PROBE_N : 1;
	unsigned char *act = calloc(st.n ? st.n : 1, 1);
	int rc = act ? sim_soft_of(&p, &st, &s, &owned) : NB_ERUNTIME;
	for (size_t i = 0; act && i < st.n; i += step)
		act[i] = 1;
	if (!rc) {
		one = (struct sim_soft){.kernel = SCENE_SOFT_PLUMMER, .eps = p.softening};
		double ts = soft_time(&p, &s, &st, act), t1 = soft_time(&p, &one, &st, act);
		if (ts < 0 || t1 < 0)
			rc = NB_ERUNTIME;
		else if (t1 > 0)
			*x = ts / t1 < 0.5 ? 0.5 : ts / t1 > 50 ? 50 : ts / t1;
	}
	free(owned);
	free(act);
	sim_state_free(&st);
	return rc;
}
