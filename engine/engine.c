/* engine.c - the solver for one run (engine.h): picks the back end, one
 * row of engine_internal.h's table, and keeps what every row shares: the
 * parameters (struct sim_params, converted from the scene once here), the
 * diagnostics' queue, the bodies the camera follows, the individual steps'
 * figures. The rows' own work is in engine/cpu.c, gpu.c, film.c and
 * ranks.c. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../render/adaptive.h"
#include "engine_internal.h"

size_t engine_gpu_bytes_needed(const struct scene *sc, size_t n)
{
	struct sim_params p;
	sim_params_of(sc, &p);
	return gpu_sim_bytes_needed(n, &p);
}

/* The GPU row when BACKEND asks for it (or auto) and a GPU is usable;
 * without one, auto falls back to the host row (said once) and cuda is bad
 * input. *ops stays NULL when the GPU is not asked for. */
static int engine_pick_gpu(int backend, int blocks, const struct engine_ops **ops)
{
	if (backend != SCENE_BACKEND_CUDA && backend != SCENE_BACKEND_AUTO)
		return 0;
	char why[256] = "";
	if (gpu_probe(why, sizeof why)) {
		*ops = blocks ? &engine_ops_gpu_blocks : &engine_ops_gpu;
		return 0;
	}
	if (backend == SCENE_BACKEND_CUDA) {
		log_error("simulation.backend: cuda was requested but there is no usable "
			  "GPU: %s",
			  why);
		return NB_EINPUT;
	}
	/* once per process, even when batch jobs create engines on
	 * several threads */
	static atomic_int said_once;
	if (!atomic_exchange(&said_once, 1))
		log_info("no usable GPU (%s): using the CPU", why);
	return 0;
}

/* The one choice of back end: the solver (none: film), the ranks (CPU:
 * split; GPU: e->ranks, which the GPU row takes), the backend, the time
 * steps (shared or individual). */
static int engine_pick(const struct engine *e, int backend, const struct engine_ops **ops)
{
	const int blocks = e->p.timesteps == SCENE_TIMESTEPS_INDIVIDUAL;
	*ops = NULL;
	if (e->p.solver == SCENE_SOLVER_NONE) {
		*ops = &engine_ops_film;
		return 0;
	}
	if (e->split.force && backend == SCENE_BACKEND_CUDA) {
		log_error("simulation.backend: cuda over MPI ranks takes the GPU ranks "
			  "(engine_create_ranks), not a force function (internal)");
		return NB_EINPUT;
	}
	if (e->split.force) {
		*ops = blocks ? &engine_ops_ranks_blocks : &engine_ops_ranks;
		return 0;
	}
	int err = engine_pick_gpu(backend, blocks, ops);
	if (!err && !*ops)
		*ops = blocks ? &engine_ops_cpu_blocks : &engine_ops_cpu;
	return err;
}

static int engine_create_with(const struct scene *sc, struct sim_state *st, int backend,
			      const struct engine_split *split, const struct gpu_ranks *ranks,
			      struct engine **out)
{
	*out = NULL;
	struct engine *e = calloc(1, sizeof *e);
	if (!e) {
		log_error("out of memory creating the simulation engine");
		return NB_ERUNTIME;
	}
	e->st = st;
	sim_params_of(sc, &e->p);
	if (split)
		e->split = *split;
	e->ranks = ranks;
	e->time = st->time;
	e->step = st->step;
	e->frames = sc->output.frames;
	int err = engine_pick(e, backend, &e->ops);
	if (!err)
		err = e->ops->open(e, backend);
	if (err) {
		engine_free(&e);
		return err;
	}
	if (e->ops->blocks) {
		size_t len = strlen(e->desc);
		snprintf(e->desc + len, sizeof e->desc - len,
			 "; individual time steps: dt_max %g, eta %g, max level %d",
			 sim_params_dt_max_scene(sc), e->p.eta, e->p.max_level);
	}
	*out = e;
	return 0;
}

static int engine_backend(const struct scene *sc, int backend_cli)
{
	return backend_cli != -1 ? backend_cli : (int)sc->simulation.backend;
}

