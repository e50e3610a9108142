/* direct.cu - exact (all-pairs) softened gravity on the GPU.
 *
 * Two kernels compute a_i = sum_j m_j (x_j - x_i) / (r^2 + eps^2)^{3/2}
 * (and phi_i = -sum_{j!=i} m_j / sqrt(r^2 + eps^2) when asked):
 *
 *  - pair_kernel: each pair once (Newton's third law; docs/PHYSICS.md,
 *    section Direct summation).
 *    Bodies are cut into tiles of B = NT*R. Only tile pairs (row <= col) are
 *    scheduled: T(T+1)/2 blocks, the T diagonal ones in a launch of their
 *    own. Each thread keeps R bodies of the row tile in
 *    registers; the column tile (positions and reaction sums) sits in shared
 *    memory. The reaction sums are written without atomics, race-free without
 *    any warp-synchronous assumption:
 *      * the column tile is cut into 32-body slices; in round q warp w works on
 *        slice (w + q) mod (B/32), so no two warps share a slice in a round,
 *        and rounds are separated by __syncthreads();
 *      * inside a slice, lane l at step k touches partner (l + k) mod 32: all
 *        lanes distinct within a step, and __syncwarp() orders the steps.
 *    Reactions and row sums go to global memory once per block (float4 RED).
 *  - gather_kernel: the one-sided GPU Gems 3 (ch. 31) scheme, each body sums
 *    over all others with broadcast reads of a shared tile. The baseline.
 *
 * Float range (the scaling trick, docs/PHYSICS.md, section Direct
 * summation): positions are multiplied by a
 * power of two s with s*eps = 2^-20 before use, so 1/(s r)^3 stays inside
 * float range for every separation from 0 to ~4e18 eps (unscaled, r^3
 * overflows 1/r^3 for r^2 + eps^2 < 1e-26); a = s^2 a', phi = s phi'.
 * Powers of two are exact, so this costs no accuracy and no per-pair work.
 *
 * Tile shape: NB_DIRECT_TILE=NTxR[xB] (e.g. 128x8, 128x8x4: B = blocks per SM
 * asked of the register allocator) overrides the built-in choice;
 * it exists for the benchmark (bench/direct.c) and the sanitizer script. */
extern "C" {
#include "../../scene/log.h"
#include "../../sim/sim.h"
}
#include "gpu_internal.h"
#include "../../sim/soften.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Range-reduction target: s * eps = 2^DIRECT_SCALE_LOG2. */
#define DIRECT_SCALE_LOG2 (-20)

/* One MUFU.RSQ. Flushing denormal inputs is safe: r^2 >= (s eps)^2 = 2^-40. */
__device__ __forceinline__ float direct_rsqrt(float x)
{
	float y;
	asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}

__device__ __forceinline__ void direct_red_add(float4 *p, float4 v)
{
#if __CUDA_ARCH__ >= 900
	atomicAdd(p, v); /* one 16-byte RED on Hopper */
#else
	atomicAdd(&p->x, v.x);
	atomicAdd(&p->y, v.y);
	atomicAdd(&p->z, v.z);
	atomicAdd(&p->w, v.w);
#endif
}

__device__ __forceinline__ float4 direct_load_scaled(const float4 *pos, int i, int n, float s)
{
	if (i >= n) /* padding: massless, never written back */
		return make_float4(0.f, 0.f, 0.f, 0.f);
	float4 p = pos[i];
	return make_float4(p.x * s, p.y * s, p.z * s, p.w);
}

/* Block b of the upper triangle (row <= col), numbered column by column:
 * b = c(c+1)/2 + r. The double sqrt can be off by one near perfect squares,
 * so the integer checks fix c up. */
__device__ __forceinline__ void direct_tile_pair(long long b, int *row, int *col)
{
	long long c = (long long)((sqrt(8.0 * (double)b + 1.0) - 1.0) * 0.5);
	while (c * (c + 1) / 2 > b)
		c--;
	while ((c + 1) * (c + 2) / 2 <= b)
		c++;
	*col = (int)c;
	*row = (int)(b - c * (c + 1) / 2);
}

