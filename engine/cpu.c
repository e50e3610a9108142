/* cpu.c - the host back end (engine_internal.h): sim/'s solver, direct or
 * Barnes-Hut, on this process's threads. Two rows: engine_ops_cpu takes
 * leapfrog steps of dt, engine_ops_cpu_blocks individual time steps (block
 * steps of dt_max, sim/timestep.c). engine/ranks.c reuses the steps with
 * its own force. The state is on the host: the ops a row leaves NULL are
 * the host's (engine/common.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "engine_internal.h"

int engine_cpu_force(const double *pos, const double *mass, size_t n, void *ctx, double *acc,
		     double *pot)
{
	struct engine *e = ctx;
	e->force_calls++;
	return e->force(e, pos, mass, n, acc, pot);
}

/* e->force of the host rows: the scene's solver. pos and mass are e->st's
 * (leapfrog and the block steps pass them), so body i's softening is its
 * component's (sim_soft_of; a length per body only when the scene's
 * lengths differ, built for the call: O(n) next to the force). */
static int cpu_solver_force(struct engine *e, const double *pos, const double *mass, size_t n,
			    double *acc, double *pot)
{
	const struct sim_params *p = &e->p;
	struct sim_soft s;
	double *each;
	int err = sim_soft_of(p, e->st, &s, &each);
	if (err)
		return err;
	if (p->solver == SCENE_SOLVER_BARNES_HUT)
		err = sim_tree_accel_soft(pos, mass, n, &s, p->theta, p->multipoles, p->opening,
					  NULL, acc, pot, NULL);
	else
		err = sim_direct_accel_soft(pos, mass, n, &s, acc, pot);
	free(each);
	return err;
}

/* sim_force_active_fn of individual time steps */
static int cpu_force_active(const double *pos, const double *mass, size_t n,
			    const unsigned char *active, void *ctx, double *acc, double *pot)
{
	struct engine *e = ctx;
	const struct sim_params *p = &e->p;
	e->force_calls++;
	struct sim_soft s;
	double *each;
	int err = sim_soft_of(p, e->st, &s, &each);
	if (err)
		return err;
	if (p->solver == SCENE_SOLVER_BARNES_HUT)
		err = sim_tree_accel_soft(pos, mass, n, &s, p->theta, p->multipoles, p->opening,
					  active, acc, pot, NULL);
	else
		err = sim_direct_accel_active_soft(pos, mass, n, &s, active, acc, pot);
	free(each);
	return err;
}

int engine_cpu_first(struct engine *e)
{
	struct sim_state *st = e->st;
	/* first accelerations (and potential, so frame 0's energy is known) */
	int err = engine_cpu_force(st->pos, st->mass, st->n, e, st->acc, st->pot);
	if (err)
		return err;
	long bad = sim_diag_find_nonfinite(st);
	return bad >= 0 ? engine_report_nonfinite(e, bad) : 0;
}

/* e->desc's softening, when it is not one Plummer length (the line of
 * every scene before issue 30 stays as it was) */
static void cpu_soft_desc(struct engine *e)
{
	const struct sim_params *p = &e->p;
	size_t k = strlen(e->desc);
	if (k == 0 || e->desc[k - 1] != ')' || (!p->soft_mixed && p->soft_kernel == SCENE_SOFT_PLUMMER))
		return;
	snprintf(e->desc + k - 1, sizeof e->desc - (k - 1), ", %s softening%s)",
		 p->soft_kernel == SCENE_SOFT_SPLINE ? "spline" : "plummer",
		 p->soft_mixed ? ", lengths per type" : "");
}

