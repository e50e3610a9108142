/* render_adaptive.cu - adaptive smoothing lengths on the GPU: h = distance
 * to the k-th nearest other body (render/adaptive.h's meaning; its CPU twin
 * render/adaptive.c is the test oracle).
 *
 * Grid. The bounding box of the finite bodies is a cube of side S cut into
 * 2^16 cells per axis (level 0); level l merges 2^l x 2^l x 2^l of them.
 * Each body's cell key is the 48-bit Morton code of its level-0 cell, so
 * after one CUB radix sort by key every cell of every level is one
 * contiguous range of the sorted array: the level-l cell of key c holds
 * the keys in [(c >> 3l) << 3l, ((c >> 3l) + 1) << 3l), found by binary
 * search (cell start and end).
 *
 * Search (one thread per body, in key order, so a warp's bodies are
 * neighbours in space). Level: the smallest l whose cell around the body
 * holds at least ~k/3 others (galloping search from the body's own index);
 * then the 3x3x3 cells around it at that level are scanned, keeping the k
 * smallest squared distances in a max-heap (local memory). Every body
 * closer than cov = distance to the nearest face of the 3x3x3 block (faces
 * at the edge of the grid do not count) has then been seen; if the heap's
 * top is <= cov^2 (less a margin above the rounding of cell keys and
 * distances) it is the k-th distance, otherwise the next level is tried.
 * Level 16 is the whole box, so the search always ends, and a dense core
 * and a sparse halo each get a cell size that fits them: one grid, many
 * cell sizes, and exact results.
 *
 * Cost: per body ~27 k/3 .. 27*8 k/3 candidates (12 flops + a compare
 * each, plus a heap update for the few that enter), ~60 binary-search
 * steps; the sort of n 48-bit keys dominates for small k. */
#include "render_internal.cuh"

#include <cub/cub.cuh>

#define AD_BITS 16          /* cells per axis at level 0: 2^16 */
#define AD_BAD (1ull << 48) /* key of a body with a non-finite position */
#define AD_BBOX_BLOCKS 256

typedef unsigned long long u64;

struct gr_adaptive {
	size_t cap;
	u64 *d_code[2];
	uint32_t *d_slot[2];
	float4 *d_spos;  /* positions in key order */
	float *d_part;   /* bounding-box partials, 6 per block */
	float *d_grid;   /* lo[3], c0, inv_c0, margin */
	uint32_t *d_ngood;
};

/* Every third bit: 16-bit v -> bits 0, 3, 6, ... */
__device__ __forceinline__ u64 ad_spread(uint32_t v)
{
	u64 x = v & 0xffffu;
	x = (x | x << 32) & 0x1f00000000ffffull;
	x = (x | x << 16) & 0x1f0000ff0000ffull;
	x = (x | x << 8) & 0x100f00f00f00f00full;
	x = (x | x << 4) & 0x10c30c30c30c30c3ull;
	x = (x | x << 2) & 0x1249249249249249ull;
	return x;
}

__device__ __forceinline__ u64 ad_morton(int x, int y, int z)
{
	return ad_spread((uint32_t)x) | ad_spread((uint32_t)y) << 1 | ad_spread((uint32_t)z) << 2;
}

/* Level-0 cell of coordinate p on axis a (one rounding of each operation,
 * unfused, so both kernels that call it agree). */
__device__ __forceinline__ int ad_cell(float p, const float *grid, int a)
{
	float t = floorf(__fmul_rn(__fsub_rn(p, grid[a]), grid[4]));
	if (!(t >= 0.0f))
		return 0;
	if (t >= (float)(1 << AD_BITS))
		return (1 << AD_BITS) - 1;
	return (int)t;
}

__device__ __forceinline__ int ad_finite(float4 p)
{
	return isfinite(p.x) && isfinite(p.y) && isfinite(p.z);
}

