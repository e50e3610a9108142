/* render_splat.cu - bodies -> HDR image on the GPU, render/splat.c's meaning
 * (pixel-centre sampling, the 0.5 px single-pixel rule, discrete
 * normalisation over the whole footprint, then clipping to the image).
 *
 * Exactness. Projection, radius, footprint box and the support test of each
 * pixel are computed in double with the CPU's operation order, and the
 * multiply-adds written with __dmul_rn/__dadd_rn so that nvcc cannot fuse
 * them: for the same float positions the GPU selects exactly the CPU's
 * pixels. Kernel values are float (relative error ~1e-7), their sum for
 * the normalisation double. (Tried and measured on an H100: forming q^2 in
 * float first and redoing it in double only near the support edge made
 * every splat 9-23% slower, tiled and atomic alike: FP64 at half the FP32
 * rate is not the limit here, the extra conversions and the 64-byte record
 * were. So the double test stays.)
 *
 * Pipeline (gr->stream):
 *  1. prepare: one thread per body: project, footprint, normalisation for
 *     footprints up to GR_NORM_INLINE samples, number of 16x16 tiles the
 *     clipped box touches; larger footprints go on a list that
 *  2. norm_big normalises, one warp per body.
 *  Tiled (default):
 *  3. the pair count is read back (the one host wait), the counts scanned
 *     and (tile, body) pairs emitted in body order;
 *  4. CUB radix sort by tile key (stable: each tile's list stays in body
 *     order), tile start/end, each tile's list cut into GR_CHUNK chunks;
 *  5. deposit: one block per chunk, one thread per pixel of the tile; the
 *     block stages 256 footprints at a time in shared memory and every
 *     thread sums the contributions to its own pixel in registers, in body
 *     order. No atomics, except that a tile split into several chunks adds
 *     each chunk's sums to the image with atomicAdd (dense cores).
 *  Atomic: every body adds its clipped footprint to the image with global
 *  atomicAdd (one thread per small body, a warp per large one).
 *
 * Cost per (pixel, footprint) pair visited by the deposit: a box test (4
 * int compares) and, inside the box, 6 double flops, 1 sqrt or exp and
 * 3 FMAs; per body 56 bytes of footprint written and read per tile. */
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
	int ncomp, gauss, density, ntx;
};

/* a.b for a double[3] and (d0, d1, d2), in the CPU's order, unfused. */
__device__ __forceinline__ double gr_dot(const double a[3], double d0, double d1, double d2)
{
	return __dadd_rn(__dadd_rn(__dmul_rn(d0, a[0]), __dmul_rn(d1, a[1])), __dmul_rn(d2, a[2]));
}

/* Kernel sample at squared pixel distance d2 (splat.c kernel_sample): the
 * support test in double, the value in float. */
__device__ __forceinline__ float gr_sample(int gauss, double d2, double inv_r)
{
	double q2 = __dmul_rn(__dmul_rn(d2, inv_r), inv_r);
	if (gauss)
		return q2 > 2.25 ? 0.0f : expf(-2.0f * (float)q2);
	if (q2 >= 1.0)
		return 0.0f;
	float qf2 = (float)q2, q = sqrtf(qf2);
	if (q <= 0.5f)
		return 1.0f - 6.0f * qf2 + 6.0f * qf2 * q;
	float t = 1.0f - q;
	return 2.0f * t * t * t;
}

/* Sample of footprint rec at pixel (i, j). */
__device__ __forceinline__ float gr_pixel(int gauss, const struct gr_rec &r, int i, int j)
{
	double dx = (i + 0.5) - r.x, dy = (j + 0.5) - r.y;
	return gr_sample(gauss, __dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy)), r.inv_r);
}

__device__ __forceinline__ unsigned long long gr_warp_sum_u64(unsigned long long v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	return v;
}

__device__ __forceinline__ double gr_warp_sum_d(double v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	return v;
}

/* 1. One thread per body slot. ~60 double flops + the inline normalisation
 * (<= GR_NORM_INLINE samples); reads 16 bytes (+ id, comp, h), writes 60. */
