/* render_splat.cu - bodies -> HDR image on the GPU, render/splat.c's meaning
 * (pixel-centre sampling, the 0.5 px single-pixel rule, discrete
 * normalisation over the whole footprint, then clipping to the image).
 *
 * Exactness. Projection, radius, level and footprint box are computed in
 * double with the CPU's operation order, the multiply-adds written with
 * __dmul_rn/__dadd_rn so that nvcc cannot fuse them. Each sample forms q^2
 * in float from coordinates relative to a nearby corner and redoes the
 * support test in double only within GR_EDGE of the edge
 * (render_internal.cuh gr_sample): so for the same float positions the GPU
 * still selects exactly the CPU's pixels. Kernel values are float
 * (relative error ~1e-6), summed per lane in float and across lanes in
 * double for the normalisation. (An earlier float-first variant, with a
 * 64-byte record and per-sample conversions, was 9-23% slower than the
 * all-double test on an H100; this one converts per footprint, once per
 * block, into shared memory, and the sample costs ~35 instructions
 * instead of ~60: with level of detail the deposit is issue-bound.)
 *
 * Level of detail (render.h): a footprint wider than RENDER_LOD_RADIUS_PX
 * is made on the grid of its level (x, y, r divided by 2^L, exactly as the
 * CPU), which has its own tiles after level 0's in the tile key space and
 * its own image after the picture in d_hdr; render_lod.cu upsamples the
 * levels into the picture after the deposit. So no footprint is wider than
 * ~2 RENDER_LOD_RADIUS_PX + 1 cells (x 1.5 for the gaussian).
 *
 * Pipeline (gr->stream):
 *  1. prepare: one thread per footprint record (a body slot; with an
 *     equirectangular frame each slot's 4 copies, render_proj_ghost, record
 *     s * 4 + k, so every later step sees 4 n records): project, level, footprint,
 *     normalisation (analytic for cubic footprints with r >=
 *     RENDER_NORM_ANALYTIC_R cells, render.h; else the sum of the samples,
 *     here for footprints up to GR_NORM_INLINE samples), number of 16x16
 *     tiles the clipped box touches; larger footprints summed go on a list
 *     that
 *  2. norm_big normalises, one warp per body.
 *  Tiled (default; steps 3-5 are in render_splat_tiled.cu):
 *  3. the pair count and the mask of the levels used are read back (the
 *     one host wait), the counts scanned and (tile, body) pairs emitted in
 *     body order;
 *  4. CUB radix sort by tile key (stable: each tile's list stays in body
 *     order), tile start/end, each tile's list cut into GR_CHUNK chunks;
 *  5. deposit: one block per chunk, two pixels of the tile per thread; the
 *     block stages 256 footprints at a time in shared memory with, for each,
 *     the mask of the warps (4 rows of the tile each) holding a pixel centre
 *     possibly inside its support; each warp walks only the footprints of
 *     its rows (ballot over the masks) and every thread sums the
 *     contributions to its two pixels in registers, in body order. No
 *     atomics, except that a tile split into
 *     several chunks adds each chunk's sums to the image with atomicAdd
 *     (dense cores).
 *  6. the levels used are upsampled into the picture (render_lod.cu).
 *  Atomic (render_splat_atomic.cu): every body adds its clipped footprint
 *  to its level with global atomicAdd, then 6.
 *
 * Cost per (warp, footprint) pair visited by the deposit: a ballot bit,
 * 3 shared loads, a box test (6 int compares) and, branch-free for both
 * pixels, ~5 float flops, 1 sqrt or exp and 3 FMAs each; per body 56 bytes
 * of footprint read per tile. (H100, galaxies adaptive 4K 10M: the deposit
 * went from 6.56 to 3.44 ms (ncu) with two pixels per thread, weights
 * premultiplied by the normalisation, predicates instead of branches and
 * strips outside the support skipped; issue-bound, 88% issue slots busy,
 * 62.5% occupancy by registers.)
 * CPU twin: render/splat.c. */
#include "render_internal.cuh"
#include "../../render/color_by_shared.h"

#include <cub/cub.cuh>

#define GR_PAIR_LIMIT (1ull << 30) /* more pairs than this: atomics for the frame */


struct gr_splat_args {
	struct gr_view v;
	double length, mass; /* internal = scene * factor */
	double smoothing;    /* used when h == NULL */
	const float *h;      /* per-id smoothing, scene units, or NULL */
	const uint16_t *comp;
	const float *colors;
	int ncomp, gauss, density;
	struct gr_levels lev;
	/* render.color_by (color_by_shared.h): by 0 = component */
	int cb_by;
	double cb_lo, cb_hi, velocity; /* range (scene units); internal = scene * velocity */
	const float *cb_lut;
	const float4 *vel4;
};