__global__ void ad_bbox_part(const float4 *pos, int n, float *part)
{
	__shared__ float sh[6][GR_THREADS];
	float v[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
	for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < n; s += gridDim.x * blockDim.x) {
		const float4 p = pos[s];
		if (!ad_finite(p))
			continue;
		v[0] = fminf(v[0], p.x), v[1] = fminf(v[1], p.y), v[2] = fminf(v[2], p.z);
		v[3] = fmaxf(v[3], p.x), v[4] = fmaxf(v[4], p.y), v[5] = fmaxf(v[5], p.z);
	}
	for (int k = 0; k < 6; k++)
		sh[k][threadIdx.x] = v[k];
	__syncthreads();
	for (int o = GR_THREADS / 2; o > 0; o >>= 1) {
		if ((int)threadIdx.x < o)
			for (int k = 0; k < 6; k++)
				sh[k][threadIdx.x] = k < 3 ? fminf(sh[k][threadIdx.x], sh[k][threadIdx.x + o])
							   : fmaxf(sh[k][threadIdx.x], sh[k][threadIdx.x + o]);
		__syncthreads();
	}
	if (threadIdx.x < 6)
		part[6 * blockIdx.x + threadIdx.x] = sh[threadIdx.x][0];
}

/* One thread: the cube (lo, side S = 1.0001 x largest extent), c0 = S/2^16. */
__global__ void ad_bbox_final(const float *part, int nparts, float *grid)
{
	float v[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
	for (int b = 0; b < nparts; b++)
		for (int k = 0; k < 6; k++)
			v[k] = k < 3 ? fminf(v[k], part[6 * b + k]) : fmaxf(v[k], part[6 * b + k]);
	float side = 0.0f, mag = 0.0f;
	for (int k = 0; k < 3; k++) {
		if (!(v[k] <= v[k + 3]))
			v[k] = v[k + 3] = 0.0f; /* no finite body */
		side = fmaxf(side, v[k + 3] - v[k]);
		mag = fmaxf(mag, fmaxf(fabsf(v[k]), fabsf(v[k + 3])));
	}
	side = side > 0.0f && isfinite(side) ? side * 1.0001f : 1.0f;
	for (int k = 0; k < 3; k++)
		grid[k] = v[k];
	grid[3] = side / (float)(1 << AD_BITS);
	grid[4] = (float)(1 << AD_BITS) / side;
	/* Cell keys are right to ~0.01 cell; distances to ~2 ulp of |x|. */
	grid[5] = 0.02f * grid[3] + 4.0f * 1.2e-7f * (mag + side);
}

__global__ void ad_keys(const float4 *pos, int n, const float *grid, u64 *code, uint32_t *slot,
			uint32_t *ngood)
{
	const int s = blockIdx.x * blockDim.x + threadIdx.x;
	int good = 0;
	if (s < n) {
		const float4 p = pos[s];
		good = ad_finite(p);
		code[s] = good ? ad_morton(ad_cell(p.x, grid, 0), ad_cell(p.y, grid, 1),
					   ad_cell(p.z, grid, 2))
			       : AD_BAD;
		slot[s] = (uint32_t)s;
	}
	good = __syncthreads_count(good);
	if (threadIdx.x == 0 && good)
		atomicAdd(ngood, (uint32_t)good);
}

__global__ void ad_gather(const float4 *pos, const uint32_t *slot, int n, float4 *spos)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		spos[i] = pos[slot[i]];
}