/* The rounds over the column tile for one block. DIAG: row tile == column
 * tile, so only pairs with row index < column index count (each pair once,
 * no self pair).
 *
 * Cost per pair: 3 FADD (d), 3 FFMA (r^2), 1 MUFU.RSQ, 2 FMUL (1/r^3),
 * 2 FMUL (m_j/r^3, m_i/r^3), 6 FFMA (both accelerations) = 16 FP32 + 1 MUFU
 * for two interactions; +2 FFMA with the potential. Per step of R pairs:
 * one LDS.128 (partner position), one LDS.128 + STS.128 (partner's reaction
 * sums) and ~3 integer instructions; __syncwarp() compiles to nothing in this
 * converged loop but keeps the STS of step k before the LDS of step k+1.
 * Measured (ncu, R = 8): 18.25 thread instructions per pair. Shared memory per step and
 * warp: 3 x 512 bytes for 32*R pairs. Global memory: 2 tiles read, 2 tiles
 * of float4 RED per B^2 pairs. */
template <int NT, int R, bool POT, bool DIAG>
__device__ __forceinline__ void pair_rounds(const float4 *cpos, const float4 (&pi)[R],
					    float (&ax)[R], float (&ay)[R], float (&az)[R],
					    float (&ph)[R], float eps2)
{
	constexpr int B = NT * R;
	constexpr int NS = B / 32; /* slices */
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;

	/* Byte offsets: partner (lane + k) mod 32 of a slice lies at
	 * ((16 lane + 16 k) & 0x1f0) past the slice; cacc is B float4 past cpos
	 * (one register address, an immediate offset). */
	const int lane16 = lane * 16;
	for (int q = 0; q < NS; q++) {
		int slice = w + q;
		if (slice >= NS)
			slice -= NS;
		const char *sl = (const char *)(cpos + slice * 32);
		float4 pj = *(const float4 *)(sl + lane16);
#pragma unroll(32 / R)
		for (int k = 0; k < 32; k++) {
			const int off = (lane16 + 16 * k) & 0x1f0;
			/* cpos is read-only here, so the next partner's position can be
			 * fetched ahead of the __syncwarp below (the last fetch is spare). */
			const float4 pnext = *(const float4 *)(sl + ((lane16 + 16 * (k + 1)) & 0x1f0));
			float4 *ap = (float4 *)(sl + off) + B; /* == cacc + jl */
			float4 a = *ap;
#pragma unroll
			for (int u = 0; u < R; u++) {
				const float dx = pj.x - pi[u].x;
				const float dy = pj.y - pi[u].y;
				const float dz = pj.z - pi[u].z;
				const float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, eps2)));
				float inv = direct_rsqrt(r2);
				if (DIAG) {
					const int il = w * 32 * R + u * 32 + lane;
					const int jl = slice * 32 + (off >> 4);
					inv = il < jl ? inv : 0.f;
				}
				const float inv3 = inv * inv * inv;
				const float sj = pj.w * inv3, si = pi[u].w * inv3;
				ax[u] = fmaf(sj, dx, ax[u]);
				ay[u] = fmaf(sj, dy, ay[u]);
				az[u] = fmaf(sj, dz, az[u]);
				a.x = fmaf(-si, dx, a.x);
				a.y = fmaf(-si, dy, a.y);
				a.z = fmaf(-si, dz, a.z);
				if (POT) {
					ph[u] = fmaf(-pj.w, inv, ph[u]);
					a.w = fmaf(-pi[u].w, inv, a.w);
				}
			}
			*ap = a;
			__syncwarp(); /* lane l-1 touches this partner next step */
			pj = pnext;
		}
		__syncthreads(); /* next round: another warp takes this slice */
	}
}

/* DIAG: block b is diagonal tile b (launched apart, with its own shape NT x R
 * of the same B, so that its masked loop does not share a register budget
 * with the main one). Otherwise block b is the b-th tile pair with
 * row < col. */