__global__ void __launch_bounds__(GR_THREADS)
gr_prepare(struct gr_splat_args a, const float4 *pos4, const uint32_t *id, int n,
	   struct gr_rec *rec, uint32_t *count, uint32_t *big, uint32_t *nbig,
	   unsigned long long *total)
{
	const int s = blockIdx.x * blockDim.x + threadIdx.x;
	uint32_t tiles = 0;
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
			double support = a.gauss ? 1.5 * rad : rad;
			double reach = rad < 0.5 ? 0.0 : support;
			if (x + reach < 0 || x - reach >= v.w || y + reach < 0 || y - reach >= v.h)
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
				if (r.i1 < 0 || r.i0 >= v.w || r.j1 < 0 || r.j0 >= v.h)
					live = 0;
				long area = (long)(r.i1 - r.i0 + 1) * (r.j1 - r.j0 + 1);
				if (live && area <= GR_NORM_INLINE) {
					double sum = 0.0;
					for (int j = r.j0; j <= r.j1; j++)
						for (int i = r.i0; i <= r.i1; i++)
							sum += gr_pixel(a.gauss, r, i, j);
					if (sum > 0)
						r.inv_norm = (float)(1.0 / sum);
					else
						single = 1; /* no pixel centre inside the support */
				} else if (live) {
					r.inv_norm = 0.0f; /* set by gr_norm_big */
					big[atomicAdd(nbig, 1u)] = (uint32_t)s;
				}
			}
			if (live && single) {
				if (x >= 0 && x < v.w && y >= 0 && y < v.h) {
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
			int ci0 = max(r.i0, 0), ci1 = min(r.i1, v.w - 1);
			int cj0 = max(r.j0, 0), cj1 = min(r.j1, v.h - 1);
			tiles = (uint32_t)((ci1 / GR_TILE - ci0 / GR_TILE + 1) *
					   (cj1 / GR_TILE - cj0 / GR_TILE + 1));
			rec[s] = r;
		}
		count[s] = tiles;
	}
	/* Block total of tiles, in 64 bits (the pair count can pass 2^32). */
	__shared__ unsigned long long warp_tot[GR_THREADS / 32];
	unsigned long long t = gr_warp_sum_u64(tiles);
	if ((threadIdx.x & 31) == 0)
		warp_tot[threadIdx.x >> 5] = t;
	__syncthreads();
	if (threadIdx.x == 0) {
		unsigned long long bt = 0;
		for (int k = 0; k < GR_THREADS / 32; k++)
			bt += warp_tot[k];
		if (bt)
			atomicAdd(total, bt);
	}
}

/* 2. Normalisation of the large footprints, one warp each (grid-stride).
 * Per sample ~10 flops; the sum is double, so its order does not matter. */
__global__ void gr_norm_big(int gauss, const uint32_t *big, const uint32_t *nbig,
			    struct gr_rec *rec)
{
	const int lane = threadIdx.x & 31;
	const uint32_t nb = *nbig;
	const uint32_t nwarps = (gridDim.x * blockDim.x) >> 5;
	for (uint32_t k = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; k < nb; k += nwarps) {
		const uint32_t s = big[k];
		const struct gr_rec r = rec[s];
		const int bw = r.i1 - r.i0 + 1;
		const long area = (long)bw * (r.j1 - r.j0 + 1);
		double sum = 0.0;
		for (long e = lane; e < area; e += 32)
			sum += gr_pixel(gauss, r, r.i0 + (int)(e % bw), r.j0 + (int)(e / bw));
		sum = gr_warp_sum_d(sum);
		if (lane == 0)
			rec[s].inv_norm = (float)(1.0 / sum);
	}
}

