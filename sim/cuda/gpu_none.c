/* gpu_none.c - the GPU interface in a CPU-only build (make CUDA=0): every
 * entry point reports that CUDA was not compiled in. */
#include <stdio.h>

#include "gpu.h"

int gpu_probe(char *why, size_t whylen)
{
	if (why && whylen)
		snprintf(why, whylen, "this build has no CUDA support (built with CUDA=0)");
	return 0;
}

int gpu_device_info(char *name, size_t namelen, size_t *free_bytes, size_t *total_bytes)
{
	(void)name, (void)namelen, (void)free_bytes, (void)total_bytes;
	return NB_ERUNTIME;
}

int gpu_bind_local(int local_rank, int *dev, int *count)
{
	(void)local_rank;
	*dev = -1;
	*count = 0;
	return NB_ERUNTIME;
}

const char *gpu_sim_ranks_exchange(const struct gpu_sim *g)
{
	(void)g;
	return "";
}

size_t gpu_sim_bytes_needed(size_t n, const struct sim_params *p)
{
	(void)n, (void)p;
	return 0;
}

int gpu_sim_create(const struct sim_state *st, const struct sim_params *p, struct gpu_sim **out)
{
	return gpu_sim_create_ranks(st, p, NULL, out);
}

int gpu_sim_create_ranks(const struct sim_state *st, const struct sim_params *p,
			 const struct gpu_ranks *ranks, struct gpu_sim **out)
{
	(void)st, (void)p, (void)ranks;
	*out = NULL;
	log_error("this build has no CUDA support (rebuild with nvcc installed, without CUDA=0)");
	return NB_EINPUT;
}

int gpu_sim_advance(struct gpu_sim *g, int nsteps, int need_potential)
{
	(void)g, (void)nsteps, (void)need_potential;
	return NB_ERUNTIME;
}

int gpu_sim_download(struct gpu_sim *g, struct sim_state *st)
{
	(void)g, (void)st;
	return NB_ERUNTIME;
}

const char *gpu_sim_describe(const struct gpu_sim *g)
{
	(void)g;
	return "none";
}

void gpu_sim_free(struct gpu_sim **g)
{
	if (g)
		*g = NULL;
}

int gpu_direct_accel(const double *pos, const double *mass, size_t n, double eps,
		     enum scene_direct_kernel kernel, double *acc, double *pot)
{
	(void)pos, (void)mass, (void)n, (void)eps, (void)kernel, (void)acc, (void)pot;
	log_error("this build has no CUDA support");
	return NB_ERUNTIME;
}

int gpu_direct_accel_soft(const double *pos, const double *mass, const double *eps_body, size_t n,
			  double eps, enum scene_soft_kernel soft, enum scene_direct_kernel kernel,
			  double *acc, double *pot)
{
	(void)pos, (void)mass, (void)eps_body, (void)n, (void)eps, (void)soft, (void)kernel,
		(void)acc, (void)pot;
	log_error("this build has no CUDA support");
	return NB_ERUNTIME;
}

/* ---- the overlapped frame pipeline: never reached without a GPU sim ---- */
int gpu_sim_render_input(struct gpu_sim *g, struct gpu_render_input *in)
{
	(void)g, (void)in;
	return NB_ERUNTIME;
}

int gpu_sim_wait_event(struct gpu_sim *g, void *cuda_event)
{
	(void)g, (void)cuda_event;
	return NB_ERUNTIME;
}

int gpu_sim_advance_async(struct gpu_sim *g, int nsteps, int need_potential)
{
	(void)g, (void)nsteps, (void)need_potential;
	return NB_ERUNTIME;
}

int gpu_sim_check(struct gpu_sim *g)
{
	(void)g;
	return NB_ERUNTIME;
}

int gpu_sim_set_selection(struct gpu_sim *g, const unsigned char *sel_by_id)
{
	(void)g, (void)sel_by_id;
	return NB_ERUNTIME;
}

int gpu_sim_com(struct gpu_sim *g, double com[3], double *mass, size_t *count)
{
	(void)g, (void)com, (void)mass, (void)count;
	return NB_ERUNTIME;
}

int gpu_sim_diag_queue(struct gpu_sim *g)
{
	(void)g;
	return NB_ERUNTIME;
}

int gpu_sim_diag_take(struct gpu_sim *g, struct sim_diag *d)
{
	(void)g, (void)d;
	return NB_ERUNTIME;
}

int gpu_sim_advance_blocks_async(struct gpu_sim *g, int blocks, int need_potential)
{
	(void)g, (void)blocks, (void)need_potential;
	return NB_ERUNTIME;
}

int gpu_sim_levels(struct gpu_sim *g, long hist[SIM_TS_LEVELS], double *evals, long *ticks,
		   long *rebuilds)
{
	(void)g, (void)hist, (void)evals, (void)ticks, (void)rebuilds;
	return NB_ERUNTIME;
}

int gpu_let_create(const struct sim_params *p, struct gpu_let **out)
{
	(void)p;
	*out = NULL;
	log_error("barnes-hut over GPU domains: this build has no CUDA support (built with CUDA=0)");
	return NB_EINPUT;
}

int gpu_let_build(struct gpu_let *g, const double *pos, const double *mass, size_t n,
		  const unsigned char *active, const double *cube)
{
	(void)g, (void)pos, (void)mass, (void)n, (void)active, (void)cube;
	return NB_ERUNTIME;
}

int gpu_let_cover(struct gpu_let *g, int max, double *boxes, int *nbox)
{
	(void)g, (void)max, (void)boxes;
	*nbox = 0;
	return NB_ERUNTIME;
}

int gpu_let_export(struct gpu_let *g, const double *boxes, int nbox, void **buf, size_t *nbytes)
{
	(void)g, (void)boxes, (void)nbox;
	*buf = NULL;
	*nbytes = 0;
	return NB_ERUNTIME;
}

int gpu_let_accel(struct gpu_let *g, const void *const *bufs, const size_t *nbytes, int nbuf,
		  const unsigned char *active, double *acc, double *pot)
{
	(void)g, (void)bufs, (void)nbytes, (void)nbuf, (void)active, (void)acc, (void)pot;
	return NB_ERUNTIME;
}


size_t gpu_let_bytes(const struct gpu_let *g)
{
	(void)g;
	return 0;
}

void gpu_let_times(const struct gpu_let *g, double *own_ms, double *remote_ms)
{
	(void)g;
	*own_ms = *remote_ms = 0;
}

void gpu_let_free(struct gpu_let **g)
{
	if (g)
		*g = NULL;
}
