/* diag.cu - conserved quantities of the device state (diag_internal.h):
 * kinetic and potential energy, momentum, angular momentum, centre of mass,
 * as sim/diag.c's sim_diag_compute computes them from a downloaded state,
 * but without the download: the output.stats row of a frame costs a 96-byte
 * copy instead of the whole state (52 bytes per body).
 *
 * Two kernels on the simulation stream, no atomics, so the sums are the
 * same from run to run for the same slot order:
 *   1. diag_partial: each block sums a grid-stride share of the bodies, in
 *      double from the float state: per thread in registers, then the warp
 *      (shuffles), then the block's warps in order -> DIAG_SUMS partials
 *      per block;
 *   2. diag_final: one block, one warp per quantity, sums the blocks'
 *      partials in a fixed order;
 * then the sums go to pinned host memory and an event is recorded. */
extern "C" {
#include "../../scene/log.h"
#include "../../sim/sim.h"
}
#include "diag_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DIAG_THREADS 256
#define DIAG_WARPS (DIAG_THREADS / 32)
#define DIAG_MAX_BLOCKS 528 /* 4 per SM on an H100; a grid-stride loop covers any n */

/* The sums, in this order: m, m v^2, m phi, m v (3), m x cross v (3),
 * m x (3). */
enum { DS_M, DS_MV2, DS_MPHI, DS_P, DS_L = DS_P + 3, DS_MX = DS_L + 3, DIAG_SUMS = DS_MX + 3 };

struct gpu_diag {
	double *d_partial; /* DIAG_MAX_BLOCKS * DIAG_SUMS */
	double *d_sum;     /* DIAG_SUMS */
	double *h_sum;     /* pinned: d_sum of the last queued reduction */
	cudaEvent_t ev_done;
	int queued, has_pot;
};

/* Per body: 32 bytes read (pos, vel), 16 more with the potential (acc; only
 * .w is used, the sector is read anyway); ~30 double flops. Memory-bound:
 * ~0.02-0.03 ms per 1M bodies on an H100. */
__global__ void diag_partial(const float4 *pos, const float4 *vel, const float4 *acc, int n,
			     int has_pot, double *partial)
{
	__shared__ double s[DIAG_WARPS][DIAG_SUMS];
	double a[DIAG_SUMS];
	for (int k = 0; k < DIAG_SUMS; k++)
		a[k] = 0.0;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		const float4 p = pos[i], v = vel[i];
		const double m = p.w, x = p.x, y = p.y, z = p.z;
		const double vx = v.x, vy = v.y, vz = v.z;
		a[DS_M] += m;
		a[DS_MV2] += m * (vx * vx + vy * vy + vz * vz);
		if (has_pot)
			a[DS_MPHI] += m * (double)acc[i].w;
		a[DS_P + 0] += m * vx;
		a[DS_P + 1] += m * vy;
		a[DS_P + 2] += m * vz;
		a[DS_L + 0] += m * (y * vz - z * vy);
		a[DS_L + 1] += m * (z * vx - x * vz);
		a[DS_L + 2] += m * (x * vy - y * vx);
		a[DS_MX + 0] += m * x;
		a[DS_MX + 1] += m * y;
		a[DS_MX + 2] += m * z;
	}
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	for (int k = 0; k < DIAG_SUMS; k++) {
		double v = a[k];
		for (int off = 16; off > 0; off /= 2)
			v += __shfl_down_sync(0xffffffffu, v, off);
		if (lane == 0)
			s[warp][k] = v;
	}
	__syncthreads();
	if (threadIdx.x < DIAG_SUMS) {
		double t = 0.0;
		for (int w = 0; w < DIAG_WARPS; w++)
			t += s[w][threadIdx.x];
		partial[(size_t)blockIdx.x * DIAG_SUMS + threadIdx.x] = t;
	}
}

/* One block of DIAG_SUMS warps: warp k sums quantity k over the blocks
 * (lane l takes blocks l, l+32, ...), then the lanes by shuffles. */
__global__ void diag_final(const double *partial, int nblocks, double *sum)
{
	const int k = threadIdx.x >> 5, lane = threadIdx.x & 31;
	if (k >= DIAG_SUMS)
		return;
	double v = 0.0;
	for (int b = lane; b < nblocks; b += 32)
		v += partial[(size_t)b * DIAG_SUMS + k];
	for (int off = 16; off > 0; off /= 2)
		v += __shfl_down_sync(0xffffffffu, v, off);
	if (lane == 0)
		sum[k] = v;
}

