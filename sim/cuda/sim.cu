/* sim.cu - the device-resident simulation (gpu_sim_* in sim/cuda/gpu.h).
 *
 * Owns struct gpu_bodies (float4 pos/vel/acc + ids) and a stream; runs
 * kick-drift-kick leapfrog steps entirely on the device, calling
 * gpu_direct_compute (direct.cu) or gpu_tree_compute (tree.cu) for the
 * forces. The host sees the state only through gpu_sim_download, which
 * undoes any permutation a solver made (id[slot] = index in sim_state).
 *
 * Leapfrog (docs/PHYSICS.md, section Time integration):
 * v += a dt/2; x += v dt; a = a(x); v += a dt/2. The
 * first kick and the drift are one kernel, the last kick another; both are
 * memory-bound (48 bytes per body) and negligible next to the force.
 *
 * For the overlapped frame pipeline (app/frames.c) the steps can be queued
 * without waiting (the finiteness check lands in pinned memory and is read
 * by gpu_sim_check), the device positions are handed to the renderer with
 * a ready event, the followed centre of mass is reduced on the device, and
 * so are the statistics' energies and momenta
 * (gpu_sim_diag_*, sim/cuda/diag.cu). */
extern "C" {
#include "../../scene/log.h"
#include "../../sim/sim.h"
}
#include "diag_internal.h"
#include "gpu_internal.h"


#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SIM_THREADS 256
#define SIM_NO_BAD 0x7f7f7f7f /* cudaMemset byte 0x7f: "no bad body" */

struct gpu_sim {
	struct gpu_bodies b;
	struct sim_params p;
	float eps, dt;
	enum scene_direct_kernel kernel; /* direct solver: resolved, never auto */
	struct gpu_tree *tree;           /* barnes-hut only */
	cudaStream_t stream;
	int *d_bad;    /* lowest slot with a non-finite value (SIM_NO_BAD if none) */
	int *h_bad;    /* pinned: d_bad of the last queued check */
	int check_pending; /* a check was queued and not yet reported */
	int pot_valid; /* acc.w holds phi for the current positions */
	long steps;    /* steps advanced so far (for messages) */
	char desc[128];
	cudaEvent_t ev_ready;   /* gpu_sim_render_input: positions written */
	/* centre of mass */
	unsigned char *d_sel;   /* by body id, or NULL: all */
	double *d_com, *h_com;  /* 8 sums: m, m x, m y, m z, count, x, y, z */
	struct gpu_diag *diag;  /* energies and momenta (diag.cu), at the first queue */
	/* individual time steps (sim_levels.cu; b.lev != NULL) */
	int *d_hist;            /* SIM_TS_LEVELS: the histogram of the last block end */
	int *h_hist;            /* pinned: its copy, with the evaluations after it */
	unsigned long long *d_evals, *h_evals; /* force evaluations since creation */
	cudaEvent_t ev_hist;    /* the copy is complete */
	int hist_pending;       /* a copy was queued and not yet read */
	long hist[SIM_TS_LEVELS]; /* the host's copy, as of the last block end read */
	long ticks, rebuilds;
	int *d_list, *d_count;  /* direct solver: the active slots */
	struct gpu_rk *rk;      /* over MPI ranks (sim_ranks.cu), or NULL */
};

/* ---- step kernels (48 bytes read + 32 written per body; no arithmetic to
 * speak of) ---- */
__global__ void sim_kick_drift(float4 *pos, float4 *vel, const float4 *acc, int n, float hdt, float dt)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	const float4 a = acc[i];
	float4 v = vel[i], p = pos[i];
	v.x = fmaf(a.x, hdt, v.x);
	v.y = fmaf(a.y, hdt, v.y);
	v.z = fmaf(a.z, hdt, v.z);
	p.x = fmaf(v.x, dt, p.x);
	p.y = fmaf(v.y, dt, p.y);
	p.z = fmaf(v.z, dt, p.z);
	vel[i] = v;
	pos[i] = p;
}

__global__ void sim_kick(float4 *vel, const float4 *acc, int n, float hdt)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	const float4 a = acc[i];
	float4 v = vel[i];
	v.x = fmaf(a.x, hdt, v.x);
	v.y = fmaf(a.y, hdt, v.y);
	v.z = fmaf(a.z, hdt, v.z);
	vel[i] = v;
}

__global__ void sim_check_finite(const float4 *pos, const float4 *vel, const float4 *acc, int n, int *bad)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	const float4 p = pos[i], v = vel[i], a = acc[i];
	if (!(isfinite(p.x) && isfinite(p.y) && isfinite(p.z) && isfinite(v.x) && isfinite(v.y) &&
	      isfinite(v.z) && isfinite(a.x) && isfinite(a.y) && isfinite(a.z)))
		atomicMin(bad, i);
}

