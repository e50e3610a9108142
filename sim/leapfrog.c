/* leapfrog.c - one kick-drift-kick step (see sim.h and docs/PHYSICS.md,
 * section Time integration):
 * v += a dt/2; x += v dt; a = a(x); v += a dt/2. Symplectic and
 * time-reversible for a fixed dt, so the energy error oscillates without
 * drifting. */
#include "sim.h"

/* Few bodies: one thread (a team costs more than the loop). */
#define LEAPFROG_PARALLEL_MIN 20000

static void leapfrog_kick(struct sim_state *st, double h)
{
	const size_t m = 3 * st->n;
	double *v = st->vel;
	const double *a = st->acc;
#pragma omp parallel for schedule(static) if (m >= 3 * LEAPFROG_PARALLEL_MIN)
	for (size_t k = 0; k < m; k++)
		v[k] += a[k] * h;
}

static void leapfrog_drift(struct sim_state *st, double h)
{
	const size_t m = 3 * st->n;
	double *x = st->pos;
	const double *v = st->vel;
#pragma omp parallel for schedule(static) if (m >= 3 * LEAPFROG_PARALLEL_MIN)
	for (size_t k = 0; k < m; k++)
		x[k] += v[k] * h;
}

int sim_leapfrog_step(struct sim_state *st, double dt, sim_force_fn force, void *ctx,
		      int need_potential)
{
	leapfrog_kick(st, 0.5 * dt);
	leapfrog_drift(st, dt);
	int err = force(st->pos, st->mass, st->n, ctx, st->acc, need_potential ? st->pot : NULL);
	if (err)
		return err;
	leapfrog_kick(st, 0.5 * dt);
	st->time += dt;
	st->step++;
	return 0;
}
