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
 *  1. prepare: one thread per body: project, level, footprint,
 *     normalisation (analytic for cubic footprints with r >=
 *     RENDER_NORM_ANALYTIC_R cells, render.h; else the sum of the samples,
 *     here for footprints up to GR_NORM_INLINE samples), number of 16x16
 *     tiles the clipped box touches; larger footprints summed go on a list
 *     that
 *  2. norm_big normalises, one warp per body.
 *  Tiled (default):
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
 * 62.5% occupancy by registers.) */
#include "render_internal.cuh"

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
};

/* a.b for a double[3] and (d0, d1, d2), in the CPU's order, unfused. */
__device__ __forceinline__ double gr_dot(const double a[3], double d0, double d1, double d2)
{
	return __dadd_rn(__dadd_rn(__dmul_rn(d0, a[0]), __dmul_rn(d1, a[1])), __dmul_rn(d2, a[2]));
}

__device__ __forceinline__ unsigned long long gr_warp_sum_u64(unsigned long long v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	return v;
}

/* 1. One thread per body slot. ~60 double flops + the inline normalisation
 * (<= GR_NORM_INLINE samples); reads 16 bytes (+ id, comp, h), writes 60. */
__global__ void __launch_bounds__(GR_THREADS)
gr_prepare(struct gr_splat_args a, const float4 *pos4, const uint32_t *id, int n,
	   struct gr_rec *rec, uint8_t *level, uint32_t *count, uint32_t *big, uint32_t *nbig,
	   unsigned long long *total)
{
	const int s = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t tiles = 0, levels = 0;
	if (s < n) {
		const float4 pf = pos4[s];
		const uint32_t b = id ? id[s] : (uint32_t)s;
		const struct gr_view &v = a.v;
		double p0 = (double)pf.x / a.length, p1 = (double)pf.y / a.length,
		       p2 = (double)pf.z / a.length;
		double d0 = p0 - v.pos[0], d1 = p1 - v.pos[1], d2 = p2 - v.pos[2];
		double z = gr_dot(v.fwd, d0, d1, d2);
		double x = __dadd_rn(0.5 * v.w, __dmul_rn(v.focal, gr_dot(v.right, d0, d1, d2)) / z);
		double y = __dsub_rn(0.5 * v.h, __dmul_rn(v.focal, gr_dot(v.upv, d0, d1, d2)) / z);
		int live = (z > v.near) && z > 0 && isfinite(x) && isfinite(y);
		int gw = v.w, gh = v.h, lv = 0; /* the level's grid */
		struct gr_rec r;
		if (live) {
			double m = (double)pf.w / a.mass;
			int c = a.comp ? a.comp[b] : 0;
			for (int k = 0; k < 3; k++) {
				float col = 1.0f;
				if (!a.density && c < a.ncomp)
					col = a.colors[3 * c + k];
				r.w[k] = (float)(m * col);
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
					big[atomicAdd(nbig, 1u)] = (uint32_t)s;
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
			rec[s] = r;
			level[s] = (uint8_t)lv;
			levels = 1u << lv;
		}
		count[s] = tiles;
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

/* 3. (tile, body) pairs of each live body, tiles of its level in
 * row-major order. A warp's 32 bodies own the consecutive pair slots
 * [offset of its first, end of its last): the lanes write them 32 at a
 * time (coalesced), each finding its slot's body by a binary search over
 * the lanes' offsets (non-decreasing; lanes past n hold UINT32_MAX). */
__global__ void gr_emit(const struct gr_rec *rec, const uint8_t *level, const uint32_t *count,
			const uint32_t *offset, int n, struct gr_levels lev, uint32_t *keys,
			uint32_t *vals)
{
	const int s = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
	uint32_t o = UINT32_MAX, c = 0, kbase = 0;
	int ntw = 1, ntx = 1; /* tiles per row of the body's box; of its level */
	if (s < n) {
		o = offset[s];
		c = count[s];
		if (c) {
			const struct gr_rec r = rec[s];
			const int L = level[s], w = lev.w[L];
			const int tx0 = max(r.i0, 0) / GR_TILE, tx1 = min(r.i1, w - 1) / GR_TILE;
			const int ty0 = max(r.j0, 0) / GR_TILE;
			ntx = lev.ntx[L];
			ntw = tx1 - tx0 + 1;
			kbase = lev.toff[L] + (uint32_t)(ty0 * ntx + tx0);
		}
	}
	const uint32_t first = __shfl_sync(0xffffffffu, o, 0);
	const uint32_t end = __reduce_max_sync(0xffffffffu, s < n ? o + c : 0u);
	const int s0 = s - lane;
	for (uint32_t base = first; base < end; base += 32) {
		const uint32_t p = base + (uint32_t)lane;
		int b = 0; /* the last lane whose offset is <= p: the body of slot p */
		for (int step = 16; step > 0; step >>= 1)
			if (__shfl_sync(0xffffffffu, o, b + step) <= p)
				b += step;
		const uint32_t k = p - __shfl_sync(0xffffffffu, o, b);
		const int bw = __shfl_sync(0xffffffffu, ntw, b), bx = __shfl_sync(0xffffffffu, ntx, b);
		const uint32_t kb = __shfl_sync(0xffffffffu, kbase, b);
		if (p < end) {
			const uint32_t ty = k / (uint32_t)bw, tx = k - ty * (uint32_t)bw;
			keys[p] = kb + ty * (uint32_t)bx + tx;
			vals[p] = (uint32_t)(s0 + b);
		}
	}
}

/* 4. Each tile's [start, end) in the sorted pairs (arrays zeroed before). */
__global__ void gr_tile_ranges(const uint32_t *keys, uint32_t npairs, uint32_t *start, uint32_t *end)
{
	const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= npairs)
		return;
	const uint32_t k = keys[i];
	if (i == 0 || keys[i - 1] != k)
		start[k] = i;
	if (i == npairs - 1 || keys[i + 1] != k)
		end[k] = i + 1;
}

__global__ void gr_tile_chunks(const uint32_t *start, const uint32_t *end, int ntiles, uint32_t *nchunk)
{
	const int t = blockIdx.x * blockDim.x + threadIdx.x;
	if (t > ntiles)
		return;
	nchunk[t] = t < ntiles ? (end[t] - start[t] + GR_CHUNK - 1) / GR_CHUNK : 0;
}

__global__ void gr_tile_items(const uint32_t *nchunk, const uint32_t *item_off, int ntiles,
			      uint2 *items, uint32_t *nitems)
{
	const int t = blockIdx.x * blockDim.x + threadIdx.x;
	if (t > ntiles)
		return;
	if (t == ntiles) {
		*nitems = item_off[ntiles];
		return;
	}
	for (uint32_t c = 0; c < nchunk[t]; c++)
		items[item_off[t] + c] = make_uint2((uint32_t)t, c);
}

/* 5. One block per chunk of a tile's list, GR_DEP_THREADS threads, two
 * pixels per thread (rows lj and lj + 1 of one column): warp k holds rows
 * 4k .. 4k + 3 of the tile, so the per-footprint work (ballot bit, shared
 * loads, column test, dx) is shared by two samples. Per footprint staged:
 * its box, its centre relative to the tile's corner and 1/r^2 in float,
 * its weights times its normalisation (float), the doubles of the exact
 * support test, and the mask of the warps whose 4-row strip holds a pixel
 * centre inside its support (box rows, then a conservative float test of
 * the strip's nearest centre: corners of large boxes cost no visit).
 * Samples are formed branch-free (in-box and support as predicates); only
 * lanes within GR_EDGE of the edge take the double test. */
#define GR_DEP_THREADS 128
#define GR_DEP_STAGE 256 /* footprints staged per round */

/* gr_inside_exact with the record's doubles (same operations and order). */
__device__ __forceinline__ bool gr_inside_exact3(int gauss, double3 e, int i, int j)
{
	double dx = (i + 0.5) - e.x, dy = (j + 0.5) - e.y;
	double d2 = __dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy));
	double q2 = __dmul_rn(__dmul_rn(d2, e.z), e.z);
	return gauss ? !(q2 > 2.25) : q2 < 1.0;
}