__device__ __forceinline__ unsigned long long gr_warp_sum_u64(unsigned long long v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	return v;
}

/* 1. One thread per body slot. ~60 double flops + the inline normalisation
 * (<= GR_NORM_INLINE samples); reads 16 bytes (+ id, comp, h), writes 60.
 * render.color_by: + 16 bytes (velocity), ~30 double flops. */
__global__ void __launch_bounds__(GR_THREADS)
gr_prepare(struct gr_splat_args a, const float4 *pos4, const uint32_t *id, int n,
	   struct gr_rec *rec, uint8_t *level, uint32_t *count, uint32_t *big, uint32_t *nbig,
	   unsigned long long *total)
{
	/* Record e = s * nc + k: copy k of slot s (render_proj_ghost; nc 1
	 * but for equirect). n counts records. */
	const int e = blockIdx.x * blockDim.x + threadIdx.x;
	const int nc = render_proj_copies(&a.v.pj);
	const int s = e / nc, copy = e - s * nc;
	uint32_t tiles = 0, levels = 0;
	if (e < n) {
		const float4 pf = pos4[s];
		const uint32_t b = id ? id[s] : (uint32_t)s;
		const struct gr_view &v = a.v;
		double p0 = (double)pf.x / a.length, p1 = (double)pf.y / a.length,
		       p2 = (double)pf.z / a.length;
		double d0 = p0 - v.pos[0], d1 = p1 - v.pos[1], d2 = p2 - v.pos[2];
		double x, y, z;
		int live = gr_project(v, d0, d1, d2, &x, &y, &z);
		if (live)
			render_proj_ghost(&v.pj, copy, x, y, &x, &y);
		int gw = v.w, gh = v.h, lv = 0; /* the level's grid */
		struct gr_rec r;
		if (live) {
			double m = (double)pf.w / a.mass;
			int c = a.comp ? a.comp[b] : 0;
			double cc[3] = {1.0, 1.0, 1.0};
			if (a.cb_by) {
				const float4 vf = a.vel4[s];
				const double pp[3] = {p0, p1, p2};
				const double vv[3] = {(double)vf.x / a.velocity, (double)vf.y / a.velocity,
						      (double)vf.z / a.velocity};
				render_color_lookup(a.cb_lut, a.cb_lo, a.cb_hi,
						    render_color_q(a.cb_by, pp, vv, v.pos), cc);
			}
			for (int k = 0; k < 3; k++) {
				float col = 1.0f;
				if (!a.density && c < a.ncomp)
					col = a.colors[3 * c + k];
				r.w[k] = (float)(m * col * cc[k]);
			}
			/* Zero weight (a dark halo drawn black): nothing to add, as on the CPU. */
			if (r.w[0] == 0.0f && r.w[1] == 0.0f && r.w[2] == 0.0f)
				live = 0;
			double hs = a.h ? (double)a.h[b] : a.smoothing;
			double rad = __dmul_rn(hs / z, v.focal);
			if (!(rad <= RENDER_MAX_RADIUS_PX))
				rad = RENDER_MAX_RADIUS_PX;
			/* Level of detail (render_lod_level); then cells of the level. */
			int L = 0;
			while (L < RENDER_LOD_LEVELS - 1 && rad > RENDER_LOD_RADIUS_PX * (double)(1 << L))
				L++;
			const double cell = (double)(1 << L);
			gw = a.lev.w[L];
			gh = a.lev.h[L];
			x = x / cell;
			y = y / cell;
			rad = rad / cell;
			lv = L;
			double support = a.gauss ? 1.5 * rad : rad;
			double reach = rad < 0.5 ? 0.0 : support;
			if (x + reach < 0 || x - reach >= gw || y + reach < 0 || y - reach >= gh)
				live = 0;
			r.x = x;
			r.y = y;
			int single = rad < 0.5;
			if (live && !single) {
				r.inv_r = 1.0 / rad;
				r.i0 = (int)ceil(x - support - 0.5);
				r.i1 = (int)floor(x + support - 0.5);
				r.j0 = (int)ceil(y - support - 0.5);
				r.j1 = (int)floor(y + support - 0.5);
				/* A box that misses the image culls the body whether or not
				 * its samples sum to zero ((x, y) is outside then too). */
				if (r.i1 < 0 || r.i0 >= gw || r.j1 < 0 || r.j0 >= gh)
					live = 0;
				long area = (long)(r.i1 - r.i0 + 1) * (r.j1 - r.j0 + 1);
				if (live && !a.gauss && rad >= RENDER_NORM_ANALYTIC_R) {
					/* render.h: the shape's integral, the CPU's (A r) r */
					const double sum = __dmul_rn(__dmul_rn(RENDER_CUBIC_SHAPE_AREA, rad), rad);
					r.inv_norm = (float)(1.0 / sum);
				} else if (live && area <= GR_NORM_INLINE) {
					const float xl = (float)(r.x - r.i0), yl = (float)(r.y - r.j0);
					const float a2 = gr_a2(r);
					float sum = 0.0f;
					for (int jj = 0; jj <= r.j1 - r.j0; jj++)
						for (int ii = 0; ii <= r.i1 - r.i0; ii++)
							sum += gr_sample(a.gauss, (float)ii + 0.5f - xl,
									 (float)jj + 0.5f - yl, a2, r,
									 r.i0 + ii, r.j0 + jj);
					if (sum > 0)
						r.inv_norm = 1.0f / sum;
					else
						single = 1; /* no pixel centre inside the support */
				} else if (live) {
					r.inv_norm = 0.0f; /* set by gr_norm_big */
					big[atomicAdd(nbig, 1u)] = (uint32_t)e;
				}
			}
			if (live && single) {
				if (x >= 0 && x < gw && y >= 0 && y < gh) {
					r.inv_r = 0.0;
					r.inv_norm = 1.0f;
					r.i0 = r.i1 = (int)floor(x);
					r.j0 = r.j1 = (int)floor(y);
				} else {
					live = 0;
				}
			}
		}
		if (live) {
			int ci0 = max(r.i0, 0), ci1 = min(r.i1, gw - 1);
			int cj0 = max(r.j0, 0), cj1 = min(r.j1, gh - 1);
			tiles = (uint32_t)((ci1 / GR_TILE - ci0 / GR_TILE + 1) *
					   (cj1 / GR_TILE - cj0 / GR_TILE + 1));
			rec[e] = r;
			level[e] = (uint8_t)lv;
			levels = 1u << lv;
		}
		count[e] = tiles;
	}
	/* Block total of tiles, in 64 bits (the pair count can pass 2^32), and
	 * the levels used. */
	__shared__ unsigned long long warp_tot[GR_THREADS / 32];
	__shared__ unsigned warp_lev[GR_THREADS / 32];
	unsigned long long t = gr_warp_sum_u64(tiles);
	unsigned lm = __reduce_or_sync(0xffffffffu, levels);
	if ((threadIdx.x & 31) == 0) {
		warp_tot[threadIdx.x >> 5] = t;
		warp_lev[threadIdx.x >> 5] = lm;
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		unsigned long long bt = 0;
		unsigned bl = 0;
		for (int k = 0; k < GR_THREADS / 32; k++) {
			bt += warp_tot[k];
			bl |= warp_lev[k];
		}
		if (bt)
			atomicAdd(total, bt);
		if (bl & ~1u)
			atomicOr(total + 1, (unsigned long long)bl);
	}
}