static int sim_levels_create(struct gpu_sim *g);
static int sim_levels_queue_hist(struct gpu_sim *g);
static int sim_queue_check(struct gpu_sim *g);

static unsigned sim_blocks(size_t n)
{
	return (unsigned)((n + SIM_THREADS - 1) / SIM_THREADS);
}

static int sim_force(struct gpu_sim *g, int need_pot)
{
	if (g->rk)
		return gpu_rk_force(g->rk, &g->b, g->tree, g->eps, need_pot, g->stream);
	if (g->p.solver == SCENE_SOLVER_BARNES_HUT)
		return gpu_tree_compute_shared(g->tree, &g->b, need_pot, g->stream);
	return gpu_direct_compute(&g->b, g->eps, g->kernel, need_pot, g->stream);
}

/* One step; events (may be NULL) mark start, force start, force end, end. */
static int sim_step(struct gpu_sim *g, int need_pot, cudaEvent_t *ev)
{
	const int n = (int)g->b.n;
	const float hdt = 0.5f * g->dt;
	int rc;
	if (ev)
		CUDA_CHECK(cudaEventRecord(ev[0], g->stream));
	sim_kick_drift<<<sim_blocks(g->b.n), SIM_THREADS, 0, g->stream>>>(g->b.pos, g->b.vel, g->b.acc, n,
									   hdt, g->dt);
	CUDA_CHECK(cudaGetLastError());
	if (ev)
		CUDA_CHECK(cudaEventRecord(ev[1], g->stream));
	rc = sim_force(g, need_pot);
	if (rc)
		return rc;
	if (ev)
		CUDA_CHECK(cudaEventRecord(ev[2], g->stream));
	sim_kick<<<sim_blocks(g->b.n), SIM_THREADS, 0, g->stream>>>(g->b.vel, g->b.acc, n, hdt);
	CUDA_CHECK(cudaGetLastError());
	if (ev)
		CUDA_CHECK(cudaEventRecord(ev[3], g->stream));
	return 0;
}

/* ---- individual time steps (docs/PHYSICS.md; kernels in sim_levels.cu) ---- */

/* Levels from the first accelerations (just queued), the buffers, and the
 * first histogram (read at once: gpu_sim_create synchronises anyway). */
static int sim_levels_create(struct gpu_sim *g)
{
	const size_t n = g->b.n ? g->b.n : 1;
	CUDA_CHECK(cudaMalloc((void **)&g->b.lev, n));
	CUDA_CHECK(cudaMalloc((void **)&g->d_hist, SIM_TS_LEVELS * sizeof(int)));
	CUDA_CHECK(cudaMallocHost((void **)&g->h_hist, SIM_TS_LEVELS * sizeof(int)));
	CUDA_CHECK(cudaMalloc((void **)&g->d_evals, sizeof(unsigned long long)));
	CUDA_CHECK(cudaMallocHost((void **)&g->h_evals, sizeof(unsigned long long)));
	CUDA_CHECK(cudaMemsetAsync(g->d_evals, 0, sizeof(unsigned long long), g->stream));
	CUDA_CHECK(cudaEventCreateWithFlags(&g->ev_hist, cudaEventDisableTiming));
	if (g->p.solver != SCENE_SOLVER_BARNES_HUT) {
		CUDA_CHECK(cudaMalloc((void **)&g->d_list, n * sizeof(int)));
		CUDA_CHECK(cudaMalloc((void **)&g->d_count, sizeof(int)));
	}
	int rc;
	if (g->b.n == 0)
		return 0;
	if ((rc = gpu_levels_init(&g->b, g->p.dt_max, g->p.eta, g->p.softening, g->p.max_level,
				  g->stream)))
		return rc;
	return sim_levels_queue_hist(g);
}

/* Queue the histogram of the current levels and the evaluation count into
 * pinned memory (read by sim_levels_read_hist). */
static int sim_levels_queue_hist(struct gpu_sim *g)
{
	int rc = gpu_levels_histogram(&g->b, g->d_hist, g->stream);
	if (rc)
		return rc;
	CUDA_CHECK(cudaMemcpyAsync(g->h_hist, g->d_hist, SIM_TS_LEVELS * sizeof(int),
				   cudaMemcpyDeviceToHost, g->stream));
	CUDA_CHECK(cudaMemcpyAsync(g->h_evals, g->d_evals, sizeof(unsigned long long),
				   cudaMemcpyDeviceToHost, g->stream));
	CUDA_CHECK(cudaEventRecord(g->ev_hist, g->stream));
	g->hist_pending = 1;
	return 0;
}

