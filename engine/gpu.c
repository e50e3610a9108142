/* gpu.c - the device back end (engine_internal.h): sim/cuda/'s simulation,
 * its state on the GPU, steps queued on its stream (GPU ranks too, e->ranks).
 * Two rows: engine_ops_gpu takes leapfrog steps of dt, engine_ops_gpu_blocks
 * individual time steps (sim/cuda/sim_levels.cu). In a CPU-only build the
 * stubs of sim/cuda/gpu_none.c stand behind it and engine_pick never takes
 * it (gpu_probe says no). */
#include <stdio.h>
#include <stdlib.h>

#include "engine_internal.h"
#ifdef NB_HAVE_CUDA
#include "../sim/cuda/tree_api.h"
#endif

/* NB_TREE_PROFILE=1 (a diagnostic, docs/BENCHMARKS.md issue 18): the GPU
 * tree's stages timed at every evaluation (each then synchronises once),
 * summed over the run and logged when the engine is freed. */
#ifdef NB_HAVE_CUDA
static int gpu_profiling(void)
{
	const char *p = getenv("NB_TREE_PROFILE");
	return p && atoi(p) > 0;
}
#endif

static int gpu_open(struct engine *e, int backend)
{
	(void)backend;
#ifdef NB_HAVE_CUDA
	if (gpu_profiling())
		gpu_tree_profile_enable(1);
#endif
	int err = gpu_sim_create_ranks(e->st, &e->p, e->ranks, &e->gpu);
	if (err)
		return err;
	char name[128] = "GPU";
	size_t fr = 0, tot = 0;
	if (gpu_device_info(name, sizeof name, &fr, &tot) != 0)
		snprintf(name, sizeof name, "GPU");
	int len; /* a description too long for e->desc is cut */
	if (e->ranks)
		len = snprintf(e->desc, sizeof e->desc,
			       "cuda over %d MPI ranks (%s each, %s, replicated state, Morton "
			       "stretches, accelerations swapped through %s)",
			       e->ranks->P, name, gpu_sim_describe(e->gpu),
			       gpu_sim_ranks_exchange(e->gpu));
	else
		len = snprintf(e->desc, sizeof e->desc, "cuda (%s, %s)", name,
			       gpu_sim_describe(e->gpu));
	e->draw_gpu = 1;
	return len < 0 ? NB_ERUNTIME : 0;
}

/* After `steps` steps of dt were taken or queued (err: that call's): the
 * host's clock of the device state follows them. */
static int gpu_stepped(struct engine *e, int steps, int err)
{
	if (err)
		return err;
	e->step += steps;
	e->time += steps * e->p.dt;
	return 0;
}

static int gpu_advance(struct engine *e, int steps, int need_potential)
{
	return gpu_stepped(e, steps, gpu_sim_advance(e->gpu, steps, need_potential));
}

static int gpu_advance_async(struct engine *e, int steps, int need_potential)
{
	return gpu_stepped(e, steps, gpu_sim_advance_async(e->gpu, steps, need_potential));
}

static int gpu_blocks_advance_async(struct engine *e, int steps, int need_potential)
{
	int blocks, err = engine_blocks_of(e, steps, &blocks);
	if (!err)
		err = gpu_sim_advance_blocks_async(e->gpu, blocks, need_potential);
	if (err)
		return err;
	e->blocks += blocks;
	e->step += steps;
	e->time += blocks * e->p.dt_max;
	return 0;
}

static int gpu_blocks_advance(struct engine *e, int steps, int need_potential)
{
	int blocks, err = engine_blocks_of(e, steps, &blocks);
	if (err)
		return err;
	err = gpu_blocks_advance_async(e, steps, need_potential);
	return err ? err : gpu_sim_check(e->gpu);
}

static int gpu_check(struct engine *e)
{
	return gpu_sim_check(e->gpu);
}

static int gpu_sync(struct engine *e)
{
	int err = gpu_sim_download(e->gpu, e->st);
	if (err)
		return err;
	e->st->time = e->time;
	e->st->step = e->step;
	long bad = sim_diag_find_nonfinite(e->st);
	return bad >= 0 ? engine_report_nonfinite(e, bad) : 0;
}

static int gpu_diag_queue(struct engine *e)
{
	int err = gpu_sim_diag_queue(e->gpu);
	if (!err)
		e->diag_time = e->time;
	return err;
}

static int gpu_diag_take(struct engine *e, struct sim_diag *d)
{
	return gpu_sim_diag_take(e->gpu, d);
}

static int gpu_select(struct engine *e)
{
	return gpu_sim_set_selection(e->gpu, e->sel);
}

static int gpu_com(struct engine *e, double com[3])
{
	double m;
	size_t count;
	return gpu_sim_com(e->gpu, com, &m, &count);
}

static int gpu_levels(struct engine *e, struct engine_ts_stats *s)
{
	return gpu_sim_levels(e->gpu, s->hist, &s->evals, &s->ticks, &s->rebuilds);
}

static void gpu_profile_report(void)
{
#ifdef NB_HAVE_CUDA
	if (!gpu_profiling())
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
#endif
}

static void gpu_close(struct engine *e)
{
	if (e->gpu) /* made: the run's evaluations */
		gpu_profile_report();
	gpu_sim_free(&e->gpu);
}

const struct engine_ops engine_ops_gpu = {
	.name = "cuda",
	.open = gpu_open,
	.advance = gpu_advance,
	.advance_async = gpu_advance_async,
	.check = gpu_check,
	.sync = gpu_sync,
	.diag_queue = gpu_diag_queue,
	.diag_take = gpu_diag_take,
	.select = gpu_select,
	.com = gpu_com,
	.close = gpu_close,
};

const struct engine_ops engine_ops_gpu_blocks = {
	.name = "cuda-blocks",
	.blocks = 1,
	.open = gpu_open,
	.advance = gpu_blocks_advance,
	.advance_async = gpu_blocks_advance_async,
	.check = gpu_check,
	.sync = gpu_sync,
	.diag_queue = gpu_diag_queue,
	.diag_take = gpu_diag_take,
	.select = gpu_select,
	.com = gpu_com,
	.levels = gpu_levels,
	.close = gpu_close,
};