int engine_create(const struct scene *sc, struct sim_state *st, int backend_cli,
		  struct engine **out)
{
	return engine_create_with(sc, st, engine_backend(sc, backend_cli), NULL, NULL, out);
}

int engine_create_split(const struct scene *sc, struct sim_state *st, int backend_cli,
			const struct engine_split *split, struct engine **out)
{
	return engine_create_with(sc, st, engine_backend(sc, backend_cli), split, NULL, out);
}

int engine_create_ranks(const struct scene *sc, struct sim_state *st, int backend_cli,
			const struct gpu_ranks *ranks, struct engine **out)
{
	*out = NULL;
	int backend = engine_backend(sc, backend_cli);
	if (backend == SCENE_BACKEND_CPU || sc->simulation.solver == SCENE_SOLVER_NONE) {
		log_error("GPU ranks need simulation.backend cuda or auto and a solver (internal)");
		return NB_EINPUT;
	}
	return engine_create_with(sc, st, SCENE_BACKEND_CUDA, NULL, ranks, out);
}

void engine_set_film(struct engine *e, struct sim_snap_series *series)
{
	sim_snap_series_free(&e->film);
	e->film = series;
	e->film_steps = 0;
}

long engine_force_calls(const struct engine *e)
{
	return e->force_calls;
}

int engine_draws_on_gpu(const struct engine *e)
{
	return e->draw_gpu;
}

int engine_is_split(const struct engine *e)
{
	return e->split.force != NULL;
}

int engine_split_gpu(const struct engine *e)
{
	return e->split.force != NULL && e->split.gpu;
}

int engine_ranks_own_bodies(const struct engine *e)
{
	return e && e->split.sums != NULL;
}

int engine_split_bodies(struct engine *e, const struct sim_state *st, const double *h,
			struct sim_state *sub, const double **sub_h)
{
	if (!e->split.bodies) {
		log_error("engine_split_bodies: the engine is not split over ranks (internal)");
		return NB_ERUNTIME;
	}
	return e->split.bodies(e->split.ctx, st, h, sub, sub_h);
}

int engine_split_h(struct engine *e, const struct scene *sc, const struct sim_state *st,
		   const struct sim_units *u, double *h)
{
	if (e && e->split.h)
		return e->split.h(e->split.ctx, sc, st, u, h);
	return render_adaptive_h_state(sc, st, u, h);
}

int engine_split_h_moves(const struct engine *e)
{
	return e && e->split.h_follow != NULL;
}

int engine_split_h_follow(struct engine *e, const uint32_t *id_then, const double *h_then,
			  size_t n_then, const struct sim_state *st, double *out)
{
	if (!engine_split_h_moves(e)) {
		log_error("engine_split_h_follow: the bodies do not move between ranks (internal)");
		return NB_ERUNTIME;
	}
	return e->split.h_follow(e->split.ctx, id_then, h_then, n_then, st, out);
}

void engine_split_sum(struct engine *e, float *buf, size_t n)
{
	if (e->split.sum)
		e->split.sum(e->split.ctx, buf, n);
}

int engine_film_still(const struct engine *e)
{
	return e->ops->film && !e->film;
}

int engine_advance(struct engine *e, int steps, int need_potential)
{
	return steps <= 0 ? 0 : e->ops->advance(e, steps, need_potential);
}

int engine_advance_async(struct engine *e, int steps, int need_potential)
{
	if (steps <= 0)
		return 0;
	if (!e->ops->advance_async) /* a host row: the steps are taken now */
		return e->ops->advance(e, steps, need_potential);
	return e->ops->advance_async(e, steps, need_potential);
}

int engine_check(struct engine *e)
{
	return e->ops->check ? e->ops->check(e) : 0;
}

int engine_sync(struct engine *e)
{
	return e->ops->sync ? e->ops->sync(e) : 0;
}

struct gpu_sim *engine_gpu(struct engine *e)
{
	return e->gpu;
}

const char *engine_describe(const struct engine *e)
{
	return e->desc;
}

