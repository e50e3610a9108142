/* render_splat_tiled.cu - the tiled deposit of the footprints gr_splat
 * prepared (render_splat.cu, whose top comment gives the whole pipeline and
 * its exactness argument): steps 3-5 there, i.e. (tile, body) pairs emitted
 * in body order, CUB radix sort by tile key, tile ranges cut into
 * GR_CHUNK-pair chunks, one block per chunk accumulating its tile on chip.
 * Split from render_splat.cu to keep one stage per file; the atomic
 * alternative is render_splat_atomic.cu.
 * CPU twin: render/splat.c. */
#include "render_internal.cuh"

#include <cub/cub.cuh>

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

__global__ void gr_tile_chunks(const uint32_t *start, const uint32_t *end, int ntiles,
			       uint32_t chunk, uint32_t *nchunk)
{
	const int t = blockIdx.x * blockDim.x + threadIdx.x;
	if (t > ntiles)
		return;
	nchunk[t] = t < ntiles ? (end[t] - start[t] + chunk - 1) / chunk : 0;
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


void gr_tiled_free(struct gpu_render *gr)
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

/* Pair and item arrays for npairs pairs (grown by 25% headroom). */
static int gr_pairs_reserve(struct gpu_render *gr, size_t npairs)
{
	if (npairs <= gr->pair_cap)
		return 0;
	gr_tiled_free(gr);
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
int gr_deposit_tiled(struct gpu_render *gr, int n, size_t npairs, int nch, unsigned levels)
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
							      gr->ntiles, GR_CHUNK, gr->d_tile_nchunk);
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
