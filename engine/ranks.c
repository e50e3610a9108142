/* ranks.c - the CPU ranks' back end (engine_internal.h): the host solver's
 * steps with dist/'s force (engine_create_split), each rank computing its
 * own bodies' forces and exchanging them, so every rank holds the same
 * state. The split's bodies and sum serve the renderer (engine_split_bodies,
 * engine_split_sum). When each rank holds only its own bodies
 * (simulation.ranks: domains) the split's sums make the diagnostics and the
 * centre of mass the whole state's, and individual time steps work
 * (engine_ops_ranks_blocks): sim/timestep.c's block steps of the rank's own
 * bodies, their plan and active ticks agreed over the ranks (the split's
 * sums), the split's force_active at each tick and its regroup (migration
 * with the levels) between block steps. With every rank holding the whole
 * state (replicate) they are refused before any work (dist_ranks_refuse). */
#include <stdio.h>
#include <string.h>

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
	e->force = ranks_force;
	int err = engine_cpu_first(e);
	if (!err && e->split.desc)
		snprintf(e->desc, sizeof e->desc, "%s", e->split.desc);
	return err;
}

/* the host's diagnostics of this rank's bodies, made the whole state's
 * when the ranks hold their own bodies (the split's sums: the centres as
 * mass-weighted sums) */
static int ranks_diag_queue(struct engine *e)
{
	int err = engine_host_diag_queue(e);
	if (err || !e->split.sums)
		return err;
	struct sim_diag *d = &e->diag;
	double v[15] = {d->kinetic, d->potential, d->mass};
	for (int c = 0; c < 3; c++) {
		v[3 + c] = d->p[c];
		v[6 + c] = d->l[c];
		v[9 + c] = d->com[c] * d->mass;
		v[12 + c] = d->comv[c] * d->mass;
	}
	e->split.sums(e->split.ctx, v, 15);
	d->kinetic = v[0];
	d->potential = v[1];
	d->total = v[0] + v[1];
	d->mass = v[2];
	for (int c = 0; c < 3; c++) {
		d->p[c] = v[3 + c];
		d->l[c] = v[6 + c];
		d->com[c] = v[2] > 0 ? v[9 + c] / v[2] : 0;
		d->comv[c] = v[2] > 0 ? v[12 + c] / v[2] : 0;
	}
	return 0;
}

/* engine_com over ranks that hold their own bodies: sim_state_com's rule
 * (mass-weighted; massless bodies only: their mean; none: the origin) on
 * the sums over the ranks. The selection is made here from each body's
 * component, as the bodies change ranks (e->sel is engine_select's, of the
 * bodies this rank held then). */
static int ranks_com(struct engine *e, double com[3])
{
	if (!e->split.sums)
		return engine_host_com(e, com);
	const struct sim_state *st = e->st;
	const int all = strcmp(e->sel_follow, "all") == 0;
	double v[8] = {0}; /* sum m x (3), sum m, sum x (3), count */
	for (size_t i = 0; i < st->n; i++) {
		if (!all && !(st->comp[i] < st->ncomp &&
			      sim_component_follows(e->sel_follow, st->comps[st->comp[i]].name)))
			continue;
		for (int d = 0; d < 3; d++) {
			v[d] += st->mass[i] * st->pos[3 * i + d];
			v[4 + d] += st->pos[3 * i + d];
		}
		v[3] += st->mass[i];
		v[7] += 1;
	}
	e->split.sums(e->split.ctx, v, 8);
	for (int d = 0; d < 3; d++)
		com[d] = v[3] > 0 ? v[d] / v[3] : (v[7] > 0 ? v[4 + d] / v[7] : 0.0);
	return 0;
}

/* ---- individual time steps over ranks that hold their own bodies ---- */

/* sim_force_active_fn: the split's, on st's bodies (the arguments are st's) */
static int ranks_force_active(const double *pos, const double *mass, size_t n,
			      const unsigned char *active, void *ctx, double *acc, double *pot)
{
	struct engine *e = ctx;
	(void)pos, (void)mass, (void)n, (void)acc, (void)pot;
	e->force_calls++;
	return e->split.force_active(e->split.ctx, &e->p, active);
}

/* struct sim_ts's sum: the split's sums over the ranks */
static void ranks_ts_sum(void *ctx, double *v, int n)
{
	struct engine *e = ctx;
	e->split.sums(e->split.ctx, v, n);
}

static int ranks_blocks_open(struct engine *e, int backend)
{
	if (!e->split.force_active || !e->split.regroup || !e->split.sums) {
		log_error("simulation.timesteps: individual over ranks that each hold the whole "
			  "state is not written (internal: dist_ranks_refuse refuses it)");
		return NB_EINPUT;
	}
	int err = ranks_open(e, backend);
	return err ? err : sim_ts_init_over(&e->ts, &e->p, e->st, ranks_ts_sum, e);
}

static int ranks_blocks_advance(struct engine *e, int steps, int need_potential)
{
	return engine_cpu_blocks(e, steps, need_potential, ranks_force_active);
}

const struct engine_ops engine_ops_ranks = {
	.name = "ranks",
	.open = ranks_open,
	.advance = engine_cpu_advance,
	.diag_queue = ranks_diag_queue,
	.diag_take = engine_host_diag_take,
	.com = ranks_com,
};

const struct engine_ops engine_ops_ranks_blocks = {
	.name = "ranks-blocks",
	.blocks = 1,
	.open = ranks_blocks_open,
	.advance = ranks_blocks_advance,
	.diag_queue = ranks_diag_queue,
	.diag_take = engine_host_diag_take,
	.com = ranks_com,
	/* the block steps' sums made the counts every rank's: no exchange
	 * (a rank may report while the others still compute, after a stop) */
	.levels = engine_cpu_levels,
	.ts_report = engine_cpu_ts_report,
	.close = engine_cpu_close,
};