/* Wait for the last queued histogram (the previous block end: when the
 * frame loop queues a frame, its previous frame's steps are done) and
 * take it as the host's. */
static int sim_levels_read_hist(struct gpu_sim *g)
{
	if (!g->hist_pending)
		return 0;
	CUDA_CHECK(cudaEventSynchronize(g->ev_hist));
	for (int L = 0; L < SIM_TS_LEVELS; L++)
		g->hist[L] = g->h_hist[L];
	g->hist_pending = 0;
	return 0;
}

/* The forces of the active slots (L >= la) at tick t. */
static int sim_levels_force(struct gpu_sim *g, int la, int need_pot, int refit)
{
	int rc;
	if (g->p.solver == SCENE_SOLVER_BARNES_HUT) {
		int rebuilt = 0;
		rc = gpu_tree_compute_ex(g->tree, &g->b, need_pot, la, refit, &rebuilt, g->stream);
		g->rebuilds += rebuilt;
		return rc;
	}
	if (la == 0)
		return gpu_direct_compute(&g->b, g->eps, g->kernel, need_pot, g->stream);
	if ((rc = gpu_levels_active_list(&g->b, la, g->d_list, g->d_count, g->stream)))
		return rc;
	return gpu_direct_compute_active(&g->b, g->eps, g->d_list, g->d_count, need_pot, g->stream);
}

/* One block step of dt_max (sim/timestep.c is the CPU twin: the same
 * ticks, kicks and level rule). The plan is the finest level of the last
 * block end's histogram. The tree is rebuilt at the ticks that end a step
 * of level rl (the largest level whose step is at most rebuild_dt) and at
 * the block end, refitted at the others, never twice in a row
 * (sim_ts_rebuild_stride). */
static int sim_levels_block(struct gpu_sim *g, int need_pot)
{
	int rc;
	if ((rc = sim_levels_read_hist(g)))
		return rc;
	const int plan = sim_ts_plan(g->hist);
	const long ticks = 1L << plan;
	const double dt_max = g->p.dt_max, h = ldexp(dt_max, -plan);
	/* ticks between rebuilds: at most 2 (sim/timestep_rule.h) */
	const long rstride = sim_ts_rebuild_stride(plan, dt_max, g->p.rebuild_dt);
	if ((rc = gpu_levels_kick(&g->b, 0, dt_max, g->stream)))
		return rc;
	for (long t = 1; t <= ticks; t++) {
		const int la = sim_ts_active_level(t, plan);
		const int end = t == ticks;
		if ((rc = gpu_levels_drift(&g->b, h, g->stream)) ||
		    (rc = sim_levels_force(g, la, need_pot && end, t % rstride != 0)) ||
		    (rc = gpu_levels_close_open(&g->b, la, plan, end, dt_max, g->p.eta, g->p.softening,
						g->p.max_level, g->p.coarsen_margin, g->d_evals,
						g->stream)))
			return rc;
		g->ticks++;
	}
	return sim_levels_queue_hist(g);
}

int gpu_sim_advance_blocks_async(struct gpu_sim *g, int blocks, int need_potential)
{
	int rc;
	if (!g->b.lev) {
		log_error("gpu_sim_advance_blocks_async: the simulation was made with shared time steps "
			  "(internal)");
		return NB_ERUNTIME;
	}
	for (int k = 0; k < blocks; k++) {
		if ((rc = sim_levels_block(g, need_potential && k == blocks - 1)))
			return rc;
	}
	if (blocks > 0)
		g->pot_valid = need_potential != 0;
	else if (need_potential && !g->pot_valid) {
		rc = sim_force(g, 1); /* same positions: same accelerations, plus phi */
		if (rc)
			return rc;
		g->pot_valid = 1;
	}
	g->steps += blocks;
	return sim_queue_check(g);
}

int gpu_sim_levels(struct gpu_sim *g, long hist[SIM_TS_LEVELS], double *evals, long *ticks,
		   long *rebuilds)
{
	if (!g->b.lev) {
		for (int L = 0; L < SIM_TS_LEVELS; L++)
			hist[L] = 0;
		*evals = 0;
		*ticks = *rebuilds = 0;
		return 0;
	}
	CUDA_CHECK(cudaStreamSynchronize(g->stream));
	int rc = sim_levels_read_hist(g);
	if (rc)
		return rc;
	for (int L = 0; L < SIM_TS_LEVELS; L++)
		hist[L] = g->hist[L];
	*evals = (double)*g->h_evals;
	*ticks = g->ticks;
	*rebuilds = g->rebuilds;
	return 0;
}