template <int gauss>
__global__ void __launch_bounds__(GR_DEP_THREADS)
gr_deposit_tiled(const struct gr_rec *rec, const uint32_t *vals, const uint32_t *start,
		 const uint32_t *end, const uint2 *items, const uint32_t *nitems,
		 struct gr_levels lev, int nch, float *hdr)
{
	__shared__ int4 box[GR_DEP_STAGE];     /* i0, i1, j0, j1 */
	__shared__ float4 geo[GR_DEP_STAGE];   /* x - x0, y - y0, 1/r^2, w[0] inv_norm */
	__shared__ float2 wyz[GR_DEP_STAGE];   /* w[1] inv_norm, w[2] inv_norm */
	__shared__ double3 ex[GR_DEP_STAGE];   /* x, y, 1/r: the exact test */
	__shared__ uint8_t rows[GR_DEP_STAGE]; /* bit k: a centre of warp k's strip may be inside */
	if (blockIdx.x >= *nitems)
		return;
	const float cut = gauss ? 2.25f : 1.0f;
	const uint2 it = items[blockIdx.x];
	const uint32_t t = it.x, t0 = start[t], t1 = end[t];
	const uint32_t a = t0 + it.y * GR_CHUNK;
	const uint32_t b = min(t1, a + GR_CHUNK);
	int L = 0;
	while (L < RENDER_LOD_LEVELS - 1 && t >= lev.toff[L + 1])
		L++;
	const uint32_t lt = t - lev.toff[L];
	const int ntx = lev.ntx[L], w = lev.w[L], h = lev.h[L];
	const int x0 = (int)(lt % ntx) * GR_TILE, y0 = (int)(lt / ntx) * GR_TILE;
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	const int li = lane & (GR_TILE - 1), lj = 4 * warp + 2 * (lane >> 4);
	const int i = x0 + li, j = y0 + lj; /* pixels (i, j) and (i, j + 1) */
	const float ci = (float)li + 0.5f, cj = (float)lj + 0.5f, cj1 = cj + 1.0f;
	float p0 = 0.0f, p1 = 0.0f, p2 = 0.0f; /* pixel (i, j) */
	float q0 = 0.0f, q1 = 0.0f, q2 = 0.0f; /* pixel (i, j + 1) */
	for (uint32_t base = a; base < b; base += GR_DEP_STAGE) {
		const int cnt = (int)min((uint32_t)GR_DEP_STAGE, b - base);
		__syncthreads();
		for (int e = threadIdx.x; e < cnt; e += GR_DEP_THREADS) {
			const struct gr_rec r = rec[vals[base + e]];
			const float gx = (float)(r.x - x0), gy = (float)(r.y - y0), a2 = gr_a2(r);
			box[e] = make_int4(r.i0, r.i1, r.j0, r.j1);
			geo[e] = make_float4(gx, gy, a2, r.w[0] * r.inv_norm);
			wyz[e] = make_float2(r.w[1] * r.inv_norm, r.w[2] * r.inv_norm);
			ex[e] = make_double3(r.x, r.y, r.inv_r);
			/* The pair exists, so the box meets the tile's rows. */
			const int ja = max(r.j0, y0) - y0, jb = min(r.j1, y0 + GR_TILE - 1) - y0;
			/* Nearest tile column centre to the centre, then per strip the
			 * nearest row centre: skip the strip when even that is outside
			 * the support by a margin far above float rounding (~1e-5 rel). */
			const float nx = fminf(fmaxf(gx, 0.5f), (float)GR_TILE - 0.5f) - gx;
			unsigned m = 0;
			for (int k = ja >> 2; k <= jb >> 2; k++) {
				const float ny = fminf(fmaxf(gy, 4.0f * k + 0.5f), 4.0f * k + 3.5f) - gy;
				if (a2 == 0.0f || (nx * nx + ny * ny) * a2 <= cut * 1.001f)
					m |= 1u << k;
			}
			rows[e] = (uint8_t)m;
		}
		__syncthreads();
		for (int e0 = 0; e0 < cnt; e0 += 32) {
			const int e = e0 + lane;
			unsigned mine = __ballot_sync(0xffffffffu, e < cnt && ((rows[e] >> warp) & 1u));
			while (mine) {
				const int k = e0 + __ffs(mine) - 1;
				mine &= mine - 1;
				const int4 bx = box[k];
				const float4 g = geo[k];
				const bool col = i >= bx.x && i <= bx.y;
				const bool in0 = col && j >= bx.z && j <= bx.w;
				const bool in1 = col && j + 1 >= bx.z && j + 1 <= bx.w;
				const float dx = ci - g.x, dy0 = cj - g.y, dy1 = cj1 - g.y;
				const float dx2 = dx * dx;
				const float s0 = (dx2 + dy0 * dy0) * g.z, s1 = (dx2 + dy1 * dy1) * g.z;
				bool u0 = s0 < cut, u1 = s1 < cut;
				if (in0 && fabsf(s0 - cut) <= GR_EDGE * cut)
					u0 = gr_inside_exact3(gauss, ex[k], i, j);
				if (in1 && fabsf(s1 - cut) <= GR_EDGE * cut)
					u1 = gr_inside_exact3(gauss, ex[k], i, j + 1);
				const float v0 = (in0 && u0) ? gr_shape(gauss, s0) : 0.0f;
				const float v1 = (in1 && u1) ? gr_shape(gauss, s1) : 0.0f;
				p0 = fmaf(g.w, v0, p0);
				q0 = fmaf(g.w, v1, q0);
				if (nch == 3) {
					const float2 wz = wyz[k];
					p1 = fmaf(wz.x, v0, p1);
					p2 = fmaf(wz.y, v0, p2);
					q1 = fmaf(wz.x, v1, q1);
					q2 = fmaf(wz.y, v1, q2);
				}
			}
		}
	}
	if (i >= w)
		return;
	if (nch == 1) {
		p1 = p2 = p0;
		q1 = q2 = q0;
	}
	const bool split = t1 - t0 > GR_CHUNK;
	for (int d = 0; d < 2; d++) {
		if (j + d >= h)
			break;
		float *px = hdr + lev.off[L] + 3 * ((size_t)(j + d) * w + i);
		const float c0 = d ? q0 : p0, c1 = d ? q1 : p1, c2 = d ? q2 : p2;
		if (split) {
			atomicAdd(px, c0);
			atomicAdd(px + 1, c1);
			atomicAdd(px + 2, c2);
		} else {
			px[0] = c0;
			px[1] = c1;
			px[2] = c2;
		}
	}
}

