/* engine.c - the solver for one run: picks the backend (CPU or CUDA), owns
 * the GPU simulation when there is one, and advances the state by leapfrog
 * steps of the scene's dt. Scene values (softening, dt) are converted to
 * internal units here, once. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "../sim/cuda/gpu.h"
#ifdef NB_HAVE_CUDA
#include "../sim/cuda/tree_api.h"
#endif
#include "../sim/sim.h"
#include "engine.h"

struct engine {
	struct sim_state *st; /* not owned */
	enum scene_solver solver;
	double eps, dt, theta; /* internal units */
	int multipoles;
	enum scene_opening opening;
	struct gpu_sim *gpu;   /* NULL on the CPU */
	const struct gpu_ranks *ranks; /* GPU ranks (engine_create_ranks), or NULL */
	/* individual time steps (sim/timestep.c; GPU sim/cuda/sim_levels.cu) */
	int individual;
	int spf, bpf;          /* steps_per_frame, blocks_per_frame */
	double dt_max;         /* internal units */
	struct sim_ts ts;      /* CPU only */
	long blocks;           /* block steps advanced */
	struct engine_split split; /* engine_create_split's; force NULL: not split */
	double time;           /* time and step as of the last advance (GPU path) */
	long step;
	double diag_time;      /* time of the queued diagnostics */
	int diag_queued;
	struct sim_diag diag;  /* CPU: the queued diagnostics */
	char sel_follow[SCENE_NAME_MAX + 8]; /* follow name sel was built for; "" none */
	unsigned char *sel;    /* by body (= id on the GPU); NULL: all */
	char desc[192];
	long force_calls;      /* CPU force evaluations (film mode: must stay 0) */
	int draw_gpu;          /* film mode with a usable GPU: frames drawn there (engine_draws_on_gpu) */
	/* simulation.solver: none (film mode): no forces; frames follow the
	 * series when there is one, else the state stays as it was read */
	struct sim_snap_series *film; /* owned; NULL: a still state */
	int frames;            /* output.frames: frame f at t0 + f (t1 - t0) / (frames - 1) */
	long film_steps;       /* steps advanced (spf per frame) */
};

/* sim_force_fn for the CPU backend */
static int engine_cpu_force(const double *pos, const double *mass, size_t n, void *ctx,
			    double *acc, double *pot)
{
	struct engine *e = ctx;
	e->force_calls++;
	if (e->split.force)
		return e->split.force(pos, mass, n, e->split.ctx, acc, pot);
	if (e->solver == SCENE_SOLVER_BARNES_HUT)
		return sim_tree_accel_ex(pos, mass, n, e->eps, e->theta, e->multipoles, e->opening,
					 acc, pot);
	return sim_direct_accel(pos, mass, n, e->eps, acc, pot);
}

/* sim_force_active_fn for the CPU backend's individual time steps */
static int engine_cpu_force_active(const double *pos, const double *mass, size_t n,
				   const unsigned char *active, void *ctx, double *acc, double *pot)
{
	struct engine *e = ctx;
	e->force_calls++;
	if (e->solver == SCENE_SOLVER_BARNES_HUT)
		return sim_tree_accel_active(pos, mass, n, e->eps, e->theta, e->multipoles,
					     e->opening, active, acc, pot);
	return sim_direct_accel_active(pos, mass, n, e->eps, active, acc, pot);
}

/* Report body i's non-finite value with a hint; always NB_ERUNTIME. */
static int engine_report_nonfinite(const struct engine *e, long i)
{
	const struct sim_state *st = e->st;
	const char *comp = "?";
	if (st->comp[i] < st->ncomp)
		comp = st->comps[st->comp[i]].name;
	log_error("step %ld (t = %g internal units): body %u of component '%s' has a non-finite "
		  "position, velocity or acceleration: time step too large or softening too "
		  "small: try simulation.dt smaller or simulation.softening larger",
		  st->step, st->time, (unsigned)st->id[i], comp);
	return NB_ERUNTIME;
}

/* Individual time steps: the longest step, scene time units. */
static double engine_dt_max(const struct scene *sc)
{
	int bpf = sc->simulation.blocks_per_frame > 0 ? sc->simulation.blocks_per_frame : 1;
	return sc->simulation.dt * sc->simulation.steps_per_frame / bpf;
}

/* The device simulation's parameters for scene sc, in internal units: the
 * engine's own and the memory estimate's (engine_gpu_bytes_needed). */