size_t gpu_sim_bytes_needed(size_t n, const struct sim_params *p)
{
	size_t bytes = n * (3 * sizeof(float4) + sizeof(uint32_t)) + sizeof(int);
	if (p->soft_mixed) /* b.eps and b.eps_id */
		bytes += 2 * n * sizeof(float);
	if (p->timesteps == SCENE_TIMESTEPS_INDIVIDUAL) /* levels, and the active list */
		bytes += n * (1 + (p->solver == SCENE_SOLVER_BARNES_HUT ? 0 : sizeof(int))) + 256;
	if (p->solver == SCENE_SOLVER_BARNES_HUT)
		bytes += gpu_tree_bytes_needed(n, p);
	else
		bytes += gpu_direct_bytes_needed(n);
	return bytes;
}

void gpu_sim_free(struct gpu_sim **gp)
{
	if (!gp || !*gp)
		return;
	struct gpu_sim *g = *gp;
	if (g->stream)
		cudaStreamSynchronize(g->stream);
	if (g->ev_ready)
		cudaEventDestroy(g->ev_ready);
	gpu_diag_free(&g->diag);
	cudaFree(g->d_sel);
	cudaFree(g->d_com);
	cudaFreeHost(g->h_com);
	cudaFreeHost(g->h_bad);
	gpu_tree_free(&g->tree);
	gpu_rk_close(&g->rk);
	cudaFree(g->b.lev);
	cudaFree(g->d_hist);
	cudaFreeHost(g->h_hist);
	cudaFree(g->d_evals);
	cudaFreeHost(g->h_evals);
	cudaFree(g->d_list);
	cudaFree(g->d_count);
	if (g->ev_hist)
		cudaEventDestroy(g->ev_hist);
	cudaFree(g->b.pos);
	cudaFree(g->b.vel);
	cudaFree(g->b.acc);
	cudaFree(g->b.id);
	cudaFree(g->b.eps);
	cudaFree(g->b.eps_id);
	cudaFree(g->d_bad);
	if (g->stream)
		cudaStreamDestroy(g->stream);
	free(g);
	*gp = NULL;
}

/* What gpu_sim_create refuses before it allocates anything: no GPU,
 * individual steps over ranks, too many bodies, softening or dt that are
 * no positive normal float, a scene too large for the free memory. */
static int sim_create_check(size_t n, const struct sim_params *p, const struct gpu_ranks *ranks)
{
	char why[256], name[256] = "GPU";
	size_t fr = 0, tot = 0;
	if (!gpu_probe(why, sizeof why)) {
		log_error("no usable GPU: %s", why);
		return NB_EINPUT;
	}
	if (ranks && p->timesteps == SCENE_TIMESTEPS_INDIVIDUAL) {
		log_error("simulation.timesteps: individual over MPI ranks is not written yet; use "
			  "shared steps or one rank");
		return NB_EINPUT;
	}
	if (n > (size_t)INT_MAX) {
		log_error("%zu bodies: the GPU solver indexes at most %d", n, INT_MAX);
		return NB_EINPUT;
	}
	if (!((float)p->softening >= FLT_MIN) || !((float)p->dt > 0.f) || !isfinite((float)p->dt)) {
		log_error("simulation: softening %g and dt %g must be positive normal floats on the GPU",
			  p->softening, p->dt);
		return NB_EINPUT;
	}
	int rc = gpu_device_info(name, sizeof name, &fr, &tot);
	if (rc)
		return rc;
	const size_t need = gpu_sim_bytes_needed(n, p);
	if (need > fr) {
		log_error("the scene needs %zu bytes (%.1f MiB) of GPU memory for %zu bodies, but %s has "
			  "%zu bytes (%.1f MiB) free of %.1f MiB; use fewer bodies or backend: cpu",
			  need, need / 1048576.0, n, name, fr, fr / 1048576.0, tot / 1048576.0);
		return NB_EINPUT;
	}
	return 0;
}

/* The stream and the bodies' device arrays of g, st uploaded (float4:
 * position and mass, velocity; the slot's body id). */
