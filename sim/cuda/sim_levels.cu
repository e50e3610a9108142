/* sim_levels.cu - the per-body kernels of individual (block) time steps:
 * levels from accelerations, kicks by level, the drift, the close/relevel/
 * open kick of the active bodies, the level histogram and the list of
 * active slots. The rule is sim/timestep_rule.h (shared with the CPU twin,
 * sim/timestep.c); the block-step loop that calls these is
 * gpu_sim_advance_blocks_async in sim/cuda/sim.cu. docs/PHYSICS.md,
 * section Individual time steps.
 *
 * All are memory-bound passes over the bodies: kick 16 B acc + 16 B vel
 * read, 16 B written, 1 B level; drift 32 B read, 16 B written; close/open
 * as kick plus a square root and a short loop per active body (the level
 * rule in double: one per active body and tick, negligible next to its
 * force). About 0.02 ms per pass per 1M bodies on an H100. */
extern "C" {
#include "../../scene/log.h"
#include "../../sim/sim.h"
}
#include "gpu_internal.h"

#define LV_THREADS 256

static unsigned lv_blocks(size_t n)
{
	size_t b = (n + LV_THREADS - 1) / LV_THREADS;
	return (unsigned)(b > 0 ? b : 1);
}

/* dt_L / 2 in float: an exact power-of-two scaling of dt_max */
__device__ __forceinline__ float lv_half_step(float dt_max, int L)
{
	return ldexpf(0.5f * dt_max, -L);
}

__device__ __forceinline__ int lv_want(float4 a, double dt_max, double eta, double eps, int maxl)
{
	double a2 = (double)a.x * a.x + (double)a.y * a.y + (double)a.z * a.z;
	return sim_ts_want_level(a2, dt_max, eta, eps, maxl);
}

/* The body's own length (GADGET's rule, docs/PHYSICS.md "Softening"):
 * beps[i] with lengths per body, else the one eps. */
__device__ __forceinline__ double lv_eps(const float *__restrict__ beps, int i, double eps)
{
	return beps ? (double)beps[i] : eps;
}

__global__ void lv_init_kernel(const float4 *__restrict__ acc, uint8_t *lev, int n, double dt_max,
			       double eta, double eps, const float *__restrict__ beps, int maxl)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		lev[i] = (uint8_t)lv_want(acc[i], dt_max, eta, lv_eps(beps, i, eps), maxl);
}

__global__ void lv_kick_kernel(float4 *vel, const float4 *__restrict__ acc,
			       const uint8_t *__restrict__ lev, int n, int la, float dt_max)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	const int L = lev[i];
	if (L < la)
		return;
	const float h = lv_half_step(dt_max, L);
	const float4 a = acc[i];
	float4 v = vel[i];
	v.x = fmaf(a.x, h, v.x);
	v.y = fmaf(a.y, h, v.y);
	v.z = fmaf(a.z, h, v.z);
	vel[i] = v;
}

__global__ void lv_drift_kernel(float4 *pos, const float4 *__restrict__ vel, int n, float h)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	const float4 v = vel[i];
	float4 p = pos[i];
	p.x = fmaf(v.x, h, p.x);
	p.y = fmaf(v.y, h, p.y);
	p.z = fmaf(v.z, h, p.z);
	pos[i] = p;
}

__global__ void lv_close_open_kernel(float4 *vel, const float4 *__restrict__ acc, uint8_t *lev, int n,
				     int la, int plan, int block_end, float dt_max_f, double dt_max,
				     double eta, double eps, const float *__restrict__ beps, int maxl,
				     double margin, unsigned long long *evals)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	const int L = i < n ? lev[i] : -1;
	const bool act = i < n && L >= la;
	/* one atomic per warp for the evaluation count */
	const unsigned m = __ballot_sync(0xffffffffu, act);
	if ((threadIdx.x & 31) == 0 && m)
		atomicAdd(evals, (unsigned long long)__popc(m));
	if (!act)
		return;
	const float4 a = acc[i];
	float4 v = vel[i];
	float h = lv_half_step(dt_max_f, L); /* close the step that ends now */
	v.x = fmaf(a.x, h, v.x);
	v.y = fmaf(a.y, h, v.y);
	v.z = fmaf(a.z, h, v.z);
	const double a2 = (double)a.x * a.x + (double)a.y * a.y + (double)a.z * a.z;
	const int L2 = sim_ts_next_level(
		sim_ts_want_level_from(a2, dt_max, eta, lv_eps(beps, i, eps), maxl, L, margin), la, plan,
		block_end);
	if (!block_end) { /* open the next one (at a block end: at the next block's start) */
		h = lv_half_step(dt_max_f, L2);
		v.x = fmaf(a.x, h, v.x);
		v.y = fmaf(a.y, h, v.y);
		v.z = fmaf(a.z, h, v.z);
	}
	vel[i] = v;
	lev[i] = (uint8_t)L2;
}