int gr_splat_alloc(struct gpu_render *gr)
{
	size_t n = gr->nmax ? gr->nmax : 1;
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

static void gr_pairs_free(struct gpu_render *gr)
{
	for (int k = 0; k < 2; k++) {
		cudaFree(gr->d_keys[k]);
		cudaFree(gr->d_vals[k]);
		gr->d_keys[k] = gr->d_vals[k] = NULL;
	}
	cudaFree(gr->d_items);
	gr->d_items = NULL;
	gr->pair_cap = gr->item_cap = 0;
}

void gr_splat_free(struct gpu_render *gr)
{
	gr_pairs_free(gr);
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

/* Pair and item arrays for npairs pairs (grown by 25% headroom). */
static int gr_pairs_reserve(struct gpu_render *gr, size_t npairs)
{
	if (npairs <= gr->pair_cap)
		return 0;
	gr_pairs_free(gr);
	size_t cap = npairs + npairs / 4 + 1024;
	for (int k = 0; k < 2; k++) {
		CUDA_CHECK(cudaMalloc(&gr->d_keys[k], cap * sizeof(uint32_t)));
		CUDA_CHECK(cudaMalloc(&gr->d_vals[k], cap * sizeof(uint32_t)));
	}
	gr->item_cap = (size_t)gr->ntiles + cap / GR_CHUNK + 1;
	CUDA_CHECK(cudaMalloc(&gr->d_items, gr->item_cap * sizeof(uint2)));
	gr->pair_cap = cap;
	return 0;
}

/* levels: mask of the levels used (bit L), read back with the pair count. */
static int gr_deposit_tiled(struct gpu_render *gr, int n, size_t npairs, int nch, unsigned levels)
{
	const int gauss = gr->kernel == SCENE_KERNEL_GAUSSIAN;
	const uint32_t np = (uint32_t)npairs;
	cudaStream_t st = gr->stream;
	if (gr_pairs_reserve(gr, npairs) != 0)
		return NB_ERUNTIME;

	/* Offsets, then pairs in body order. */
	size_t b_scan = 0, b_sort = 0, b_scan_t = 0;
	cub::DoubleBuffer<uint32_t> keys(gr->d_keys[0], gr->d_keys[1]);
	cub::DoubleBuffer<uint32_t> vals(gr->d_vals[0], gr->d_vals[1]);
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, b_scan, gr->d_count, gr->d_offset, n, st));
	CUDA_CHECK(cub::DeviceRadixSort::SortPairs(NULL, b_sort, keys, vals, np, 0, gr->key_bits, st));
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, b_scan_t, gr->d_tile_nchunk, gr->d_item_off,
						 gr->ntiles + 1, st));
	size_t need = b_scan > b_sort ? b_scan : b_sort;
	if (b_scan_t > need)
		need = b_scan_t;
	if (gr_temp_reserve(gr, need) != 0)
		return NB_ERUNTIME;
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(gr->d_temp, b_scan, gr->d_count, gr->d_offset, n, st));
	gr_emit<<<gr_blocks(n), GR_THREADS, 0, st>>>(gr->d_rec, gr->d_level, gr->d_count,
						     gr->d_offset, n, gr->lev, keys.Current(),
						     vals.Current());
	CUDA_CHECK(cudaGetLastError());

	/* Sort by tile (stable), tile ranges, chunks. */
	b_sort = gr->temp_bytes;
	CUDA_CHECK(cub::DeviceRadixSort::SortPairs(gr->d_temp, b_sort, keys, vals, np, 0,
						   gr->key_bits, st));
	const size_t nt = (size_t)gr->ntiles + 1;
	CUDA_CHECK(cudaMemsetAsync(gr->d_tile_start, 0, nt * sizeof(uint32_t), st));
	CUDA_CHECK(cudaMemsetAsync(gr->d_tile_end, 0, nt * sizeof(uint32_t), st));
	gr_tile_ranges<<<gr_blocks(np), GR_THREADS, 0, st>>>(keys.Current(), np, gr->d_tile_start,
							      gr->d_tile_end);
	CUDA_CHECK(cudaGetLastError());
	gr_tile_chunks<<<gr_blocks(nt), GR_THREADS, 0, st>>>(gr->d_tile_start, gr->d_tile_end,
							      gr->ntiles, gr->d_tile_nchunk);
	CUDA_CHECK(cudaGetLastError());
	b_scan_t = gr->temp_bytes;
	CUDA_CHECK(cub::DeviceScan::ExclusiveSum(gr->d_temp, b_scan_t, gr->d_tile_nchunk,
						 gr->d_item_off, gr->ntiles + 1, st));
	gr_tile_items<<<gr_blocks(nt), GR_THREADS, 0, st>>>(gr->d_tile_nchunk, gr->d_item_off,
							     gr->ntiles, gr->d_items, gr->d_nitems);
	CUDA_CHECK(cudaGetLastError());

	/* Deposit: blocks past the real item count return at once. Tiles
	 * without pairs are not visited: the levels used start at zero. */
	const size_t used = levels > 1u ? gr->lev.floats : (size_t)gr->w * gr->h * 3;
	CUDA_CHECK(cudaMemsetAsync(gr->d_hdr, 0, used * sizeof(float), st));
	const size_t nblocks = (size_t)gr->ntiles + npairs / GR_CHUNK + 1;
	if (gauss)
		gr_deposit_tiled<1><<<(unsigned)nblocks, GR_DEP_THREADS, 0, st>>>(
			gr->d_rec, vals.Current(), gr->d_tile_start, gr->d_tile_end, gr->d_items,
			gr->d_nitems, gr->lev, nch, gr->d_hdr);
	else
		gr_deposit_tiled<0><<<(unsigned)nblocks, GR_DEP_THREADS, 0, st>>>(
			gr->d_rec, vals.Current(), gr->d_tile_start, gr->d_tile_end, gr->d_items,
			gr->d_nitems, gr->lev, nch, gr->d_hdr);
	CUDA_CHECK(cudaGetLastError());
	/* Density mode wrote all three channels already. */
	return levels > 1u ? gr_lod_upsample(gr, levels, 3) : 0;
}

int gr_splat(struct gpu_render *gr, const struct gpu_render_input *in, const struct gr_view *v,
	     const float *d_h)
{
	cudaStream_t st = gr->stream;
	const int n = (int)in->n;
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
	a.comp = gr->d_comp;
	a.colors = gr->d_colors;
	a.ncomp = gr->ncomp;
	a.gauss = gr->kernel == SCENE_KERNEL_GAUSSIAN;
	a.density = gr->mode == SCENE_COLOR_DENSITY;
	a.lev = gr->lev;

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