void gpu_diag_free(struct gpu_diag **dp)
{
	struct gpu_diag *d = dp ? *dp : NULL;
	if (!d)
		return;
	if (d->ev_done) {
		cudaEventSynchronize(d->ev_done);
		cudaEventDestroy(d->ev_done);
	}
	cudaFree(d->d_partial);
	cudaFree(d->d_sum);
	cudaFreeHost(d->h_sum);
	free(d);
	*dp = NULL;
}

static int diag_create(struct gpu_diag **out)
{
	int rc = 0;
	struct gpu_diag *d = (struct gpu_diag *)calloc(1, sizeof *d);
	if (!d) {
		log_error("GPU diagnostics: out of host memory");
		return NB_ERUNTIME;
	}
	CUDA_GOTO(cudaMalloc((void **)&d->d_partial, DIAG_MAX_BLOCKS * DIAG_SUMS * sizeof(double)), rc,
		  fail);
	CUDA_GOTO(cudaMalloc((void **)&d->d_sum, DIAG_SUMS * sizeof(double)), rc, fail);
	CUDA_GOTO(cudaMallocHost((void **)&d->h_sum, DIAG_SUMS * sizeof(double)), rc, fail);
	CUDA_GOTO(cudaEventCreateWithFlags(&d->ev_done, cudaEventDisableTiming), rc, fail);
	*out = d;
	return 0;
fail:
	gpu_diag_free(&d);
	return rc;
}

int gpu_diag_queue(struct gpu_diag **dp, const struct gpu_bodies *b, int has_pot,
		   cudaStream_t stream)
{
	if (!*dp && diag_create(dp) != 0)
		return NB_ERUNTIME;
	struct gpu_diag *d = *dp;
	if (d->queued) {
		log_error("GPU diagnostics: queued twice without a take (internal)");
		return NB_ERUNTIME;
	}
	if (b->n == 0) {
		CUDA_CHECK(cudaMemsetAsync(d->d_sum, 0, DIAG_SUMS * sizeof(double), stream));
	} else {
		size_t nb = (b->n + DIAG_THREADS - 1) / DIAG_THREADS;
		const int blocks = (int)(nb < DIAG_MAX_BLOCKS ? nb : DIAG_MAX_BLOCKS);
		diag_partial<<<blocks, DIAG_THREADS, 0, stream>>>(b->pos, b->vel, b->acc, (int)b->n,
								   has_pot != 0, d->d_partial);
		CUDA_CHECK(cudaGetLastError());
		diag_final<<<1, 32 * DIAG_SUMS, 0, stream>>>(d->d_partial, blocks, d->d_sum);
		CUDA_CHECK(cudaGetLastError());
	}
	CUDA_CHECK(cudaMemcpyAsync(d->h_sum, d->d_sum, DIAG_SUMS * sizeof(double),
				   cudaMemcpyDeviceToHost, stream));
	CUDA_CHECK(cudaEventRecord(d->ev_done, stream));
	d->queued = 1;
	d->has_pot = has_pot != 0;
	return 0;
}

int gpu_diag_take(struct gpu_diag *d, struct sim_diag *out)
{
	if (!d || !d->queued) {
		log_error("GPU diagnostics: take without a queued reduction (internal)");
		return NB_ERUNTIME;
	}
	CUDA_CHECK(cudaEventSynchronize(d->ev_done));
	d->queued = 0;
	const double *s = d->h_sum;
	memset(out, 0, sizeof *out);
	out->mass = s[DS_M];
	out->kinetic = 0.5 * s[DS_MV2];
	/* each pair counted from both ends (sim/diag.c) */
	out->potential = d->has_pot ? 0.5 * s[DS_MPHI] : NAN;
	out->total = out->kinetic + out->potential;
	for (int c = 0; c < 3; c++) {
		out->p[c] = s[DS_P + c];
		out->l[c] = s[DS_L + c];
		out->comv[c] = out->mass > 0 ? out->p[c] / out->mass : 0;
		out->com[c] = out->mass > 0 ? s[DS_MX + c] / out->mass : 0;
	}
	return 0;
}