__global__ void lv_hist_kernel(const uint8_t *__restrict__ lev, int n, int *hist)
{
	__shared__ int sh[SIM_TS_LEVELS];
	if (threadIdx.x < SIM_TS_LEVELS)
		sh[threadIdx.x] = 0;
	__syncthreads();
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		int L = lev[i];
		atomicAdd(&sh[L < SIM_TS_LEVELS ? L : SIM_TS_LEVELS - 1], 1);
	}
	__syncthreads();
	if (threadIdx.x < SIM_TS_LEVELS && sh[threadIdx.x])
		atomicAdd(&hist[threadIdx.x], sh[threadIdx.x]);
}

/* Slot order within a warp, warp order by atomics: the list's order varies
 * from run to run, but each target's force does not depend on it. */
__global__ void lv_list_kernel(const uint8_t *__restrict__ lev, int n, int la, int *list, int *count)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	const bool act = i < n && lev[i] >= la;
	const unsigned m = __ballot_sync(0xffffffffu, act);
	const int lane = threadIdx.x & 31;
	int base = 0;
	if (lane == 0 && m)
		base = atomicAdd(count, __popc(m));
	base = __shfl_sync(0xffffffffu, base, 0);
	if (act)
		list[base + __popc(m & ((1u << lane) - 1u))] = i;
}

int gpu_levels_init(const struct gpu_bodies *b, double dt_max, double eta, double eps, int max_level,
		    cudaStream_t s)
{
	lv_init_kernel<<<lv_blocks(b->n), LV_THREADS, 0, s>>>(b->acc, b->lev, (int)b->n, dt_max, eta, eps,
							      b->eps, max_level);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

int gpu_levels_kick(const struct gpu_bodies *b, int la, double dt_max, cudaStream_t s)
{
	lv_kick_kernel<<<lv_blocks(b->n), LV_THREADS, 0, s>>>(b->vel, b->acc, b->lev, (int)b->n, la,
							      (float)dt_max);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

int gpu_levels_drift(const struct gpu_bodies *b, double h, cudaStream_t s)
{
	lv_drift_kernel<<<lv_blocks(b->n), LV_THREADS, 0, s>>>(b->pos, b->vel, (int)b->n, (float)h);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

int gpu_levels_close_open(const struct gpu_bodies *b, int la, int plan, int block_end, double dt_max,
			  double eta, double eps, int max_level, double coarsen_margin,
			  unsigned long long *evals, cudaStream_t s)
{
	lv_close_open_kernel<<<lv_blocks(b->n), LV_THREADS, 0, s>>>(
		b->vel, b->acc, b->lev, (int)b->n, la, plan, block_end, (float)dt_max, dt_max, eta, eps,
		b->eps, max_level, coarsen_margin, evals);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

int gpu_levels_histogram(const struct gpu_bodies *b, int *hist, cudaStream_t s)
{
	CUDA_CHECK(cudaMemsetAsync(hist, 0, SIM_TS_LEVELS * sizeof(int), s));
	unsigned blocks = lv_blocks(b->n);
	if (blocks > 264)
		blocks = 264;
	lv_hist_kernel<<<blocks, LV_THREADS, 0, s>>>(b->lev, (int)b->n, hist);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

int gpu_levels_active_list(const struct gpu_bodies *b, int la, int *list, int *count, cudaStream_t s)
{
	CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof(int), s));
	lv_list_kernel<<<lv_blocks(b->n), LV_THREADS, 0, s>>>(b->lev, (int)b->n, la, list, count);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}