template <int NT, int R, int MINB, bool POT, bool DIAG>
__global__ void __launch_bounds__(NT, MINB) pair_kernel(const float4 *__restrict__ pos, float4 *acc, int n,
						  float s, float eps2)
{
	constexpr int B = NT * R;
	__shared__ float4 tile[2 * B]; /* column positions, then their reaction sums */
	float4 *cpos = tile, *cacc = tile + B;
	int rt, ct;
	if (DIAG) {
		rt = ct = blockIdx.x;
	} else {
		direct_tile_pair(blockIdx.x, &rt, &ct); /* rt <= ct */
		ct++;                                   /* rt < ct */
	}
	const int t = threadIdx.x, lane = t & 31, w = t >> 5;
	const int row0 = rt * B, col0 = ct * B;

#pragma unroll
	for (int u = 0; u < R; u++) {
		const int jl = t + u * NT;
		cpos[jl] = direct_load_scaled(pos, col0 + jl, n, s);
		cacc[jl] = make_float4(0.f, 0.f, 0.f, 0.f);
	}
	/* Warp w owns tile-local rows w*32R + u*32 + lane (coalesced per u). */
	float4 pi[R];
	float ax[R], ay[R], az[R], ph[R];
#pragma unroll
	for (int u = 0; u < R; u++) {
		pi[u] = direct_load_scaled(pos, row0 + w * 32 * R + u * 32 + lane, n, s);
		ax[u] = ay[u] = az[u] = ph[u] = 0.f;
	}
	__syncthreads();

	pair_rounds<NT, R, POT, DIAG>(cpos, pi, ax, ay, az, ph, eps2);

	/* a = s^2 a', phi = s phi' (two multiplies: s^2 alone may overflow). */
#pragma unroll
	for (int u = 0; u < R; u++) {
		const int i = row0 + w * 32 * R + u * 32 + lane;
		if (i < n)
			direct_red_add(&acc[i], make_float4(ax[u] * s * s, ay[u] * s * s, az[u] * s * s,
							    POT ? ph[u] * s : 0.f));
	}
#pragma unroll
	for (int u = 0; u < R; u++) {
		const int jl = t + u * NT, j = col0 + jl;
		const float4 a = cacc[jl];
		if (j < n)
			direct_red_add(&acc[j], make_float4(a.x * s * s, a.y * s * s, a.z * s * s,
							    POT ? a.w * s : 0.f));
	}
}

/* One-sided tiled kernel: thread owns R bodies (blockIdx*NT*R + u*NT + t),
 * the block walks all bodies in shared tiles of NT, every thread reading the
 * same partner (broadcast). Per interaction: 3 FADD, 3 FFMA, 1 MUFU.RSQ,
 * 2 FMUL (1/r^3), 1 FMUL (m_j/r^3), 3 FFMA = 12 FP32 + 1 MUFU (+1 FFMA with
 * the potential), plus one broadcast LDS.128 per R interactions. Sums are
 * two-level (per tile, then total) to keep float round-off at
 * ~sqrt(NT) + sqrt(N/NT) rather than sqrt(N) additions. The self term adds
 * no force (d = 0); its potential -m_i/eps is removed at the end. */
