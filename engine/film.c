/* film.c - the film back end (engine_internal.h; simulation.solver: none,
 * docs/snapshots.md): no forces at all, not even the first accelerations
 * (the statistics' potential and total energy are NaN). With a series
 * (engine_set_film) the state of frame f is the series at t0 + f (t1 -
 * t0) / (output.frames - 1); without, the state stays as it was read and
 * only its clock runs. The state lives on the host; a usable GPU draws the
 * frames there, uploaded each frame (app/renderer_gpu.c). */
#include <math.h>
#include <stdio.h>

#include "engine_internal.h"

static int film_open(struct engine *e, int backend)
{
	int err = 0;
	if (e->split.force || e->p.timesteps == SCENE_TIMESTEPS_INDIVIDUAL) {
		log_error("simulation.solver: none computes no forces: it takes neither MPI "
			  "ranks nor simulation.timesteps: individual");
		err = NB_EINPUT;
	}
	char why[160];
	if (backend != SCENE_BACKEND_CPU && gpu_probe(why, sizeof why))
		e->draw_gpu = 1;
	else if (backend == SCENE_BACKEND_CUDA) {
		log_error("simulation.backend: cuda was requested but there is no usable GPU "
			  "(%s)", why);
		err = NB_EINPUT;
	}
	snprintf(e->desc, sizeof e->desc, "none (film mode: no forces; the state is drawn "
		 "from the host each frame%s)", e->draw_gpu ? ", on the GPU" : "");
	return err;
}

static int film_advance(struct engine *e, int steps, int need_potential)
{
	(void)need_potential;
	e->film_steps += steps;
	e->st->step += steps;
	if (!e->film) {
		e->st->time += steps * e->p.dt;
		return 0;
	}
	const double t0 = sim_snap_series_t0(e->film), t1 = sim_snap_series_t1(e->film);
	const double f = (double)e->film_steps / e->p.steps_per_frame;
	const double t = e->frames > 1 ? t0 + f * (t1 - t0) / (e->frames - 1) : t0;
	return sim_snap_series_at(e->film, t, e->st);
}

static int film_diag_queue(struct engine *e)
{
	engine_host_diag_queue(e);
	e->diag.potential = e->diag.total = NAN; /* no forces: no potential energy */
	return 0;
}

const struct engine_ops engine_ops_film = {
	.name = "film",
	.film = 1,
	.open = film_open,
	.advance = film_advance,
	.diag_queue = film_diag_queue,
};