static int sim_create_bodies(struct gpu_sim *g, const struct sim_state *st)
{
	int rc = 0, prio_low = 0, prio_high = 0;
	const size_t n = st->n;
	float4 *h = (float4 *)malloc((n ? n : 1) * sizeof(float4));
	uint32_t *hid = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
	if (!h || !hid) {
		log_error("out of host memory staging %zu bodies for the GPU", n);
		rc = NB_ERUNTIME;
		goto end;
	}
	/* The simulation is the movie's critical path: its stream gets the
	 * device's highest priority, the renderer's the lowest (render/cuda/render_create.cu), so
	 * frame kernels fill the SMs the force walk leaves idle instead of
	 * delaying it. NB_STREAM_PRIORITY=0 gives both the default priority. */
	if (gpu_stream_priorities(&prio_low, &prio_high))
		prio_high = 0;
	CUDA_GOTO(cudaStreamCreateWithPriority(&g->stream, cudaStreamNonBlocking, prio_high), rc, end);
	CUDA_GOTO(cudaMalloc((void **)&g->b.pos, (n ? n : 1) * sizeof(float4)), rc, end);
	CUDA_GOTO(cudaMalloc((void **)&g->b.vel, (n ? n : 1) * sizeof(float4)), rc, end);
	CUDA_GOTO(cudaMalloc((void **)&g->b.acc, (n ? n : 1) * sizeof(float4)), rc, end);
	CUDA_GOTO(cudaMalloc((void **)&g->b.id, (n ? n : 1) * sizeof(uint32_t)), rc, end);
	CUDA_GOTO(cudaMalloc((void **)&g->d_bad, sizeof(int)), rc, end);
	CUDA_GOTO(cudaMallocHost((void **)&g->h_bad, sizeof(int)), rc, end);
	CUDA_GOTO(cudaEventCreateWithFlags(&g->ev_ready, cudaEventDisableTiming), rc, end);

	for (size_t i = 0; i < n; i++) {
		h[i] = make_float4((float)st->pos[3 * i], (float)st->pos[3 * i + 1], (float)st->pos[3 * i + 2],
				   (float)st->mass[i]);
		hid[i] = (uint32_t)i;
	}
	CUDA_GOTO(cudaMemcpy(g->b.pos, h, n * sizeof(float4), cudaMemcpyHostToDevice), rc, end);
	for (size_t i = 0; i < n; i++)
		h[i] = make_float4((float)st->vel[3 * i], (float)st->vel[3 * i + 1], (float)st->vel[3 * i + 2], 0.f);
	CUDA_GOTO(cudaMemcpy(g->b.vel, h, n * sizeof(float4), cudaMemcpyHostToDevice), rc, end);
	CUDA_GOTO(cudaMemcpy(g->b.id, hid, n * sizeof(uint32_t), cudaMemcpyHostToDevice), rc, end);
end:
	free(h);
	free(hid);
	return rc;
}

/* Softening (docs/PHYSICS.md "Softening"): the kernel, and with lengths
 * per body (p->soft_mixed) each body's, its component's, uploaded by id
 * (slot = id here) into b.eps_id and b.eps; g->eps becomes the smallest
 * length (the direct kernels' float range scale). Nothing is allocated for
 * one length. A length that is no positive normal float: NB_EINPUT. */
static int sim_create_soft(struct gpu_sim *g, const struct sim_state *st, const struct sim_params *p)
{
	int rc = 0;
	const size_t n = st->n;
	g->b.spline = p->soft_kernel == SCENE_SOFT_SPLINE;
	if (!p->soft_mixed)
		return 0;
	float *he = (float *)malloc((n ? n : 1) * sizeof(float));
	if (!he) {
		log_error("out of host memory staging %zu softening lengths for the GPU", n);
		return NB_ERUNTIME;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sim_component *c = &st->comps[st->comp[i]];
		he[i] = (float)c->softening;
		if (!(he[i] >= FLT_MIN) || !isfinite(he[i])) {
			log_error("%s: softening %g (internal units) must be a positive normal float on "
				  "the GPU", c->name, c->softening);
			rc = NB_EINPUT;
			goto end;
		}
		if (he[i] < g->eps)
			g->eps = he[i];
	}
	CUDA_GOTO(cudaMalloc((void **)&g->b.eps, (n ? n : 1) * sizeof(float)), rc, end);
	CUDA_GOTO(cudaMalloc((void **)&g->b.eps_id, (n ? n : 1) * sizeof(float)), rc, end);
	CUDA_GOTO(cudaMemcpy(g->b.eps_id, he, n * sizeof(float), cudaMemcpyHostToDevice), rc, end);
	CUDA_GOTO(cudaMemcpy(g->b.eps, he, n * sizeof(float), cudaMemcpyHostToDevice), rc, end);
end:
	free(he);
	return rc;
}

/* g->desc: the solver, and the softening when it is not one Plummer length
 * (as the CPU engine's line; the general direct kernel is a gather) */