/* 2. Normalisation of the large footprints, one warp each (grid-stride):
 * ~20 instructions per sample (gr_warp_box_sum). */
template <int gauss>
__global__ void gr_norm_big(const uint32_t *big, const uint32_t *nbig, struct gr_rec *rec)
{
	const int lane = threadIdx.x & 31;
	const uint32_t nb = *nbig;
	const uint32_t nwarps = (gridDim.x * blockDim.x) >> 5;
	for (uint32_t k = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; k < nb; k += nwarps) {
		const uint32_t s = big[k];
		const struct gr_rec r = rec[s];
		const double sum = gr_warp_box_sum(gauss, r, lane);
		if (lane == 0)
			rec[s].inv_norm = (float)(1.0 / sum);
	}
}

int gr_splat_alloc(struct gpu_render *gr)
{
	/* footprint records: nc copies of each slot; the stars out of core never
	 * splat smooth footprints (the adaptive layer is refused there) */
	size_t n = (gr->nmax && !(gr->ooc_chunk && gr->stars) ? gr->nmax : 1) * (size_t)gr->nc;
	gr_lod_init(gr);
	CUDA_CHECK(cudaMalloc(&gr->d_rec, n * sizeof *gr->d_rec));
	CUDA_CHECK(cudaMalloc(&gr->d_level, n));
	CUDA_CHECK(cudaMalloc(&gr->d_count, n * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_offset, n * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_big, n * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_nbig, sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_total, 2 * sizeof(unsigned long long)));
	CUDA_CHECK(cudaMallocHost(&gr->h_total, 2 * sizeof(unsigned long long)));
	size_t nt = (size_t)gr->ntiles + 1;
	CUDA_CHECK(cudaMalloc(&gr->d_tile_start, nt * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_tile_end, nt * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_tile_nchunk, nt * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_item_off, nt * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_nitems, sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_hdr, gr->lev.floats * sizeof(float)));
	CUDA_CHECK(cudaMemset(gr->d_hdr, 0, gr->lev.floats * sizeof(float)));
	return 0;
}

