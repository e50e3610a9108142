/* render_adaptive.cu - adaptive smoothing lengths on the GPU: h = distance
 * to the k-th nearest other body (render/adaptive.h's meaning; its CPU twin
 * render/adaptive.c is the test oracle).
 *
 * Grid. The bounding box of the finite bodies is a cube of side S cut into
 * 2^21 cells per axis (level 0); level l merges 2^l x 2^l x 2^l of them.
 * Each body's cell key is the 63-bit Morton code of its level-0 cell, so
 * after one CUB radix sort by key every cell of every level is one
 * contiguous range of the sorted array: the level-l cell of prefix P holds
 * the keys in [P << 3l, (P + 1) << 3l), and its start and end are found by
 * binary search inside its parent's range. The levels form an implicit
 * octree over the sorted bodies, with no tree to build.
 *
 * Search (one thread per body, in key order, so a warp's bodies are
 * neighbours in space): depth-first from the whole box, nearest child
 * first; ranges of at most AD_LEAF bodies (or level-0 cells) are scanned,
 * keeping the k smallest squared distances in a max-heap (local memory);
 * a cell whose box is farther than the current k-th distance is skipped.
 * The side is a power of two, so cell keys and box distances are exact;
 * box distances are reduced by 1e-6 relative, above the float rounding of
 * body distances, so the skip is always safe and the result exact (up to
 * that rounding, ~1e-7 relative).
 *
 * A first version scanned the 3x3x3 cells around each body at one level
 * chosen by its own cell's count: exact too, but a halo body next to a
 * dense disk then scanned tens of thousands of disk bodies (175 ms for 1M
 * bodies on an H100). The pruned descent visits only cells that can hold
 * one of the k nearest.
 *
 * Cost per body: ~k + a few AD_LEAF-sized leaves of candidates (12 flops
 * each), ~10 cells split (7 binary searches each in the parent's range). */
#include "render_internal.cuh"

#include <cub/cub.cuh>

#define AD_BITS 21          /* cells per axis at level 0: 2^21 (63-bit keys) */
#define AD_BAD (1ull << 63) /* key of a body with a non-finite position */
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