static void sim_describe(struct gpu_sim *g, const struct sim_params *p)
{
	const int general = p->soft_mixed || p->soft_kernel == SCENE_SOFT_SPLINE;
	int k;
	if (p->solver == SCENE_SOLVER_BARNES_HUT)
		k = snprintf(g->desc, sizeof g->desc, "barnes-hut theta %g, %s, %s", p->theta,
			     p->multipoles >= 2 ? "quadrupole" : "monopole",
			     scene_opening_name(p->opening));
	else
		k = snprintf(g->desc, sizeof g->desc, "direct/%s",
			     g->kernel == SCENE_DIRECT_PAIRWISE && !general ? "pairwise" : "gather");
	if (general && k > 0 && (size_t)k < sizeof g->desc)
		snprintf(g->desc + k, sizeof g->desc - (size_t)k, ", %s softening%s",
			 p->soft_kernel == SCENE_SOFT_SPLINE ? "spline" : "plummer",
			 p->soft_mixed ? ", lengths per type" : "");
}

int gpu_sim_create(const struct sim_state *st, const struct sim_params *p, struct gpu_sim **out)
{
	return gpu_sim_create_ranks(st, p, NULL, out);
}

int gpu_sim_create_ranks(const struct sim_state *st, const struct sim_params *p,
			 const struct gpu_ranks *ranks, struct gpu_sim **out)
{
	const size_t n = st->n;
	*out = NULL;
	int rc = sim_create_check(n, p, ranks);
	if (rc)
		return rc;
	struct gpu_sim *g = (struct gpu_sim *)calloc(1, sizeof *g);
	if (!g) {
		log_error("out of host memory staging %zu bodies for the GPU", n);
		return NB_ERUNTIME;
	}
	g->p = *p;
	g->eps = (float)p->softening;
	g->dt = (float)p->dt;
	g->b.n = n;
	g->kernel = p->direct_kernel == SCENE_DIRECT_AUTO ? gpu_direct_pick(n) : p->direct_kernel;
	sim_describe(g, p);
	if ((rc = sim_create_bodies(g, st)) || (rc = sim_create_soft(g, st, p)))
		goto fail;
	if (p->solver == SCENE_SOLVER_BARNES_HUT) {
		struct sim_params tp = *p;
		if (ranks) /* the same slot order on every rank: the stable sort */
			tp.reorder = SCENE_REORDER_SORT;
		rc = gpu_tree_create(n, &tp, &g->tree);
		if (rc)
			goto fail;
	}
	if (ranks && (rc = gpu_rk_open(ranks, n, &g->rk)))
		goto fail;
	/* First accelerations, with the potential: the initial energy is wanted. */
	rc = sim_force(g, 1);
	if (rc)
		goto fail;
	if (p->timesteps == SCENE_TIMESTEPS_INDIVIDUAL && (rc = sim_levels_create(g)))
		goto fail;
	CUDA_GOTO(cudaStreamSynchronize(g->stream), rc, fail);
	g->pot_valid = 1;
	*out = g;
	return 0;
fail:
	gpu_sim_free(&g);
	return rc;
}

/* Queue the finiteness check of the current state: the lowest bad slot
 * lands in pinned h_bad (SIM_NO_BAD if none); sim_report_bad reads it. */
static int sim_queue_check(struct gpu_sim *g)
{
	g->check_pending = 0;
	if (g->b.n == 0)
		return 0;
	CUDA_CHECK(cudaMemsetAsync(g->d_bad, 0x7f, sizeof(int), g->stream));
	sim_check_finite<<<sim_blocks(g->b.n), SIM_THREADS, 0, g->stream>>>(g->b.pos, g->b.vel, g->b.acc,
									     (int)g->b.n, g->d_bad);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaMemcpyAsync(g->h_bad, g->d_bad, sizeof(int), cudaMemcpyDeviceToHost, g->stream));
	g->check_pending = 1;
	return 0;
}

/* Wait for the stream; NB_ERUNTIME (logged, naming the body) if the last
 * queued check found a non-finite value. */
static int sim_report_bad(struct gpu_sim *g)
{
	CUDA_CHECK(cudaStreamSynchronize(g->stream));
	if (!g->check_pending)
		return 0;
	g->check_pending = 0;
	const int slot = *g->h_bad;
	if (slot == SIM_NO_BAD || slot < 0 || (size_t)slot >= g->b.n)
		return 0;
	uint32_t id = 0;
	CUDA_CHECK(cudaMemcpy(&id, g->b.id + slot, sizeof id, cudaMemcpyDeviceToHost));
	log_error("GPU step %ld: body %u has a non-finite position, velocity or acceleration "
		  "(dt too large for the softening, or bodies thrown far apart?)", g->steps, id);
	return NB_ERUNTIME;
}