void gr_splat_free(struct gpu_render *gr)
{
	gr_tiled_free(gr);
	cudaFree(gr->d_rec);
	cudaFree(gr->d_level);
	cudaFree(gr->d_count);
	cudaFree(gr->d_offset);
	cudaFree(gr->d_big);
	cudaFree(gr->d_nbig);
	cudaFree(gr->d_total);
	cudaFreeHost(gr->h_total);
	cudaFree(gr->d_tile_start);
	cudaFree(gr->d_tile_end);
	cudaFree(gr->d_tile_nchunk);
	cudaFree(gr->d_item_off);
	cudaFree(gr->d_nitems);
	cudaFree(gr->d_hdr);
}

int gr_splat(struct gpu_render *gr, const struct gpu_render_input *in, const struct gr_view *v,
	     const float *d_h)
{
	cudaStream_t st = gr->stream;
	const int n = (int)in->n * gr->nc; /* footprint records: nc copies of each slot */
	const int nch = gr->mode == SCENE_COLOR_DENSITY ? 1 : 3;
	gr->last_pairs = 0;
	if (n == 0) {
		CUDA_CHECK(cudaEventRecord(gr->ev_consumed, st));
		CUDA_CHECK(cudaMemsetAsync(gr->d_hdr, 0, (size_t)gr->w * gr->h * 3 * sizeof(float), st));
		return 0;
	}
	struct gr_splat_args a;
	a.v = *v;
	a.length = gr->u.length;
	a.mass = gr->u.mass;
	a.smoothing = gr->smoothing;
	a.h = d_h;
	a.comp = gr->comp_slot ? gr->comp_slot : gr->d_comp;
	a.colors = gr->d_colors;
	a.ncomp = gr->ncomp;
	a.gauss = gr->kernel == SCENE_KERNEL_GAUSSIAN;
	a.density = gr->mode == SCENE_COLOR_DENSITY;
	a.lev = gr->lev;
	a.cb_by = gr->color_by;
	a.cb_lo = gr->cb_lo;
	a.cb_hi = gr->cb_hi;
	a.velocity = gr->u.velocity;
	a.cb_lut = gr->d_cblut;
	a.vel4 = (const float4 *)in->vel4;

	CUDA_CHECK(cudaMemsetAsync(gr->d_nbig, 0, sizeof(uint32_t), st));
	CUDA_CHECK(cudaMemsetAsync(gr->d_total, 0, 2 * sizeof(unsigned long long), st));
	gr_prepare<<<gr_blocks(n), GR_THREADS, 0, st>>>(a, (const float4 *)in->pos4, in->id, n,
							 gr->d_rec, gr->d_level, gr->d_count,
							 gr->d_big, gr->d_nbig, gr->d_total);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaEventRecord(gr->ev_consumed, st));
	if (a.gauss)
		gr_norm_big<1><<<1024, GR_THREADS, 0, st>>>(gr->d_big, gr->d_nbig, gr->d_rec);
	else
		gr_norm_big<0><<<1024, GR_THREADS, 0, st>>>(gr->d_big, gr->d_nbig, gr->d_rec);
	CUDA_CHECK(cudaGetLastError());

	if (gr->method == GPU_RENDER_ATOMIC)
		return gr_deposit_atomic(gr, n, nch);

	/* The sort needs the pair count on the host: the one wait per frame. */
	CUDA_CHECK(cudaMemcpyAsync(gr->h_total, gr->d_total, 2 * sizeof(unsigned long long),
				   cudaMemcpyDeviceToHost, st));
	CUDA_CHECK(cudaEventRecord(gr->ev_pairs, st));
	CUDA_CHECK(cudaEventSynchronize(gr->ev_pairs));
	const unsigned long long npairs = gr->h_total[0];
	const unsigned levels = (unsigned)gr->h_total[1];
	if (npairs == 0) {
		CUDA_CHECK(cudaMemsetAsync(gr->d_hdr, 0, (size_t)gr->w * gr->h * 3 * sizeof(float), st));
		return 0;
	}
	if (npairs > GR_PAIR_LIMIT) {
		if (!gr->warned_fallback)
			log_warn("GPU render: %llu footprint-tile pairs (bodies very close to the "
				 "camera); splatting with atomics instead of tiles",
				 npairs);
		gr->warned_fallback = 1;
		return gr_deposit_atomic(gr, n, nch);
	}
	gr->last_pairs = (size_t)npairs;
	return gr_deposit_tiled(gr, n, (size_t)npairs, nch, levels);
}