static void engine_gpu_params(const struct scene *sc, struct gpu_sim_params *p)
{
	struct sim_units u;
	scene_units_of(sc->units, &u);
	*p = (struct gpu_sim_params){
		.solver = sc->simulation.solver,
		.direct_kernel = sc->simulation.direct_kernel,
		.softening = scene_softening(sc),
		.dt = sc->simulation.dt * u.time,
		.theta = sc->simulation.theta,
		.multipoles = sc->simulation.multipoles,
		.opening = sc->simulation.opening,
		.reorder = sc->simulation.reorder,
		.timesteps = sc->simulation.timesteps,
		.dt_max = engine_dt_max(sc) * u.time,
		.eta = sc->simulation.eta,
		.max_level = sc->simulation.max_level,
		.coarsen_margin = sc->simulation.coarsen_margin,
		.rebuild_dt = sc->simulation.dt * u.time,
	};
}

size_t engine_gpu_bytes_needed(const struct scene *sc, size_t n)
{
	struct gpu_sim_params p;
	engine_gpu_params(sc, &p);
	return gpu_sim_bytes_needed(n, &p);
}

/* The GPU engine, when BACKEND asks for it (or auto) and a GPU is usable:
 * *USED = 1. Without a GPU, auto falls back to the CPU (*USED = 0, said
 * once) and cuda is bad input. */
#ifdef NB_HAVE_CUDA
static int engine_profiling(void);
#endif