int gpu_sim_advance_async(struct gpu_sim *g, int nsteps, int need_potential)
{
	int rc;
	for (int s = 0; s < nsteps; s++) {
		rc = sim_step(g, need_potential && s == nsteps - 1, NULL);
		if (rc)
			return rc;
	}
	if (nsteps > 0)
		g->pot_valid = need_potential != 0;
	else if (need_potential && !g->pot_valid) {
		rc = sim_force(g, 1); /* same positions: same accelerations, plus phi */
		if (rc)
			return rc;
		g->pot_valid = 1;
	}
	g->steps += nsteps;
	return sim_queue_check(g);
}

int gpu_sim_check(struct gpu_sim *g)
{
	return sim_report_bad(g);
}

int gpu_sim_advance(struct gpu_sim *g, int nsteps, int need_potential)
{
	int rc = gpu_sim_advance_async(g, nsteps, need_potential);
	return rc ? rc : sim_report_bad(g);
}

int gpu_sim_download(struct gpu_sim *g, struct sim_state *st)
{
	int rc = 0;
	const size_t n = g->b.n;
	float4 *h = NULL;
	uint32_t *hid = NULL;
	if (st->n != n) {
		log_error("gpu_sim_download: state has %zu bodies, the GPU %zu", st->n, n);
		return NB_ERUNTIME;
	}
	if (n == 0)
		return 0;
	h = (float4 *)malloc(3 * n * sizeof(float4));
	hid = (uint32_t *)malloc(n * sizeof(uint32_t));
	if (!h || !hid) {
		log_error("out of host memory fetching %zu bodies from the GPU", n);
		rc = NB_ERUNTIME;
		goto end;
	}
	CUDA_GOTO(cudaStreamSynchronize(g->stream), rc, end);
	CUDA_GOTO(cudaMemcpy(h, g->b.pos, n * sizeof(float4), cudaMemcpyDeviceToHost), rc, end);
	CUDA_GOTO(cudaMemcpy(h + n, g->b.vel, n * sizeof(float4), cudaMemcpyDeviceToHost), rc, end);
	CUDA_GOTO(cudaMemcpy(h + 2 * n, g->b.acc, n * sizeof(float4), cudaMemcpyDeviceToHost), rc, end);
	CUDA_GOTO(cudaMemcpy(hid, g->b.id, n * sizeof(uint32_t), cudaMemcpyDeviceToHost), rc, end);
	for (size_t s = 0; s < n; s++) {
		const size_t i = hid[s];
		if (i >= n) {
			log_error("gpu_sim_download: slot %zu holds body id %zu of %zu (solver bug)", s, i, n);
			rc = NB_ERUNTIME;
			goto end;
		}
		const float4 p = h[s], v = h[n + s], a = h[2 * n + s];
		st->pos[3 * i] = p.x, st->pos[3 * i + 1] = p.y, st->pos[3 * i + 2] = p.z;
		st->vel[3 * i] = v.x, st->vel[3 * i + 1] = v.y, st->vel[3 * i + 2] = v.z;
		st->acc[3 * i] = a.x, st->acc[3 * i + 1] = a.y, st->acc[3 * i + 2] = a.z;
		if (g->pot_valid && st->pot)
			st->pot[i] = a.w;
	}
end:
	free(h);
	free(hid);
	return rc;
}

const char *gpu_sim_ranks_exchange(const struct gpu_sim *g)
{
	return g ? gpu_rk_exchange(g->rk) : "";
}

const char *gpu_sim_describe(const struct gpu_sim *g)
{
	return g ? g->desc : "none";
}

int gpu_sim_time_steps(struct gpu_sim *g, int nsteps, double *force_ms, double *step_ms)
{
	int rc = 0;
	cudaEvent_t ev[4] = {NULL, NULL, NULL, NULL};
	for (int k = 0; k < 4; k++)
		CUDA_GOTO(cudaEventCreate(&ev[k]), rc, end);
	for (int s = 0; s < nsteps; s++) {
		float f = 0.f, t = 0.f;
		rc = sim_step(g, 0, ev);
		if (rc)
			goto end;
		CUDA_GOTO(cudaEventSynchronize(ev[3]), rc, end);
		CUDA_GOTO(cudaEventElapsedTime(&f, ev[1], ev[2]), rc, end);
		CUDA_GOTO(cudaEventElapsedTime(&t, ev[0], ev[3]), rc, end);
		force_ms[s] = f;
		step_ms[s] = t;
	}
	if (nsteps > 0)
		g->pot_valid = 0;
	g->steps += nsteps;
end:
	for (int k = 0; k < 4; k++)
		if (ev[k])
			cudaEventDestroy(ev[k]);
	return rc;
}