template <int NT, int R, bool POT>
__global__ void __launch_bounds__(NT) gather_kernel(const float4 *__restrict__ pos, float4 *acc, int n,
						    float s, float eps2)
{
	__shared__ float4 tile[NT];
	const int t = threadIdx.x;
	const int i0 = blockIdx.x * NT * R + t;
	float4 pi[R];
	float ax[R], ay[R], az[R], ph[R];
#pragma unroll
	for (int u = 0; u < R; u++) {
		pi[u] = direct_load_scaled(pos, i0 + u * NT, n, s);
		ax[u] = ay[u] = az[u] = ph[u] = 0.f;
	}
	for (int base = 0; base < n; base += NT) {
		tile[t] = direct_load_scaled(pos, base + t, n, s);
		__syncthreads();
		float tx[R], ty[R], tz[R], tp[R];
#pragma unroll
		for (int u = 0; u < R; u++)
			tx[u] = ty[u] = tz[u] = tp[u] = 0.f;
#pragma unroll 8
		for (int k = 0; k < NT; k++) {
			const float4 pj = tile[k];
#pragma unroll
			for (int u = 0; u < R; u++) {
				const float dx = pj.x - pi[u].x;
				const float dy = pj.y - pi[u].y;
				const float dz = pj.z - pi[u].z;
				const float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, eps2)));
				const float inv = direct_rsqrt(r2);
				const float sj = pj.w * (inv * inv * inv);
				tx[u] = fmaf(sj, dx, tx[u]);
				ty[u] = fmaf(sj, dy, ty[u]);
				tz[u] = fmaf(sj, dz, tz[u]);
				if (POT)
					tp[u] = fmaf(-pj.w, inv, tp[u]);
			}
		}
#pragma unroll
		for (int u = 0; u < R; u++) {
			ax[u] += tx[u];
			ay[u] += ty[u];
			az[u] += tz[u];
			ph[u] += tp[u];
		}
		__syncthreads();
	}
	const float self = direct_rsqrt(eps2);
#pragma unroll
	for (int u = 0; u < R; u++) {
		const int i = i0 + u * NT;
		if (i < n)
			acc[i] = make_float4(ax[u] * s * s, ay[u] * s * s, az[u] * s * s,
					     POT ? (ph[u] + __fmul_rn(pi[u].w, self)) * s : 0.f);
	}
}

/* ---- the general softening (docs/PHYSICS.md "Softening") ----------------
 * Spline kernel or lengths per body (gpu_soft_general): one gather kernel
 * for every target (list NULL) or the targets list[0 .. *count) (individual
 * time steps, ranks), in the scaled frame of the uniform kernels (lengths
 * scale with positions; both kernels' force factors go as 1/length^3, so
 * a = s^2 a', phi = s phi' hold as before). A pair takes the larger length
 * (sim_soft_pairf); the self term adds no force (d = 0) and its potential,
 * the same expression at r2 = 0, is taken out at the end. The uniform
 * Plummer path above is untouched: this kernel is a separate function. */
#define SOFT_NT 128
template <bool MIXED, bool SPLINE>
__device__ __forceinline__ void soft_pair(float r2, float ep, float *f, float *ph)
{
	if (SPLINE) {
		*f = sim_soft_splinef(r2, ep);
		*ph = sim_soft_spline_phif(r2, ep);
	} else {
		*f = sim_soft_plummerf(r2, ep);
		*ph = sim_soft_plummer_phif(r2, ep);
	}
}