static int cpu_open(struct engine *e, int backend)
{
	(void)backend;
	int nt = 1;
#ifdef _OPENMP
	nt = omp_get_max_threads();
#endif
	const struct sim_params *p = &e->p;
	if (p->solver == SCENE_SOLVER_BARNES_HUT)
		snprintf(e->desc, sizeof e->desc, "cpu (%d thread%s, barnes-hut theta %g, %s, %s)",
			 nt, nt == 1 ? "" : "s", p->theta,
			 p->multipoles >= 2 ? "quadrupole" : "monopole",
			 scene_opening_name(p->opening));
	else
		snprintf(e->desc, sizeof e->desc, "cpu (%d thread%s, direct)", nt,
			 nt == 1 ? "" : "s");
	cpu_soft_desc(e);
	e->force = cpu_solver_force;
	return engine_cpu_first(e);
}

static int cpu_blocks_open(struct engine *e, int backend)
{
	int err = cpu_open(e, backend);
	if (err)
		return err;
	return sim_ts_init(&e->ts, &e->p, e->st);
}

int engine_cpu_advance(struct engine *e, int steps, int need_potential)
{
	for (int s = 0; s < steps; s++) {
		if (sim_stop_requested())
			return NB_EINTR; /* a signal: stop between steps, not after the frame */
		int err = sim_leapfrog_step(e->st, e->p.dt, engine_cpu_force, e,
					    need_potential && s == steps - 1);
		if (err)
			return err;
		/* O(n) scan per step, cheap next to the force: the message can name
		 * the exact step at which the first value went bad */
		long bad = sim_diag_find_nonfinite(e->st);
		if (bad >= 0)
			return engine_report_nonfinite(e, bad);
	}
	return 0;
}

int engine_cpu_blocks(struct engine *e, int steps, int need_potential, sim_force_active_fn force)
{
	int blocks, err = engine_blocks_of(e, steps, &blocks);
	if (err)
		return err;
	for (int b = 0; b < blocks; b++) {
		if (sim_stop_requested())
			return NB_EINTR;
		/* ranks that hold their own bodies: they move to their owners,
		 * with their levels, between block steps */
		if (e->split.regroup && (err = e->split.regroup(e->split.ctx, &e->ts.lev)))
			return err; /* logged */
		err = sim_ts_block_step(&e->ts, e->st, force, e, need_potential && b == blocks - 1);
		if (err)
			return err;
		e->blocks++;
		long bad = sim_diag_find_nonfinite(e->st);
		if (bad >= 0)
			return engine_report_nonfinite(e, bad);
	}
	e->st->step += steps;
	return 0;
}

static int cpu_blocks_advance(struct engine *e, int steps, int need_potential)
{
	return engine_cpu_blocks(e, steps, need_potential, cpu_force_active);
}

int engine_cpu_levels(struct engine *e, struct engine_ts_stats *s)
{
	memcpy(s->hist, e->ts.hist, sizeof s->hist);
	s->evals = e->ts.evals;
	s->ticks = e->ts.ticks;
	s->rebuilds = e->ts.ticks;
	for (int L = 0; L < SIM_TS_LEVELS; L++)
		s->bodies += (double)e->ts.hist[L];
	return 0;
}

void engine_cpu_ts_report(struct engine *e)
{
	/* counted on the CPU only; the histogram's bodies are every rank's */
	double n = 0;
	for (int L = 0; L < SIM_TS_LEVELS; L++)
		n += (double)e->ts.hist[L];
	log_info("individual time steps: %ld level changes, %.4f per body per block",
		 e->ts.changes, n > 0 && e->blocks > 0 ? (double)e->ts.changes / n / (double)e->blocks
						       : 0.0);
}

void engine_cpu_close(struct engine *e)
{
	sim_ts_free(&e->ts);
}

const struct engine_ops engine_ops_cpu = {
	.name = "cpu",
	.open = cpu_open,
	.advance = engine_cpu_advance,
};

const struct engine_ops engine_ops_cpu_blocks = {
	.name = "cpu-blocks",
	.blocks = 1,
	.open = cpu_blocks_open,
	.advance = cpu_blocks_advance,
	.levels = engine_cpu_levels,
	.ts_report = engine_cpu_ts_report,
	.close = engine_cpu_close,
};