/* ---- the overlapped frame pipeline (gpu.h) ---- */

int gpu_sim_render_input(struct gpu_sim *g, struct gpu_render_input *in)
{
	CUDA_CHECK(cudaEventRecord(g->ev_ready, g->stream));
	in->pos4 = g->b.pos;
	in->vel4 = g->b.vel;
	in->id = g->b.id;
	in->n = g->b.n;
	in->ready_event = (void *)g->ev_ready;
	return 0;
}

int gpu_sim_wait_event(struct gpu_sim *g, void *cuda_event)
{
	if (cuda_event)
		CUDA_CHECK(cudaStreamWaitEvent(g->stream, (cudaEvent_t)cuda_event, 0));
	return 0;
}

int gpu_sim_set_selection(struct gpu_sim *g, const unsigned char *sel_by_id)
{
	cudaFree(g->d_sel);
	g->d_sel = NULL;
	if (!sel_by_id || g->b.n == 0)
		return 0;
	CUDA_CHECK(cudaMalloc((void **)&g->d_sel, g->b.n));
	CUDA_CHECK(cudaMemcpy(g->d_sel, sel_by_id, g->b.n, cudaMemcpyHostToDevice));
	return 0;
}

#define SIM_COM_SUMS 8
#define SIM_COM_BLOCKS 264 /* 2 per SM on an H100; a grid-stride loop covers any n */

/* Sums over the selected slots (sel NULL: all) of m, m x, m y, m z, 1, x,
 * y, z, in double: each thread a strided share, then the warp (shuffles),
 * then one atomicAdd per warp and sum. 16 bytes read and ~10 flops per
 * body: memory-bound, ~0.02 ms per 1M bodies. */
__global__ void sim_com_kernel(const float4 *pos, const uint32_t *id, const unsigned char *sel, int n,
			       double *out)
{
	double a[SIM_COM_SUMS] = {0, 0, 0, 0, 0, 0, 0, 0};
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		if (sel && !sel[id[i]])
			continue;
		const float4 p = pos[i];
		a[0] += p.w;
		a[1] += (double)p.w * p.x;
		a[2] += (double)p.w * p.y;
		a[3] += (double)p.w * p.z;
		a[4] += 1.0;
		a[5] += p.x;
		a[6] += p.y;
		a[7] += p.z;
	}
	for (int k = 0; k < SIM_COM_SUMS; k++) {
		double v = a[k];
		for (int off = 16; off > 0; off /= 2)
			v += __shfl_down_sync(0xffffffffu, v, off);
		if ((threadIdx.x & 31) == 0)
			atomicAdd(&out[k], v);
	}
}

int gpu_sim_com(struct gpu_sim *g, double com[3], double *mass, size_t *count)
{
	if (!g->d_com) {
		CUDA_CHECK(cudaMalloc((void **)&g->d_com, SIM_COM_SUMS * sizeof(double)));
		CUDA_CHECK(cudaMallocHost((void **)&g->h_com, SIM_COM_SUMS * sizeof(double)));
	}
	CUDA_CHECK(cudaMemsetAsync(g->d_com, 0, SIM_COM_SUMS * sizeof(double), g->stream));
	if (g->b.n > 0) {
		unsigned blocks = sim_blocks(g->b.n);
		if (blocks > SIM_COM_BLOCKS)
			blocks = SIM_COM_BLOCKS;
		sim_com_kernel<<<blocks, SIM_THREADS, 0, g->stream>>>(g->b.pos, g->b.id, g->d_sel,
								       (int)g->b.n, g->d_com);
		CUDA_CHECK(cudaGetLastError());
	}
	CUDA_CHECK(cudaMemcpyAsync(g->h_com, g->d_com, SIM_COM_SUMS * sizeof(double),
				   cudaMemcpyDeviceToHost, g->stream));
	CUDA_CHECK(cudaStreamSynchronize(g->stream));
	const double *r = g->h_com;
	for (int d = 0; d < 3; d++)
		com[d] = r[0] > 0 ? r[1 + d] / r[0] : (r[4] > 0 ? r[5 + d] / r[4] : 0.0);
	*mass = r[0];
	*count = (size_t)r[4];
	return 0;
}

int gpu_sim_diag_queue(struct gpu_sim *g)
{
	return gpu_diag_queue(&g->diag, &g->b, g->pot_valid, g->stream);
}

int gpu_sim_diag_take(struct gpu_sim *g, struct sim_diag *d)
{
	return gpu_diag_take(g->diag, d);
}