/* First index in [lo, hi) with code >= key (hi if none). */
__device__ __forceinline__ int ad_lower(const u64 *code, int lo, int hi, u64 key)
{
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (code[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* First index <= from with code >= key, given code[from] >= key. */
__device__ __forceinline__ int ad_gallop_down(const u64 *code, int from, u64 key)
{
	int hi = from, step = 1, lo = -1;
	for (;;) {
		int c = hi - step;
		if (c < 0)
			break;
		if (code[c] < key) {
			lo = c;
			break;
		}
		hi = c;
		step <<= 1;
	}
	return ad_lower(code, lo + 1, hi, key);
}

/* First index >= from with code >= key (n if none), given code[from-1] < key. */
__device__ __forceinline__ int ad_gallop_up(const u64 *code, int from, int n, u64 key)
{
	int lo = from - 1, step = 1, hi = n;
	for (;;) {
		int c = lo + step;
		if (c >= n)
			break;
		if (code[c] >= key) {
			hi = c;
			break;
		}
		lo = c;
		step <<= 1;
	}
	return ad_lower(code, lo + 1, hi, key);
}

__device__ __forceinline__ void ad_heap_push(float *hp, int &size, int k, float d2)
{
	if (size < k) {
		int i = size++;
		while (i > 0) {
			int p = (i - 1) >> 1;
			if (hp[p] >= d2)
				break;
			hp[i] = hp[p];
			i = p;
		}
		hp[i] = d2;
		return;
	}
	if (d2 >= hp[0])
		return;
	int i = 0;
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		float vm = d2;
		if (l < k && hp[l] > vm) {
			m = l;
			vm = hp[l];
		}
		if (r < k && hp[r] > vm)
			m = r;
		if (m == i)
			break;
		hp[i] = hp[m];
		i = m;
	}
	hp[i] = d2;
}

template <int KMAX>
__global__ void __launch_bounds__(128)
ad_knn(const u64 *code, const uint32_t *slot, const float4 *spos, const uint32_t *id,
       const uint32_t *ngood_p, int n, int k, const float *grid, double length, float fallback,
       float *h_by_id)
{
	float hp[KMAX];
	const int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	const uint32_t s = slot[i];
	const uint32_t b = id ? id[s] : s;
	const int ng = (int)*ngood_p;
	const int K = min(k, ng - 1);
	if (i >= ng || K < 1) {
		h_by_id[b] = fallback;
		return;
	}
	const float4 p = spos[i];
	const float pc[3] = {p.x, p.y, p.z};
	const int q[3] = {ad_cell(p.x, grid, 0), ad_cell(p.y, grid, 1), ad_cell(p.z, grid, 2)};
	const u64 me = code[i];
	const int target = max(1, (K + 2) / 3);
	int l = 0, lo = i, hi = i + 1;
	for (;; l++) {
		lo = ad_gallop_down(code, lo, (me >> (3 * l)) << (3 * l));
		hi = ad_gallop_up(code, hi, ng, ((me >> (3 * l)) + 1) << (3 * l));
		if (hi - lo - 1 >= target || l == AD_BITS)
			break;
	}
	float kth = 0.0f;
	for (;; l++) {
		if (l > 0) { /* own cell at this level (grows from the last one) */
			lo = ad_gallop_down(code, lo, (me >> (3 * l)) << (3 * l));
			hi = ad_gallop_up(code, hi, ng, ((me >> (3 * l)) + 1) << (3 * l));
		}
		const int G = (1 << AD_BITS) >> l;
		const int cl[3] = {q[0] >> l, q[1] >> l, q[2] >> l};
		int size = 0;
		for (int dz = -1; dz <= 1; dz++) {
			for (int dy = -1; dy <= 1; dy++) {
				for (int dx = -1; dx <= 1; dx++) {
					const int nx = cl[0] + dx, ny = cl[1] + dy, nz = cl[2] + dz;
					if (nx < 0 || ny < 0 || nz < 0 || nx >= G || ny >= G || nz >= G)
						continue;
					int a = lo, e = hi;
					if (dx || dy || dz) {
						const u64 c = ad_morton(nx, ny, nz);
						a = ad_lower(code, 0, ng, c << (3 * l));
						e = ad_lower(code, a, ng, (c + 1) << (3 * l));
					}
					for (int j = a; j < e; j++) {
						if (j == i)
							continue;
						const float4 o = spos[j];
						const float ex = o.x - p.x, ey = o.y - p.y, ez = o.z - p.z;
						ad_heap_push(hp, size, K, ex * ex + ey * ey + ez * ez);
					}
				}
			}
		}
		/* Radius surely searched: nearest face of the 3x3x3 block with
		 * cells behind it (double: keeps the rounding inside the margin). */
		const double cell = (double)grid[3] * (double)(1 << l);
		double cov = INFINITY;
		for (int ax = 0; ax < 3; ax++) {
			const double rel = (double)pc[ax] - (double)grid[ax];
			if (cl[ax] - 1 > 0)
				cov = fmin(cov, rel - (cl[ax] - 1) * cell);
			if (cl[ax] + 1 < G - 1)
				cov = fmin(cov, (cl[ax] + 2) * cell - rel);
		}
		kth = size ? hp[0] : 0.0f;
		if (cov == INFINITY || l >= AD_BITS)
			break;
		cov -= (double)grid[5];
		if (size == K && cov > 0 && (double)kth <= cov * cov)
			break;
	}
	h_by_id[b] = (float)(sqrt((double)kth) / length);
}

static int ad_alloc(struct gr_adaptive *ad, size_t n)
{
	ad->cap = n;
	for (int k = 0; k < 2; k++) {
		CUDA_CHECK(cudaMalloc(&ad->d_code[k], n * sizeof(u64)));
		CUDA_CHECK(cudaMalloc(&ad->d_slot[k], n * sizeof(uint32_t)));
	}
	CUDA_CHECK(cudaMalloc(&ad->d_spos, n * sizeof(float4)));
	CUDA_CHECK(cudaMalloc(&ad->d_part, 6 * AD_BBOX_BLOCKS * sizeof(float)));
	CUDA_CHECK(cudaMalloc(&ad->d_grid, 8 * sizeof(float)));
	CUDA_CHECK(cudaMalloc(&ad->d_ngood, sizeof(uint32_t)));
	return 0;
}

void gr_adaptive_free(struct gpu_render *gr)
{
	struct gr_adaptive *ad = gr->ad;
	if (!ad)
		return;
	for (int k = 0; k < 2; k++) {
		cudaFree(ad->d_code[k]);
		cudaFree(ad->d_slot[k]);
	}
	cudaFree(ad->d_spos);
	cudaFree(ad->d_part);
	cudaFree(ad->d_grid);
	cudaFree(ad->d_ngood);
	free(ad);
	gr->ad = NULL;
}

#define AD_LAUNCH(KM)                                                                          \
	ad_knn<KM><<<(unsigned)((n + 127) / 128), 128, 0, st>>>(                               \
		codes.Current(), slots.Current(), ad->d_spos, in->id, ad->d_ngood, n, k,       \
		ad->d_grid, gr->u.length, (float)gr->smoothing, gr->d_h)

int gr_adaptive_h(struct gpu_render *gr, const struct gpu_render_input *in)
{
	const int n = (int)in->n;
	cudaStream_t st = gr->stream;
	if (n == 0)
		return 0;
	if (!gr->ad) {
		gr->ad = (struct gr_adaptive *)calloc(1, sizeof *gr->ad);
		if (!gr->ad) {
			log_error("GPU render: out of memory");
			return NB_ERUNTIME;
		}
		if (ad_alloc(gr->ad, gr->nmax) != 0) {
			gr_adaptive_free(gr);
			return NB_ERUNTIME;
		}
	}
	struct gr_adaptive *ad = gr->ad;
	const float4 *pos = (const float4 *)in->pos4;
	const unsigned nb = (unsigned)((n + GR_THREADS - 1) / GR_THREADS);

	ad_bbox_part<<<AD_BBOX_BLOCKS, GR_THREADS, 0, st>>>(pos, n, ad->d_part);
	CUDA_CHECK(cudaGetLastError());
	ad_bbox_final<<<1, 1, 0, st>>>(ad->d_part, AD_BBOX_BLOCKS, ad->d_grid);
	CUDA_CHECK(cudaGetLastError());
	CUDA_CHECK(cudaMemsetAsync(ad->d_ngood, 0, sizeof(uint32_t), st));
	ad_keys<<<nb, GR_THREADS, 0, st>>>(pos, n, ad->d_grid, ad->d_code[0], ad->d_slot[0],
					   ad->d_ngood);
	CUDA_CHECK(cudaGetLastError());

	cub::DoubleBuffer<u64> codes(ad->d_code[0], ad->d_code[1]);
	cub::DoubleBuffer<uint32_t> slots(ad->d_slot[0], ad->d_slot[1]);
	size_t bytes = 0;
	CUDA_CHECK(cub::DeviceRadixSort::SortPairs(NULL, bytes, codes, slots, n, 0, 49, st));
	if (gr_temp_reserve(gr, bytes) != 0)
		return NB_ERUNTIME;
	bytes = gr->temp_bytes;
	CUDA_CHECK(cub::DeviceRadixSort::SortPairs(gr->d_temp, bytes, codes, slots, n, 0, 49, st));
	ad_gather<<<nb, GR_THREADS, 0, st>>>(pos, slots.Current(), n, ad->d_spos);
	CUDA_CHECK(cudaGetLastError());

	int k = gr->neighbours < 1 ? 1 : gr->neighbours > 1024 ? 1024 : gr->neighbours;
	if (k <= 16)
		AD_LAUNCH(16);
	else if (k <= 32)
		AD_LAUNCH(32);
	else if (k <= 64)
		AD_LAUNCH(64);
	else if (k <= 128)
		AD_LAUNCH(128);
	else if (k <= 256)
		AD_LAUNCH(256);
	else
		AD_LAUNCH(1024);
	CUDA_CHECK(cudaGetLastError());
	return 0;
}