template <bool MIXED, bool SPLINE>
__global__ void __launch_bounds__(SOFT_NT) soft_gather_kernel(const float4 *__restrict__ pos,
							      const float *__restrict__ beps,
							      float4 *acc, int n, float s, float se,
							      const int *__restrict__ list,
							      const int *__restrict__ count, int pot)
{
	__shared__ float4 tile[SOFT_NT];
	__shared__ float tile_e[SOFT_NT];
	const int t = threadIdx.x;
	const int nact = list ? *count : n;
	if (blockIdx.x * SOFT_NT >= nact)
		return; /* the whole block: no __syncthreads is skipped by part of it */
	const int e = blockIdx.x * SOFT_NT + t;
	const int i = e < nact ? (list ? list[e] : e) : -1;
	const float4 pi = direct_load_scaled(pos, i >= 0 ? i : 0, n, s);
	const float ei = MIXED ? beps[i >= 0 ? i : 0] * s : se;
	float ax = 0.f, ay = 0.f, az = 0.f, ph = 0.f;
	for (int base = 0; base < n; base += SOFT_NT) {
		tile[t] = direct_load_scaled(pos, base + t, n, s);
		if (MIXED)
			tile_e[t] = base + t < n ? beps[base + t] * s : se;
		__syncthreads();
		float tx = 0.f, ty = 0.f, tz = 0.f, tp = 0.f;
#pragma unroll 4
		for (int k = 0; k < SOFT_NT; k++) {
			const float4 pj = tile[k];
			const float dx = pj.x - pi.x, dy = pj.y - pi.y, dz = pj.z - pi.z;
			const float r2 = fmaf(dx, dx, fmaf(dy, dy, dz * dz));
			float f, p;
			soft_pair<MIXED, SPLINE>(r2, MIXED ? sim_soft_pairf(ei, tile_e[k]) : se, &f, &p);
			const float sj = pj.w * f;
			tx = fmaf(sj, dx, tx);
			ty = fmaf(sj, dy, ty);
			tz = fmaf(sj, dz, tz);
			tp = fmaf(pj.w, p, tp);
		}
		ax += tx, ay += ty, az += tz, ph += tp;
		__syncthreads();
	}
	if (i >= 0) {
		float f0, p0;
		soft_pair<MIXED, SPLINE>(0.f, ei, &f0, &p0);
		acc[i] = make_float4(ax * s * s, ay * s * s, az * s * s,
				     pot ? (ph - pi.w * p0) * s : 0.f);
	}
}

typedef void (*soft_kernel_fn)(const float4 *, const float *, float4 *, int, float, float,
			       const int *, const int *, int);

static float direct_scale(float eps);

/* The general kernel for b (gpu_soft_general), every target or a list. */
static int direct_soft(const struct gpu_bodies *b, float eps, const int *list, const int *count,
		       int need_pot, cudaStream_t stream)
{
	static const soft_kernel_fn fns[2][2] = {
		{soft_gather_kernel<false, false>, soft_gather_kernel<false, true>},
		{soft_gather_kernel<true, false>, soft_gather_kernel<true, true>},
	};
	const size_t n = b->n;
	const float s = direct_scale(eps);
	const unsigned blocks = (unsigned)((n + SOFT_NT - 1) / SOFT_NT);
	fns[b->eps ? 1 : 0][b->spline ? 1 : 0]<<<blocks, SOFT_NT, 0, stream>>>(
		b->pos, b->eps, b->acc, (int)n, s, s * eps, list, count, need_pot ? 1 : 0);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

__global__ void soft_refresh_kernel(const float *__restrict__ eps_id, const uint32_t *__restrict__ id,
				    float *eps, size_t n)
{
	for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n;
	     k += (size_t)gridDim.x * blockDim.x)
		eps[k] = eps_id[id ? id[k] : k];
}

int gpu_soft_refresh(const struct gpu_bodies *b, cudaStream_t stream)
{
	if (!b->eps || b->n == 0)
		return 0;
	size_t blocks = (b->n + 255) / 256;
	if (blocks > 65535)
		blocks = 65535;
	soft_refresh_kernel<<<(unsigned)blocks, 256, 0, stream>>>(b->eps_id, b->id, b->eps, b->n);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}

typedef void (*direct_kernel_fn)(const float4 *, float4 *, int, float, float);

struct direct_variant {
	int nt, r, minb; /* threads, bodies per thread, blocks per SM asked of ptxas */
	direct_kernel_fn fn[2]; /* [need_pot] */
	int diag_nt;            /* pairwise: the diagonal kernel's threads (x 2 bodies) */
	direct_kernel_fn diag[2];
};

/* Compiled tile shapes. The first of each table is the default. */
#define PAIR_VARIANT(nt, r, b)                                                                \
	{nt, r, b, {pair_kernel<nt, r, b, false, false>, pair_kernel<nt, r, b, true, false>},      \
	 nt * r / 2, {pair_kernel<nt * r / 2, 2, 1, false, true>, pair_kernel<nt * r / 2, 2, 1, true, true>}}
