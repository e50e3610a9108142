/* estimate_levels.c - the levels individual time steps start on
 * (estimate.h, app_estimate_levels): the initial state built, the forces
 * of a subsample of it computed from every body by the scene's solver, and
 * each sampled body's level by sim/timestep.c's rule (sim_ts_want_level:
 * dt_i = sqrt(2 eta eps / |a_i|), the smallest level whose step fits). A
 * body on level L takes 2^L force evaluations per block step of dt_max;
 * a block takes 2^P ticks, P the finest level occupied. The levels move
 * as the run goes (a disk's centre sharpens, a merger's pericentre): the
 * estimate is the start's. --dry-run prints the histogram (app/dryrun.c).
 *
 * Try: nbody-render scenes/plummer.yaml --set simulation.timesteps=individual --dry-run */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/timestep_rule.h"
#include "app.h"
#include "estimate.h"

#define LEVELS_SAMPLE 20000 /* bodies whose forces are computed, at most */

/* Each sampled body's level from its acceleration into lv. */
static void levels_of(const struct scene *sc, const struct sim_state *st, size_t step,
		      struct app_levels *lv)
{
	struct sim_units u;
	scene_units_of(sc->units, &u);
	const int bpf = sc->simulation.blocks_per_frame, spf = sc->simulation.steps_per_frame;
	const double dt_max = sc->simulation.dt * spf / bpf * u.time, eps = scene_softening(sc);
	double sum = 0;
	int plan = 0;
	for (size_t i = 0; i < st->n; i += step) {
		const double *a = st->acc + 3 * i;
		int L = sim_ts_want_level(a[0] * a[0] + a[1] * a[1] + a[2] * a[2], dt_max,
					  sc->simulation.eta, eps, sc->simulation.max_level);
		lv->hist[L]++;
		lv->sampled++;
		sum += ldexp(1.0, L);
		plan = L > plan ? L : plan;
	}
	lv->evals_per_body = lv->sampled ? sum / (double)lv->sampled : 1;
	lv->ticks = 1L << plan;
	/* the ticks whose coarsest active level is l: one for l = 0 (the
	 * block end), 2^(l-1) for l = 1..plan (sim_ts_active_level) */
	long above = (long)lv->sampled; /* sampled bodies on levels >= l */
	for (int l = 0; l <= plan && lv->sampled; l++) {
		double f = (double)above / (double)lv->sampled;
		lv->group_walks += (l ? ldexp(1.0, l - 1) : 1) * (1 - pow(1 - f, APP_TREE_GROUP));
		above -= lv->hist[l];
	}
}

int app_estimate_levels(const struct scene *sc, long n, struct app_levels *lv)
{
	struct sim_state st;
	memset(&st, 0, sizeof st);
	memset(lv, 0, sizeof *lv);
	if (n <= 0 || sim_ic_build(sc, &st) != 0)
		return NB_EINPUT;
	const double eps = scene_softening(sc);
	const size_t step = st.n > LEVELS_SAMPLE ? st.n / LEVELS_SAMPLE : 1;
	unsigned char *act = calloc(st.n, 1);
	int rc = act ? 0 : NB_ERUNTIME;
	for (size_t i = 0; act && i < st.n; i += step)
		act[i] = 1;
	if (!rc && sc->simulation.solver == SCENE_SOLVER_BARNES_HUT)
		rc = sim_tree_accel_active(st.pos, st.mass, st.n, eps, sc->simulation.theta,
					   sc->simulation.multipoles, sc->simulation.opening, act,
					   st.acc, NULL);
	else if (!rc)
		rc = sim_direct_accel_active(st.pos, st.mass, st.n, eps, act, st.acc, NULL);
	if (!rc)
		levels_of(sc, &st, step, lv);
	free(act);
	sim_state_free(&st);
	return rc;
}
