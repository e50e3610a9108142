/* ranks.c - the CPU ranks' back end (engine_internal.h): the host solver's
 * steps with dist/'s force (engine_create_split), each rank computing its
 * own bodies' forces and exchanging them, so every rank holds the same
 * state. Shared steps only (dist_sim_create refuses individual ones). The
 * split's bodies and sum serve the renderer (engine_split_bodies,
 * engine_split_sum). When each rank holds only its own bodies
 * (simulation.ranks: domains) the split's diag makes the diagnostics the
 * whole state's. */
#include <stdio.h>

#include "engine_internal.h"

/* e->force: the split's, with the engine's parameters */
static int ranks_force(struct engine *e, const double *pos, const double *mass, size_t n,
		       double *acc, double *pot)
{
	return e->split.force(e->split.ctx, &e->p, pos, mass, n, acc, pot);
}

static int ranks_open(struct engine *e, int backend)
{
	(void)backend;
	if (e->p.timesteps == SCENE_TIMESTEPS_INDIVIDUAL) {
		log_error("simulation.timesteps: individual over CPU ranks is not written (internal)");
		return NB_EINPUT;
	}
	e->force = ranks_force;
	int err = engine_cpu_first(e);
	if (!err && e->split.desc)
		snprintf(e->desc, sizeof e->desc, "%s", e->split.desc);
	return err;
}

/* the host's diagnostics of this rank's bodies, made the whole state's
 * when the ranks hold their own bodies (the split's diag) */
static int ranks_diag_queue(struct engine *e)
{
	int err = engine_host_diag_queue(e);
	if (!err && e->split.diag)
		e->split.diag(e->split.ctx, &e->diag);
	return err;
}

const struct engine_ops engine_ops_ranks = {
	.name = "ranks",
	.open = ranks_open,
	.advance = engine_cpu_advance,
	.diag_queue = ranks_diag_queue,
	.diag_take = engine_host_diag_take,
};
