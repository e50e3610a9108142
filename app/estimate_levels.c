/* estimate_levels.c - the levels individual time steps start on
 * (estimate.h, app_estimate_levels): the initial state built, the forces
 * of a subsample of it computed from every body by the scene's solver, and
 * each sampled body's level by sim/timestep.c's rule (sim_ts_want_level
 * with the body's own softening and the run's sim_params: dt_i = sqrt(2
 * eta eps_i / |a_i|), the smallest level whose step fits). A
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

/* Each sampled body's level from its acceleration into lv, with its own
 * softening (s), as sim/timestep.c's rule under p. */
static void levels_of(const struct sim_params *p, const struct sim_soft *s,
		      const struct sim_state *st, size_t step, struct app_levels *lv)
{
	double sum = 0;
	int plan = 0;
	for (size_t i = 0; i < st->n; i += step) {
		const double *a = st->acc + 3 * i;
		int L = sim_ts_want_level(a[0] * a[0] + a[1] * a[1] + a[2] * a[2], p->dt_max, p->eta,
					  s->each ? s->each[i] : s->eps, p->max_level);
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
	struct sim_params p;
	struct sim_soft s;
	double *owned = NULL;
	memset(&st, 0, sizeof st);
	memset(lv, 0, sizeof *lv);
	if (n <= 0 || sim_ic_build(sc, &st) != 0)
		return NB_EINPUT;
	sim_params_of(sc, &p);
	const size_t step = st.n > LEVELS_SAMPLE ? st.n / LEVELS_SAMPLE : 1;
	unsigned char *act = calloc(st.n, 1);
	int rc = act ? sim_soft_of(&p, &st, &s, &owned) : NB_ERUNTIME;
	for (size_t i = 0; act && i < st.n; i += step)
		act[i] = 1;
	if (!rc && sc->simulation.solver == SCENE_SOLVER_BARNES_HUT)
		rc = sim_tree_accel_soft(st.pos, st.mass, st.n, &s, p.theta, p.multipoles, p.opening,
					 act, st.acc, NULL, NULL);
	else if (!rc)
		rc = sim_direct_accel_active_soft(st.pos, st.mass, st.n, &s, act, st.acc, NULL);
	if (!rc)
		levels_of(&p, &s, &st, step, lv);
	free(owned);
	free(act);
	sim_state_free(&st);
	return rc;
}