#define GATHER_VARIANT(nt, r) {nt, r, 1, {gather_kernel<nt, r, false>, gather_kernel<nt, r, true>}, 0, {NULL, NULL}}
static const struct direct_variant pair_variants[] = {
	PAIR_VARIANT(128, 8, 4), PAIR_VARIANT(128, 4, 4), PAIR_VARIANT(64, 4, 8),
	PAIR_VARIANT(128, 8, 3), PAIR_VARIANT(256, 4, 2), PAIR_VARIANT(256, 2, 2),
};
static const struct direct_variant gather_variants[] = {
	GATHER_VARIANT(256, 1), GATHER_VARIANT(128, 4), GATHER_VARIANT(64, 1),
};

/* Below this many bodies the gather kernel is as fast or faster: measured on
 * an H100 (docs/BENCHMARKS.md), n = 1024: gather 0.029 ms, pairwise 0.034 ms
 * (both mostly launch latency); n = 2048: gather 0.054 ms, pairwise 0.037 ms. */
#define DIRECT_PAIRWISE_MIN_N 2048

enum scene_direct_kernel gpu_direct_pick(size_t n)
{
	return n >= DIRECT_PAIRWISE_MIN_N ? SCENE_DIRECT_PAIRWISE : SCENE_DIRECT_GATHER;
}

size_t gpu_direct_bytes_needed(size_t n)
{
	(void)n; /* works in place on struct gpu_bodies: no scratch */
	return 0;
}

static const struct direct_variant *direct_choose(const struct direct_variant *v, size_t nv, size_t n,
						  int pairwise)
{
	const char *env = getenv("NB_DIRECT_TILE");
	if (env && *env) {
		int nt = 0, r = 0, b = 0;
		if (sscanf(env, "%dx%dx%d", &nt, &r, &b) >= 2)
			for (size_t k = 0; k < nv; k++)
				if (v[k].nt == nt && v[k].r == r && (b == 0 || v[k].minb == b))
					return &v[k];
		static int warned;
		if (!warned)
			log_warn("NB_DIRECT_TILE=%s: no such %s tile shape; using the default", env,
				 pairwise ? "pairwise" : "gather");
		warned = 1;
	}
	/* Built-in choice, from the H100 measurements in docs/BENCHMARKS.md:
	 * pairwise 128x8 (B = 1024) from 262144 up (2.95e12 vs 2.87e12 for 128x4),
	 * 64x4 (B = 256) below, where more, smaller tile pairs fill the GPU
	 * (16384: 2.25e12 vs 1.89e12 for 128x4); gather 128x4 from 262144 up,
	 * 256x1 below. */
	if (pairwise)
		return n >= 131072 ? &v[0] : &v[2];
	return n >= 131072 ? &v[1] : &v[0];
}

/* Power of two s with s*eps ~ 2^DIRECT_SCALE_LOG2, |log2 s| <= 60 so that
 * s^2 stays a float. */
static float direct_scale(float eps)
{
	int e;
	frexpf(eps, &e);
	int k = DIRECT_SCALE_LOG2 - e;
	if (k > 60)
		k = 60;
	if (k < -60)
		k = -60;
	return ldexpf(1.f, k);
}