int engine_ts_stats(struct engine *e, struct engine_ts_stats *s)
{
	memset(s, 0, sizeof *s);
	s->individual = e->ops->blocks;
	s->blocks = e->blocks;
	if (!e->ops->blocks)
		return 0;
	int err = e->ops->levels(e, s);
	if (err)
		return err;
	const double n = s->bodies > 0 ? s->bodies : (double)e->st->n;
	if (e->blocks > 0 && n > 0)
		s->evals_per_body_frame =
			s->evals / n / ((double)e->blocks / e->p.blocks_per_frame);
	return 0;
}

void engine_ts_report(struct engine *e)
{
	struct engine_ts_stats s;
	if (!e->ops->blocks || e->blocks == 0 || engine_ts_stats(e, &s) != 0)
		return;
	char h[512];
	sim_ts_format_hist(s.hist, h, sizeof h);
	log_info("individual time steps: %.2f force evaluations per body per frame (shared steps: "
		 "%d), %ld ticks in %ld block steps (%ld tree builds, the rest refits); levels at "
		 "the end (dt_max / 2^L): %s",
		 s.evals_per_body_frame, e->p.steps_per_frame, s.ticks, s.blocks, s.rebuilds, h);
	if (e->ops->ts_report)
		e->ops->ts_report(e);
}

int engine_diag_queue(struct engine *e)
{
	if (e->diag_queued) {
		log_error("engine_diag_queue: the last diagnostics were not taken (internal)");
		return NB_ERUNTIME;
	}
	int err = e->ops->diag_queue ? e->ops->diag_queue(e) : engine_host_diag_queue(e);
	if (err)
		return err;
	e->diag_queued = 1;
	return 0;
}

int engine_diag_take(struct engine *e, struct sim_diag *d, double *time)
{
	if (!e->diag_queued) {
		log_error("engine_diag_take: nothing queued (internal)");
		return NB_ERUNTIME;
	}
	e->diag_queued = 0;
	int err = e->ops->diag_take ? e->ops->diag_take(e, d) : engine_host_diag_take(e, d);
	if (err)
		return err;
	*time = e->diag_time;
	return 0;
}

/* e->sel for FOLLOW (NULL for "all"), handed to the row (the GPU uploads it). */
static int engine_select(struct engine *e, const char *follow)
{
	const struct sim_state *st = e->st;
	int all = strcmp(follow, "all") == 0, any = all;
	for (int c = 0; c < st->ncomp && !any; c++)
		any = sim_component_follows(follow, st->comps[c].name);
	if (!any) {
		char list[1024] = "";
		size_t len = 0;
		for (int c = 0; c < st->ncomp && len < sizeof list - 1; c++)
			len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", c ? ", " : "",
						st->comps[c].name);
		log_error("camera.follow: no component named '%s' (components: %s; or 'all')", follow,
			  list);
		return NB_EINPUT;
	}
	free(e->sel);
	e->sel = NULL;
	e->sel_follow[0] = '\0';
	if (!all) {
		if (!(e->sel = malloc(st->n ? st->n : 1))) {
			log_error("out of memory for the camera follow selection of %zu bodies", st->n);
			return NB_ERUNTIME;
		}
		for (size_t i = 0; i < st->n; i++)
			e->sel[i] = st->comp[i] < st->ncomp &&
				    sim_component_follows(follow, st->comps[st->comp[i]].name);
	}
	int rc = e->ops->select ? e->ops->select(e) : 0;
	if (rc == 0)
		snprintf(e->sel_follow, sizeof e->sel_follow, "%s", follow);
	return rc;
}

int engine_com(struct engine *e, const char *follow, double com[3])
{
	int rc = 0;
	if (strcmp(e->sel_follow, follow) != 0 && (rc = engine_select(e, follow)))
		return rc;
	return e->ops->com ? e->ops->com(e, com) : engine_host_com(e, com);
}

void engine_free(struct engine **e)
{
	if (!e || !*e)
		return;
	if ((*e)->ops && (*e)->ops->close)
		(*e)->ops->close(*e);
	free((*e)->sel);
	sim_snap_series_free(&(*e)->film);
	free(*e);
	*e = NULL;
}