/* Every third bit: 21-bit v -> bits 0, 3, 6, ... */
__device__ __forceinline__ u64 ad_spread(uint32_t v)
{
	u64 x = v & 0x1fffffu;
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

/* Level-0 cell of coordinate p on axis a. The cube's side is a power of
 * two, so in double (p - lo) and the scaling are exact: the cell is exactly
 * the one whose box [lo + x c0, lo + (x+1) c0) holds p. */
__device__ __forceinline__ int ad_cell(float p, const float *grid, int a)
{
	double t = floor(((double)p - (double)grid[a]) * (double)grid[4]);
	if (!(t >= 0.0))
		return 0;
	if (t >= (double)(1 << AD_BITS))
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

/* One thread: the cube (lo, side S = the power of two >= the largest
 * extent), c0 = S / 2^21, and the distance margin. */
__global__ void ad_bbox_final(const float *part, int nparts, float *grid)
{
	float v[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
	for (int b = 0; b < nparts; b++)
		for (int k = 0; k < 6; k++)
			v[k] = k < 3 ? fminf(v[k], part[6 * b + k]) : fmaxf(v[k], part[6 * b + k]);
	float side = 0.0f;
	for (int k = 0; k < 3; k++) {
		if (!(v[k] <= v[k + 3]))
			v[k] = v[k + 3] = 0.0f; /* no finite body */
		side = fmaxf(side, v[k + 3] - v[k]);
	}
	side = side > 0.0f && isfinite(side) ? exp2f(ceilf(log2f(side))) : 1.0f;
	if (side < v[3] - v[0] || side < v[4] - v[1] || side < v[5] - v[2])
		side *= 2.0f; /* log2f rounding */
	for (int k = 0; k < 3; k++)
		grid[k] = v[k];
	grid[3] = side / (float)(1 << AD_BITS);
	grid[4] = (float)(1 << AD_BITS) / side;
	/* Cell keys and box distances are exact; a float distance between two
	 * float positions is off by a relative ~2e-7 only (the difference of
	 * two floats rounds relative to itself), which ad_box_d2's factor
	 * (1 - 1e-6) covers: no absolute margin is needed. */
	grid[5] = 0.0f;
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

#define AD_LEAF 24  /* ranges up to this many bodies are scanned, not split */
#define AD_STACK 160 /* 7 waiting siblings per level x 21 levels + 8 */

/* A cell of the implicit octree waiting on the stack: sorted range
 * [lo, hi), level, cell coordinates at that level, squared distance from
 * the body to the cell's box (less the margin). */
struct ad_node {
	int lo, hi;
	u64 xyz;     /* x | y << 21 | z << 42 */
	int level;
	float mind2;
};

/* Squared distance from p to the box of cell (x, y, z) at level l, less
 * 1e-6 relative (so it never exceeds the computed distance of a body
 * inside). */
__device__ __forceinline__ float ad_box_d2(const float pc[3], const float *grid, int l, int x,
					   int y, int z)
{
	const double cell = (double)grid[3] * (double)(1 << l);
	const int c[3] = {x, y, z};
	double d2 = 0.0;
	for (int a = 0; a < 3; a++) {
		const double rel = (double)pc[a] - (double)grid[a];
		double d = fmax(c[a] * cell - rel, rel - (c[a] + 1) * cell);
		d -= (double)grid[5];
		if (d > 0)
			d2 += d * d;
	}
	return (float)(d2 * (1.0 - 1e-6));
}

/* k nearest of body i by depth-first search of the implicit octree (cell
 * of level l = a range of the sorted keys), nearest child first, cells
 * farther than the current k-th distance skipped. Exact: a cell is skipped
 * only when no body in it can be closer than the k-th found so far. */
template <int KMAX>
__global__ void __launch_bounds__(128)
ad_knn(const u64 *code, const uint32_t *slot, const float4 *spos, const uint32_t *id,
       const uint32_t *ngood_p, int n, int k, const float *grid, double length, float fallback,
       float *h_by_id)
{
	float hp[KMAX];
	struct ad_node st[AD_STACK];
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
	int size = 0, top = 0;
	st[top++] = {0, ng, 0ull, AD_BITS, 0.0f};
	while (top > 0) {
		const struct ad_node e = st[--top];
		if (size == K && e.mind2 > hp[0])
			continue;
		const int l = e.level;
		if (e.hi - e.lo <= AD_LEAF || l == 0) {
			for (int j = e.lo; j < e.hi; j++) {
				if (j == i)
					continue;
				const float4 o = spos[j];
				const float ex = o.x - p.x, ey = o.y - p.y, ez = o.z - p.z;
				ad_heap_push(hp, size, K, ex * ex + ey * ey + ez * ez);
			}
			continue;
		}
		/* Split into the 8 children (ranges by binary search inside the
		 * parent's), push the non-empty ones farthest first. */
		const int x = (int)(e.xyz & 0x1fffffu), y = (int)(e.xyz >> 21 & 0x1fffffu),
			  z = (int)(e.xyz >> 42);
		const u64 base = ad_morton(2 * x, 2 * y, 2 * z);
		struct ad_node ch[8];
		int nc = 0, lo = e.lo;
		for (int c = 0; c < 8; c++) {
			const int hi = c == 7 ? e.hi
					      : ad_lower(code, lo, e.hi, (base + (u64)(c + 1)) << (3 * (l - 1)));
			if (hi > lo) {
				const int cx = 2 * x + (c & 1), cy = 2 * y + ((c >> 1) & 1),
					  cz = 2 * z + (c >> 2);
				struct ad_node nd = {lo, hi, (u64)cx | (u64)cy << 21 | (u64)cz << 42,
						     l - 1, ad_box_d2(pc, grid, l - 1, cx, cy, cz)};
				int m = nc++;
				while (m > 0 && ch[m - 1].mind2 < nd.mind2) { /* descending */
					ch[m] = ch[m - 1];
					m--;
				}
				ch[m] = nd;
			}
			lo = hi;
		}
		for (int c = 0; c < nc; c++)
			if (!(size == K && ch[c].mind2 > hp[0]))
				st[top++] = ch[c];
	}
	h_by_id[b] = (float)(sqrt((double)hp[0]) / length);
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
	CUDA_CHECK(cub::DeviceRadixSort::SortPairs(NULL, bytes, codes, slots, n, 0, 64, st));
	if (gr_temp_reserve(gr, bytes) != 0)
		return NB_ERUNTIME;
	bytes = gr->temp_bytes;
	CUDA_CHECK(cub::DeviceRadixSort::SortPairs(gr->d_temp, bytes, codes, slots, n, 0, 64, st));
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