static int engine_open_gpu(struct engine *e, const struct scene *sc, struct sim_state *st,
			   int backend, int *used)
{
	*used = 0;
	if (backend != SCENE_BACKEND_CUDA && backend != SCENE_BACKEND_AUTO)
		return 0;
	char why[256] = "";
	if (gpu_probe(why, sizeof why)) {
		struct gpu_sim_params p;
		engine_gpu_params(sc, &p);
		p.ranks = e->ranks;
#ifdef NB_HAVE_CUDA
		if (engine_profiling())
			gpu_tree_profile_enable(1);
#endif
		int err = gpu_sim_create(st, &p, &e->gpu);
		if (err)
			return err;
		char name[128] = "GPU";
		size_t fr = 0, tot = 0;
		if (gpu_device_info(name, sizeof name, &fr, &tot) != 0)
			snprintf(name, sizeof name, "GPU");
		if (e->ranks)
			snprintf(e->desc, sizeof e->desc,
				 "cuda over %d MPI ranks (%s each, %s, replicated state, Morton "
				 "stretches, accelerations swapped through %s)",
				 e->ranks->P, name, gpu_sim_describe(e->gpu),
				 gpu_sim_ranks_exchange(e->gpu));
		else
			snprintf(e->desc, sizeof e->desc, "cuda (%s, %s)", name,
				 gpu_sim_describe(e->gpu));
		*used = 1;
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

/* The CPU engine: its description and the first accelerations. */
static int engine_open_cpu(struct engine *e, const struct scene *sc, struct sim_state *st)
{
	int nt = 1;
#ifdef _OPENMP
	nt = omp_get_max_threads();
#endif
	if (e->solver == SCENE_SOLVER_BARNES_HUT)
		snprintf(e->desc, sizeof e->desc, "cpu (%d thread%s, barnes-hut theta %g, %s, %s)",
			 nt, nt == 1 ? "" : "s", e->theta,
			 e->multipoles >= 2 ? "quadrupole" : "monopole",
			 e->opening == SCENE_OPENING_COM ? "com" : "bmax");
	else
		snprintf(e->desc, sizeof e->desc, "cpu (%d thread%s, direct)", nt,
			 nt == 1 ? "" : "s");
	/* first accelerations (and potential, so frame 0's energy is known) */
	int err = engine_cpu_force(st->pos, st->mass, st->n, e, st->acc, st->pot);
	if (err)
		return err;
	long bad = sim_diag_find_nonfinite(st);
	if (bad >= 0)
		return engine_report_nonfinite(e, bad);
	if (e->individual) {
		struct sim_ts_params tp = {.dt_max = e->dt_max, .eta = sc->simulation.eta,
					   .eps = e->eps, .max_level = sc->simulation.max_level,
					   .coarsen_margin = sc->simulation.coarsen_margin};
		err = sim_ts_init(&e->ts, &tp, st);
		if (err)
			return err;
	}
	return 0;
}

int engine_create(const struct scene *sc, struct sim_state *st, int backend_cli,
		      struct engine **out)
{
	return engine_create_split(sc, st, backend_cli, NULL, out);
}

static int engine_create_with(const struct scene *sc, struct sim_state *st, int backend_cli,
			      const struct engine_split *split, const struct gpu_ranks *ranks,
			      struct engine **out);

int engine_create_split(const struct scene *sc, struct sim_state *st, int backend_cli,
			const struct engine_split *split, struct engine **out)
{
	return engine_create_with(sc, st, backend_cli, split, NULL, out);
}

int engine_create_ranks(const struct scene *sc, struct sim_state *st, int backend_cli,
			const struct gpu_ranks *ranks, struct engine **out)
{
	*out = NULL;
	int backend = backend_cli != -1 ? backend_cli : (int)sc->simulation.backend;
	if (backend == SCENE_BACKEND_CPU || sc->simulation.solver == SCENE_SOLVER_NONE) {
		log_error("GPU ranks need simulation.backend cuda or auto and a solver (internal)");
		return NB_EINPUT;
	}
	return engine_create_with(sc, st, SCENE_BACKEND_CUDA, NULL, ranks, out);
}

static int engine_create_with(const struct scene *sc, struct sim_state *st, int backend_cli,
			      const struct engine_split *split, const struct gpu_ranks *ranks,
			      struct engine **out)
{
	int err = 0, used_gpu = 0;
	*out = NULL;
	struct engine *e = calloc(1, sizeof *e);
	if (!e) {
		log_error("out of memory creating the simulation engine");
		return NB_ERUNTIME;
	}
	e->ranks = ranks;
	struct sim_units u;
	scene_units_of(sc->units, &u);
	e->st = st;
	e->solver = sc->simulation.solver;
	e->eps = scene_softening(sc);
	e->dt = sc->simulation.dt * u.time;
	e->theta = sc->simulation.theta;
	e->multipoles = sc->simulation.multipoles;
	e->opening = sc->simulation.opening;
	e->time = st->time;
	e->step = st->step;
	e->individual = sc->simulation.timesteps == SCENE_TIMESTEPS_INDIVIDUAL;
	e->spf = sc->simulation.steps_per_frame;
	e->bpf = sc->simulation.blocks_per_frame > 0 ? sc->simulation.blocks_per_frame : 1;
	e->dt_max = engine_dt_max(sc) * u.time;
	int backend = backend_cli != -1 ? backend_cli : (int)sc->simulation.backend;
	if (split)
		e->split = *split;
	const int force = split && split->force;
	if (e->solver == SCENE_SOLVER_NONE) {
		/* film mode: no solver on either backend, and no first force
		 * evaluation (the statistics then have no potential energy) */
		if (force || e->individual) {
			log_error("simulation.solver: none computes no forces: it takes neither MPI "
				  "ranks nor simulation.timesteps: individual");
			err = NB_EINPUT;
		}
		/* the frames may still be drawn on the GPU, uploaded from the
		 * host state each frame (app/renderer_gpu.c) */
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
	} else if (force && backend == SCENE_BACKEND_CUDA) {
		log_error("simulation.backend: cuda over MPI ranks takes the GPU ranks "
			  "(engine_create_ranks), not a force function (internal)");
		err = NB_EINPUT;
	} else if (!force) {
		err = engine_open_gpu(e, sc, st, backend, &used_gpu);
	}
	if (!err && !used_gpu && e->solver != SCENE_SOLVER_NONE)
		err = engine_open_cpu(e, sc, st);
	e->frames = sc->output.frames;
	if (!err && force && split->desc)
		snprintf(e->desc, sizeof e->desc, "%s", split->desc);
	if (err) {
		engine_free(&e);
		return err;
	}
	if (e->individual) {
		size_t len = strlen(e->desc);
		snprintf(e->desc + len, sizeof e->desc - len,
			 "; individual time steps: dt_max %g, eta %g, max level %d",
			 engine_dt_max(sc), sc->simulation.eta, sc->simulation.max_level);
	}
	*out = e;
	return 0;
}

/* Individual steps: `steps` steps of dt as whole block steps of dt_max. */
static int engine_blocks_of(const struct engine *e, int steps, int *blocks)
{
	long num = (long)steps * e->bpf;
	if (num % e->spf != 0) {
		log_error("individual time steps advance by whole block steps: %d steps of dt is not "
			  "a multiple of steps_per_frame / blocks_per_frame = %d / %d (internal)",
			  steps, e->spf, e->bpf);
		return NB_ERUNTIME;
	}
	*blocks = (int)(num / e->spf);
	return 0;
}

/* The CPU's individual steps: `blocks` block steps. */
static int engine_cpu_blocks(struct engine *e, int steps, int blocks, int need_potential)
{
	for (int b = 0; b < blocks; b++) {
		if (sim_stop_requested())
			return NB_EINTR;
		int err = sim_ts_block_step(&e->ts, e->st, engine_cpu_force_active, e,
					    need_potential && b == blocks - 1);
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

/* Film mode: no forces. With a series, the state at frame
 * film_steps / spf's time; without, a still state whose clock runs. */
static int engine_film_advance(struct engine *e, int steps)
{
	e->film_steps += steps;
	e->st->step += steps;
	if (!e->film) {
		e->st->time += steps * e->dt;
		return 0;
	}
	const double t0 = sim_snap_series_t0(e->film), t1 = sim_snap_series_t1(e->film);
	const double f = (double)e->film_steps / e->spf;
	const double t = e->frames > 1 ? t0 + f * (t1 - t0) / (e->frames - 1) : t0;
	return sim_snap_series_at(e->film, t, e->st);
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
	return e->gpu != NULL || e->draw_gpu;
}

int engine_is_split(const struct engine *e)
{
	return e->split.force != NULL;
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

void engine_split_sum(struct engine *e, float *buf, size_t n)
{
	if (e->split.sum)
		e->split.sum(e->split.ctx, buf, n);
}

int engine_film_still(const struct engine *e)
{
	return e->solver == SCENE_SOLVER_NONE && !e->film;
}

int engine_advance(struct engine *e, int steps, int need_potential)
{
	if (steps <= 0)
		return 0;
	if (e->solver == SCENE_SOLVER_NONE)
		return engine_film_advance(e, steps);
	if (e->individual) {
		int blocks, err = engine_blocks_of(e, steps, &blocks);
		if (err)
			return err;
		if (!e->gpu)
			return engine_cpu_blocks(e, steps, blocks, need_potential);
		err = engine_advance_async(e, steps, need_potential);
		return err ? err : engine_check(e);
	}
	if (e->gpu) {
		int err = gpu_sim_advance(e->gpu, steps, need_potential);
		if (err)
			return err;
		e->step += steps;
		e->time += steps * e->dt;
		return 0;
	}
	for (int s = 0; s < steps; s++) {
		if (sim_stop_requested())
			return NB_EINTR; /* a signal: stop between steps, not after the frame */
		int err = sim_leapfrog_step(e->st, e->dt, engine_cpu_force, e,
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

int engine_sync(struct engine *e)
{
	if (!e->gpu)
		return 0;
	int err = gpu_sim_download(e->gpu, e->st);
	if (err)
		return err;
	e->st->time = e->time;
	e->st->step = e->step;
	long bad = sim_diag_find_nonfinite(e->st);
	if (bad >= 0)
		return engine_report_nonfinite(e, bad);
	return 0;
}

struct gpu_sim *engine_gpu(struct engine *e)
{
	return e->gpu;
}

int engine_advance_async(struct engine *e, int steps, int need_potential)
{
	if (!e->gpu)
		return engine_advance(e, steps, need_potential);
	if (steps <= 0)
		return 0;
	if (e->individual) {
		int blocks, err = engine_blocks_of(e, steps, &blocks);
		if (!err)
			err = gpu_sim_advance_blocks_async(e->gpu, blocks, need_potential);
		if (err)
			return err;
		e->blocks += blocks;
		e->step += steps;
		e->time += blocks * e->dt_max;
		return 0;
	}
	int err = gpu_sim_advance_async(e->gpu, steps, need_potential);
	if (err)
		return err;
	e->step += steps;
	e->time += steps * e->dt;
	return 0;
}

int engine_ts_stats(struct engine *e, struct engine_ts_stats *s)
{
	memset(s, 0, sizeof *s);
	s->individual = e->individual;
	s->blocks = e->blocks;
	if (!e->individual)
		return 0;
	if (e->gpu) {
		int err = gpu_sim_levels(e->gpu, s->hist, &s->evals, &s->ticks, &s->rebuilds);
		if (err)
			return err;
	} else {
		memcpy(s->hist, e->ts.hist, sizeof s->hist);
		s->evals = e->ts.evals;
		s->ticks = e->ts.ticks;
		s->rebuilds = e->ts.ticks;
	}
	if (e->blocks > 0 && e->st->n > 0)
		s->evals_per_body_frame = s->evals / (double)e->st->n / ((double)e->blocks / e->bpf);
	return 0;
}

void engine_ts_report(struct engine *e)
{
	struct engine_ts_stats s;
	if (!e->individual || e->blocks == 0 || engine_ts_stats(e, &s) != 0)
		return;
	char h[512];
	sim_ts_format_hist(s.hist, h, sizeof h);
	log_info("individual time steps: %.2f force evaluations per body per frame (shared steps: "
		 "%d), %ld ticks in %ld block steps (%ld tree builds, the rest refits); levels at "
		 "the end (dt_max / 2^L): %s",
		 s.evals_per_body_frame, e->spf, s.ticks, s.blocks, s.rebuilds, h);
	if (!e->gpu) /* counted on the CPU only */
		log_info("individual time steps: %ld level changes, %.4f per body per block",
			 e->ts.changes, (double)e->ts.changes / (double)e->st->n / (double)e->blocks);
}

int engine_check(struct engine *e)
{
	return e->gpu ? gpu_sim_check(e->gpu) : 0;
}

int engine_diag_queue(struct engine *e)
{
	if (e->diag_queued) {
		log_error("engine_diag_queue: the last diagnostics were not taken (internal)");
		return NB_ERUNTIME;
	}
	if (e->gpu) {
		int err = gpu_sim_diag_queue(e->gpu);
		if (err)
			return err;
		e->diag_time = e->time;
	} else {
		sim_diag_compute(e->st, &e->diag);
		if (e->solver == SCENE_SOLVER_NONE) /* no forces: no potential energy */
			e->diag.potential = e->diag.total = NAN;
		e->diag_time = e->st->time;
	}
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
	if (e->gpu) {
		int err = gpu_sim_diag_take(e->gpu, d);
		if (err)
			return err;
	} else {
		*d = e->diag;
	}
	*time = e->diag_time;
	return 0;
}

const char *engine_describe(const struct engine *e)
{
	return e->desc;
}

/* e->sel for FOLLOW (NULL for "all"), uploaded to the device on the GPU. */
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
	int rc = e->gpu ? gpu_sim_set_selection(e->gpu, e->sel) : 0;
	if (rc == 0)
		snprintf(e->sel_follow, sizeof e->sel_follow, "%s", follow);
	return rc;
}

int engine_com(struct engine *e, const char *follow, double com[3])
{
	int rc = 0;
	if (strcmp(e->sel_follow, follow) != 0 && (rc = engine_select(e, follow)))
		return rc;
	if (e->gpu) {
		double m;
		size_t count;
		return gpu_sim_com(e->gpu, com, &m, &count);
	}
	sim_state_com(e->st, e->sel, com, NULL, NULL);
	return 0;
}

/* NB_TREE_PROFILE=1 (a diagnostic, docs/BENCHMARKS.md issue 18): the GPU
 * tree's stages timed at every evaluation (each then synchronises once),
 * summed over the run and logged when the engine is freed. */
#ifdef NB_HAVE_CUDA
static int engine_profiling(void)
{
	const char *p = getenv("NB_TREE_PROFILE");
	return p && atoi(p) > 0;
}
#endif

static void engine_profile_report(const struct engine *e)
{
#ifdef NB_HAVE_CUDA
	if (!e->gpu || !engine_profiling())
		return;
	struct gpu_tree_profile p;
	gpu_tree_profile_read(&p, 1);
	if (p.computes <= 0)
		return;
	const double k = 1.0 / (double)p.computes;
	log_info("tree profile: %ld evaluations, ms in all (per evaluation): bbox %.0f (%.3f), "
		 "sort %.0f (%.3f), build %.0f (%.3f), moments %.0f (%.3f), walk %.0f (%.3f), "
		 "total %.0f (%.3f)",
		 p.computes, p.ms_bbox, p.ms_bbox * k, p.ms_sort, p.ms_sort * k, p.ms_build,
		 p.ms_build * k, p.ms_moments, p.ms_moments * k, p.ms_walk, p.ms_walk * k,
		 p.ms_total, p.ms_total * k);
#else
	(void)e;
#endif
}

void engine_free(struct engine **e)
{
	if (!e || !*e)
		return;
	engine_profile_report(*e);
	free((*e)->sel);
	sim_ts_free(&(*e)->ts);
	sim_snap_series_free(&(*e)->film);
	gpu_sim_free(&(*e)->gpu);
	free(*e);
	*e = NULL;
}