int gpu_direct_compute(const struct gpu_bodies *b, float eps, enum scene_direct_kernel kernel,
		       int need_pot, cudaStream_t stream)
{
	const size_t n = b->n;
	if (n == 0)
		return 0;
	if (!(eps >= FLT_MIN) || !isfinite(eps)) {
		log_error("simulation.softening: %g is not a normal positive float; the GPU direct "
			  "solver computes in float", (double)eps);
		return NB_EINPUT;
	}
	if (n > (size_t)INT_MAX) {
		log_error("direct solver: %zu bodies is more than the GPU kernels index (%d)", n, INT_MAX);
		return NB_EINPUT;
	}
	if (gpu_soft_general(b)) /* spline or lengths per body: the general gather */
		return direct_soft(b, eps, NULL, NULL, need_pot, stream);
	if (kernel == SCENE_DIRECT_AUTO)
		kernel = gpu_direct_pick(n);
	const float s = direct_scale(eps);
	const float se = s * eps;
	const float eps2 = se * se;
	const int pot = need_pot ? 1 : 0;

	if (kernel == SCENE_DIRECT_PAIRWISE) {
		const struct direct_variant *v =
			direct_choose(pair_variants, sizeof pair_variants / sizeof pair_variants[0], n, 1);
		const size_t tb = (size_t)v->nt * v->r;
		const size_t nt = (n + tb - 1) / tb;
		const size_t blocks = nt * (nt - 1) / 2; /* tile pairs above the diagonal */
		if (blocks > (size_t)INT_MAX) {
			log_error("direct solver: %zu bodies need %zu tile pairs, more than one launch "
				  "takes; use solver: barnes-hut", n, blocks);
			return NB_EINPUT;
		}
		CUDA_CHECK(cudaMemsetAsync(b->acc, 0, n * sizeof(float4), stream));
		v->diag[pot]<<<(unsigned)nt, v->diag_nt, 0, stream>>>(b->pos, b->acc, (int)n, s, eps2);
		CUDA_CHECK(cudaGetLastError());
		if (blocks > 0) {
			v->fn[pot]<<<(unsigned)blocks, v->nt, 0, stream>>>(b->pos, b->acc, (int)n, s, eps2);
			CUDA_CHECK(cudaGetLastError());
		}
	} else {
		const struct direct_variant *v =
			direct_choose(gather_variants, sizeof gather_variants / sizeof gather_variants[0], n, 0);
		const size_t per = (size_t)v->nt * v->r;
		const size_t blocks = (n + per - 1) / per;
		v->fn[pot]<<<(unsigned)blocks, v->nt, 0, stream>>>(b->pos, b->acc, (int)n, s, eps2);
		CUDA_CHECK(cudaGetLastError());
	}
	return 0;
}

/* One-shot: upload, compute, download (tests, benchmarks). */
int gpu_direct_accel(const double *pos, const double *mass, size_t n, double eps,
		     enum scene_direct_kernel kernel, double *acc, double *pot)
{
	return gpu_direct_accel_soft(pos, mass, NULL, n, eps, SCENE_SOFT_PLUMMER, kernel, acc, pot);
}

int gpu_direct_accel_soft(const double *pos, const double *mass, const double *eps_body, size_t n,
			  double eps, enum scene_soft_kernel soft, enum scene_direct_kernel kernel,
			  double *acc, double *pot)
{
	int rc = 0;
	struct gpu_bodies b;
	memset(&b, 0, sizeof b);
	b.n = n;
	b.spline = soft == SCENE_SOFT_SPLINE;
	float4 *h = NULL;
	float *he = NULL;
	if (n == 0)
		return 0;
	h = (float4 *)malloc(n * sizeof(float4));
	he = (float *)malloc(n * sizeof(float));
	if (!h || !he) {
		log_error("gpu_direct_accel: out of host memory for %zu bodies", n);
		rc = NB_ERUNTIME;
		goto end;
	}
	for (size_t i = 0; i < n; i++) {
		h[i] = make_float4((float)pos[3 * i], (float)pos[3 * i + 1], (float)pos[3 * i + 2],
				   (float)mass[i]);
		he[i] = eps_body ? (float)eps_body[i] : (float)eps;
	}
	CUDA_GOTO(cudaMalloc((void **)&b.pos, n * sizeof(float4)), rc, end);
	CUDA_GOTO(cudaMalloc((void **)&b.acc, n * sizeof(float4)), rc, end);
	CUDA_GOTO(cudaMemcpy(b.pos, h, n * sizeof(float4), cudaMemcpyHostToDevice), rc, end);
	if (eps_body) { /* no id: slot = body, so eps is eps_id */
		CUDA_GOTO(cudaMalloc((void **)&b.eps, n * sizeof(float)), rc, end);
		CUDA_GOTO(cudaMemcpy(b.eps, he, n * sizeof(float), cudaMemcpyHostToDevice), rc, end);
		b.eps_id = b.eps;
	}
	rc = gpu_direct_compute(&b, (float)eps, kernel, pot != NULL, 0);
	if (rc)
		goto end;
	CUDA_GOTO(cudaMemcpy(h, b.acc, n * sizeof(float4), cudaMemcpyDeviceToHost), rc, end);
	gpu_unpack_acc(h, NULL, n, acc, pot);
end:
	cudaFree(b.pos);
	cudaFree(b.acc);
	cudaFree(b.eps);
	free(h);
	free(he);
	return rc;
}