/* 3. (tile, body) pairs of each live body, tiles in row-major order. */
__global__ void gr_emit(const struct gr_rec *rec, const uint32_t *count, const uint32_t *offset,
			int n, int w, int h, int ntx, uint32_t *keys, uint32_t *vals)
{
	const int s = blockIdx.x * blockDim.x + threadIdx.x;
	if (s >= n || count[s] == 0)
		return;
	const struct gr_rec r = rec[s];
	const int tx0 = max(r.i0, 0) / GR_TILE, tx1 = min(r.i1, w - 1) / GR_TILE;
	const int ty0 = max(r.j0, 0) / GR_TILE, ty1 = min(r.j1, h - 1) / GR_TILE;
	uint32_t o = offset[s];
	for (int ty = ty0; ty <= ty1; ty++)
		for (int tx = tx0; tx <= tx1; tx++) {
			keys[o] = (uint32_t)(ty * ntx + tx);
			vals[o] = (uint32_t)s;
			o++;
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

/* 5. One block per chunk of a tile's list, one thread per pixel. */
__global__ void __launch_bounds__(GR_THREADS)
gr_deposit_tiled(const struct gr_rec *rec, const uint32_t *vals, const uint32_t *start,
		 const uint32_t *end, const uint2 *items, const uint32_t *nitems, int ntx, int w,
		 int h, int gauss, int nch, float *hdr)
{
	__shared__ struct gr_rec sh[GR_THREADS];
	if (blockIdx.x >= *nitems)
		return;
	const uint2 it = items[blockIdx.x];
	const uint32_t t = it.x, t0 = start[t], t1 = end[t];
	const uint32_t a = t0 + it.y * GR_CHUNK;
	const uint32_t b = min(t1, a + GR_CHUNK);
	const int i = (int)(t % ntx) * GR_TILE + (threadIdx.x & (GR_TILE - 1));
	const int j = (int)(t / ntx) * GR_TILE + (threadIdx.x / GR_TILE);
	float acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f;
	for (uint32_t base = a; base < b; base += GR_THREADS) {
		const int cnt = (int)min((uint32_t)GR_THREADS, b - base);
		__syncthreads();
		if ((int)threadIdx.x < cnt)
			sh[threadIdx.x] = rec[vals[base + threadIdx.x]];
		__syncthreads();
		for (int e = 0; e < cnt; e++) {
			const struct gr_rec &r = sh[e];
			if (i < r.i0 || i > r.i1 || j < r.j0 || j > r.j1)
				continue;
			float f = 1.0f;
			if (r.inv_r != 0.0) {
				float smp = gr_pixel(gauss, r, i, j);
				if (smp == 0.0f)
					continue;
				f = smp * r.inv_norm;
			}
			acc0 = fmaf(r.w[0], f, acc0);
			if (nch == 3) {
				acc1 = fmaf(r.w[1], f, acc1);
				acc2 = fmaf(r.w[2], f, acc2);
			}
		}
	}
	if (i >= w || j >= h)
		return;
	if (nch == 1)
		acc1 = acc2 = acc0;
	float *px = hdr + 3 * ((size_t)j * w + i);
	if (t1 - t0 > GR_CHUNK) {
		atomicAdd(px, acc0);
		atomicAdd(px + 1, acc1);
		atomicAdd(px + 2, acc2);
	} else {
		px[0] = acc0;
		px[1] = acc1;
		px[2] = acc2;
	}
}

/* Atomic method: add f * w of footprint r at pixel (i, j). */
__device__ __forceinline__ void gr_add(const struct gr_rec &r, int gauss, int nch, int i, int j,
				       int w, float *hdr)
{
	float f = 1.0f;
	if (r.inv_r != 0.0) {
		float smp = gr_pixel(gauss, r, i, j);
		if (smp == 0.0f)
			return;
		f = smp * r.inv_norm;
	}
	float *px = hdr + 3 * ((size_t)j * w + i);
	atomicAdd(px, r.w[0] * f);
	if (nch == 3) {
		atomicAdd(px + 1, r.w[1] * f);
		atomicAdd(px + 2, r.w[2] * f);
	}
}

__global__ void gr_deposit_atomic_small(const struct gr_rec *rec, const uint32_t *count, int n,
					int w, int h, int gauss, int nch, float *hdr)
{
	const int s = blockIdx.x * blockDim.x + threadIdx.x;
	if (s >= n || count[s] == 0)
		return;
	const struct gr_rec r = rec[s];
	if (r.inv_r != 0.0 && (long)(r.i1 - r.i0 + 1) * (r.j1 - r.j0 + 1) > GR_NORM_INLINE)
		return; /* large: gr_deposit_atomic_big */
	for (int j = max(r.j0, 0); j <= min(r.j1, h - 1); j++)
		for (int i = max(r.i0, 0); i <= min(r.i1, w - 1); i++)
			gr_add(r, gauss, nch, i, j, w, hdr);
}

__global__ void gr_deposit_atomic_big(const struct gr_rec *rec, const uint32_t *big,
				      const uint32_t *nbig, int w, int h, int gauss, int nch,
				      float *hdr)
{
	const int lane = threadIdx.x & 31;
	const uint32_t nb = *nbig;
	const uint32_t nwarps = (gridDim.x * blockDim.x) >> 5;
	for (uint32_t k = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; k < nb; k += nwarps) {
		const struct gr_rec r = rec[big[k]];
		const int i0 = max(r.i0, 0), j0 = max(r.j0, 0);
		const int bw = min(r.i1, w - 1) - i0 + 1;
		const long area = (long)bw * (min(r.j1, h - 1) - j0 + 1);
		for (long e = lane; e < area; e += 32)
			gr_add(r, gauss, nch, i0 + (int)(e % bw), j0 + (int)(e / bw), w, hdr);
	}
}

/* Density mode accumulates channel 0 only: copy it to 1 and 2. */
__global__ void gr_expand_density(float *hdr, size_t npix)
{
	const size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (p >= npix)
		return;
	hdr[3 * p + 1] = hdr[3 * p + 2] = hdr[3 * p];
}

static unsigned gr_blocks(size_t n)
{
	return (unsigned)((n + GR_THREADS - 1) / GR_THREADS);
}

int gr_splat_alloc(struct gpu_render *gr)
{
	size_t n = gr->nmax ? gr->nmax : 1;
	CUDA_CHECK(cudaMalloc(&gr->d_rec, n * sizeof *gr->d_rec));
	CUDA_CHECK(cudaMalloc(&gr->d_count, n * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_offset, n * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_big, n * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_nbig, sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_total, sizeof(unsigned long long)));
	CUDA_CHECK(cudaMallocHost(&gr->h_total, sizeof(unsigned long long)));
	size_t nt = (size_t)gr->ntiles + 1;
	CUDA_CHECK(cudaMalloc(&gr->d_tile_start, nt * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_tile_end, nt * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_tile_nchunk, nt * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_item_off, nt * sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_nitems, sizeof(uint32_t)));
	CUDA_CHECK(cudaMalloc(&gr->d_hdr, (size_t)gr->w * gr->h * 3 * sizeof(float)));
	CUDA_CHECK(cudaMemset(gr->d_hdr, 0, (size_t)gr->w * gr->h * 3 * sizeof(float)));
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

static int gr_deposit_atomic(struct gpu_render *gr, int n, int nch)
{
	const int gauss = gr->kernel == SCENE_KERNEL_GAUSSIAN;
	const size_t npix = (size_t)gr->w * gr->h;
	CUDA_CHECK(cudaMemsetAsync(gr->d_hdr, 0, npix * 3 * sizeof(float), gr->stream));
	gr_deposit_atomic_small<<<gr_blocks(n), GR_THREADS, 0, gr->stream>>>(
		gr->d_rec, gr->d_count, n, gr->w, gr->h, gauss, nch, gr->d_hdr);
	CUDA_CHECK(cudaGetLastError());
	gr_deposit_atomic_big<<<1024, GR_THREADS, 0, gr->stream>>>(gr->d_rec, gr->d_big, gr->d_nbig,
								    gr->w, gr->h, gauss, nch, gr->d_hdr);
	CUDA_CHECK(cudaGetLastError());
	if (nch == 1) {
		gr_expand_density<<<gr_blocks(npix), GR_THREADS, 0, gr->stream>>>(gr->d_hdr, npix);
		CUDA_CHECK(cudaGetLastError());
	}
	return 0;
}

static int gr_deposit_tiled(struct gpu_render *gr, int n, size_t npairs, int nch)
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
	gr_emit<<<gr_blocks(n), GR_THREADS, 0, st>>>(gr->d_rec, gr->d_count, gr->d_offset, n, gr->w,
						     gr->h, gr->ntx, keys.Current(), vals.Current());
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

	/* Deposit: blocks past the real item count return at once. */
	CUDA_CHECK(cudaMemsetAsync(gr->d_hdr, 0, (size_t)gr->w * gr->h * 3 * sizeof(float), st));
	const size_t nblocks = (size_t)gr->ntiles + npairs / GR_CHUNK + 1;
	gr_deposit_tiled<<<(unsigned)nblocks, GR_THREADS, 0, st>>>(
		gr->d_rec, vals.Current(), gr->d_tile_start, gr->d_tile_end, gr->d_items,
		gr->d_nitems, gr->ntx, gr->w, gr->h, gauss, nch, gr->d_hdr);
	CUDA_CHECK(cudaGetLastError());
	return 0;
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
	a.ntx = gr->ntx;

	CUDA_CHECK(cudaMemsetAsync(gr->d_nbig, 0, sizeof(uint32_t), st));
	CUDA_CHECK(cudaMemsetAsync(gr->d_total, 0, sizeof(unsigned long long), st));
	gr_prepare<<<gr_blocks(n), GR_THREADS, 0, st>>>(a, (const float4 *)in->pos4, in->id, n,
							 gr->d_rec, gr->d_count, gr->d_big,
							 gr->d_nbig, gr->d_total);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaEventRecord(gr->ev_consumed, st));
	gr_norm_big<<<1024, GR_THREADS, 0, st>>>(a.gauss, gr->d_big, gr->d_nbig, gr->d_rec);
	CUDA_CHECK(cudaGetLastError());

	if (gr->method == GPU_RENDER_ATOMIC)
		return gr_deposit_atomic(gr, n, nch);

	/* The sort needs the pair count on the host: the one wait per frame. */
	CUDA_CHECK(cudaMemcpyAsync(gr->h_total, gr->d_total, sizeof(unsigned long long),
				   cudaMemcpyDeviceToHost, st));
	CUDA_CHECK(cudaEventRecord(gr->ev_pairs, st));
	CUDA_CHECK(cudaEventSynchronize(gr->ev_pairs));
	const unsigned long long npairs = *gr->h_total;
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
	return gr_deposit_tiled(gr, n, (size_t)npairs, nch);
}