/* ---- individual time steps: the active targets only ------------------------
 * The gather kernel's sum (the same tiles, the same order over sources, so
 * a target's result does not depend on its place in the list) for targets
 * list[0 .. *count), the active bodies (sim/cuda/sim_levels.cu). The grid is
 * sized for every body; blocks past *count return at once. Cost per active
 * target: as gather_kernel, n interactions. */
#define ACTIVE_NT 128
__global__ void __launch_bounds__(ACTIVE_NT) gather_active_kernel(const float4 *__restrict__ pos,
								  float4 *acc, int n, float s,
								  float eps2, const int *__restrict__ list,
								  const int *__restrict__ count, int pot)
{
	__shared__ float4 tile[ACTIVE_NT];
	const int t = threadIdx.x;
	const int nact = *count;
	if (blockIdx.x * ACTIVE_NT >= nact)
		return; /* the whole block: no __syncthreads is skipped by part of it */
	const int e = blockIdx.x * ACTIVE_NT + t;
	const int i = e < nact ? list[e] : -1;
	const float4 pi = direct_load_scaled(pos, i >= 0 ? i : 0, n, s);
	float ax = 0.f, ay = 0.f, az = 0.f, ph = 0.f;
	for (int base = 0; base < n; base += ACTIVE_NT) {
		tile[t] = direct_load_scaled(pos, base + t, n, s);
		__syncthreads();
		float tx = 0.f, ty = 0.f, tz = 0.f, tp = 0.f;
#pragma unroll 8
		for (int k = 0; k < ACTIVE_NT; k++) {
			const float4 pj = tile[k];
			const float dx = pj.x - pi.x, dy = pj.y - pi.y, dz = pj.z - pi.z;
			const float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, eps2)));
			const float inv = direct_rsqrt(r2);
			const float sj = pj.w * (inv * inv * inv);
			tx = fmaf(sj, dx, tx);
			ty = fmaf(sj, dy, ty);
			tz = fmaf(sj, dz, tz);
			tp = fmaf(-pj.w, inv, tp);
		}
		ax += tx, ay += ty, az += tz, ph += tp;
		__syncthreads();
	}
	if (i >= 0)
		acc[i] = make_float4(ax * s * s, ay * s * s, az * s * s,
				     pot ? (ph + __fmul_rn(pi.w, direct_rsqrt(eps2))) * s : 0.f);
}

int gpu_direct_compute_active(const struct gpu_bodies *b, float eps, const int *list,
			      const int *count, int need_pot, cudaStream_t stream)
{
	const size_t n = b->n;
	if (n == 0)
		return 0;
	if (n > (size_t)INT_MAX || !(eps >= FLT_MIN) || !isfinite(eps)) {
		log_error("direct solver (active targets): %zu bodies, softening %g not supported", n,
			  (double)eps);
		return NB_EINPUT;
	}
	if (gpu_soft_general(b))
		return direct_soft(b, eps, list, count, need_pot, stream);
	const float s = direct_scale(eps);
	const float se = s * eps;
	const unsigned blocks = (unsigned)((n + ACTIVE_NT - 1) / ACTIVE_NT);
	gather_active_kernel<<<blocks, ACTIVE_NT, 0, stream>>>(b->pos, b->acc, (int)n, s, se * se, list,
								count, need_pot ? 1 : 0);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}
